"""Hints and the reference solution: what helps during an attempt, and what it costs.

Hints come one at a time and count against an open attempt until it passes. The
reference (`kata solution`, `kata compare`) asks first while it would spoil something,
and viewing it is recorded against an open attempt that has not passed yet. Neither is
available in a mock interview (in a strict one, asking is a usage error). `p` is the `practice.sessions.Practice` the command opened.
"""
from __future__ import annotations

from practice import catalogue, clock, records
from practice.clock import elapsed
from practice.errors import SessionError, StrictRefusal


def refuse_in_mock(p, what: str) -> None:
    m = p.running_mock()
    if m:
        strict = "strict " if m["strict"] else ""
        raise (StrictRefusal if strict else SessionError)(
            f"{what} are not available during a {strict}mock interview; `kata submit` ends it")


def hint(p, k: catalogue.Kata) -> dict:
    """Show the next hint of `k` and record it; it counts against the open attempt
    unless that attempt already passes (`counted` says which)."""
    refuse_in_mock(p, "hints")
    a = records.open_practice_attempt(p.store, k.name)
    with p.store.tx() as s:
        used = records.hints_taken(s, k.name, a["id"] if a else None)
        total = len(k.hints)
        if used >= total:
            return {"index": total, "total": total, "hint": None, "all": list(k.hints),
                    "attempt": a, "counted": False}
        counted = bool(a) and records.attempt(s, a["id"])["clock"] != "solved"
        if counted:
            records.add_hint(s, a["id"])
        records.add_event(s, "hint", k.name, a["id"] if a else None, detail=str(used + 1))
    return {"index": used + 1, "total": total, "hint": k.hints[used], "all": None,
            "attempt": a, "counted": counted}


def spoiler(p, kata: str) -> str | None:
    """What showing the reference would spoil, or None when it spoils nothing (the kata
    was passed once, or its latest attempt has ended or run out of time): "untried" (no
    attempt yet), "running" (an attempt with time left), "set aside" (archived unpassed)."""
    if records.ever_passed(p.store, kata):
        return None
    a = records.latest(p.store, kata)
    if a is None:
        return "untried"
    if a["state"] == "submitted":
        return None
    if a["state"] == "open":
        return None if elapsed(a, clock.now()) >= a["budget"] else "running"
    return "set aside"


def record_viewing(p, kata: str, kind: str) -> None:
    """Record that the reference was shown (`solution` or `compare`): against the open
    attempt unless it already passes, whether or not its time is up."""
    refuse_in_mock(p, "solutions")
    a = records.open_practice_attempt(p.store, kata)
    counts = bool(a) and a["clock"] != "solved"
    over = bool(a) and elapsed(a, clock.now()) >= a["budget"]
    detail = ("no attempt in progress" if not a else "after passing" if not counts
              else "before passing, after the time was up" if over else "before passing")
    with p.store.tx() as s:
        if counts:
            records.mark_solution_viewed(s, a["id"])
        records.add_event(s, kind, kata, a["id"] if a else None, detail=detail)
