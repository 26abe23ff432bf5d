"""What `kata start`, `kata resume` and `kata reset` say: the clocks paused and the attempt
archived, the question, the file to edit and the clock; the clock running again; the stub
put back.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from practice import clock, paths, term
from practice.views.attempt import attempt_result, clock_text, path, paused
from practice.views.question import question

if TYPE_CHECKING:
    from practice.sessions import Reset, Started


def started(k, res: Started, t: float) -> Text:
    """`kata start`: what it paused or archived, the question, the file, the clock."""
    a = res.attempt
    lines: list[Text | str] = paused(res.paused)
    if res.closed:
        c = res.closed
        lines.append(Text(f"Archived the previous attempt ({clock.fmt(c.time_used or 0)} on "
                          f"its clock, {attempt_result(c)}) as ")
                     + path(res.archived or c.path) + ".")
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
            lines.append(f"{paths.shown(a.path)} was already there with no session, so it "
                         "is your attempt as it stands; `kata start NAME --fresh` archives it "
                         "and starts from the stub.")
    lines += [Text("Edit:  ") + path(a.path), Text("Clock: ") + clock_text(a, t),
              "Then `kata check` grades it, `kata watch` re-grades on every save, "
              "`kata hint` gives a hint, `kata submit` finishes."]
    return term.join(lines)


def resumed(res: Started, t: float) -> Text:
    a = res.attempt
    word = "Resumed" if res.was == "paused" else "Back to"
    return term.join(paused(res.paused) + [Text(f"{word} {a.kata}: ") + clock_text(a, t)
                                     + ". Edit " + path(a.path) + "."])


def reset_done(k, res: Reset) -> Text:
    lines: list[Text | str] = []
    if res.closed:
        c = res.closed
        lines.append(f"Closed the attempt in progress ({clock.fmt(c.time_used or 0)} on "
                     f"its clock, {attempt_result(c)}).")
    if res.archived:
        lines.append(Text("Archived the old file as ") + path(res.archived) + ".")
    lines.append(path(res.path) + f" is the stub again. `kata start {k.name}` starts the clock.")
    return term.join(lines)
