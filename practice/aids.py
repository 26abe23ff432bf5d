"""Hints and the reference solution: what helps during an attempt, and what it costs.

Hints come one at a time and count against an open attempt until it passes. The
reference (`kata solution`, `kata compare`) asks first while it would spoil an attempt,
and viewing it before passing is recorded. Neither is available in a mock interview.
`p` is the `practice.sessions.Practice` the command opened.
"""
from __future__ import annotations

from practice import catalogue, clock, records, targets
from practice.clock import elapsed
from practice.errors import SessionError


def refuse_in_mock(p, what: str) -> None:
    if p.running_mock():
        raise SessionError(f"{what} are not available during a mock interview; "
                           "`kata submit` ends it")


def hint(p, k: catalogue.Kata) -> dict:
    """Show the next hint of `k` and record it."""
    refuse_in_mock(p, "hints")
    a = records.open_practice_attempt(p.store, k.name)
    with p.store.tx() as s:
        used = records.hints_taken(s, k.name, a["id"] if a else None)
        total = len(k.hints)
        if used >= total:
            return {"index": total, "total": total, "hint": None, "all": list(k.hints),
                    "attempt": a}
        if a and records.attempt(s, a["id"])["clock"] != "solved":
            records.add_hint(s, a["id"])
        records.add_event(s, "hint", k.name, a["id"] if a else None, detail=str(used + 1))
    return {"index": used + 1, "total": total, "hint": k.hints[used], "all": None,
            "attempt": a}


def spoiler_free(p, kata: str) -> bool:
    """True when showing the reference spoils nothing: the kata has been passed, or
    the open attempt's time is up."""
    if records.ever_passed(p.store, kata):
        return True
    a = targets.attempt_for(p.store, kata)
    return bool(a and a["state"] == "open" and elapsed(a, clock.now()) >= a["budget"])


def record_viewing(p, kata: str, kind: str) -> None:
    """Record that the reference was shown (`solution` or `compare`)."""
    refuse_in_mock(p, "solutions")
    spoiler = not spoiler_free(p, kata)
    a = records.open_practice_attempt(p.store, kata)
    with p.store.tx() as s:
        if a and spoiler:
            records.mark_solution_viewed(s, a["id"])
        records.add_event(s, kind, kata, a["id"] if a else None,
                          detail="before passing" if spoiler else "after passing or time up")
