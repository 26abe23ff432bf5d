"""The practice database: attempts, their gradings and history in one sqlite3 file.

Every write is one transaction (`with store.tx() as s:`), begun IMMEDIATE so two `kata`
processes (a `watch` and a `check`) queue for the write lock instead of failing; the file
is in WAL mode so readers never wait for a writer. A new database is built beside its
final name and linked into place whole, so a file at that name is never half made by
us: one that is empty, not a database, damaged, or another program's is renamed aside
with a warning and a new one is started. A record whose text does not decode is moved
into the table `set_aside` with a warning (practice.store.damage) and the rest stays usable.
A folder that cannot be written is opened read-only: reading commands work, and every
write raises ReadOnly. A write that fails (a full disk) raises WriteFailed and leaves
the database as it was. `PRAGMA user_version` numbers the schema so it can grow;
`application_id` marks the file as ours.
"""
from __future__ import annotations

import errno
import os
import sqlite3
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from graders.engine.grammar import count, verb
from practice import paths
from practice.store.schema import APPLICATION_ID, MIGRATIONS, SCHEMA, SCHEMA_VERSION, statements_of

BUSY_TIMEOUT_MS = 15000
WAIT_STEP_MS = 100  # a wait for the write lock returns to Python this often (see Store._begin)


class StoreError(Exception):
    """A problem with the database that the user should read about (not a bug)."""


class WriteFailed(StoreError):
    """A write did not reach the disk (full, failing, or no longer writable); nothing of
    it was kept."""


class ReadOnly(StoreError):
    """The work folder cannot be written, so nothing can be recorded."""


class UnreadableText(Exception):
    """Text in a record that does not decode as UTF-8 (see practice.store.damage)."""


class RecordsSetAside(Exception):
    """Unreadable records were set aside before the command wrote anything: run it again
    from the start, so that nothing it read before differs from what it reads now."""


class _Unusable(Exception):
    """The file at the database's path cannot be our database; set it aside."""


def _warn(msg: str) -> None:
    print(f"warning: {msg}", file=sys.stderr)


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UnreadableText(str(e)) from None


def _errname(e: BaseException) -> str:
    return getattr(e, "sqlite_errorname", "") or ""


def _is_corruption(e: sqlite3.DatabaseError) -> bool:
    if isinstance(e, sqlite3.OperationalError):
        msg = str(e).lower()
        # locked or busy is a wait, never damage
        return "malformed" in msg or "not a database" in msg
    if _errname(e).startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return True
    msg = str(e).lower()
    return "malformed" in msg or "not a database" in msg or "corrupt" in msg


def _is_read_only(e: BaseException) -> bool:
    if isinstance(e, OSError):
        return e.errno in (errno.EACCES, errno.EPERM, errno.EROFS)
    return (_errname(e).startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN"))
            or "readonly" in str(e) or "unable to open" in str(e))


def _in_the_way(folder: Path) -> str | None:
    """What keeps `folder` from being made: a file where it or a folder above it should be."""
    for p in (folder, *folder.parents):
        if p.exists() or p.is_symlink():
            return None if p.is_dir() else f"{p} is a file, not a folder"
    return None


def _is_write_failure(e: BaseException) -> bool:
    msg = str(e).lower()
    return (_errname(e).startswith(("SQLITE_FULL", "SQLITE_IOERR", "SQLITE_READONLY"))
            or "disk" in msg or "readonly" in msg)


class Store:
    def __init__(self, home: Path, warn=_warn):
        self.home = Path(home)
        self.path = self.home / paths.DB_NAME
        self.warn = warn
        self.readonly = False
        self.wrote = False  # a transaction of this store has committed
        self.db = self._open()
        self.db.row_factory = sqlite3.Row
        self.db.text_factory = _text

    # -- opening -------------------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        try:
            self._make_home()
            return self._open_writable()
        except (OSError, sqlite3.OperationalError) as e:
            if not _is_read_only(e):
                raise
            return self._open_read_only(e)

    def _make_home(self) -> None:
        """The work folder, made if missing; a StoreError that says why when it cannot be
        (a folder that may not be written is opened read-only instead)."""
        try:
            self.home.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            if _is_read_only(e):
                raise
            raise StoreError(f"cannot use the work folder {self.home}: "
                             f"{_in_the_way(self.home) or e.strerror or e}") from None

    def _open_writable(self) -> sqlite3.Connection:
        try:
            return self._open_once()
        except _Unusable as e:
            reason = str(e)
        except sqlite3.DatabaseError as e:
            if not _is_corruption(e):
                raise
            reason = f"it is damaged ({e})"
        moved = self.set_aside(reason, quiet=True)
        try:
            db = self._open_once()
        except (sqlite3.DatabaseError, _Unusable) as e:
            raise StoreError(f"cannot start a new database at {self.path}: {e}") from e
        if moved is not None:
            from practice.store.salvage import salvage

            copied, lost = salvage(moved, db, SCHEMA_VERSION, APPLICATION_ID)
            kept = (f"{count(copied, 'record')} that could still be read {verb(copied, 'was', 'were')} copied "
                    f"into a new one{f' ({lost} could not be, and stay in it)' if lost else ''}") if copied else \
                "a new one started"
            self.warn(f"the practice database {self.path} could not be used: {reason}. "
                      f"It was kept as {moved.name} and {kept}; your attempt files are untouched.")
        return db

    def _open_once(self) -> sqlite3.Connection:
        if not self.path.exists():
            self._create()
        with open(self.path, "rb") as f:
            head = f.read(16)
        if not head:
            raise _Unusable("it is empty (0 bytes)")
        if head != b"SQLite format 3\x00":
            raise _Unusable("it is not an SQLite database"
                            + (" (truncated)" if len(head) < 16 else ""))
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        try:
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self._check_ours(db)
            db.execute("PRAGMA foreign_keys = ON")
            return db
        except BaseException:
            db.close()
            raise

    def _check_ours(self, db: sqlite3.Connection, writable: bool = True) -> None:
        """Make sure `db` is our database at SCHEMA_VERSION (migrating an older one)."""
        version = db.execute("PRAGMA user_version").fetchone()[0]
        app = db.execute("PRAGMA application_id").fetchone()[0]
        if app == APPLICATION_ID and version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} was written by a newer version of attention-katas "
                f"(schema {version}, this one knows {SCHEMA_VERSION}); upgrade with "
                "`pip install -e .` in the repository")
        # read-only, version 4 is read as it is: the same tables, its whole paths read as they are
        if app == APPLICATION_ID and (version == SCHEMA_VERSION or version == 4 and not writable):
            ok = db.execute("PRAGMA quick_check").fetchone()[0]
            if ok != "ok":
                raise _Unusable(f"it is damaged ({ok})")
            return
        if not writable:
            raise StoreError(f"{self.path} needs an upgrade, and its folder is read-only")
        self._initialise(db)

    def _create(self) -> None:
        """Build a new, empty database beside the path and link it into place whole (if
        another process got there first, its database is used)."""
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".new", dir=self.home)
        os.close(fd)
        try:
            db = sqlite3.connect(tmp, isolation_level=None)
            try:
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("BEGIN")
                for statement in statements_of(SCHEMA):
                    db.execute(statement)
                db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                db.execute("COMMIT")
            finally:
                db.close()
            paths.link_new(Path(tmp), self.path)
        finally:
            for suffix in ("", "-wal", "-shm", "-journal"):
                paths.unlink_quietly(tmp + suffix)

    def _initialise(self, db: sqlite3.Connection) -> None:
        """Bring an existing file up to SCHEMA_VERSION: an empty SQLite database that no
        program has used yet, or our own at an older version."""
        if db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            db.execute("PRAGMA journal_mode = WAL")
        db.execute("BEGIN IMMEDIATE")
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            app = db.execute("PRAGMA application_id").fetchone()[0]
            tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if app == APPLICATION_ID and version >= SCHEMA_VERSION:
                db.rollback()  # another process initialised it meanwhile
                return
            if app != APPLICATION_ID and (tables or version):
                raise _Unusable("it belongs to another program")
            if app != APPLICATION_ID:
                statements = statements_of(SCHEMA)
            elif all(v in MIGRATIONS for v in range(version, SCHEMA_VERSION)):
                statements = [st for v in range(version, SCHEMA_VERSION) for st in MIGRATIONS[v]]
            else:
                raise _Unusable(f"it has an unknown schema version {version}")
            for statement in statements:
                statement(db, self.home) if callable(statement) else db.execute(statement)
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.commit()
        except BaseException:
            if db.in_transaction:
                db.rollback()
            raise

    def _open_read_only(self, cause: BaseException) -> sqlite3.Connection:
        """The folder cannot be written: read the database as it is (or an empty one
        when there is none); every write will raise ReadOnly."""
        self.readonly = True
        if not self.path.is_file():
            db = sqlite3.connect(":memory:", isolation_level=None)
            for statement in statements_of(SCHEMA):
                db.execute(statement)
            return db
        uri = self.path.resolve().as_uri()
        # mode=ro reads a WAL database whose -wal and -shm files exist; immutable=1 also
        # reads one without them, which a folder nobody can write cannot change anyway.
        for query in ("?mode=ro", "?mode=ro&immutable=1"):
            try:
                db = sqlite3.connect(uri + query, uri=True, isolation_level=None)
                self._check_ours(db, writable=False)
                return db
            except sqlite3.OperationalError:
                continue
            except _Unusable as e:
                raise StoreError(f"{self.path} cannot be used ({e}) and its folder is "
                                 "read-only, so it cannot be set aside") from None
        raise StoreError(f"cannot read {self.path}: {cause}") from cause

    def set_aside(self, reason: str, quiet: bool = False) -> Path | None:
        """Rename the database file (and its WAL files) aside and warn on stderr (unless
        `quiet`: the caller says what became of it)."""
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
        if moved is not None and not quiet:
            self.warn(
                f"the practice database {self.path} could not be used: {reason}. "
                f"It was kept as {moved.name} and a new one started; your attempt files are untouched."
            )
        return moved

    def close(self) -> None:
        self.db.close()

    # -- transactions ----------------------------------------------------------------
    def read_only_error(self) -> ReadOnly:
        return ReadOnly(f"the work folder {self.home} is read-only, so nothing can be "
                        "recorded there (KATA_HOME names another folder)")

    def require_writable(self) -> None:
        """ReadOnly before a command writes any file, when the folder is read-only."""
        if self.readonly:
            raise self.read_only_error()

    @contextmanager
    def tx(self):
        """One atomic write: everything inside commits together or not at all. Yields the
        store itself, so the queries of practice.store.records run inside the transaction."""
        if self.readonly:
            raise self.read_only_error()
        try:
            self._begin()
            yield self
            self.db.commit()
            self.wrote = True
        except BaseException as e:
            if self.db.in_transaction:
                self.db.rollback()
            if isinstance(e, sqlite3.OperationalError) and _is_write_failure(e):
                raise WriteFailed(f"could not write to {self.path}: {e}"
                                  + (" (is the disk full?)" if "I/O" in str(e) else "")) from e
            raise

    def _begin(self) -> None:
        """BEGIN IMMEDIATE, waiting for another writer in steps of WAIT_STEP_MS up to
        BUSY_TIMEOUT_MS: sqlite's own wait cannot be interrupted, and a Ctrl-C must end the
        command at once, not when the wait is over."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        self.db.execute(f"PRAGMA busy_timeout = {WAIT_STEP_MS}")
        try:
            while True:
                try:
                    self.db.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as e:
                    if ("locked" not in str(e) and "busy" not in str(e)) or time.monotonic() > deadline:
                        raise
        finally:
            self.db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")

    def execute(self, sql: str, args=()) -> sqlite3.Cursor:
        """Run a statement that writes (read with `one` or `all`)."""
        return self.db.execute(sql, args)

    def one(self, sql: str, args=()) -> sqlite3.Row | None:
        return self._read(lambda: self.db.execute(sql, args).fetchone())

    def all(self, sql: str, args=()) -> list[sqlite3.Row]:
        return self._read(lambda: self.db.execute(sql, args).fetchall())

    def _read(self, fetch):
        """Run a read; if a record in it does not decode, set the unreadable records
        aside (practice.store.damage), then have the command start again if it has written
        nothing yet, else read again."""
        try:
            return fetch()
        except UnreadableText:
            from practice.store import damage

            damage.set_aside_unreadable(self)
            if not self.wrote and not self.db.in_transaction:
                raise RecordsSetAside() from None
        try:
            return fetch()
        except UnreadableText as e:
            raise StoreError(f"a record of {self.path} cannot be read ({e})") from None
