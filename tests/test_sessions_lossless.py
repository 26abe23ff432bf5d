"""Nothing is lost: after any sequence of commands, and after a `kata` process killed at
any point, every attempt ever started is on disk and every line the user wrote is kept."""
from __future__ import annotations

import random
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from conftest import stand_in_command
from practice import catalogue

NAMES = ["softmax", "rope", "gqa"]


def every_attempt_on_disk(home: Path) -> list[str]:
    """Problems: attempts whose code is nowhere on disk."""
    db = home / "kata.sqlite3"
    if not db.exists():
        return []
    con = sqlite3.connect(db)
    problems = []
    for aid, kata, path, archive in con.execute("SELECT id, kata, path, archive FROM attempts"):
        where = archive or path
        if not Path(where).is_file():
            problems.append(f"attempt {aid} ({kata}): {where} is missing")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    return problems


def all_code(home: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in home.rglob("*.py"))


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_any_sequence_of_commands_keeps_every_attempt_and_every_edit(kenv, seed):
    rng = random.Random(seed)
    written: list[str] = []
    for step in range(70):
        kenv.clock.advance(rng.choice([5, 60, 600, 3000]))
        name = rng.choice(NAMES)
        move = rng.choice(["start", "fresh", "reset", "check", "submit", "edit", "edit",
                           "edit-mock", "mock", "hint", "pause", "resume", "status", "list",
                           "create"])
        if move in ("edit", "create"):
            marker = f"# user line {seed}-{step}"
            p = kenv.attempt(name)
            if move == "edit" and not p.exists():
                continue
            p.write_text((p.read_text() if p.exists() else "") + marker + "\n"
                         + ("# PASS\n" if rng.random() < 0.3 else ""))
            written.append(marker)
        elif move == "edit-mock":
            files = sorted((kenv.home / "mock").rglob("*.py")) if (kenv.home / "mock").exists() else []
            if not files:
                continue
            f = rng.choice(files)
            marker = f"# mock line {seed}-{step}"
            f.write_text(f.read_text() + marker + "\n")
            written.append(marker)
        else:
            args = {
                "start": ["start", name], "fresh": ["start", name, "--fresh"],
                "reset": ["reset", name], "check": ["check"], "submit": ["submit"],
                "mock": ["mock", "--seed", str(step), "--minutes", str(rng.choice([5, 60]))],
                "hint": ["hint", name], "pause": ["pause"], "resume": ["resume"],
                "status": ["status"], "list": ["list"],
            }[move]
            r = kenv.run(*args)
            assert r.exit_code in (0, 1, 2), (args, r.stderr)
            assert "Traceback" not in r.stdout + r.stderr
        assert every_attempt_on_disk(kenv.home) == [], f"after step {step} ({move})"
        code = all_code(kenv.home)
        lost = [m for m in written if m not in code]
        assert not lost, f"after step {step} ({move}): lost {lost}"
    assert written  # the sequence did edit files


# -- killed processes ----------------------------------------------------------------------
def run_kata(root, env, *args, fault=None, timeout=60):
    e = dict(env)
    if fault:
        e["KATA_FAULT"] = fault
    return subprocess.run(stand_in_command(root, *args), env=e, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.parametrize("fault,args", [
    ("after-archive-copy", ["start", "softmax", "--fresh"]),
    ("after-start-commit", ["start", "softmax", "--fresh"]),
    ("after-reset-commit", ["reset", "softmax"]),
])
def test_a_kata_killed_between_steps_of_a_restart_loses_nothing(tmp_path, subprocess_env,
                                                                fault, args):
    from conftest import make_tree

    root = make_tree(tmp_path / "tree")
    home = Path(subprocess_env["KATA_HOME"])
    assert run_kata(root, subprocess_env, "start", "softmax").returncode == 0
    (home / "softmax.py").write_text("# my precious work\n")
    p = run_kata(root, subprocess_env, *args, fault=fault)
    assert p.returncode == -9, p.stderr  # it really was killed there
    st = run_kata(root, subprocess_env, "status")
    assert st.returncode == 0 and "warning" not in st.stderr, st.stderr
    assert "# my precious work" in all_code(home)
    assert every_attempt_on_disk(home) == []
    # and the next command finishes the job
    again = run_kata(root, subprocess_env, *args)
    assert again.returncode == 0, again.stderr
    assert "# my precious work" in all_code(home)
    assert every_attempt_on_disk(home) == []
    assert "raise NotImplementedError" in (home / "softmax.py").read_text()


def test_kata_processes_killed_at_random_moments(tmp_path, subprocess_env):
    from conftest import make_tree

    root = make_tree(tmp_path / "tree")
    home = Path(subprocess_env["KATA_HOME"])
    rng = random.Random(5)
    commands = [["start", "softmax"], ["check"], ["start", "rope", "--fresh"],
                ["reset", "softmax"], ["submit"], ["hint", "rope"], ["mock", "--seed", "1"]]
    written = []
    for i in range(8):
        f = home / "softmax.py"
        if f.exists():
            f.write_text(f.read_text() + f"# edit {i}\n")
            written.append(f"# edit {i}")
        args = rng.choice(commands)
        proc = subprocess.Popen(stand_in_command(root, *args), env=subprocess_env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.02, 0.4))
        proc.kill()
        proc.wait()
        st = run_kata(root, subprocess_env, "status")
        assert st.returncode == 0 and "Traceback" not in st.stderr, st.stderr
        assert every_attempt_on_disk(home) == []
        code = all_code(home)
        assert all(m in code for m in written)
        if st.stdout.startswith("Mock"):
            run_kata(root, subprocess_env, "submit")
    assert catalogue.names()  # the catalogue was readable throughout


def test_a_kata_killed_right_after_its_first_start_leaves_the_file(tmp_path, subprocess_env):
    from conftest import make_tree

    root = make_tree(tmp_path / "tree")
    home = Path(subprocess_env["KATA_HOME"])
    p = run_kata(root, subprocess_env, "start", "gqa", fault="after-start-commit")
    assert p.returncode == -9
    assert every_attempt_on_disk(home) == []
    assert "raise NotImplementedError" in (home / "gqa.py").read_text()
    r = run_kata(root, subprocess_env, "start", "gqa")
    assert r.returncode == 0 and "Resuming" in r.stdout


def test_six_starts_at_once_make_one_attempt_and_the_others_resume_it(tmp_path, subprocess_env):
    from conftest import make_tree

    root = make_tree(tmp_path / "tree")
    home = Path(subprocess_env["KATA_HOME"])
    assert run_kata(root, subprocess_env, "status").returncode == 0  # the database exists
    procs = [subprocess.Popen(stand_in_command(root, "start", "softmax"), env=subprocess_env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(6)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
    said = [out for out, _ in outs]
    assert sum("Clock started." in s for s in said) == 1
    assert sum("Resuming the attempt in progress" in s for s in said) == 5
    con = sqlite3.connect(home / "kata.sqlite3")
    assert con.execute("SELECT count(*) FROM attempts").fetchone()[0] == 1
    assert not (home / "archive").exists()
    st = run_kata(root, subprocess_env, "status")
    assert "Also in progress" not in st.stdout
