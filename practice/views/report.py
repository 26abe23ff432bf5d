"""A grading's report as rich Text: one line per check, a failing check with its message,
its picture (practice.views.picture) and the lines that reproduce it, then what was observed,
the likely cause and the efficiency (practice.views.efficiency); its one-line summary ('7/13
checks passed'); and the two under the attempt's name, as `kata check` prints a grading.

A report is the grader's `Report` (graders/engine/report.py). `Part`s are its pieces, for a
screen that must leave some out (practice.views.watch).
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import TypedDict

from rich.text import Text

from graders.engine.grammar import verb
from graders.engine.report import CheckResult, Report, Status
from practice import paths, term
from practice.views import efficiency, picture

# The marks of a check: passed, failed, waiting (todo), not run (skip), and a dot.
Symbols = TypedDict("Symbols", {"pass": str, "fail": str, "todo": str, "skip": str, "dot": str})


def symbols() -> Symbols:
    if term.can_encode("✓✗…·–"):
        return {"pass": "✓", "fail": "✗", "todo": "…", "skip": "–", "dot": "·"}
    return {"pass": "ok", "fail": "X", "todo": "..", "skip": "-", "dot": "|"}


def _indent(text: str, n: int) -> str:
    return textwrap.indent(text.rstrip("\n"), " " * n)


# -- a grading report -------------------------------------------------------------------
@dataclass(frozen=True)
class Part:
    """A piece of a report, for a screen that must leave some out (practice.views.watch): `kind`
    is printed, passed, skipped, todo, failed, message, picture, repro, observed,
    diagnosis, efficiency (its figures) or remark; `first`, whether it belongs to the first
    failing check."""
    kind: str
    lines: list
    first: bool = False


def report(rep: Report, repro: bool = True, room: int | None = None) -> Text:
    """One line per check (a failed one with its message, picture and repro), what was
    observed, the diagnosis, then the efficiency (once every check passes). An untouched
    stub says 'not implemented yet' once."""
    return term.join([line for part in parts(rep, repro, room) for line in part.lines])


def parts(rep: Report, repro: bool = True, room: int | None = None) -> list[Part]:
    """The report in pieces, in the order they are shown."""
    sym = symbols()
    out = [Part("printed", _printed(rep.stdout))] if rep.stdout.strip() else []
    if rep.untouched:  # the summary says "not implemented yet"
        functions = dict.fromkeys(c.function for c in rep.checks
                                  if c.status is Status.NOT_IMPLEMENTED)
        return out + [Part("todo", [Text.assemble((f"  {sym['todo']} ", "yellow"),
                                                  f"{f}: still the stub" if f else "still the stub")])
                      for f in functions]
    first = next((c for c in rep.checks if c.status is Status.FAILED), None)
    missing = _missing(rep.checks)
    for c in rep.checks:
        if c.status is Status.NOT_IMPLEMENTED:
            line = missing.pop(c.function or c.name, None)  # one line a function, where it is first needed
            out += [Part("todo", [line])] if line else []
        else:
            out += _check_parts(c, sym, repro, room, c is first)
    out += [Part("observed", [Text(f"  Observed: {o}", style="cyan")]) for o in rep.observed]
    if rep.diagnosis:
        out.append(Part("diagnosis", [Text(f"  Likely cause: {rep.diagnosis}", style="magenta")]))
    return out + _efficiency_parts(rep)


def _efficiency_parts(rep: Report) -> list[Part]:
    """The efficiency measured once every check passes (practice.views.efficiency): its
    figures, then each remark."""
    e = rep.efficiency
    figures = efficiency.section(e, remarks=False)
    out = [Part("efficiency", figures)] if figures else []
    if e is not None and e.measured:
        out += [Part("remark", [line]) for line in efficiency.remark_lines(e)]
    return out


def _missing(checks: list[CheckResult]) -> dict[str, Text]:
    """The line of each function still missing: how many checks wait for it."""
    waiting: dict[str, int] = {}
    for c in checks:
        if c.status is Status.NOT_IMPLEMENTED:
            waiting[c.function or c.name] = waiting.get(c.function or c.name, 0) + 1
    sym = symbols()
    return {f: Text.assemble("  ", (sym["todo"], "yellow"), f" `{f}`: ", ("not implemented yet", "yellow"),
                             f" ({n} checks need it)" if n > 1 else "")
            for f, n in waiting.items()}


def _printed(out: str) -> list[Text]:
    """What the attempt printed, its first lines."""
    if not out.strip():
        return []
    shown = term.visible(out.rstrip("\n")).split("\n")  # a carriage return is shown, not obeyed
    lines = [Text("  your code printed:", style="dim")]
    lines += [Text(f"    | {ln}", style="dim") for ln in shown[:8]]
    if len(shown) > 8:
        lines.append(Text(f"    | ... ({len(shown) - 8} more lines)", style="dim"))
    return lines


def _check_parts(c: CheckResult, sym: Symbols, repro: bool, room: int | None,
                 first: bool) -> list[Part]:
    name = c.name
    if c.status is Status.PASSED:
        return [Part("passed", [Text.assemble("  ", (sym["pass"], "green"), f" {name}")])]
    if c.status is Status.SKIPPED:
        return [Part("skipped", [Text(f"  {sym['skip']} {name} (not run)"
                                      + (f": {c.message}" if c.message else ""), style="dim")])]
    out = [Part("failed", [Text.assemble("  ", (sym["fail"], "bold red"), " ", (name, "bold"))], first)]
    if c.message:
        out.append(Part("message", [_indent(c.message, 6)], first))
    if c.picture:
        out.append(Part("picture", [picture.grid(c.picture, indent=6, room=room)], first))
    if c.repro and repro:
        out.append(Part("repro", [Text("      reproduce:", style="dim"), _indent(c.repro, 10)], first))
    return out


def summary(rep: Report) -> Text:
    """'7/13 checks passed (1 not run)', or 'not implemented yet'."""
    n = rep.counts
    if rep.untouched:
        text = "not implemented yet"
    else:
        waiting = dict.fromkeys(f"`{c.function}`" for c in rep.checks
                                if c.status is Status.NOT_IMPLEMENTED and c.function)
        notes = ([f"{n.not_implemented} {verb(n.not_implemented, 'waits', 'wait')} for "
                  f"{' and '.join(waiting) or 'a function'}"] if n.not_implemented
                 else []) + ([f"{n.skipped} not run"] if n.skipped else [])
        text = f"{n.passed}/{n.total} checks passed" + (f" ({', '.join(notes)})" if notes else "")
    color = "green" if rep.passed else ("yellow" if rep.not_implemented else "red")
    return Text(text, style=f"bold {color}")



def graded(label: str, file, rep: Report, room: int | None = None) -> Text:
    """A grading as `kata check` shows it: the attempt, the checks, the count."""
    return term.join([Text(f"{label}: {paths.shown(file)}", style="bold"),
                      report(rep, room=room), summary(rep)])

