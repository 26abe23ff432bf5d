"""Every query of the practice database, by name (the store layer's second half).

`practice.store.database` opens the file and runs transactions; this module holds every SQL
statement the rest of the package needs, so that sessions, mock interviews, history and
watch speak of attempts, checks and events, never of SQL. Each function takes `s`, the
open `Store` (or the same store inside `with store.tx() as s:`), and returns its records
(practice.store.rows);
a grading's report is written and read as the grader's type (`stored_report`).

An attempt's file and its archived copy are recorded relative to the work folder
(practice.paths.stored) and read back as the files of the folder the store is in now
(`path` and `archive` of an `Attempt` are whole paths), so that a work folder moved,
copied or cloned again grades its own files.
"""
from __future__ import annotations

import json
from typing import TypeVar

from graders.engine.report import Report
from practice import clock, paths
from practice.store.rows import Attempt, Event, Grading, LastResult, Mock, Rating, Row

R = TypeVar("R", bound=Row)


def _one(s, kind: type[R], sql: str, args=()) -> R | None:
    row = s.one(sql, args)
    return kind.of(_located(s, dict(row))) if row else None


def _all(s, kind: type[R], sql: str, args=()) -> list[R]:
    return [kind.of(_located(s, dict(r))) for r in s.all(sql, args)]


def _located(s, row: dict) -> dict:
    """An attempt's row with its file and archived copy where they are now."""
    if "path" in row and "archive" in row:
        row["path"] = paths.located(s.home, row["path"])
        row["archive"] = paths.located(s.home, row["archive"])
    return row


def _stored(s, path) -> str | None:
    return None if path is None else paths.stored(s.home, path)


# -- attempts ---------------------------------------------------------------------------
def attempt(s, attempt_id: int) -> Attempt:
    return _one(s, Attempt, "SELECT * FROM attempts WHERE id = ?", (attempt_id,))


def open_attempts(s) -> list[Attempt]:
    """Every open attempt, the one touched last first."""
    return _all(s, Attempt, "SELECT * FROM attempts WHERE state = 'open' "
                            "ORDER BY touched_at DESC, id DESC")


def open_practice_attempt(s, kata: str) -> Attempt | None:
    """The open practice attempt at `kata` (at most one exists), or None."""
    return _one(s, Attempt, "SELECT * FROM attempts WHERE kata = ? AND state = 'open' "
                            "AND mode = 'practice' ORDER BY touched_at DESC, id DESC", (kata,))


def latest_in_place(s, kata: str) -> Attempt | None:
    """The latest attempt at `kata` whose file was never archived."""
    return _one(s, Attempt, "SELECT * FROM attempts WHERE kata = ? AND archive IS NULL "
                            "ORDER BY started_at DESC, id DESC", (kata,))


def owns_path(s, path: str) -> bool:
    """True when an attempt whose file is still in place is kept at `path`."""
    return s.one("SELECT 1 FROM attempts WHERE path = ? AND archive IS NULL",
                 (_stored(s, path),)) is not None


def last_touched(s) -> Attempt | None:
    """The practice attempt touched last, whatever its state."""
    return _one(s, Attempt, "SELECT * FROM attempts WHERE mode = 'practice' "
                            "ORDER BY touched_at DESC, id DESC LIMIT 1")


def latest(s, kata: str) -> Attempt | None:
    """The attempt at `kata` started last, whatever its state or mode."""
    return _one(s, Attempt, "SELECT * FROM attempts WHERE kata = ? ORDER BY started_at DESC, id DESC "
                            "LIMIT 1", (kata,))


def running_practice(s) -> list[Attempt]:
    return _all(s, Attempt, "SELECT * FROM attempts WHERE state = 'open' AND clock = 'running' "
                            "AND mode = 'practice'")


def ever_passed(s, kata: str) -> bool:
    return s.one(
        "SELECT 1 FROM attempts a WHERE a.kata = ? AND (a.passed = 1 OR a.solved_at IS NOT "
        "NULL OR EXISTS (SELECT 1 FROM gradings c WHERE c.attempt_id = a.id AND c.passed = 1))",
        (kata,)) is not None


def insert_attempt(s, kata: str, mode: str, path: str, t: float, budget: float,
                   restarted_from: int | None = None, mock_id: int | None = None,
                   position: int = 0, touched_at: float | None = None) -> int:
    """A new open attempt whose clock runs from `t`; its id."""
    return s.execute(
        "INSERT INTO attempts (kata, mode, mock_id, position, path, restarted_from, "
        "started_at, touched_at, budget, clock, run_since, elapsed, state) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, 0, 'open')",
        (kata, mode, mock_id, position, _stored(s, path), restarted_from, t,
         t if touched_at is None else touched_at, budget, t)).lastrowid


def set_clock(s, row_id: int, state: str, run_since: float | None,
              elapsed: float | None = None, table: str = "attempts") -> None:
    """Set the clock of an attempt (or, with table="mocks", of a mock interview);
    `elapsed` (the seconds banked before run_since) when given."""
    assert table in ("attempts", "mocks")
    banked = "" if elapsed is None else ", elapsed = :elapsed"
    s.execute(f"UPDATE {table} SET clock = :state, run_since = :since{banked} WHERE id = :id",
              {"state": state, "since": run_since, "elapsed": elapsed, "id": row_id})


def mark_solved(s, attempt_id: int, on_clock: float) -> None:
    """The clock stops at `on_clock`, the time it took to pass (again, after a grading that
    failed: then the clock ran on, and the time is the time now)."""
    s.execute("UPDATE attempts SET clock = 'solved', run_since = NULL, elapsed = ?, "
              "solved_at = ? WHERE id = ?", (on_clock, on_clock, attempt_id))


def touch(s, attempt_id: int, t: float) -> None:
    s.execute("UPDATE attempts SET touched_at = ? WHERE id = ?", (t, attempt_id))


def close_attempt(s, attempt_id: int, t: float, state: str, reason: str, passed: bool,
                  used: float, overtime: bool, archive: str | None = None) -> None:
    s.execute(
        "UPDATE attempts SET state = ?, end_reason = ?, ended_at = ?, clock = 'stopped', "
        "run_since = NULL, elapsed = ?, passed = ?, time_used = ?, overtime = ?, "
        "archive = COALESCE(?, archive) WHERE id = ?",
        (state, reason, t, used, int(passed), used, int(overtime), _stored(s, archive), attempt_id))


def note_archive(s, path: str, archive: str) -> int | None:
    """Record that the file at `path` of the latest finished attempt kept there is now
    at `archive`; that attempt's id, or None when no attempt owned the file."""
    prev = s.one("SELECT id FROM attempts WHERE path = ? AND archive IS NULL "
                 "AND state != 'open' ORDER BY id DESC LIMIT 1", (_stored(s, path),))
    if prev is None:
        return None
    s.execute("UPDATE attempts SET archive = ? WHERE id = ?", (_stored(s, archive), prev["id"]))
    return prev["id"]


def add_hint(s, attempt_id: int) -> None:
    s.execute("UPDATE attempts SET hints = hints + 1 WHERE id = ?", (attempt_id,))


def mark_solution_viewed(s, attempt_id: int) -> None:
    s.execute("UPDATE attempts SET solution_viewed = 1 WHERE id = ?", (attempt_id,))


# -- gradings ---------------------------------------------------------------------------
def insert_grading(s, attempt_id: int, t: float, on_clock: float, command: str,
                   report: Report, code) -> int:
    """Record a grading: its report as JSON, and the counts the lists and history show."""
    counts = report.counts
    return s.execute(
        "INSERT INTO gradings (attempt_id, at, clock, command, passed, not_implemented, "
        "n_passed, n_total, code, report) VALUES (?,?,?,?,?,?,?,?,?,?)",
        (attempt_id, t, on_clock, command, int(report.passed), int(report.not_implemented),
         counts.passed, counts.total, code, json.dumps(report.to_dict()))).lastrowid


def stored_report(g: Grading) -> Report:
    """The report of a grading, whichever version of `kata` wrote it."""
    return Report.from_dict(json.loads(g.report))


def gradings(s, attempt_id: int) -> list[Grading]:
    return _all(s, Grading, "SELECT * FROM gradings WHERE attempt_id = ? ORDER BY at, id", (attempt_id,))


def last_grading(s, attempt_id: int, before: float | None = None) -> Grading | None:
    """The latest grading of an attempt (graded at or before `before`, when given)."""
    return _one(s, Grading, "SELECT * FROM gradings WHERE attempt_id = ? AND at <= ? "
                            "ORDER BY at DESC, id DESC LIMIT 1",
                         (attempt_id, float("inf") if before is None else before))


def n_gradings(s, attempt_id: int, commands: tuple[str, ...] | None = None) -> int:
    """How many times the attempt was graded (by these commands, when given)."""
    if commands is None:
        return s.one("SELECT count(*) FROM gradings WHERE attempt_id = ?", (attempt_id,))[0]
    marks = ", ".join("?" * len(commands))
    return s.one(f"SELECT count(*) FROM gradings WHERE attempt_id = ? AND command IN ({marks})",
                 (attempt_id, *commands))[0]


def last_passing(s) -> dict[str, Grading]:
    """The latest grading that passed, of each kata that has one (its report included)."""
    rows = s.all(
        "SELECT a.kata, c.* FROM gradings c JOIN attempts a ON a.id = c.attempt_id "
        "WHERE c.id = (SELECT c2.id FROM gradings c2 JOIN attempts a2 ON a2.id = c2.attempt_id "
        "              WHERE a2.kata = a.kata AND c2.passed = 1 ORDER BY c2.at DESC, c2.id DESC LIMIT 1)")
    return {r["kata"]: Grading.of(dict(r)) for r in rows}


def all_gradings(s) -> list[Grading]:
    """Every grading of every attempt, oldest first (code and report included)."""
    return _all(s, Grading, "SELECT * FROM gradings ORDER BY at, id")


# -- events -----------------------------------------------------------------------------
def add_event(s, kind: str, kata: str | None = None, attempt_id: int | None = None,
              mock_id: int | None = None, detail: str | None = None) -> None:
    s.execute("INSERT INTO events (at, kata, attempt_id, mock_id, kind, detail) "
              "VALUES (?,?,?,?,?,?)", (clock.now(), kata, attempt_id, mock_id, kind, detail))


def hints_taken(s, kata: str, attempt_id: int | None) -> int:
    """Hints shown for an attempt, or for `kata` outside any attempt when it is None."""
    if attempt_id is not None:
        return s.one("SELECT count(*) FROM events WHERE kind = 'hint' AND attempt_id = ?",
                     (attempt_id,))[0]
    return s.one("SELECT count(*) FROM events WHERE kind = 'hint' AND kata = ? "
                 "AND attempt_id IS NULL", (kata,))[0]


def hints_shown(s, kata: str, attempt_id: int | None) -> list[int]:
    """The hints shown for an attempt (or for `kata` outside any attempt), by their number
    in the catalogue, in the order shown (a hint event's detail is that number)."""
    where = "attempt_id = ?" if attempt_id is not None else "kata = ? AND attempt_id IS NULL"
    rows = s.all(f"SELECT detail FROM events WHERE kind = 'hint' AND {where} ORDER BY at, id",
                 (attempt_id if attempt_id is not None else kata,))
    return [int(r[0]) for r in rows if str(r[0] or "").isdigit()]


def every_hint(s) -> list[Event]:
    """Every hint shown, oldest first (`detail` is its number among the kata's hints)."""
    return _all(s, Event, "SELECT * FROM events WHERE kind = 'hint' ORDER BY at, id")


def events_of(s, attempt_id: int, kinds: tuple[str, ...]) -> list[Event]:
    marks = ", ".join("?" * len(kinds))
    return _all(s, Event, f"SELECT * FROM events WHERE attempt_id = ? AND kind IN ({marks}) "
                          "ORDER BY at, id", (attempt_id, *kinds))


# -- mock interviews ----------------------------------------------------------------------
def mock(s, mock_id: int) -> Mock:
    return _one(s, Mock, "SELECT * FROM mocks WHERE id = ?", (mock_id,))


def running_mock(s) -> Mock | None:
    return _one(s, Mock, "SELECT * FROM mocks WHERE state = 'running' ORDER BY id DESC")


def mock_attempts(s, mock_id: int) -> list[Attempt]:
    return _all(s, Attempt, "SELECT * FROM attempts WHERE mock_id = ? ORDER BY position", (mock_id,))


def insert_mock(s, t: float, budget: float, seed: int, seeded: bool, strict: bool = False) -> int:
    return s.execute(
        "INSERT INTO mocks (started_at, budget, seed, seeded, clock, run_since, elapsed, state, "
        "strict) VALUES (?, ?, ?, ?, 'running', ?, 0, 'running', ?)",
        (t, budget, seed, int(seeded), t, int(strict))).lastrowid


def mocks(s) -> list[Mock]:
    return _all(s, Mock, "SELECT * FROM mocks ORDER BY id")


def set_mock_clock(s, mock_id: int, state: str, run_since: float | None,
                   elapsed: float | None = None) -> None:
    set_clock(s, mock_id, state, run_since, elapsed, table="mocks")


def end_mock(s, mock_id: int, t: float, reason: str, used: float) -> None:
    s.execute("UPDATE mocks SET state = 'ended', clock = 'stopped', run_since = NULL, "
              "elapsed = ?, ended_at = ?, end_reason = ?, time_used = ? WHERE id = ?",
              (used, t, reason, used, mock_id))


# -- history ------------------------------------------------------------------------------
def attempts_numbered(s) -> list[Attempt]:
    """Every attempt, oldest first, numbered within its kata (`n`), with `n_gradings`."""
    return _all(s, Attempt, "SELECT a.*, "
                            " ROW_NUMBER() OVER (PARTITION BY a.kata ORDER BY a.started_at, a.id) AS n, "
                            " (SELECT count(*) FROM gradings c WHERE c.attempt_id = a.id) AS n_gradings "
                            "FROM attempts a ORDER BY a.started_at, a.id")


def finished_attempts(s) -> list[Attempt]:
    """Every attempt that has ended, with `n_gradings`."""
    return _all(s, Attempt, "SELECT a.*, (SELECT count(*) FROM gradings c WHERE c.attempt_id = a.id) "
                            "AS n_gradings FROM attempts a WHERE state != 'open'")


def best_times(s) -> dict[str, float]:
    rows = s.all("SELECT kata, MIN(COALESCE(time_used, solved_at)) AS best FROM attempts "
                 "WHERE passed = 1 OR solved_at IS NOT NULL GROUP BY kata")
    return {r["kata"]: r["best"] for r in rows}


def last_results(s) -> dict[str, LastResult]:
    """The latest check of each kata (its counts and time)."""
    rows = s.all(
        "SELECT a.kata, c.passed, c.not_implemented, c.n_passed, c.n_total, c.at "
        "FROM gradings c JOIN attempts a ON a.id = c.attempt_id "
        "WHERE c.id = (SELECT c2.id FROM gradings c2 JOIN attempts a2 ON a2.id = c2.attempt_id "
        "              WHERE a2.kata = a.kata ORDER BY c2.at DESC, c2.id DESC LIMIT 1)")
    return {r["kata"]: LastResult.of(dict(r)) for r in rows}


def katas_tried(s) -> set[str]:
    return {r["kata"] for r in s.all("SELECT DISTINCT kata FROM attempts")}


# -- follow-up questions ------------------------------------------------------------------------
def insert_rating(s, t: float, round_start: float, kata: str, question: int, text: str,
                  rating: str, answer: str | None = None, mock_id: int | None = None) -> int:
    """How the follow-up `question` (its place among the kata's, from 1) was answered:
    knew, partly or missed; `answer` is the number typed, when one was."""
    return s.execute(
        "INSERT INTO ratings (at, round, kata, question, text, rating, answer, mock_id) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (t, round_start, kata, question, text, rating, answer, mock_id)).lastrowid


def ratings(s) -> list[Rating]:
    """Every rating of a follow-up answer, oldest first."""
    return _all(s, Rating, "SELECT * FROM ratings ORDER BY at, id")
