"""`kata export`: the whole history, for your own analysis, as JSON or CSV.

JSON is one object: {"format": 1, "exported_at", "mocks", "attempts", "gradings", "hints",
"ratings"}, every mock interview, every attempt (numbered within its kata, `n`, as `kata
history` numbers it, with `n_gradings`), every grading with the code it graded (`code`, text)
and its report (`report`, the object `kata check --json` prints), every hint shown (`number`
among the kata's hints, and its `text`) and every rating of a follow-up answer. Times are
seconds: since the epoch for moments (`at`, `started_at`, ...), on the clock for durations.

CSV is one table, a row per record: the first column, `record`, says which kind (mock,
attempt, grading, hint, rating), then the same columns whatever the history (COLUMNS; empty
where a kind has none). A grading's code and report stay in the JSON; the CSV lists its
failing checks.
"""
from __future__ import annotations

import csv
import io
import json
from typing import TypedDict

from practice import catalogue, clock, history
from practice.store import Event, Grading, records
from practice.views.history import source_text

FORMAT = 1
KINDS = {"mocks": "mock", "attempts": "attempt", "gradings": "grading", "hints": "hint",
         "ratings": "rating"}
JSON_ONLY = ("code", "report")
# The CSV's columns, the same whatever the history holds (a column the store gains later
# comes after these): what the record is, when, how it went, and the rest.
COLUMNS = ("record", "id", "kata", "mock_id", "attempt_id", "n", "mode", "position", "at",
           "started_at", "ended_at", "touched_at", "state", "end_reason", "clock", "budget",
           "elapsed", "run_since", "time_used", "solved_at", "passed", "overtime", "hints",
           "solution_viewed", "n_gradings", "path", "archive", "restarted_from", "seed",
           "seeded", "strict", "command", "not_implemented", "n_passed", "n_total", "failing",
           "number", "text", "round", "question", "rating", "answer")


class History(TypedDict):
    """The whole history, as plain JSON-ready data (the module's docstring says what each
    holds)."""
    format: int
    exported_at: float
    mocks: list[dict]
    attempts: list[dict]
    gradings: list[dict]
    hints: list[dict]
    ratings: list[dict]


def everything(s) -> History:
    """The whole history, as plain JSON-ready data."""
    return {"format": FORMAT, "exported_at": clock.now(),
            "mocks": [m.to_dict() for m in records.mocks(s)],
            "attempts": [a.to_dict() for a in history.attempts_of(s)],
            "gradings": [_grading(g) for g in records.all_gradings(s)],
            "hints": [_hint(h) for h in records.every_hint(s)],
            "ratings": [r.to_dict() for r in records.ratings(s)]}


def _grading(g: Grading) -> dict:
    report = records.stored_report(g)
    return dict(g.to_dict(), code=source_text(g.code), report=report.to_dict(),
                failing="; ".join(report.failing))


def _hint(e: Event) -> dict:
    """A hint shown: when, for which kata and attempt, which hint and what it said."""
    number = int(e.detail) if (e.detail or "").isdigit() else None
    try:
        hints = catalogue.get(e.kata).hints
    except catalogue.UnknownKata:
        hints = ()
    text = hints[number - 1] if number and number <= len(hints) else None
    return {"id": e.id, "at": e.at, "kata": e.kata, "attempt_id": e.attempt_id,
            "number": number, "text": text}


def as_json(data: History) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def as_csv(data: History) -> str:
    """One row per record, its kind first (see the module's docstring)."""
    rows = [dict(row, record=kind) for key, kind in KINDS.items() for row in data[key]]
    columns = list(COLUMNS)
    for row in rows:
        columns += [c for c in row if c not in columns and c not in JSON_ONLY]
    out = io.StringIO()
    writer = csv.DictWriter(out, columns, restval="", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()
