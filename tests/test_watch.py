"""`kata watch`: re-grades on save (in place or by rename), stops the clock on a pass,
ends a mock at its deadline, leaves on Ctrl-C without a traceback."""
from __future__ import annotations

import os
import threading

import pytest

from practice import watch


@pytest.fixture
def ticks(kenv, monkeypatch):
    """Drive watch's loop: each tick runs the next scripted action, then Ctrl-C."""
    monkeypatch.setattr(watch, "SETTLE", 0)
    script: list = []

    def fake_wait(event, timeout):
        kenv.clock.advance(timeout)
        if not script:
            raise KeyboardInterrupt
        action = script.pop(0)
        if action:
            action()
        return False

    monkeypatch.setattr(watch, "_wait", fake_wait)
    return script


def graded(kenv, name):
    return [c for c in kenv.calls if c[0] == name]


def test_watch_regrades_each_save_and_stops_the_clock_when_all_pass(kenv, ticks):
    kenv.run("start", "softmax")
    ticks += [lambda: kenv.write("softmax", "wrong\n"), None, None,
              lambda: kenv.write("softmax", "# PASS\n"), None]
    r = kenv.run("watch", "--poll", "--interval", "30")
    assert r.exit_code == 130 and "Traceback" not in r.stderr  # left with Ctrl-C
    assert len(graded(kenv, "softmax")) == 3  # on start, and after each of the two saves
    out = r.stdout
    assert "not implemented yet" in out and "1/3 checks passed" in out
    assert "3/3 checks passed" in out and "Every check passes" in out
    assert "Stopped watching" in out
    con = kenv.db()
    a = con.execute("SELECT * FROM attempts").fetchone()
    assert a["clock"] == "solved" and a["solved_at"] == 120  # four 30 s ticks to the pass
    commands = [row[0] for row in con.execute("SELECT command FROM gradings")]
    assert commands == ["watch"] * 3


def test_watch_notices_a_file_renamed_over_the_attempt(kenv, ticks):
    kenv.run("start", "rope")
    path = kenv.attempt("rope")

    def editor_save():  # write a new file, rename it over the old one
        tmp = path.with_name(".rope.py.swp")
        tmp.write_text(path.read_text().replace("raise NotImplementedError", "return x  # PASS"))
        os.replace(tmp, path)

    ticks += [editor_save]
    r = kenv.run("watch", "--poll")
    assert len(graded(kenv, "rope")) == 2
    assert "3/3 checks passed" in r.stdout


def test_watch_ignores_saves_that_change_nothing(kenv, ticks):
    kenv.run("start", "rope")
    path = kenv.attempt("rope")
    ticks += [lambda: path.write_text(path.read_text()), lambda: os.utime(path)]
    kenv.run("watch", "--poll")
    assert len(graded(kenv, "rope")) == 1


def test_watch_says_the_clock_keeps_running_on_ctrl_c(kenv, ticks):
    kenv.run("start", "rope")
    r = kenv.run("watch", "rope", "--poll")
    assert r.exit_code == 130
    assert "The clock keeps running" in r.stdout
    assert "0:01 used" in r.stdout  # one 1 s tick before Ctrl-C


def test_watch_with_nothing_in_progress_is_a_usage_error(kenv):
    r = kenv.run("watch")
    assert r.exit_code == 2 and "nothing to grade" in r.stderr and "`kata watch NAME`" in r.stderr


def test_watch_in_a_mock_follows_every_question_and_ends_at_the_deadline(kenv, ticks):
    r = kenv.run("mock", "--count", "2", "--minutes", "1", "--seed", "4")
    files = sorted((kenv.home / "mock" / "1").glob("*.py"))
    assert len(files) == 2
    ticks += [lambda: files[1].write_text("# PASS\n")] + [None] * 100
    r = kenv.run("watch", "--poll", "--interval", "20")
    out = r.stdout
    assert r.exit_code == 0
    assert "Mock interview:" in out
    assert "Time is up: the mock interview is over." in out and "Interview report" in out
    assert len(kenv.calls) >= 3  # both graded at the start, one again after its save
    con = kenv.db()
    assert con.execute("SELECT state FROM mocks").fetchone()[0] == "ended"


def test_the_file_watcher_sees_an_editor_that_renames_a_new_file_over_the_old(tmp_path):
    pytest.importorskip("watchdog")
    target = tmp_path / "attempt.py"
    target.write_text("one\n")
    event = threading.Event()
    obs = watch._observer({tmp_path}, {os.path.abspath(target)}, event)
    assert obs is not None
    try:
        (tmp_path / "unrelated.txt").write_text("x")
        assert not event.wait(0.5)  # other files do not wake it
        tmp = tmp_path / ".attempt.py.tmp"
        tmp.write_text("two\n")
        os.replace(tmp, target)
        assert event.wait(5)
    finally:
        obs.stop()


def test_a_watch_and_checks_in_other_processes_at_once(tmp_path, subprocess_env):
    import signal
    import sqlite3
    import subprocess
    import time
    from pathlib import Path

    from conftest import make_tree, stand_in_command

    root = make_tree(tmp_path / "tree")
    home = Path(subprocess_env["KATA_HOME"])

    def kata(*args):
        return subprocess.run(stand_in_command(root, *args), env=subprocess_env,
                              capture_output=True, text=True, timeout=60)

    assert kata("start", "softmax").returncode == 0
    watcher = subprocess.Popen(stand_in_command(root, "watch", "--interval", "0.2"),
                               env=subprocess_env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 30
        while time.time() < deadline:  # wait for its first grading
            con = sqlite3.connect(home / "kata.sqlite3")
            n = con.execute("SELECT count(*) FROM gradings WHERE command = 'watch'").fetchone()[0]
            con.close()
            if n:
                break
            time.sleep(0.1)
        for i in range(4):
            (home / "softmax.py").write_text(f"attempt {i}\n" + ("# PASS\n" if i == 3 else ""))
            assert kata("check").returncode == (0 if i == 3 else 1)
        time.sleep(1.0)
    finally:
        watcher.send_signal(signal.SIGINT)
        out, err = watcher.communicate(timeout=30)
    assert watcher.returncode == 130, err
    assert "Traceback" not in err and "Stopped watching" in out
    con = sqlite3.connect(home / "kata.sqlite3")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    commands = [r[0] for r in con.execute("SELECT command FROM gradings")]
    assert commands.count("check") == 4 and commands.count("watch") >= 2
    assert con.execute("SELECT clock FROM attempts").fetchone()[0] == "solved"


def test_a_question_not_graded_yet_is_waiting_and_a_deleted_one_is_missing(tmp_path):
    from dataclasses import fields

    from practice.store import Attempt
    from practice.views.watch import status_line
    from practice.watch import Target

    def attempt(**given):
        return Attempt(**{f.name: None for f in fields(Attempt)} | given)

    there = tmp_path / "moe.py"
    there.write_text("x = 1\n")
    waiting = Target(attempt(kata="moe", path=str(there)))
    gone = Target(attempt(kata="rope", path=str(tmp_path / "rope.py")))
    assert "(waiting to be graded)" in status_line(waiting).plain
    assert "(the file is missing)" in status_line(gone).plain
