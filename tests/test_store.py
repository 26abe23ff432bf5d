"""The sqlite3 store: damaged and foreign files set aside, two processes at once, and a
process killed in the middle of a write."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from practice.store import Store, StoreError, schema

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fresh_store(home, warnings=None):
    return Store(home, warn=(warnings.append if warnings is not None else lambda m: None))


def add_attempt(db, kata="softmax"):
    return db.execute(
        "INSERT INTO attempts (kata, mode, path, started_at, touched_at, budget, clock, state) "
        "VALUES (?, 'practice', '/x.py', 0, 0, 600, 'paused', 'open')", (kata,)).lastrowid


def test_new_store_has_schema_version_application_id_and_wal(tmp_path):
    s = fresh_store(tmp_path)
    assert s.one("PRAGMA user_version")[0] == schema.SCHEMA_VERSION
    assert s.one("PRAGMA application_id")[0] == schema.APPLICATION_ID
    assert s.one("PRAGMA journal_mode")[0] == "wal"
    tables = {r[0] for r in s.all("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"attempts", "gradings", "events", "mocks", "ratings", "set_aside"}
    s.close()
    again = fresh_store(tmp_path)  # reopening keeps it
    assert again.one("PRAGMA user_version")[0] == schema.SCHEMA_VERSION


@pytest.mark.parametrize("content", [
    b"this is not a database at all, just some text that is long enough\n" * 10,
    b"SQLite",  # truncated
    b"SQLite format 3\x00" + b"\xff" * 4000,  # a header and garbage
])
def test_a_file_that_is_not_a_database_is_set_aside(tmp_path, content):
    (tmp_path / "kata.sqlite3").write_bytes(content)
    warnings = []
    s = fresh_store(tmp_path, warnings)
    assert len(warnings) == 1 and "kept as kata.sqlite3.broken-" in warnings[0]
    kept = list(tmp_path.glob("kata.sqlite3.broken-*"))
    assert len(kept) == 1 and kept[0].read_bytes() == content
    with s.tx() as db:
        add_attempt(db)
    assert s.one("SELECT count(*) FROM attempts")[0] == 1


def test_another_programs_database_is_set_aside(tmp_path):
    con = sqlite3.connect(tmp_path / "kata.sqlite3")
    con.execute("CREATE TABLE recipes (name TEXT)")
    con.execute("INSERT INTO recipes VALUES ('bread')")
    con.commit()
    con.close()
    warnings = []
    fresh_store(tmp_path, warnings)
    assert "another program" in warnings[0]
    kept = next(tmp_path.glob("kata.sqlite3.broken-*"))
    assert sqlite3.connect(kept).execute("SELECT name FROM recipes").fetchone() == ("bread",)


def test_a_damaged_database_is_set_aside(tmp_path):
    s = fresh_store(tmp_path)
    with s.tx() as db:
        for _ in range(300):
            add_attempt(db)
    s.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    s.close()
    path = tmp_path / "kata.sqlite3"
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 3 * page
    data[page + 10: 3 * page] = b"\x5a" * (2 * page - 10)  # scribble over b-tree pages
    path.write_bytes(bytes(data))
    warnings = []
    s = fresh_store(tmp_path, warnings)
    assert warnings and "damaged" in warnings[0]
    assert s.one("SELECT count(*) FROM attempts")[0] == 0


def _schema_3() -> str:
    """The schema as version 3 had it: no strict interviews, no ratings of follow-up questions."""
    v4 = schema.SCHEMA
    strict = v4.index(",\n    strict ")
    v3 = v4[:strict] + v4[v4.index("\n);", strict):]
    return v3[:v3.index("CREATE TABLE ratings")] + v3[v3.index("CREATE TABLE set_aside"):]


def _schema_2() -> str:
    """The schema as version 2 had it: the gradings in a table `checks`, their command in `source`."""
    v2 = _schema_3().replace("CREATE TABLE gradings (", "CREATE TABLE checks (")
    v2 = v2.replace("    command         TEXT NOT NULL,", "    source          TEXT NOT NULL,")
    return v2.replace("CREATE INDEX gradings_by_attempt ON gradings(", "CREATE INDEX checks_by_attempt ON checks(")


def _old_database(tmp_path, version: int) -> None:
    script = _schema_3() if version == 3 else _schema_2()
    if version == 1:
        script = script[:script.index("CREATE TABLE set_aside")]
        script = script.replace("    seeded      INTEGER NOT NULL DEFAULT 1,  -- 1: picked by --seed alone; 0: by need\n", "")
        script = script.replace("code            BLOB NOT NULL", "code            TEXT NOT NULL")
    con = sqlite3.connect(tmp_path / "kata.sqlite3")
    con.executescript(script)
    con.execute("INSERT INTO mocks (started_at, budget, seed, clock, state) "
                "VALUES (0, 60, 7, 'stopped', 'ended')")
    add_attempt(con)
    table, column = ("gradings", "command") if version == 3 else ("checks", "source")
    con.execute(f"INSERT INTO {table} (attempt_id, at, clock, {column}, passed, not_implemented, "
                "n_passed, n_total, code, report) VALUES (1, 0, 0, 'watch', 0, 1, 0, 1, 'x = 1', '{}')")
    con.execute(f"PRAGMA application_id = {schema.APPLICATION_ID}")
    con.execute(f"PRAGMA user_version = {version}")
    con.commit()
    con.close()


@pytest.mark.parametrize("version", [1, 2, 3])
def test_an_older_database_is_upgraded_in_place_and_loses_nothing(tmp_path, version):
    _old_database(tmp_path, version)
    warnings = []
    s = fresh_store(tmp_path, warnings)
    assert warnings == [] and s.one("PRAGMA user_version")[0] == schema.SCHEMA_VERSION
    assert s.one("SELECT seed, seeded FROM mocks")[:] == (7, 1)
    row = s.one("SELECT command, code FROM gradings")
    assert (row["command"], row["code"]) == ("watch", "x = 1")  # the grading, renamed, with its text row
    assert s.one("SELECT count(*) FROM set_aside")[0] == 0
    assert s.one("SELECT count(*) FROM sqlite_master WHERE name = 'checks'")[0] == 0
    assert s.one("SELECT strict FROM mocks")[0] == 0  # the interviews before strict ones were not
    assert s.one("SELECT count(*) FROM ratings")[0] == 0
    for table in ("mocks", "ratings"):
        columns = {r[1] for r in s.all(f"PRAGMA table_info({table})")}
        assert columns == {r[1] for r in fresh_store(tmp_path / "new").all(f"PRAGMA table_info({table})")}


def test_a_database_from_a_newer_version_is_refused_not_set_aside(tmp_path):
    s = fresh_store(tmp_path)
    s.db.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION + 1}")
    s.close()
    with pytest.raises(StoreError, match="newer version"):
        fresh_store(tmp_path)
    assert not list(tmp_path.glob("*.broken-*"))


def test_the_command_line_warns_on_stderr_and_carries_on(kenv):
    kenv.home.mkdir(parents=True)
    (kenv.home / "kata.sqlite3").write_text("garbage " * 100)
    r = kenv.run("status")
    assert r.exit_code == 0
    assert "warning: the practice database" in r.stderr and "Traceback" not in r.stderr
    assert "No kata in progress" in r.stdout
    assert kenv.run("start", "softmax").exit_code == 0


WRITER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {repo!r})
    from practice.store import Store
    s = Store(sys.argv[1])
    for i in range(int(sys.argv[2])):
        with s.tx() as db:
            n = db.execute("SELECT count(*) FROM gradings").fetchone()[0]
            db.execute("INSERT INTO gradings (attempt_id, at, clock, command, passed, "
                       "not_implemented, n_passed, n_total, code, report) "
                       "VALUES (1, ?, 0, ?, 0, 0, 0, 1, 'x', '{{}}')", (n, sys.argv[3]))
            db.execute("UPDATE attempts SET hints = hints + 1 WHERE id = 1")
""").format(repo=REPO)


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    s = fresh_store(tmp_path)
    with s.tx() as db:
        add_attempt(db)
    s.close()
    n = 150
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(n), name])
             for name in ("watch", "check")]
    for p in procs:
        assert p.wait(timeout=60) == 0
    s = fresh_store(tmp_path)
    assert s.one("PRAGMA integrity_check")[0] == "ok"
    assert s.one("SELECT count(*) FROM gradings")[0] == 2 * n
    assert s.one("SELECT hints FROM attempts WHERE id = 1")[0] == 2 * n  # no lost update
    # each transaction saw every earlier one: the counts it read are all different
    assert len({r[0] for r in s.all("SELECT at FROM gradings")}) == 2 * n


KILLED = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {repo!r})
    from practice.store import Store
    s = Store(sys.argv[1])
    with s.tx() as db:
        for i in range(2000):
            db.execute("INSERT INTO events (at, kind, detail) VALUES (?, 'half', ?)",
                       (i, 'x' * 500))
        os.kill(os.getpid(), signal.SIGKILL)
""").format(repo=REPO)


def test_a_process_killed_mid_transaction_leaves_the_store_whole(tmp_path):
    s = fresh_store(tmp_path)
    with s.tx() as db:
        add_attempt(db)
    s.close()
    p = subprocess.run([sys.executable, "-c", KILLED, str(tmp_path)], timeout=60)
    assert p.returncode == -signal.SIGKILL
    warnings = []
    s = fresh_store(tmp_path, warnings)
    assert warnings == []  # nothing was damaged, so nothing was set aside
    assert s.one("PRAGMA integrity_check")[0] == "ok"
    assert s.one("SELECT count(*) FROM events WHERE kind = 'half'")[0] == 0
    assert s.one("SELECT count(*) FROM attempts")[0] == 1
    with s.tx() as db:  # and it takes writes again
        add_attempt(db)
