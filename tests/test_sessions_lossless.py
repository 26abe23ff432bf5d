"""Nothing is lost: after any sequence of commands, and after a `kata` process killed at
any point, every attempt ever started is on disk and every line the user wrote is kept."""
from __future__ import annotations

import json
import random
import re
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from conftest import stand_in_command

NAMES = ["softmax", "rope", "gqa"]


def every_attempt_on_disk(home: Path) -> list[str]:
    """Problems: attempts whose code is nowhere on disk (the store records paths relative to
    the work folder)."""
    db = home / "kata.sqlite3"
    if not db.exists():
        return []
    con = sqlite3.connect(db)
    problems = []
    for aid, kata, path, archive in con.execute("SELECT id, kata, path, archive FROM attempts"):
        where = home / (archive or path)
        if not where.is_file():
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
    written, killed = [], 0
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
        killed += proc.wait() == -9  # not finished yet: killed where it stood
        st = run_kata(root, subprocess_env, "status")
        assert st.returncode == 0 and "Traceback" not in st.stderr, st.stderr
        assert every_attempt_on_disk(home) == []
        code = all_code(home)
        assert all(m in code for m in written)
        if st.stdout.startswith("Mock"):
            run_kata(root, subprocess_env, "submit")
    assert killed, "no command was killed before it finished"
    assert files_not_whole(root, home) == []
    assert records_half_written(home) == []


def files_not_whole(root: Path, home: Path) -> list[str]:
    """Files of the work folder that are not a stub followed by whole lines the user wrote
    (temp files, whose names start with a dot, are what a killed write leaves: skipped)."""
    problems = []
    for p in home.rglob("*.py"):
        if p.name.startswith("."):
            continue
        rel = p.relative_to(home).parts
        kata = rel[1] if rel[0] == "archive" else p.stem  # archive/KATA/..., mock/N/KATA.py
        stub = (root / "katas" / f"{kata}.py").read_text()
        text = p.read_text()
        if not text.startswith(stub) or not re.fullmatch(r"(# edit \d+\n)*", text[len(stub):]):
            problems.append(f"{p.relative_to(home)} is not its stub and whole lines: {text!r}")
    return problems


def records_half_written(home: Path) -> list[str]:
    """What in the database only a part of a transaction could have left; the database
    opens as it is (nothing set aside) and passes integrity_check."""
    from graders.engine.report import Report
    from practice.store import Store

    warnings = []
    Store(home, warn=warnings.append).close()
    assert warnings == [] and not list(home.glob("*.broken-*"))
    con = sqlite3.connect(home / "kata.sqlite3")
    con.row_factory = sqlite3.Row
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    problems = []
    running = con.execute("SELECT count(*) FROM attempts WHERE mode = 'practice' AND state = 'open' "
                          "AND clock = 'running'").fetchone()[0]
    if running > 1:
        problems.append(f"{running} practice clocks run at once")
    for m in con.execute("SELECT id, state FROM mocks"):
        states = {r[0] for r in con.execute("SELECT state FROM attempts WHERE mock_id = ?", (m["id"],))}
        if (m["state"] == "running") != (states == {"open"}):
            problems.append(f"mock {m['id']} is {m['state']} with questions {sorted(states)}")
    for g in con.execute("SELECT * FROM gradings"):
        r = Report.from_dict(json.loads(g["report"]))
        if (r.passed, r.counts.passed, r.counts.total) != (g["passed"], g["n_passed"], g["n_total"]):
            problems.append(f"grading {g['id']} does not match its report")
    con.close()
    return problems


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
