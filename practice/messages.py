"""What each command says, as rich Text for practice.term to print (kata.py only parses
the command line and prints these).

Wording: the properties a grader tests are "checks" ("7/7 checks passed"); each run of
the grader on an attempt is a "grading" ("graded 8 times").
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from practice import catalogue, clock, paths, render_efficiency, term
from practice.targets import MockInProgress, NothingInProgress, PracticeInProgress

if TYPE_CHECKING:  # types only: `kata check` loads this module while it grades
    from graders.engine.report import Report
    from practice.mock import Interview, MockReport, MockStarted, Question
    from practice.sessions import Reset, Started
    from practice.strict import QuestionSubmitted
from graders.engine.grammar import count, times, verb
from practice.mock import STRICT_GRADINGS
from practice.render import (
    attempt_result,
    clock_text,
    follow_ups,
    gradings,
    path,
    question,
    report,
    result_text,
    summary,
    symbols,
)


def attempt_label(a: dict) -> str:
    """softmax (attempt 2), or rope (mock interview #1)."""
    if a["mode"] == "mock":
        return f"{a['kata']} (mock interview #{a['mock_id']})"
    n = a.get("n")
    return f"{a['kata']}" + (f" (attempt {n})" if n else "")


def _paused(paused: list[dict]) -> list[str]:
    return [f"Paused {o['kata']} at {clock.fmt(o['elapsed'])}." for o in paused]


# -- start, check, status ------------------------------------------------------------------
def started(k, res: Started, t: float) -> Text:
    """`kata start`: what it paused or archived, the question, the file, the clock."""
    a = res.attempt
    lines: list[Text | str] = _paused(res.paused)
    if res.closed:
        c = res.closed
        lines.append(Text(f"Archived the previous attempt ({clock.fmt(c['time_used'] or 0)} on "
                          f"its clock, {attempt_result(c)}) as ")
                     + path(res.archived or c["path"]) + ".")
    elif res.archived:
        lines.append(Text("Kept the previous file as ") + path(res.archived) + ".")
    lines += [Text(f"{k.name}: {k.title}", style="bold") + f" ({k.difficulty}, {k.minutes} min)",
              "", question(k), ""]
    if res.resumed:
        was = {"paused": "it was paused; the clock runs again",
               "solved": "it already passes; the clock is stopped"}.get(res.was, "")
        lines.append(Text("Resuming the attempt in progress", style="bold yellow")
                     + (f" ({was})" if was else "") + ".")
        if res.minutes_ignored:
            lines.append("--minutes applies to a new attempt; `kata start NAME --fresh "
                         "--minutes N` starts one.")
        if res.recreated:
            lines.append("Its file was missing, so the stub was copied there again.")
    else:
        lines.append(Text("Clock started.", style="bold green"))
        if res.adopted:
            lines.append(f"{paths.shown(a['path'])} was already there with no session, so it "
                         "is your attempt as it stands; `kata start NAME --fresh` archives it "
                         "and starts from the stub.")
    lines += [Text("Edit:  ") + path(a["path"]), Text("Clock: ") + clock_text(a, t),
              "Then `kata check` grades it, `kata watch` re-grades on every save, "
              "`kata hint` gives a hint, `kata submit` finishes."]
    return term.join(lines)


def graded(label: str, file, rep: Report, room: int | None = None) -> Text:
    """A grading as `kata check` shows it: the attempt, the checks, the count."""
    return term.join([Text(f"{label}: {paths.shown(file)}", style="bold"),
                      report(rep, room=room), summary(rep)])


def after_grading(pairs: list[tuple[dict, dict]], t: float,
                  interview: Interview | None = None) -> Text:
    """The clock after `kata check`, and what the grading did to it: (attempt before,
    attempt after) for each attempt graded; in a mock interview, its one clock."""
    before, after = pairs[-1]
    if after["state"] != "open":
        return Text(f"(this attempt was already {after['state']}; the grading is kept in "
                    "its history)")
    if interview:
        return _interview_clock(pairs, t, interview)
    lines: list[Text | str] = [Text("Clock: ") + clock_text(after, t)]
    if after["clock"] == "solved" and before["clock"] != "solved":
        lines.append(Text(f"Solved in {clock.fmt(after['solved_at'])}.", style="bold green")
                     + " The clock is stopped; `kata submit` records the result.")
    elif after["clock"] == "running" and before["clock"] == "solved":
        lines.append("It no longer passes, so the clock runs again.")
    elif after["clock"] == "paused":
        lines.append("The clock is paused; `kata resume` restarts it.")
    return term.join(lines)


def _interview_clock(pairs: list[tuple[dict, dict]], t: float, interview: Interview) -> Text:
    m, solved, total = interview.mock, interview.solved, interview.total
    lines: list[Text | str] = [Text("Interview clock: ") + clock_text(m, t)]
    for before, after in pairs:
        if after["clock"] == "solved" and before["clock"] != "solved" and solved < total:
            lines.append(f"{after['kata']} passes every check ({solved} of {total} questions "
                         f"{verb(solved, 'does', 'do')}); the interview clock runs on until every question passes or "
                         "`kata submit` ends the interview.")
        elif after["clock"] == "running" and before["clock"] == "solved":
            lines.append(f"{after['kata']} no longer passes.")
    if solved == total and any(b["clock"] != "solved" for b, _ in pairs):
        lines.append(Text("Every question passes: the interview clock is stopped.",
                          style="bold green") + " `kata submit` ends the interview.")
    if interview.used is not None:
        lines.append("Gradings used: " + ", ".join(f"{kata} {n} of {STRICT_GRADINGS}"
                                                   for kata, n in interview.used.items()) + ".")
    return term.join(lines)


def resumed(res: Started, t: float) -> Text:
    a = res.attempt
    word = "Resumed" if res.was == "paused" else "Back to"
    return term.join(_paused(res.paused) + [Text(f"{word} {a['kata']}: ") + clock_text(a, t)
                                     + ". Edit " + path(a["path"]) + "."])


def kata_list(statuses: dict, best: dict, last: dict) -> Text:
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
        lines: list[Text | str] = [Text(f"Mock interview #{m['id']}", style="bold") + ": "
                                   + clock_text(m, t)]
        for a, last in view.questions:
            lines.append(Text(f"  {a['kata']:<24} ") + path(a["path"])
                         + f"  last grading: {result_text(last)}")
        lines.append("Hints and solutions wait until it ends; `kata submit` ends it.")
        return term.join(lines)
    if isinstance(view, NothingInProgress):
        nxt = view.next
        return Text("No kata in progress." + (
            f" Next up: {nxt.kata} ({nxt.reason}); `kata start {nxt.kata}`." if nxt else ""))
    a, last, k = view.attempt, view.last, catalogue.get(view.attempt["kata"])
    after_pass = view.hints_shown - a["hints"]
    lines = [Text(f"{a['kata']}: {k.title}", style="bold"),
             Text("  file:   ") + path(a["path"]), Text("  clock:  ") + clock_text(a, t),
             f"  graded: {times(view.n_gradings)}, last: "
             f"{result_text(last)}" + (f" at {clock.when(last['at'])}" if last else ""),
             f"  hints:  {a['hints']} of {len(k.hints)}"
             + (f" (and {after_pass} after passing, not counted)" if after_pass > 0 else "")
             + ("; solution viewed" if a["solution_viewed"] else "")]
    lines += [Text(f"Also in progress: {o['kata']}; its clock: ") + clock_text(o, t)
              for o in view.others]
    return term.join(lines)


# -- submit, hint, reset ----------------------------------------------------------------
def submitted(k, a: dict, rep: Report, n_gradings: int) -> Text:
    """`kata submit`: the final grading, what was recorded, the follow-up questions."""
    result = Text("passed", style="bold green") if a["passed"] else \
        Text("not passed", style="bold red")
    over = (Text(f", {clock.fmt(a['time_used'] - a['budget'])} over time", style="red")
            if a["overtime"] else Text(f" of {clock.fmt(a['budget'])}"))
    recorded = (Text("Recorded: ") + result + f" in {clock.fmt(a['time_used'])}" + over
                + f"; {gradings(n_gradings)}, {count(a['hints'], 'hint')}, solution "
                f"{'viewed' if a['solution_viewed'] else 'not viewed'}.")
    return term.join([graded(f"{k.name}: final grading", a["path"], rep), recorded, "",
                      follow_ups(k), Text(f"`kata followups {k.name}` asks them one at a time "
                                          "and records how you did.", style="dim")])


def hint(k, res: dict) -> Text:
    """`kata hint`: the next hint, or every hint once they are all out."""
    if res["hint"] is None:
        return term.join([f"No more hints for {k.name}: all {res['total']} are shown below. "
                          f"`kata compare {k.name}` puts the reference beside your attempt."]
                         + [f"  {i}. {h}" for i, h in enumerate(res["all"], 1)])
    head = Text(f"Hint {res['index']} of {res['total']} for {k.name}:", style="bold")
    if res["attempt"] and not res["counted"]:
        head += " (your attempt already passes, so it does not count against it)"
    sym = symbols()
    helps = [Text("  It helps with:", style="dim")] if res["helps"] else []
    helps += [Text.assemble("    ", (sym["fail"], "red") if failing else (sym["dot"], "dim"), f" {name}")
              for name, failing in res["helps"]]
    return term.join([head, f"  {res['hint']}"] + helps)


def reset_done(k, res: Reset) -> Text:
    lines: list[Text | str] = []
    if res.closed:
        c = res.closed
        lines.append(f"Closed the attempt in progress ({clock.fmt(c['time_used'] or 0)} on "
                     f"its clock, {attempt_result(c)}).")
    if res.archived:
        lines.append(Text("Archived the old file as ") + path(res.archived) + ".")
    lines.append(path(res.path) + f" is the stub again. `kata start {k.name}` starts the clock.")
    return term.join(lines)


def spoiler_question(k, why: str, shown: str = "the reference solution") -> str:
    reasons = {"untried": f"You have not tried {k.name} yet",
               "running": f"You have not passed {k.name} and its time is not up",
               "set aside": f"You have not passed {k.name}"}
    return f"{reasons.get(why, reasons['set aside'])}. Show {shown} anyway? (this is recorded)"


# -- mock interviews -----------------------------------------------------------------------
def mock_started(res: MockStarted) -> Text:
    """`kata mock`: the interview's clock and every question with its file."""
    m, attempts = res.mock, res.attempts
    how = f"seed {m['seed']}" if m["seeded"] else "the katas you most need"
    lines: list[Text | str] = _paused(res.paused)
    lines.append(Text(f"{'Strict mock' if m['strict'] else 'Mock'} interview #{m['id']}: "
                      f"{count(len(attempts), 'question')}, {clock.fmt(m['budget'])} on one "
                      "clock", style="bold") + f" ({how}).")
    if m["strict"]:
        lines.append(f"Each question may be graded {STRICT_GRADINGS} times, and a grading shows "
                     "only which checks fail. No hints or solutions. `kata submit NAME` submits "
                     "a question, once; `kata submit` submits the rest and ends the interview.")
    else:
        lines.append("No hints or solutions until it ends. `kata watch` shows the countdown and "
                     "re-grades every question; `kata check` grades them all; `kata submit` ends "
                     "the interview.")
    for i, a in enumerate(attempts, 1):
        k = catalogue.get(a["kata"])
        lines += ["", Text(f"Question {i}: {k.name}: {k.title}", style="bold") + f" "
                  f"({k.minutes} min)", "", question(k), "", Text("Edit:  ") + path(a["path"])]
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
        m.get("end_reason") or "", "")
    how = f"seed {m['seed']}" if m["seeded"] else "the katas you most needed"
    lines: list[Text | str] = [
        Text(f"Interview report: {'strict ' if m['strict'] else ''}mock interview #{m['id']} "
             f"({how})", style="bold"),
        f"Time used: {clock.fmt(m['time_used'] or 0)} of {clock.fmt(m['budget'])}"
        + (f", {reason}" if reason else ""), ""]
    rows = []
    for q in data.questions:
        a = q.attempt
        mark = Text(sym["pass"], style="green") if q.passed else Text(sym["fail"], style="red")
        t_used = a["time_used"] if a["time_used"] is not None else a["elapsed"]
        graded = (f"{q.asked} of {STRICT_GRADINGS}, then submitted" if m["strict"] else
                  times(q.n_gradings))
        rows.append([mark + f" {a['kata']}", _mock_result(q.report), clock.fmt(t_used or 0),
                     graded])
    lines.append(term.columns(rows, ["  kata", "result", "time",
                                     "gradings used" if m["strict"] else "graded"]))
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
        graded(f"{a['kata']}: submitted", a["path"], rep),
        f"{a['kata']} used {res.used} of its {STRICT_GRADINGS} gradings. "
        f"{count(res.left, 'question')} still open; `kata submit` submits "
        f"{'it' if res.left == 1 else 'them'} and ends the interview."])


def _mock_notes(q: Question) -> list[str]:
    kata, rep = q.attempt["kata"], q.report
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
    lines = [f"  {f.function}, efficiency: {render_efficiency.summary(f)}" for f in e.functions]
    return lines + [f"  {kata}, remark: {r}" for r in e.remarks]
