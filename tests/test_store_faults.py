"""Store faults lose nothing and say so, each shown by `kata` running as a real process
(with the stand-in grader): a full disk, a damaged record, an empty or damaged database,
a read-only work folder."""
from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest
from conftest import make_tree, stand_in_command

FULL = 32 * 1024  # bytes any file may reach: sqlite's shared-memory file fits, little else


def kata(root, env, *args, preexec_fn=None):
    return subprocess.run(stand_in_command(root, *args), env=env, capture_output=True,
                          text=True, timeout=60, preexec_fn=preexec_fn)


def full_disk():
    """In the child: writes past FULL bytes fail with EFBIG, as on a full disk (the
    signal that would kill the process instead is ignored, as a disk never sends it)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (FULL, FULL))


def leftovers(home: Path) -> list[str]:
    """Temp files anywhere in the work folder."""
    return [str(p) for p in home.rglob("*") if p.name.startswith(".") or p.suffix in (".tmp", ".new")]


@pytest.fixture
def world(tmp_path, subprocess_env):
    root = make_tree(tmp_path / "tree")
    return root, Path(subprocess_env["KATA_HOME"]), subprocess_env


def checks_recorded(home: Path) -> int:
    con = sqlite3.connect(home / "kata.sqlite3")
    n = con.execute("SELECT count(*) FROM gradings").fetchone()[0]
    con.close()
    return n


# -- a full disk --------------------------------------------------------------------------
@pytest.mark.parametrize("passing", [False, True])
def test_a_full_disk_still_shows_the_report_and_says_it_was_not_recorded(world, passing):
    root, home, env = world
    assert kata(root, env, "start", "softmax").returncode == 0
    # An attempt big enough that recording it needs more than the disk has left.
    (home / "softmax.py").write_text(("# PASS\n" if passing else "") + "# padding\n" * 20000)
    r = kata(root, env, "check", "--json", preexec_fn=full_disk)
    assert r.returncode == (0 if passing else 1), r.stderr
    report = json.loads(r.stdout)  # one object, the whole of stdout
    assert report["recorded"] is False and report["passed"] is passing
    assert report["kata"] == "softmax" and report["checks"]
    assert "not recorded" in r.stderr and str(home / "kata.sqlite3") in r.stderr
    assert "I/O" in r.stderr or "full" in r.stderr  # the cause
    assert "Traceback" not in r.stderr
    assert leftovers(home) == []
    assert checks_recorded(home) == 0
    plain = kata(root, env, "check", preexec_fn=full_disk)
    assert ("3/3 checks passed" if passing else "1/3 checks passed") in plain.stdout
    assert "not recorded" in plain.stderr
    # With room again, the same command records as usual.
    r = kata(root, env, "check", "--json")
    assert json.loads(r.stdout)["recorded"] is True and checks_recorded(home) == 1


def test_a_file_that_cannot_be_written_leaves_no_temp_file(world):
    root, home, env = world
    big = root / "katas" / "rope.py"
    big.write_text(big.read_text() + "# a long stub\n" * 10000)
    assert kata(root, env, "status").returncode == 0  # the database exists
    r = kata(root, env, "start", "rope", preexec_fn=full_disk)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "File too large" in r.stderr and str(home / "rope.py") in r.stderr
    assert leftovers(home) == []
    st = kata(root, env, "status")  # nothing half done: no attempt points at a missing file
    assert st.returncode == 0 and "No kata in progress" in st.stdout


# -- damaged records and databases -------------------------------------------------------------
def test_a_damaged_record_is_set_aside_and_the_rest_stays_usable(world):
    root, home, env = world
    kata(root, env, "start", "softmax")
    kata(root, env, "check")
    (home / "softmax.py").write_text("# PASS\n")
    kata(root, env, "check")
    con = sqlite3.connect(home / "kata.sqlite3")
    first = con.execute("SELECT id FROM gradings ORDER BY id").fetchone()[0]
    con.execute("UPDATE gradings SET report = CAST(x'7b226b617461223a20ff7d' AS TEXT) "
                "WHERE id = ?", (first,))  # {"kata": \xff}: not UTF-8
    con.commit()
    con.close()
    r = kata(root, env, "history", "softmax", "--attempt", "1")
    assert r.returncode == 0, r.stderr
    assert "could not be read (gradings 1)" in r.stderr and "set_aside" in r.stderr
    assert "3/3 checks passed" in r.stdout  # the readable grading is still there
    again = kata(root, env, "status")
    assert again.returncode == 0 and again.stderr == ""  # set aside once, for good
    assert "passed 3/3" in again.stdout
    con = sqlite3.connect(home / "kata.sqlite3")
    (tbl, row_id, data), = con.execute("SELECT tbl, row_id, data FROM set_aside").fetchall()
    assert (tbl, row_id) == ("gradings", first)
    assert json.loads(data)["report"] == {"hex": "7b226b617461223a20ff7d"}  # kept as it was


def test_a_damaged_attempt_is_set_aside_with_its_checks(world):
    root, home, env = world
    kata(root, env, "start", "softmax")
    kata(root, env, "check")
    kata(root, env, "start", "rope")
    con = sqlite3.connect(home / "kata.sqlite3")
    n_gradings, n_events = (con.execute(f"SELECT count(*) FROM {t} WHERE attempt_id = 1")
                          .fetchone()[0] for t in ("gradings", "events"))
    assert n_gradings == 1 and n_events >= 2  # its grading; its start and pause
    con.execute("UPDATE attempts SET path = CAST(x'2f746d702fff' AS TEXT) WHERE kata = 'softmax'")
    con.commit()
    con.close()
    r = kata(root, env, "list")
    assert r.returncode == 0 and "could not be read (attempts 1)" in r.stderr
    rows = {ln.split()[0]: ln for ln in r.stdout.splitlines()}
    assert "in progress" in rows["rope"] and "not started" in rows["softmax"]
    con = sqlite3.connect(home / "kata.sqlite3")
    kept = sorted(r[0] for r in con.execute("SELECT tbl FROM set_aside"))
    assert kept == sorted(["attempts"] + ["gradings"] * n_gradings + ["events"] * n_events)
    assert con.execute("PRAGMA foreign_key_check").fetchall() == []


@pytest.mark.parametrize("content", [b"", b"SQLite format 3\x00" + b"\x00" * 100])
def test_an_empty_or_damaged_database_is_set_aside_with_a_warning(world, content):
    root, home, env = world
    home.mkdir(parents=True)
    (home / "kata.sqlite3").write_bytes(content)
    r = kata(root, env, "status")
    assert r.returncode == 0, r.stderr
    assert "warning: the practice database" in r.stderr and "kept as kata.sqlite3.broken-" in r.stderr
    (kept,) = home.glob("kata.sqlite3.broken-*")
    assert kept.read_bytes() == content
    r = kata(root, env, "start", "softmax")
    assert r.returncode == 0 and r.stderr == ""


def test_a_damaged_page_loses_only_the_records_on_it(world):
    """A disk error in the gradings' page: sqlite refuses the file, which is set aside as it
    was, and every record that can still be read (the attempts, their events) is copied into
    the new one; the gradings on the damaged page, and only they, are gone."""
    root, home, env = world
    kata(root, env, "start", "softmax")
    kata(root, env, "check")
    kata(root, env, "start", "rope")
    con = sqlite3.connect(home / "kata.sqlite3")
    counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("attempts", "events", "gradings")}
    page = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'gradings'").fetchone()[0]
    size = con.execute("PRAGMA page_size").fetchone()[0]
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    with open(home / "kata.sqlite3", "r+b") as f:  # where the page says its rows are: past its end
        f.seek((page - 1) * size + 8)
        f.write(b"\xff\xf0" * counts["gradings"])
    before = (home / "kata.sqlite3").read_bytes()
    r = kata(root, env, "status")
    assert r.returncode == 0, r.stderr
    assert f"{counts['attempts'] + counts['events']} records that could still be read were copied" in r.stderr, r.stderr
    (kept,) = home.glob("kata.sqlite3.broken-*")
    assert kept.read_bytes() == before  # set aside untouched
    assert "rope" in r.stdout and "softmax" in r.stdout  # both attempts still in progress
    con = sqlite3.connect(home / "kata.sqlite3")
    assert con.execute("SELECT count(*) FROM gradings").fetchone()[0] == 0
    assert con.execute("PRAGMA foreign_key_check").fetchall() == []


def test_a_new_database_is_never_an_empty_file(world):
    """Six processes create the database at once; none sees another's half-made file."""
    root, home, env = world
    procs = [subprocess.Popen(stand_in_command(root, "status"), env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(6)]
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0 and err == "", err
    assert not list(home.glob("*.broken-*")) and leftovers(home) == []


# -- a read-only work folder ----------------------------------------------------------------
def _obey_file_modes():
    """In the child: root gives up the capabilities that let it write where a file's
    mode says no (dropped from the bounding set, so they stay dropped across exec)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER = 24, 1, 2, 3


def test_a_read_only_work_folder_reads_and_says_it_cannot_write(tmp_path, subprocess_env):
    root, home = make_tree(tmp_path / "tree"), tmp_path / "home"
    drop = _obey_file_modes if os.geteuid() == 0 else None
    env = dict(subprocess_env, KATA_HOME=str(home))
    try:
        kata(root, env, "start", "softmax")
        (home / "softmax.py").write_text("# PASS\n")
        kata(root, env, "check")
        for p in [home, *home.rglob("*")]:
            p.chmod(0o555 if p.is_dir() else 0o444)
        before = sorted(p.name for p in home.rglob("*"))
        for args in (["list"], ["status"], ["history", "softmax", "--attempt", "1"]):
            r = kata(root, env, *args, preexec_fn=drop)
            assert r.returncode == 0 and r.stderr == "", (args, r.stderr)
        assert "softmax attempt 1" in r.stdout and "|# PASS" in r.stdout  # the replay reads it all
        for args in (["start", "rope"], ["hint", "rope"], ["submit"], ["mock"]):
            r = kata(root, env, *args, preexec_fn=drop)
            assert r.returncode == 1 and "is read-only" in r.stderr, (args, r.stderr)
        r = kata(root, env, "check", "--json", preexec_fn=drop)
        assert r.returncode == 0 and json.loads(r.stdout)["recorded"] is False
        assert "not recorded" in r.stderr and "read-only" in r.stderr
        assert sorted(p.name for p in home.rglob("*")) == before
        missing = dict(env, KATA_HOME=str(home / "never-made"))
        r = kata(root, missing, "list", preexec_fn=drop)
        assert r.returncode == 0 and "softmax" in r.stdout and r.stderr == ""
    finally:
        for p in [home, *home.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)


def test_a_read_only_work_folder_of_the_version_before_is_read_as_it_is(tmp_path, subprocess_env):
    """A store of version 4 (whole paths) in a folder that cannot be written cannot be upgraded:
    it is read as it is, its paths where they say."""
    root, home = make_tree(tmp_path / "tree"), tmp_path / "home"
    drop = _obey_file_modes if os.geteuid() == 0 else None
    env = dict(subprocess_env, KATA_HOME=str(home))
    try:
        kata(root, env, "start", "softmax")
        (home / "softmax.py").write_text("# PASS\n")
        kata(root, env, "check")
        con = sqlite3.connect(home / "kata.sqlite3")
        con.execute("UPDATE attempts SET path = ? || '/' || path", (str(home),))
        con.execute("PRAGMA user_version = 4")
        con.commit()
        con.close()
        for p in [home, *home.rglob("*")]:
            p.chmod(0o555 if p.is_dir() else 0o444)
        for args in (["list"], ["status"], ["history", "softmax", "--attempt", "1"]):
            r = kata(root, env, *args, preexec_fn=drop)
            assert r.returncode == 0 and r.stderr == "", (args, r.stderr)
        assert "File: " in r.stdout and "home/softmax.py" in r.stdout and "|# PASS" in r.stdout
    finally:
        for p in [home, *home.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
