"""The store's upgrades that SQL alone cannot make, each a function of the database (inside
the upgrade's transaction) and the work folder it is in (practice.store.schema.MIGRATIONS runs them)."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from practice import paths


def anchor_paths(db: sqlite3.Connection, home: Path) -> None:
    """Version 4 recorded whole paths: each attempt's file and archived copy, relative to the
    work folder now (practice.paths.anchored), so that a folder moved or copied before this
    upgrade finds its files too; a path elsewhere stays whole."""
    rows = db.execute("SELECT id, kata, mode, mock_id, path, archive FROM attempts").fetchall()
    for row_id, kata, mode, mock_id, path, archive in rows:
        name = f"{kata}.py"
        tail = ("mock", str(mock_id), name) if mode == "mock" else (name,)
        kept = ("archive", kata, Path(archive).name) if archive else ()
        db.execute("UPDATE attempts SET path = ?, archive = ? WHERE id = ?",
                   (paths.anchored(home, path, tail), paths.anchored(home, archive, kept), row_id))


def kata_budgets(db: sqlite3.Connection, home: Path) -> None:
    """Version 4 gave a mock interview's questions the interview's budget: each its kata's
    own now (the interview keeps its own in `mocks`), and whether it went over that."""
    from practice import catalogue

    rows = db.execute("SELECT id, kata, time_used FROM attempts WHERE mode = 'mock'").fetchall()
    for row_id, kata, used in rows:
        try:
            budget = 60.0 * catalogue.get(kata).minutes
        except (catalogue.UnknownKata, catalogue.CatalogueError):
            continue
        db.execute("UPDATE attempts SET budget = ?, overtime = CASE WHEN overtime IS NULL THEN NULL "
                   "ELSE ? END WHERE id = ?", (budget, int((used or 0) > budget), row_id))
