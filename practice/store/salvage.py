"""What can still be read of a database file set aside as damaged, copied into the new one.

A damaged page (a disk error, a write by another program) makes sqlite refuse the file, and
the store sets the whole file aside (practice.store.database). Most of its records usually sit on
pages that are whole: each table is copied row by row, in an order where what a record
points at comes first, and a row that cannot be read, or that points at one that was lost,
is left in the file set aside. The file itself is never changed.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

# Parents before children: attempts point at mocks and at earlier attempts, the rest at both.
TABLES = ("mocks", "attempts", "gradings", "events", "ratings", "set_aside")


def salvage(broken: Path, db: sqlite3.Connection, version: int, app: int) -> tuple[int, int]:
    """Copy every readable row of `broken` (ours, at schema `version`) into the empty `db`;
    (rows copied, rows left behind). (0, 0) when `broken` is not a database of ours at that
    version, or cannot be opened at all."""
    try:
        old = sqlite3.connect(broken.resolve().as_uri() + "?mode=ro&immutable=1", uri=True)
    except sqlite3.Error:
        return 0, 0
    try:
        if _pragma(old, "application_id") != app or _pragma(old, "user_version") != version:
            return 0, 0
        copied = lost = 0
        db.execute("BEGIN IMMEDIATE")
        for table in TABLES:
            c, n = _copy(old, db, table)
            copied, lost = copied + c, lost + n
        db.execute("COMMIT")
        return copied, lost
    except sqlite3.Error:
        if db.in_transaction:
            db.rollback()
        return 0, 0
    finally:
        old.close()


def _pragma(db: sqlite3.Connection, name: str) -> int | None:
    try:
        return db.execute(f"PRAGMA {name}").fetchone()[0]
    except sqlite3.Error:
        return None


PROBE = 1000  # past a damaged page, rowids are looked up one by one until this many in a row are missing


def _rowids(old: sqlite3.Connection, table: str) -> list[int]:
    """The table's rowids: read in order until a damaged page stops the scan, then looked up
    one by one past it (a lookup by rowid does not need the damaged page)."""
    ids: list[int] = []
    try:
        for (row_id,) in old.execute(f"SELECT rowid FROM {table} ORDER BY rowid"):
            ids.append(row_id)
        return ids
    except sqlite3.Error:
        pass
    row_id, misses = (ids[-1] if ids else 0), 0
    while misses < PROBE:
        row_id += 1
        try:
            found = old.execute(f"SELECT 1 FROM {table} WHERE rowid = ?", (row_id,)).fetchone()
        except sqlite3.Error:
            found = None
        if found:
            ids.append(row_id)
            misses = 0
        else:
            misses += 1
    return ids


def _copy(old: sqlite3.Connection, db: sqlite3.Connection, table: str) -> tuple[int, int]:
    """Row by row, each row alone: one that cannot be read or points at a lost row is left."""
    try:
        columns = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
    except sqlite3.Error:
        return 0, 0
    ids = _rowids(old, table)
    names = ", ".join(columns)
    insert = f"INSERT INTO {table} (rowid, {names}) VALUES (?, {', '.join('?' for _ in columns)})"
    copied = lost = 0
    for row_id in ids:
        try:
            row = old.execute(f"SELECT {names} FROM {table} WHERE rowid = ?", (row_id,)).fetchone()
            db.execute("SAVEPOINT one")
            db.execute(insert, (row_id, *row))
            db.execute("RELEASE one")
            copied += 1
        except sqlite3.IntegrityError:  # it points at a row that was lost
            db.execute("ROLLBACK TO one")
            db.execute("RELEASE one")
            lost += 1
        except sqlite3.Error:
            lost += 1
    return copied, lost
