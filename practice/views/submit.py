"""What `kata submit` says of a practice attempt: the final grading, what was recorded (result,
time against the budget, gradings, hints, solution) and the follow-up questions. (A mock
interview's submission: practice.views.mock.)
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from graders.engine.grammar import count
from practice import clock, term
from practice.store import Attempt
from practice.views.attempt import gradings
from practice.views.question import follow_ups
from practice.views.report import graded

if TYPE_CHECKING:
    from graders.engine.report import Report


def submitted(k, a: Attempt, rep: Report, n_gradings: int) -> Text:
    """`kata submit`: the final grading, what was recorded, the follow-up questions."""
    result = Text("passed", style="bold green") if a.passed else \
        Text("not passed", style="bold red")
    over = (Text(f", {clock.fmt(a.time_used - a.budget)} over time", style="red")
            if a.overtime else Text(f" of {clock.fmt(a.budget)}"))
    recorded = (Text("Recorded: ") + result + f" in {clock.fmt(a.time_used)}" + over
                + f"; {gradings(n_gradings)}, {count(a.hints, 'hint')}, solution "
                f"{'viewed' if a.solution_viewed else 'not viewed'}.")
    return term.join([graded(f"{k.name}: final grading", a.path, rep), recorded, "",
                      follow_ups(k), Text(f"`kata followups {k.name}` asks them one at a time "
                                          "and records how you did.", style="dim")])
