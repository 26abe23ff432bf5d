"""What `kata status` and `kata list` show: the kata in progress (or each question of a mock
interview), its file, clock, gradings and hints; and every kata a line, with its status, best
time and last result.
"""
from __future__ import annotations

from rich.text import Text

from graders.engine.grammar import times
from practice import catalogue, clock, term
from practice.store import LastResult
from practice.targets import MockInProgress, NothingInProgress, PracticeInProgress
from practice.views.attempt import clock_text, path, result_text


def kata_list(statuses: dict[str, str], best: dict[str, float], last: dict[str, LastResult]) -> Text:
    """`kata list`: one kata a line, its name first, in the order of the path."""
    rows = [[k.name, k.group or "-", k.title, k.difficulty, f"{k.minutes} min",
             statuses[k.name], clock.fmt(best[k.name]) if k.name in best else "-",
             result_text(last.get(k.name))] for k in catalogue.in_path_order()]
    header = ["kata", "group", "title", "difficulty", "budget", "status", "best", "last result"]
    # When narrow: cut the title, then leave out what matters least.
    return term.columns(rows, header, squeeze={2: 12}, drop=(2, 3, 7, 4, 1, 6))


def status(view: MockInProgress | PracticeInProgress | NothingInProgress, t: float) -> Text:
    """`kata status` from `targets.status()`."""
    if isinstance(view, MockInProgress):
        m = view.mock
        lines: list[Text | str] = [Text(f"Mock interview #{m.id}", style="bold") + ": "
                                   + clock_text(m, t)]
        for a, last in view.questions:
            lines.append(Text(f"  {a.kata:<24} ") + path(a.path)
                         + f"  last grading: {result_text(last)}")
        lines.append("Hints and solutions wait until it ends; `kata submit` ends it.")
        return term.join(lines)
    if isinstance(view, NothingInProgress):
        nxt = view.next
        return Text("No kata in progress." + (
            f" Next up: {nxt.kata} ({nxt.reason}); `kata start {nxt.kata}`." if nxt else ""))
    a, last, k = view.attempt, view.last, catalogue.get(view.attempt.kata)
    after_pass = view.hints_shown - a.hints
    lines = [Text(f"{a.kata}: {k.title}", style="bold"),
             Text("  file:   ") + path(a.path), Text("  clock:  ") + clock_text(a, t),
             f"  graded: {times(view.n_gradings)}, last: "
             f"{result_text(last)}" + (f" at {clock.when(last.at)}" if last else ""),
             f"  hints:  {a.hints} of {len(k.hints)}"
             + (f" (and {after_pass} after passing, not counted)" if after_pass > 0 else "")
             + ("; solution viewed" if a.solution_viewed else "")]
    lines += [Text(f"Also in progress: {o.kata}; its clock: ") + clock_text(o, t)
              for o in view.others]
    return term.join(lines)
