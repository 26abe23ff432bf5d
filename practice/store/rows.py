"""The records the store reads, as frozen dataclasses: a field a column, in the table's order
(practice.store.schema says what each holds). practice.store.records returns them; a change
is written through its functions and read back, never made to a record in memory
(`dataclasses.replace` makes the copy a view needs). `to_dict` is a record as plain data,
its keys in the order of the columns (JSON and CSV: practice.export).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar


class Row:
    """What every record can do: be made from a row of sqlite3, and be plain data again."""

    EXTRA: ClassVar[tuple[str, ...]] = ()  # fields a query adds to the columns (None: not asked for)

    @classmethod
    def of(cls, row: dict):
        return cls(**row)

    def to_dict(self) -> dict:
        """The record as plain data: its columns, and the extra fields its query gave."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name not in self.EXTRA or getattr(self, f.name) is not None}


@dataclass(frozen=True)
class Mock(Row):
    """A mock interview: its one clock (`clock`, `run_since`, `elapsed`, as an attempt's)."""
    id: int
    started_at: float
    budget: float
    seed: int
    seeded: int
    clock: str
    run_since: float | None
    elapsed: float
    state: str
    ended_at: float | None
    end_reason: str | None
    time_used: float | None
    strict: int


@dataclass(frozen=True)
class Attempt(Row):
    """An attempt at a kata: its file (`path`, whole), its clock and how it ended. `n` (its
    number within its kata) and `n_gradings` are there when the query counts them."""
    EXTRA = ("n", "n_gradings")

    id: int
    kata: str
    mode: str
    mock_id: int | None
    position: int
    path: str
    archive: str | None
    restarted_from: int | None
    started_at: float
    touched_at: float
    budget: float
    clock: str
    run_since: float | None
    elapsed: float
    solved_at: float | None
    state: str
    ended_at: float | None
    end_reason: str | None
    passed: int | None
    time_used: float | None
    overtime: int | None
    hints: int
    solution_viewed: int
    n: int | None = None
    n_gradings: int | None = None


@dataclass(frozen=True)
class Grading(Row):
    """A grading of an attempt: its counts, the code graded and the report as JSON (read it
    with practice.store.records.stored_report). `kata` is there when the query joins it."""
    EXTRA = ("kata",)

    id: int
    attempt_id: int
    at: float
    clock: float
    command: str
    passed: int
    not_implemented: int
    n_passed: int
    n_total: int
    code: bytes | str
    report: str
    kata: str | None = None


@dataclass(frozen=True)
class LastResult(Row):
    """How a kata's latest grading went: its counts, and when."""
    kata: str
    passed: int
    not_implemented: int
    n_passed: int
    n_total: int
    at: float


@dataclass(frozen=True)
class Event(Row):
    """Something that happened (a hint shown, a clock paused, ...): `kind`, and its `detail`."""
    id: int
    at: float
    kata: str | None
    attempt_id: int | None
    mock_id: int | None
    kind: str
    detail: str | None


@dataclass(frozen=True)
class Rating(Row):
    """How a follow-up question was answered: knew, partly or missed."""
    id: int
    at: float
    round: float
    kata: str
    question: int
    text: str
    rating: str
    answer: str | None
    mock_id: int | None
