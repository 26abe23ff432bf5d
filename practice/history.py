"""The record of past practice: attempts numbered per kata, best times, last results,
each kata's status and what to practise next (read-only; `kata list`, `kata history`,
`kata status`, `kata progress` and the mock interview's pick read it)."""
from __future__ import annotations

from practice import catalogue, clock, schedule
from practice.store import Attempt, LastResult, records


def attempts_of(s, kata: str | None = None) -> list[Attempt]:
    """Every attempt (of `kata`, when given), oldest first, each numbered within its kata
    (`n`) and with its number of gradings (`n_gradings`)."""
    return [a for a in records.attempts_numbered(s) if kata is None or a.kata == kata]


def number_of(s, attempt: Attempt) -> int | None:
    """The attempt's number within its kata (1 for the first)."""
    return next((a.n for a in attempts_of(s, attempt.kata) if a.id == attempt.id),
                None)


def best_times(s) -> dict[str, float]:
    """The fastest pass of each kata passed at least once, in clock seconds."""
    return records.best_times(s)


def last_results(s) -> dict[str, LastResult]:
    """The latest grading of each kata graded at least once."""
    return records.last_results(s)


def statuses(s) -> dict[str, str]:
    """Every kata's status: not started, in progress, passed or not passed."""
    out = {k.name: "not started" for k in catalogue.katas()}
    for kata in records.katas_tried(s):
        out[kata] = "passed" if records.ever_passed(s, kata) else "not passed"
    for a in records.open_attempts(s):
        out[a.kata] = "in progress"
    return out


def plan(s) -> list[schedule.Due]:
    """Every kata, the one most in need of practice first (see practice.schedule): by its
    attempts and by how its follow-up questions were answered."""
    busy = frozenset(a.kata for a in records.open_attempts(s) if a.mode == "practice")
    return schedule.plan(catalogue.names(), records.finished_attempts(s), clock.now(), busy,
                         records.ratings(s))
