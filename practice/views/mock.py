"""What a mock interview shows: `kata mock`'s questions and clock, the interview report
(time, each question's result, what still fails, the efficiency, the follow-up questions) and,
in a strict interview, a question submitted alone.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from graders.engine.grammar import count, times
from practice import catalogue, clock, term
from practice.mock import STRICT_GRADINGS
from practice.views import efficiency
from practice.views.attempt import path, paused
from practice.views.question import follow_ups, question
from practice.views.report import graded, symbols

if TYPE_CHECKING:
    from graders.engine.report import Report
    from practice.mock import MockReport, MockStarted, Question
    from practice.strict import QuestionSubmitted


def mock_started(res: MockStarted) -> Text:
    """`kata mock`: the interview's clock and every question with its file."""
    m, attempts = res.mock, res.attempts
    how = f"seed {m.seed}" if m.seeded else "the katas you most need"
    lines: list[Text | str] = paused(res.paused)
    lines.append(Text(f"{'Strict mock' if m.strict else 'Mock'} interview #{m.id}: "
                      f"{count(len(attempts), 'question')}, {clock.fmt(m.budget)} on one "
                      "clock", style="bold") + f" ({how}).")
    if m.strict:
        lines.append(f"Each question may be graded {STRICT_GRADINGS} times, and a grading shows "
                     "only which checks fail. No hints or solutions. `kata submit NAME` submits "
                     "a question, once; `kata submit` submits the rest and ends the interview.")
    else:
        lines.append("No hints or solutions until it ends. `kata watch` shows the countdown and "
                     "re-grades every question; `kata check` grades them all; `kata submit` ends "
                     "the interview.")
    for i, a in enumerate(attempts, 1):
        k = catalogue.get(a.kata)
        lines += ["", Text(f"Question {i}: {k.name}: {k.title}", style="bold") + f" "
                  f"({k.minutes} min)", "", question(k), "", Text("Edit:  ") + path(a.path)]
    return term.join(lines)


def _mock_result(rep: Report | None) -> str:
    if rep is None:
        return "not graded"
    if rep.passed:
        return "passed"
    if rep.untouched:
        return "not implemented"
    return f"failed {rep.counts.passed}/{rep.counts.total}"


def mock_report(data: MockReport, with_follow_ups: bool = True) -> Text:
    """The interview report: time, each question's result (in a strict interview, the
    gradings it used), what still fails, and the follow-up questions (unless
    `with_follow_ups` is False: `kata submit` asks them one at a time, practice.followups)."""
    sym, m = symbols(), data.mock
    reason = {"deadline": "ended at the deadline", "submitted": "submitted"}.get(
        m.end_reason or "", "")
    how = f"seed {m.seed}" if m.seeded else "the katas you most needed"
    lines: list[Text | str] = [
        Text(f"Interview report: {'strict ' if m.strict else ''}mock interview #{m.id} "
             f"({how})", style="bold"),
        f"Time used: {clock.fmt(m.time_used or 0)} of {clock.fmt(m.budget)}"
        + (f", {reason}" if reason else ""), ""]
    rows = []
    for q in data.questions:
        a = q.attempt
        mark = Text(sym["pass"], style="green") if q.passed else Text(sym["fail"], style="red")
        t_used = a.time_used if a.time_used is not None else a.elapsed
        how = (f"{q.asked} of {STRICT_GRADINGS}, then submitted" if m.strict else
               times(q.n_gradings))
        rows.append([mark + f" {a.kata}", _mock_result(q.report), clock.fmt(t_used or 0),
                     how])
    lines.append(term.columns(rows, ["  kata", "result", "time",
                                     "gradings used" if m.strict else "graded"]))
    for q in data.questions:
        lines += _mock_notes(q)
    if not with_follow_ups:
        return term.join(lines)
    lines += ["", Text("Follow-up questions to answer aloud:", style="bold")]
    for q in data.questions:
        if len(data.questions) > 1:
            lines.append(f"  {q.kata.name}:")
        lines.append(follow_ups(q.kata, heading=""))
    return term.join(lines)


def question_submitted(res: QuestionSubmitted) -> Text:
    """`kata submit NAME` in a strict interview that goes on."""
    a, rep = res.attempt, res.report
    return term.join([
        graded(f"{a.kata}: submitted", a.path, rep),
        f"{a.kata} used {res.used} of its {STRICT_GRADINGS} gradings. "
        f"{count(res.left, 'question')} still open; `kata submit` submits "
        f"{'it' if res.left == 1 else 'them'} and ends the interview."])


def _mock_notes(q: Question) -> list[str]:
    kata, rep = q.attempt.kata, q.report
    lines = [f"  {kata}: {q.note}"] if q.note else []
    if rep and rep.untouched:
        lines.append(f"  {kata}: not implemented yet")
    elif q.failing:
        lines.append(f"  {kata} still fails:")
        lines += [f"    - {name}" for name in q.failing]
    if rep and rep.diagnosis:
        lines.append(f"  {kata}, likely cause: {rep.diagnosis}")
    return lines + _mock_efficiency(kata, rep)


def _mock_efficiency(kata: str, rep: Report | None) -> list[str]:
    """A question's efficiency in the interview report: a line a function, then each remark (a
    strict interview's gradings hold none: its report shows the figures only)."""
    e = rep.efficiency if rep is not None else None
    if e is None or not e.measured:
        return []
    lines = [f"  {f.function}, efficiency: {efficiency.summary(f)}" for f in e.functions]
    return lines + [f"  {kata}, remark: {r}" for r in e.remarks]
