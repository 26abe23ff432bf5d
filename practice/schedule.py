"""What to practise next: a small spaced-repetition schedule (after SM-2).

Each finished attempt gets a quality from 0 to 5:
    1  not passed (a failed submit, or an attempt set aside without passing)
    2  passed after viewing the solution
    3  passed with hints, or over time
    4  passed, but slowly (more than 3/4 of the budget)
    5  passed quickly without hints
A quality of 3 or more grows the kata's interval (1, 2 or 4 days the first time, then
times its ease); a lower one (a lapse) makes it due at once and lowers the ease. Lapsed
katas come first (what you just failed is what you most need), the longest lapsed first;
then katas never tried, in catalogue order; then those due, most overdue first; then the
rest.
"""
from __future__ import annotations

from dataclasses import dataclass

DAY = 86400.0
FIRST_INTERVAL = {3: 1.0, 4: 2.0, 5: 4.0}


@dataclass
class Due:
    kata: str
    tried: bool
    due_at: float | None  # None: never tried
    interval_days: float
    reason: str
    in_progress: bool = False  # an attempt at it is open now
    lapsed: bool = False       # its last finished attempt was not passed, or passed only after the solution

    def sort_key(self, now: float) -> tuple:
        if self.lapsed:
            return (0, self.due_at - now)
        if not self.tried:
            return (1, 0.0)
        return (2, self.due_at - now)


def quality(a: dict) -> int | None:
    """The quality of one finished attempt, or None if it says nothing (abandoned unchecked)."""
    if not a.get("passed"):
        if a.get("end_reason") in ("fresh", "reset") and not a.get("n_gradings"):
            return None  # set aside before it was ever checked: no evidence either way
        return 1
    if a.get("solution_viewed"):
        return 2
    if a.get("hints") or a.get("overtime"):
        return 3
    if (a.get("time_used") or 0) > 0.75 * (a.get("budget") or 1):
        return 4
    return 5


def plan(kata_names: list[str], finished: list[dict], now: float,
         in_progress: frozenset[str] = frozenset()) -> list[Due]:
    """Every kata, most needed first. `finished`: ended attempts, any order; katas in
    `in_progress` say so in their reason (their rank is unchanged)."""
    by_kata: dict[str, list[dict]] = {k: [] for k in kata_names}
    for a in finished:
        if a["kata"] in by_kata and a.get("ended_at"):
            by_kata[a["kata"]].append(a)
    out = []
    for k in kata_names:
        ease, interval, reps, last_end, last_q = 2.5, 0.0, 0, None, None
        for a in sorted(by_kata[k], key=lambda a: a["ended_at"]):
            q = quality(a)
            if q is None:
                continue
            last_end, last_q = a["ended_at"], q
            if q >= 3:
                reps += 1
                interval = FIRST_INTERVAL[q] if reps == 1 else interval * ease
            else:
                reps, interval = 0, 0.0
            ease = max(1.3, ease + 0.1 - (5 - q) * (0.08 + (5 - q) * 0.02))
        busy = k in in_progress
        if last_end is None:
            out.append(Due(k, False, None, 0.0,
                           "in progress, never finished" if busy else "never tried", busy))
            continue
        due = last_end + interval * DAY
        reason = {
            1: "not passed last time",
            2: "passed after seeing the solution",
            3: "passed with hints or over time",
            4: "passed, but slowly",
            5: "passed quickly",
        }[last_q]
        out.append(Due(k, True, due, interval, reason + ("; in progress now" if busy else ""),
                       busy, lapsed=last_q < 3))
    order = {k: i for i, k in enumerate(kata_names)}
    out.sort(key=lambda d: (d.sort_key(now), order[d.kata]))
    return out


def pick(due: list[Due], count: int, now: float, seed: int) -> list[str]:
    """The `count` katas most needed, ties broken by `seed` (the same seed, the same pick).

    Katas tie when they are both untried, or both lapsed or due on the same day (the
    longest lapsed first, then the most overdue)."""
    import random

    rng = random.Random(seed)

    def bucket(d: Due) -> tuple:
        if not d.tried:
            return (1, 0)
        days = (d.due_at - now) / DAY
        if d.lapsed:
            return (0, int(days // 1))
        return (2, int(days // 1)) if days <= 0 else (3, days)

    ranked = sorted(due, key=lambda d: (bucket(d), rng.random()))
    return [d.kata for d in ranked[:count]]


def draw(kata_names: list[str], count: int, seed: int) -> list[str]:
    """`count` katas drawn by `seed` alone: the same seed, the same draw, whatever the
    history (a mock interview that can be repeated, or shared)."""
    import random

    return random.Random(seed).sample(list(kata_names), count)
