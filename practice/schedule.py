"""What to practise next: a small spaced-repetition schedule (after SM-2).

Each finished attempt gets a quality from 0 to 5:
    1  not passed (a failed submit, or an attempt set aside without passing)
    2  passed after viewing the solution
    3  passed with hints, or over time
    4  passed, but slowly (more than 3/4 of the budget)
    5  passed quickly without hints
A round of the kata's follow-up questions, rated knew it, partly or missed (practice.followups),
gets a quality too, by the share it knew (a partly counting half): 5 all of it, 4 at least
3/4, 3 at least half, 2 less, 1 none. Attempts and rounds take their turns in the order they
ended. A quality of 3 or more grows the kata's interval (1, 2 or 4 days the first time, then
times its ease); a lower one (a lapse) makes it due at once and lowers the ease. Katas whose
last attempt lapsed come first (what you just failed is what you most need), the longest
lapsed first; then katas never tried, in catalogue order; then those due, most overdue first;
then the rest.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from practice.store import Attempt, Rating

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
    quality: int | None = None  # of the last attempt or round of follow-ups (None: neither)
    ease: float = 2.5           # lower for a kata that has gone badly more often
    lapsed: bool = False        # its last attempt was not passed, or passed only after the solution

    def sort_key(self, now: float) -> tuple:
        if self.lapsed:
            return (0, self.due_at - now)
        if not self.tried:
            return (1, 0.0)
        return (2, self.due_at - now)


def quality(a: Attempt) -> int | None:
    """The quality of one finished attempt, or None if it says nothing (abandoned unchecked)."""
    if not a.passed:
        if a.end_reason in ("fresh", "reset") and not a.n_gradings:
            return None  # set aside before it was ever checked: no evidence either way
        return 1
    if a.solution_viewed:
        return 2
    if a.hints or a.overtime:
        return 3
    if (a.time_used or 0) > 0.75 * (a.budget or 1):
        return 4
    return 5


RATED = {"knew": 1.0, "partly": 0.5, "missed": 0.0}
REASONS = {
    "attempt": {1: "not passed last time", 2: "passed after seeing the solution",
                3: "passed with hints or over time", 4: "passed, but slowly", 5: "passed quickly"},
    "round": {1: "follow-ups missed", 2: "follow-ups mostly missed", 3: "follow-ups partly known",
              4: "follow-ups mostly known", 5: "follow-ups all known"},
}


def rated_quality(ratings: list[str]) -> int:
    """The quality of one round of follow-up questions from its ratings (knew, partly, missed)."""
    share = sum(RATED[r] for r in ratings) / len(ratings)
    return 5 if share == 1 else 4 if share >= 0.75 else 3 if share >= 0.5 else 2 if share > 0 else 1


def _steps(attempts: list[Attempt], ratings: list[Rating]) -> list[tuple[float, str, int]]:
    """(when, "attempt" or "round", quality) for one kata, in the order they ended."""
    steps = [(a.ended_at, "attempt", q) for a in attempts if (q := quality(a)) is not None]
    rounds: dict[float, list[Rating]] = {}
    for r in ratings:
        rounds.setdefault(r.round, []).append(r)
    steps += [(max(r.at for r in rs), "round", rated_quality([r.rating for r in rs]))
              for rs in rounds.values()]
    return sorted(steps)


def plan(kata_names: list[str], finished: list[Attempt], now: float,
         in_progress: frozenset[str] = frozenset(), ratings: list[Rating] = ()) -> list[Due]:
    """Every kata, most needed first. `finished`: ended attempts, any order; `ratings`: the
    ratings of follow-up answers; katas in `in_progress` say so in their reason (their rank
    is unchanged). A kata is tried once an attempt at it has ended."""
    by_kata: dict[str, tuple[list[Attempt], list[Rating]]] = {k: ([], []) for k in kata_names}
    for a in finished:
        if a.kata in by_kata and a.ended_at:
            by_kata[a.kata][0].append(a)
    for r in ratings:
        if r.kata in by_kata:
            by_kata[r.kata][1].append(r)
    out = []
    for k in kata_names:
        ease, interval, reps, last_end, last, last_attempt = 2.5, 0.0, 0, None, None, None
        for last_end, kind, q in _steps(*by_kata[k]):
            last = (kind, q)
            last_attempt = q if kind == "attempt" else last_attempt
            if q >= 3:
                reps += 1
                interval = FIRST_INTERVAL[q] if reps == 1 else interval * ease
            else:
                reps, interval = 0, 0.0
            ease = max(1.3, ease + 0.1 - (5 - q) * (0.08 + (5 - q) * 0.02))
        busy = k in in_progress
        tried = any(quality(a) is not None for a in by_kata[k][0])
        if not tried:
            said = "in progress, never finished" if busy else "never tried"
            said += f"; {REASONS[last[0]][last[1]]}" if last else ""
            out.append(Due(k, False, None, 0.0, said, busy, last and last[1], ease))
            continue
        # follow-ups answered after a failed attempt do not make up for it: the code comes back first
        lapsed = last_attempt is not None and last_attempt < 3
        reason = REASONS[last[0]][last[1]]
        if lapsed and last[0] == "round":
            reason = f"{REASONS['attempt'][last_attempt]}; {reason}"
        due = last_end if lapsed else last_end + interval * DAY
        out.append(Due(k, True, due, 0.0 if lapsed else interval,
                       reason + ("; in progress now" if busy else ""), busy, last[1], ease, lapsed=lapsed))
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
