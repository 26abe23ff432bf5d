"""The practice database: sessions, checks and history in one sqlite3 file.

Every write is one transaction (`with store.tx() as db:`), begun IMMEDIATE so two `kata`
processes (a `watch` and a `check`) queue for the write lock instead of failing; the file
is in WAL mode so readers never wait for a writer. A file that is not a database, is
damaged, or belongs to another program is renamed aside with a warning and a new one is
started. `PRAGMA user_version` numbers the schema so it can grow; `application_id` marks
the file as ours.
"""
from __future__ import annotations

import os
import sqlite3
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from practice import paths

SCHEMA_VERSION = 1
APPLICATION_ID = 0x6B617461  # "kata"
BUSY_TIMEOUT_MS = 15000

# Version 1. Times are seconds since the epoch; durations are seconds.
SCHEMA = """
CREATE TABLE mocks (
    id          INTEGER PRIMARY KEY,
    started_at  REAL NOT NULL,
    budget      REAL NOT NULL,               -- seconds for the whole interview
    seed        INTEGER NOT NULL,            -- `kata mock --seed`, or the one drawn
    clock       TEXT NOT NULL,               -- running | solved | stopped
    run_since   REAL,                        -- when the clock last started (NULL unless running)
    elapsed     REAL NOT NULL DEFAULT 0,     -- clock seconds before run_since
    state       TEXT NOT NULL,               -- running | ended
    ended_at    REAL,
    end_reason  TEXT,                        -- submitted | deadline
    time_used   REAL
);
CREATE TABLE attempts (
    id              INTEGER PRIMARY KEY,
    kata            TEXT NOT NULL,
    mode            TEXT NOT NULL,           -- practice | mock
    mock_id         INTEGER REFERENCES mocks(id),
    position        INTEGER NOT NULL DEFAULT 0,   -- order within a mock
    path            TEXT NOT NULL,           -- the file the user edits
    archive         TEXT,                    -- where its code was kept when set aside
    restarted_from  INTEGER REFERENCES attempts(id),
    started_at      REAL NOT NULL,
    touched_at      REAL NOT NULL,           -- last start, resume or check: picks the open session
    budget          REAL NOT NULL,
    clock           TEXT NOT NULL,           -- running | paused | solved | stopped
    run_since       REAL,
    elapsed         REAL NOT NULL DEFAULT 0,
    solved_at       REAL,                    -- clock seconds at the first all-pass grading
    state           TEXT NOT NULL,           -- open | submitted | archived
    ended_at        REAL,
    end_reason      TEXT,                    -- submitted | fresh | reset | mock-ended
    passed          INTEGER,                 -- final result, NULL while open
    time_used       REAL,                    -- clock seconds at the end
    overtime        INTEGER,
    hints           INTEGER NOT NULL DEFAULT 0,
    solution_viewed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX attempts_by_kata ON attempts(kata, started_at);
CREATE INDEX attempts_by_state ON attempts(state, touched_at);
CREATE TABLE checks (
    id              INTEGER PRIMARY KEY,
    attempt_id      INTEGER NOT NULL REFERENCES attempts(id),
    at              REAL NOT NULL,
    clock           REAL NOT NULL,           -- the attempt's clock seconds when graded
    source          TEXT NOT NULL,           -- check | watch | submit | mock-end
    passed          INTEGER NOT NULL,
    not_implemented INTEGER NOT NULL,
    n_passed        INTEGER NOT NULL,
    n_total         INTEGER NOT NULL,
    code            TEXT NOT NULL,           -- exactly what was graded
    report          TEXT NOT NULL            -- the grader's report, JSON
);
CREATE INDEX checks_by_attempt ON checks(attempt_id, at);
CREATE TABLE events (
    id          INTEGER PRIMARY KEY,
    at          REAL NOT NULL,
    kata        TEXT,
    attempt_id  INTEGER REFERENCES attempts(id),
    mock_id     INTEGER REFERENCES mocks(id),
    kind        TEXT NOT NULL,   -- start resume pause unpause solved unsolved hint solution
                                 -- compare submit archive restart reset mock-start mock-end
    detail      TEXT
);
CREATE INDEX events_by_kata ON events(kata, kind);
"""


def _statements(script: str) -> list[str]:
    """Split a schema script into statements (run one by one inside our own transaction;
    executescript would commit it early)."""
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    return out


class StoreError(Exception):
    """A problem with the database that the user should read about (not a bug)."""


class _Unusable(Exception):
    """The file at the database's path cannot be our database; set it aside."""


def _warn(msg: str) -> None:
    print(f"warning: {msg}", file=sys.stderr)


def _is_corruption(e: sqlite3.DatabaseError) -> bool:
    if isinstance(e, sqlite3.OperationalError):
        msg = str(e).lower()
        # locked or busy is a wait, never damage
        return "malformed" in msg or "not a database" in msg
    name = getattr(e, "sqlite_errorname", "") or ""
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return True
    msg = str(e).lower()
    return "malformed" in msg or "not a database" in msg or "corrupt" in msg


class Store:
    def __init__(self, home: Path, warn=_warn):
        self.home = Path(home)
        self.path = self.home / paths.DB_NAME
        self.warn = warn
        self.home.mkdir(parents=True, exist_ok=True)
        self.db = self._open()

    # -- opening -------------------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        try:
            return self._open_once()
        except _Unusable as e:
            self.set_aside(str(e))
        except sqlite3.DatabaseError as e:
            if not _is_corruption(e):
                raise StoreError(f"cannot open {self.path}: {e}") from e
            self.set_aside(f"it is damaged ({e})")
        try:
            return self._open_once()
        except (sqlite3.DatabaseError, _Unusable) as e:
            raise StoreError(f"cannot start a new database at {self.path}: {e}") from e

    def _open_once(self) -> sqlite3.Connection:
        if self.path.exists():
            with open(self.path, "rb") as f:
                head = f.read(16)
            if head and head != b"SQLite format 3\x00" and len(head) == 16:
                raise _Unusable("it is not an SQLite database")
            if head and len(head) < 16:
                raise _Unusable("it is not an SQLite database (truncated)")
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        try:
            db.row_factory = sqlite3.Row
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            app = db.execute("PRAGMA application_id").fetchone()[0]
            if version == SCHEMA_VERSION and app == APPLICATION_ID:
                ok = db.execute("PRAGMA quick_check").fetchone()[0]
                if ok != "ok":
                    raise _Unusable(f"it is damaged ({ok})")
                db.execute("PRAGMA foreign_keys = ON")
                return db
            self._initialise(db)
            db.execute("PRAGMA foreign_keys = ON")
            return db
        except BaseException:
            db.close()
            raise

    def _initialise(self, db: sqlite3.Connection) -> None:
        if db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            db.execute("PRAGMA journal_mode = WAL")
        db.execute("BEGIN IMMEDIATE")
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            app = db.execute("PRAGMA application_id").fetchone()[0]
            tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if app == APPLICATION_ID and version > SCHEMA_VERSION:
                db.rollback()
                raise StoreError(
                    f"{self.path} was written by a newer version of attention-katas "
                    f"(schema {version}, this one knows {SCHEMA_VERSION}); upgrade with "
                    "`pip install -e .` in the repository"
                )
            if app == APPLICATION_ID and version == SCHEMA_VERSION:
                db.rollback()  # another process initialised it meanwhile
                return
            if app != APPLICATION_ID and (tables or version):
                db.rollback()
                raise _Unusable("it belongs to another program")
            if app == 0 and version == 0:
                for statement in _statements(SCHEMA):
                    db.execute(statement)
                db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                db.commit()
                return
            self._migrate(db, version)
            db.commit()
        except BaseException:
            if db.in_transaction:
                db.rollback()
            raise

    def _migrate(self, db: sqlite3.Connection, version: int) -> None:
        """Bring an older schema up to SCHEMA_VERSION (none older exists yet)."""
        raise _Unusable(f"it has an unknown schema version {version}")

    def set_aside(self, reason: str) -> Path | None:
        """Rename the database file (and its WAL files) aside and warn on stderr."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        dest = self.path.with_name(f"{self.path.name}.broken-{stamp}")
        n = 1
        while dest.exists():
            dest = self.path.with_name(f"{self.path.name}.broken-{stamp}-{n}")
            n += 1
        moved = None
        for suffix in ("", "-wal", "-shm", "-journal"):
            src = Path(str(self.path) + suffix)
            try:
                os.replace(src, Path(str(dest) + suffix))
                if not suffix:
                    moved = dest
            except FileNotFoundError:
                pass
        if moved is not None:
            self.warn(
                f"the practice database {self.path} could not be used: {reason}. "
                f"It was kept as {moved.name} and a new one started; your attempt files are untouched."
            )
        return moved

    def close(self) -> None:
        self.db.close()

    # -- transactions ----------------------------------------------------------------
    @contextmanager
    def tx(self):
        """One atomic write: everything inside commits together or not at all. Yields the
        store itself, so the queries of practice.records run inside the transaction."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self
        except BaseException:
            self.db.rollback()
            raise
        else:
            self.db.commit()

    def execute(self, sql: str, args=()) -> sqlite3.Cursor:
        return self.db.execute(sql, args)

    def one(self, sql: str, args=()) -> sqlite3.Row | None:
        return self.db.execute(sql, args).fetchone()

    def all(self, sql: str, args=()) -> list[sqlite3.Row]:
        return self.db.execute(sql, args).fetchall()
