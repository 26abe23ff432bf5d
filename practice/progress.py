"""`kata progress`: how ready you are, as figures. Per group of the path: the katas passed
within their budget, and each kata's time to pass against its budget over its last attempts;
then the katas passed, but with Python loops where the reference has none (by the
efficiency of each kata's latest passing grading), the weakest katas (by the schedule: the
last attempt or round of follow-ups that went worst), the weakest follow-up questions (by
their last rating) and what is due for review.
`kata progress --json` prints these figures as they are; practice.views.progress draws them.
Times are seconds (on the attempt's clock, or since the epoch for `due_at`).
"""
from __future__ import annotations

import json
from typing import TypedDict

from practice import catalogue, clock, history
from practice.schedule import DAY
from practice.store import Attempt, Grading, Rating, records

LAST = 8      # the attempts of each kata its chart shows
WEAKEST = 5   # the katas and the follow-ups listed as weakest
FLAGS = ("passed", "overtime", "solution_viewed")  # of an attempt, as true or false


class Charted(TypedDict):
    """An attempt in a kata's chart: its number within the kata, how it went, its time."""
    n: int
    mode: str
    passed: bool
    overtime: bool
    solution_viewed: bool
    time_used: float | None
    budget: float
    hints: int


class KataFigures(TypedDict):
    """A kata's line in its group: its attempts, whether one passed within budget, its best
    time, and its last LAST attempts."""
    kata: str
    budget: float
    attempts: int
    passed_within_budget: bool
    best: float | None
    last: list[Charted]


class Group(TypedDict):
    """A group of the path: how many of its katas passed within budget, and each kata."""
    group: str
    passed_within_budget: int
    total: int
    katas: list[KataFigures]


class Looped(TypedDict):
    """A kata passed with Python loops the reference does not have."""
    kata: str
    loops: list[str]
    at: float


class WeakKata(TypedDict):
    kata: str
    reason: str
    quality: int
    ease: float


class WeakFollowUp(TypedDict):
    kata: str
    question: int
    text: str
    rating: str
    at: float


class DueFigures(TypedDict):
    kata: str
    due_at: float
    overdue_days: int
    reason: str


class Figures(TypedDict):
    """Every figure of `kata progress` (its --json prints them as they are)."""
    groups: list[Group]
    passed_with_loops: list[Looped]
    weakest_katas: list[WeakKata]
    weakest_follow_ups: list[WeakFollowUp]
    due: list[DueFigures]
    next_due: DueFigures | None


def figures(s) -> Figures:
    """Every figure of `kata progress`, as plain JSON-ready data."""
    t = clock.now()
    attempts = history.attempts_of(s)
    plan = history.plan(s)
    return {"groups": [_group(g, attempts) for g in _groups()],
            "passed_with_loops": _passed_with_loops(records.last_passing(s)),
            "weakest_katas": _weakest_katas(plan),
            "weakest_follow_ups": _weakest_follow_ups(records.ratings(s)),
            "due": [_due(d, t) for d in plan if d.tried and d.due_at <= t],
            "next_due": next((_due(d, t) for d in sorted(plan, key=lambda d: d.due_at or 0)
                              if d.tried and d.due_at > t), None)}


def as_json(figures: Figures) -> str:
    return json.dumps(figures)


def _groups() -> list[tuple[str, list[catalogue.Kata]]]:
    """Each group of the path with its katas, in the order of the path."""
    katas = catalogue.in_path_order()
    named = [(g, [k for k in katas if k.group == g]) for g in catalogue.GROUPS]
    other = [k for k in katas if k.group not in catalogue.GROUPS]
    return [(g, ks) for g, ks in named if ks] + ([("other", other)] if other else [])


def within_budget(a: Attempt) -> bool:
    """A pass in time, without the reference solution."""
    return bool(a.passed) and not a.overtime and not a.solution_viewed


def _group(group: tuple[str, list[catalogue.Kata]], attempts: list[Attempt]) -> Group:
    name, katas = group
    rows = [_kata(k, [a for a in attempts if a.kata == k.name and a.state != "open"])
            for k in katas]
    return {"group": name, "passed_within_budget": sum(r["passed_within_budget"] for r in rows),
            "total": len(rows), "katas": rows}


def _kata(k: catalogue.Kata, done: list[Attempt]) -> KataFigures:
    passed = [a.time_used or 0 for a in done if a.passed]
    return {"kata": k.name, "budget": 60.0 * k.minutes, "attempts": len(done),
            "passed_within_budget": any(within_budget(a) for a in done),
            "best": min(passed) if passed else None,
            "last": [_attempt(a) for a in done[-LAST:]]}


def _attempt(a: Attempt) -> Charted:
    """An attempt in a chart: its number within the kata (`n`), how it went and its time."""
    return {"n": a.n, "mode": a.mode, **{f: bool(getattr(a, f)) for f in FLAGS},
            "time_used": a.time_used, "budget": a.budget, "hints": a.hints}


def _passed_with_loops(passing: dict[str, Grading]) -> list[Looped]:
    """The katas whose latest passing grading loops in Python where the reference does not, in
    the order of the path, each with what loops ("`causal_mha` loops over the positions (line 14)")."""
    out = []
    for k in catalogue.in_path_order():
        row = passing.get(k.name)
        e = records.stored_report(row).efficiency if row else None
        looped = e.looped() if e is not None and e.measured else []
        if looped:
            out.append({"kata": k.name, "loops": looped, "at": row.at})
    return out


def _weakest_katas(plan) -> list[WeakKata]:
    """The katas whose last attempt or round of follow-ups went less than well, worst first."""
    weak = sorted((d for d in plan if d.quality is not None and d.quality < 5),
                  key=lambda d: (d.quality, d.ease))
    return [{"kata": d.kata, "reason": d.reason, "quality": d.quality, "ease": round(d.ease, 2)}
            for d in weak[:WEAKEST]]


def _weakest_follow_ups(ratings: list[Rating]) -> list[WeakFollowUp]:
    """The follow-up questions last rated missed, then partly, the latest first."""
    latest: dict[tuple[str, int], Rating] = {}
    for r in ratings:  # oldest first: each question's last rating stays
        latest[(r.kata, r.question)] = r
    weak = sorted((r for r in latest.values() if r.rating != "knew"),
                  key=lambda r: (r.rating != "missed", -r.at))
    return [{"kata": r.kata, "question": r.question, "text": _text(r),
             "rating": r.rating, "at": r.at} for r in weak[:WEAKEST]]


def _text(r: Rating) -> str:
    """The question as the catalogue words it now (as it was asked, if it is gone)."""
    try:
        return catalogue.get(r.kata).follow_ups[r.question - 1].question
    except (catalogue.UnknownKata, IndexError):
        return r.text


def _due(d, t: float) -> DueFigures:
    return {"kata": d.kata, "due_at": d.due_at, "overdue_days": max(0, int((t - d.due_at) // DAY)),
            "reason": d.reason}
