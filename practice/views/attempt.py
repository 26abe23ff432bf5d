"""An attempt, a grading or a mock interview in words, for every view: its clock ('12:31
used, 27:29 left of 40:00'), its result ('passed 3/3'), its label ('softmax (attempt 2)'),
its file, and the clocks a command paused.
"""
from __future__ import annotations

from rich.text import Text

from graders.engine.grammar import times
from practice import clock, paths
from practice.store import Attempt, Grading, LastResult, Mock


def clock_text(row: Attempt | Mock, t: float) -> Text:
    """'12:31 used, 27:29 left of 40:00', or '3:05 over the 40:00 budget', and the
    clock's state."""
    used = clock.elapsed(row, t)
    budget = row.budget
    if used <= budget:
        text = Text(f"{clock.fmt(used)} used, {clock.fmt(budget - used)} left of "
                    f"{clock.fmt(budget)}")
    else:
        text = Text(f"{clock.fmt(used)} used, {clock.fmt(used - budget)} over the "
                    f"{clock.fmt(budget)} budget", style="red")
    state = {"paused": " (paused)", "solved": " (solved: clock stopped)",
             "stopped": " (finished)"}.get(row.clock, "")
    return text + state


def result_text(r: Grading | LastResult | None) -> str:
    """The result of one grading row: 'passed 3/3', 'failed 1/3', 'not implemented'."""
    if not r:
        return "-"
    if r.passed:
        return f"passed {r.n_passed}/{r.n_total}"
    if r.not_implemented and not r.n_passed:
        return "not implemented"
    return f"failed {r.n_passed}/{r.n_total}"


def attempt_result(a: Attempt) -> str:
    if a.state == "open":
        return "in progress"
    word = "passed" if a.passed else ("not passed" if a.state == "submitted" else "abandoned")
    if a.state == "archived" and a.passed:
        word = "passed, set aside"
    if a.overtime:
        word += ", over time"
    return word


def gradings(n: int) -> str:
    """'not graded', 'graded once', 'graded 3 times'."""
    return "not graded" if n == 0 else f"graded {times(n)}"


def path(p) -> Text:
    return Text(paths.shown(p), style="bold cyan")


def attempt_label(a: Attempt) -> str:
    """softmax (attempt 2), or rope (mock interview #1)."""
    if a.mode == "mock":
        return f"{a.kata} (mock interview #{a.mock_id})"
    n = a.n
    return f"{a.kata}" + (f" (attempt {n})" if n else "")


def paused(attempts: list[Attempt]) -> list[str]:
    """What a command paused: a line an attempt."""
    return [f"Paused {o.kata} at {clock.fmt(o.elapsed)}." for o in attempts]

