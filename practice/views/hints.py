"""What `kata hint` shows (the next hint and the checks it helps with, or every hint once
all are out), and the question asked before a spoiler (a reference solution, model answers).
"""
from __future__ import annotations

from rich.text import Text

from practice import term
from practice.aids import Hint
from practice.views.report import symbols


def hint(k, res: Hint) -> Text:
    """`kata hint`: the next hint, or every hint once they are all out."""
    if res.hint is None:
        return term.join([f"No more hints for {k.name}: all {res.total} are shown below. "
                          f"`kata compare {k.name}` puts the reference beside your attempt."]
                         + [f"  {i}. {h}" for i, h in enumerate(res.all, 1)])
    head = Text(f"Hint {res.index} of {res.total} for {k.name}:", style="bold")
    if res.attempt and not res.counted:
        head += " (your attempt already passes, so it does not count against it)"
    sym = symbols()
    helps = [Text("  It helps with:", style="dim")] if res.helps else []
    helps += [Text.assemble("    ", (sym["fail"], "red") if failing else (sym["dot"], "dim"), f" {name}")
              for name, failing in res.helps]
    return term.join([head, f"  {res.hint}"] + helps)


def spoiler_question(k, why: str, shown: str = "the reference solution") -> str:
    reasons = {"untried": f"You have not tried {k.name} yet",
               "running": f"You have not passed {k.name} and its time is not up",
               "set aside": f"You have not passed {k.name}"}
    return f"{reasons.get(why, reasons['set aside'])}. Show {shown} anyway? (this is recorded)"
