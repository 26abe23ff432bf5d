"""A work folder that moves: the store records each attempt's file relative to the work
folder, so a folder moved, copied or cloned again grades, resumes and watches its own files,
in real `kata` processes; a store from before (whole paths) is brought to that form, and a
record that points outside the work folder says so."""
from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from conftest import make_tree, stand_in_command


def kata(root: Path, env: dict, home: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(stand_in_command(root, *args), env=dict(env, KATA_HOME=str(home)), check=False,
                          capture_output=True, text=True, timeout=60, cwd=home.parent)


def test_a_moved_work_folder_grades_resumes_and_watches_its_own_files(tmp_path, subprocess_env):
    root = make_tree(tmp_path / "tree")
    kh1, kh2 = tmp_path / "kh1", tmp_path / "kh2"
    assert kata(root, subprocess_env, kh1, "start", "softmax").returncode == 0
    (kh1 / "softmax.py").write_text("def softmax(x):\n    return x  # wrong\n")
    assert kata(root, subprocess_env, kh1, "check").returncode == 1

    kh1.rename(kh2)  # mv kh1 kh2, mid-kata
    (kh2 / "softmax.py").write_text("def softmax(x):\n    return x  # PASS\n")
    checked = kata(root, subprocess_env, kh2, "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "softmax (attempt 1): kh2/softmax.py" in checked.stdout and "3/3 checks passed" in checked.stdout
    assert "warning" not in checked.stderr  # nothing outside the folder to speak of

    (kh2 / "softmax.py").unlink()  # the stub goes back where the folder is now, not in kh1/
    started = kata(root, subprocess_env, kh2, "start", "softmax")
    assert started.returncode == 0 and "Resuming the attempt in progress" in started.stdout
    assert "Its file was missing" in started.stdout and "Edit:  kh2/softmax.py" in started.stdout
    assert (kh2 / "softmax.py").is_file() and not kh1.exists()

    watcher = subprocess.Popen(stand_in_command(root, "watch"), env=dict(subprocess_env, KATA_HOME=str(kh2)),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not _graded_once(kh2):
            time.sleep(0.1)
    finally:
        watcher.send_signal(signal.SIGINT)
        out, err = watcher.communicate(timeout=30)
    assert "softmax: kh2/softmax.py" in out and "not implemented yet" in out, out + err
    assert "the file is missing" not in out and not kh1.exists()


def _graded_once(home: Path) -> bool:
    con = sqlite3.connect(home / "kata.sqlite3")
    try:
        return con.execute("SELECT count(*) FROM gradings WHERE command = 'watch'").fetchone()[0] > 0
    finally:
        con.close()


def test_a_copied_work_folder_grades_its_own_copy(tmp_path, subprocess_env):
    root = make_tree(tmp_path / "tree")
    original, copy = tmp_path / "original", tmp_path / "copy"
    assert kata(root, subprocess_env, original, "start", "rope").returncode == 0
    shutil.copytree(original, copy)
    (copy / "rope.py").write_text("def rope(x):\n    return x  # PASS\n")

    in_copy = kata(root, subprocess_env, copy, "check")
    assert in_copy.returncode == 0 and "copy/rope.py" in in_copy.stdout and "3/3 checks passed" in in_copy.stdout
    in_original = kata(root, subprocess_env, original, "check")
    assert in_original.returncode == 1 and "original/rope.py" in in_original.stdout
    assert "not implemented yet" in in_original.stdout  # the original's own stub, untouched by the copy's pass
    submitted = kata(root, subprocess_env, copy, "submit")
    assert submitted.returncode == 0 and "Recorded: passed" in submitted.stdout
    assert kata(root, subprocess_env, original, "status").stdout.count("rope") >= 1
    assert "in progress" in kata(root, subprocess_env, original, "list").stdout


def _version_4_store(home: Path, attempts: list[tuple]) -> None:
    """A store as version 4 wrote it: whole paths, a mock question with the interview's budget."""
    from practice.store import schema

    home.mkdir(parents=True)
    con = sqlite3.connect(home / "kata.sqlite3")
    con.executescript(schema.SCHEMA)
    con.execute("INSERT INTO mocks (started_at, budget, seed, clock, state, ended_at, end_reason, time_used) "
                "VALUES (0, 3300, 7, 'stopped', 'ended', 900, 'submitted', 900)")
    for kata_name, mode, path, archive, budget, used in attempts:
        con.execute("INSERT INTO attempts (kata, mode, mock_id, path, archive, started_at, touched_at, budget, "
                    "clock, elapsed, state, passed, time_used, overtime) "
                    "VALUES (?, ?, ?, ?, ?, 0, 0, ?, 'stopped', ?, 'submitted', 1, ?, 0)",
                    (kata_name, mode, 1 if mode == "mock" else None, path, archive, budget, used, used))
    con.execute(f"PRAGMA application_id = {schema.APPLICATION_ID}")
    con.execute("PRAGMA user_version = 4")
    con.commit()
    con.close()


def test_a_store_of_whole_paths_is_brought_to_the_folder_it_is_in_now(tmp_path, subprocess_env):
    """Version 4 recorded /old/kh1/...: after `mv kh1 kh2` and an upgrade, every file recorded
    in the folder is found in kh2, a mock question has its kata's budget, and a file
    recorded elsewhere is said to be elsewhere."""
    from practice.store import schema

    root = make_tree(tmp_path / "tree")
    old, home = tmp_path / "kh1", tmp_path / "kh2"
    elsewhere = tmp_path / "elsewhere" / "notes.py"
    _version_4_store(home, [
        ("softmax", "practice", f"{old}/softmax.py", f"{old}/archive/softmax/softmax-20250101-120000.py", 600, 300),
        ("swiglu", "mock", f"{old}/mock/1/swiglu.py", None, 3300, 900),
        ("rope", "practice", str(elsewhere), None, 1500, 60)])
    listed = kata(root, subprocess_env, home, "history", "softmax", "--attempt", "1")
    assert listed.returncode == 0, listed.stderr
    assert "File: kh2/archive/softmax/softmax-20250101-120000.py" in listed.stdout

    con = sqlite3.connect(home / "kata.sqlite3")
    rows = con.execute("SELECT kata, path, archive, budget, overtime FROM attempts ORDER BY id").fetchall()
    assert con.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    con.close()
    assert rows == [("softmax", "softmax.py", "archive/softmax/softmax-20250101-120000.py", 600, 0),
                    ("swiglu", "mock/1/swiglu.py", None, 900.0, 0),  # swiglu's own 15 minutes
                    ("rope", str(elsewhere), None, 1500, 0)]

    elsewhere.parent.mkdir()
    elsewhere.write_text("def rope(x):\n    return x  # PASS\n")
    checked = kata(root, subprocess_env, home, "check", "rope")
    assert checked.returncode == 0 and "elsewhere/notes.py" in checked.stdout
    assert "rope's attempt is recorded at" in checked.stderr and "outside the work folder" in checked.stderr
    os.unlink(elsewhere)
    gone = kata(root, subprocess_env, home, "check", "rope")
    assert gone.returncode == 2 and "the store records it outside the work folder" in gone.stderr
