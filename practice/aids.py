"""Hints and the reference solution: what helps during an attempt, and what it costs.

Hints come one at a time and count against an open attempt until it passes. The
reference (`kata solution`, `kata compare`) asks first while it would spoil something,
and viewing it is recorded against an open attempt that has not passed yet. Neither is
available in a mock interview (asking is a usage error). `p` is the `practice.sessions.Practice`
the command opened.
"""
from __future__ import annotations

from dataclasses import dataclass

from graders.engine.report import CheckResult, Status
from practice import catalogue, clock
from practice.clock import elapsed
from practice.errors import MockRefusal, StrictRefusal
from practice.store import Attempt, records


@dataclass(frozen=True)
class Hint:
    """A hint asked for: the `index`-th of the kata's `total`, its text (`hint`; None when
    every hint is out, and then `all` holds them), the open attempt (None: none is open),
    whether it `counted` against that attempt, and the checks it `helps` with, each as (name,
    failing in the last grading)."""
    index: int
    total: int
    hint: str | None
    all: list[str] | None
    attempt: Attempt | None
    counted: bool
    helps: list[tuple[str, bool]]


def refuse_in_mock(p, what: str) -> None:
    m = p.running_mock()
    if m:
        strict = "strict " if m.strict else ""
        raise (StrictRefusal if strict else MockRefusal)(
            f"{what} are not available during a {strict}mock interview; `kata submit` ends it")


def hint(p, k: catalogue.Kata) -> Hint:
    """Show the next hint of `k` and record it; it counts against the open attempt
    unless that attempt already passes (`counted` says which). The next hint is the first
    not shown yet that helps with the first failing check of the attempt's last grading
    (else with the next failing check), else the first not shown yet."""
    refuse_in_mock(p, "hints")
    a = records.open_practice_attempt(p.store, k.name)
    with p.store.tx() as s:
        shown = records.hints_shown(s, k.name, a.id if a else None)
        total = len(k.hints)
        left = [n for n in range(1, total + 1) if n not in shown]
        if not left:
            return Hint(index=total, total=total, hint=None, all=list(k.hints), attempt=a,
                        counted=False, helps=[])
        failing, names = _last_checks(s, a)
        n = next((n for c in failing for n in left if c.id in _helps(k, n)), left[0])
        counted = bool(a) and records.attempt(s, a.id).clock != "solved"
        if counted:
            records.add_hint(s, a.id)
        records.add_event(s, "hint", k.name, a.id if a else None, detail=str(n))
    return Hint(index=total - len(left) + 1, total=total, hint=k.hints[n - 1], all=None, attempt=a,
                counted=counted, helps=_named(k, n, failing, names))


def _helps(k: catalogue.Kata, n: int) -> tuple[str, ...]:
    """The ids of the checks hint number `n` helps with."""
    return k.hint_checks[n - 1] if n <= len(k.hint_checks) else ()


def _last_checks(s, a: Attempt | None) -> tuple[list[CheckResult], dict[str, str]]:
    """The checks that failed in the attempt's last grading, in the grader's order, and
    the names of all its checks by id."""
    last = records.last_grading(s, a.id) if a else None
    if last is None:
        return [], {}
    checks = records.stored_report(last).checks
    return ([c for c in checks if c.status in (Status.FAILED, Status.NOT_IMPLEMENTED) and c.id],
            {c.id: c.name for c in checks if c.id})


def _named(k: catalogue.Kata, n: int, failing: list[CheckResult], names: dict[str, str]) -> list[tuple[str, bool]]:
    """(name, failing now) of each check hint `n` helps with (an id stands for a name not
    known yet: no grading)."""
    bad = {c.id for c in failing}
    return [(names.get(i, i.replace("_", " ")), i in bad) for i in _helps(k, n)]


def spoiler(p, kata: str) -> str | None:
    """What showing the reference would spoil, or None when it spoils nothing (its latest
    attempt passes, has ended or has run out of time, or, with none open, the kata was
    passed once): "untried" (no attempt yet), "running" (an attempt not passed with time
    left, a new attempt at a kata passed before included), "set aside" (archived unpassed)."""
    a = records.latest(p.store, kata)
    if a is not None and a.state == "open":
        time_left = elapsed(a, clock.now()) < a.budget
        return "running" if time_left and a.clock != "solved" else None
    if records.ever_passed(p.store, kata):
        return None
    if a is None:
        return "untried"
    if a.state == "submitted":
        return None
    return "set aside"


def record_viewing(p, kata: str, kind: str) -> None:
    """Record that the reference was shown (`solution` or `compare`): against the open
    attempt unless it already passes, whether or not its time is up."""
    refuse_in_mock(p, "solutions")
    a = records.open_practice_attempt(p.store, kata)
    counts = bool(a) and a.clock != "solved"
    over = bool(a) and elapsed(a, clock.now()) >= a.budget
    detail = ("no attempt in progress" if not a else "after passing" if not counts
              else "before passing, after the time was up" if over else "before passing")
    with p.store.tx() as s:
        if counts:
            records.mark_solution_viewed(s, a.id)
        records.add_event(s, kind, kata, a.id if a else None, detail=detail)
