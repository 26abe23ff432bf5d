"""Records that cannot be read are set aside, not lost, and not in the way.

A record whose text does not decode (a flipped bit, a write by another program) would
make every read that meets it fail, while sqlite's own check of the file passes. Such a
record is moved, with everything that belongs to it (an attempt's gradings and events, a
mock interview's attempts), into the table `set_aside` as JSON (the undecodable text as
hex) and a warning says so; everything else stays usable.
"""
from __future__ import annotations

import json
import os
import sqlite3

from graders.engine.grammar import count, verb
from practice import clock

TABLES = ("mocks", "attempts", "gradings", "events")
# (table, column) pairs that point at a record of the key's table and go with it.
BELONGS_TO = {"mocks": [("attempts", "mock_id"), ("events", "mock_id")],
              "attempts": [("gradings", "attempt_id"), ("events", "attempt_id")]}


def _unreadable(db: sqlite3.Connection) -> list[tuple[str, int, str]]:
    """(table, id, column) of every record with text that does not decode."""
    found = []
    for table in TABLES:
        columns = [os.fsdecode(r[1]) for r in db.execute(f"PRAGMA table_info({table})")]
        for col in columns:
            rows = db.execute(f"SELECT id, {col} FROM {table} WHERE typeof({col}) = 'text'")
            for row_id, raw in rows:
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError:
                    found.append((table, row_id, col))
    return found


def _kept(value):
    """A value as JSON keeps it: text as text, bytes that do not decode as hex."""
    if not isinstance(value, bytes):
        return value
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return {"hex": value.hex()}


def _as_json(row: sqlite3.Row) -> str:
    return json.dumps({k: _kept(row[k]) for k in row.keys()})


def _move(db: sqlite3.Connection, table: str, row_id: int, reason: str) -> int:
    """Move one record and what belongs to it into set_aside; how many records moved."""
    moved = 0
    for child, col in BELONGS_TO.get(table, []):
        for (child_id,) in db.execute(f"SELECT id FROM {child} WHERE {col} = ?",
                                      (row_id,)).fetchall():
            moved += _move(db, child, child_id, f"it belongs to {table} {row_id}, set aside")
    if table == "attempts":
        db.execute("UPDATE attempts SET restarted_from = NULL WHERE restarted_from = ?",
                   (row_id,))
    row = db.execute(f"SELECT * FROM {table} WHERE id = ?", (row_id,)).fetchone()
    if row is None:  # already moved with the record it belongs to
        return moved
    db.execute("INSERT INTO set_aside (at, tbl, row_id, reason, data) VALUES (?,?,?,?,?)",
               (clock.now(), table, row_id, reason, _as_json(row)))
    db.execute(f"DELETE FROM {table} WHERE id = ?", (row_id,))
    return moved + 1


def set_aside_unreadable(store) -> int:
    """Move every record of `store` whose text does not decode into set_aside, inside the
    transaction under way or one of its own; warn, and return how many records moved."""
    if store.readonly:
        raise store.read_only_error()
    db = store.db
    own = not db.in_transaction
    factory, db.text_factory = db.text_factory, bytes
    try:
        if own:
            db.execute("BEGIN IMMEDIATE")
        found = _unreadable(db)
        moved = sum(_move(db, table, row_id, f"its {col} is not valid UTF-8 text")
                    for table, row_id, col in found)
        if own:
            db.commit()
    except BaseException:
        if own and db.in_transaction:
            db.rollback()
        raise
    finally:
        db.text_factory = factory
    if found:
        where = ", ".join(f"{t} {i}" for t, i, _ in found)
        store.warn(f"{count(len(found), 'record')} of the practice "
                   f"database {store.path} could not be read ({where}); "
                   f"{count(moved, 'record')} with what belongs to "
                   f"{'them' if len(found) != 1 else 'it'} "
                   f"{verb(moved, 'was', 'were')} kept in its table set_aside, and everything else is usable.")
    return moved
