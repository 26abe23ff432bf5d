"""Reports, clocks and questions as rich Text, for practice.term to print.

A report is the grader's `Report` (graders/engine/report.py): one line per check, a failing
check with its message, its picture (practice.picture) and the lines that reproduce it,
then what was observed and the likely cause. The messages of whole commands are in
practice.messages.
"""
from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass

from rich.text import Text

from graders.engine.grammar import times, verb
from graders.engine.report import CheckResult, Report, Status
from practice import clock, paths, picture, render_efficiency, term


def symbols() -> dict[str, str]:
    if term.can_encode("✓✗…·–"):
        return {"pass": "✓", "fail": "✗", "todo": "…", "skip": "–", "dot": "·"}
    return {"pass": "ok", "fail": "X", "todo": "..", "skip": "-", "dot": "|"}


def _indent(text: str, n: int) -> str:
    return textwrap.indent(text.rstrip("\n"), " " * n)


# -- a grading report -------------------------------------------------------------------
@dataclass(frozen=True)
class Part:
    """A piece of a report, for a screen that must leave some out (practice.screen): `kind`
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
    """The efficiency measured once every check passes (practice.render_efficiency): its
    figures, then each remark."""
    e = rep.efficiency
    figures = render_efficiency.section(e, remarks=False)
    out = [Part("efficiency", figures)] if figures else []
    if e is not None and e.measured:
        out += [Part("remark", [line]) for line in render_efficiency.remark_lines(e)]
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


def _check_parts(c: CheckResult, sym: dict, repro: bool, room: int | None,
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


# -- clocks and results -----------------------------------------------------------------------
def clock_text(row: dict, t: float) -> Text:
    """'12:31 used, 27:29 left of 40:00', or '3:05 over the 40:00 budget', and the
    clock's state."""
    used = clock.elapsed(row, t)
    budget = row["budget"]
    if used <= budget:
        text = Text(f"{clock.fmt(used)} used, {clock.fmt(budget - used)} left of "
                    f"{clock.fmt(budget)}")
    else:
        text = Text(f"{clock.fmt(used)} used, {clock.fmt(used - budget)} over the "
                    f"{clock.fmt(budget)} budget", style="red")
    state = {"paused": " (paused)", "solved": " (solved: clock stopped)",
             "stopped": " (finished)"}.get(row.get("clock"), "")
    return text + state


def result_text(r: dict | None) -> str:
    """The result of one grading row: 'passed 3/3', 'failed 1/3', 'not implemented'."""
    if not r:
        return "-"
    if r["passed"]:
        return f"passed {r['n_passed']}/{r['n_total']}"
    if r["not_implemented"] and not r["n_passed"]:
        return "not implemented"
    return f"failed {r['n_passed']}/{r['n_total']}"


def attempt_result(a: dict) -> str:
    if a["state"] == "open":
        return "in progress"
    word = "passed" if a["passed"] else ("not passed" if a["state"] == "submitted" else "abandoned")
    if a["state"] == "archived" and a["passed"]:
        word = "passed, set aside"
    if a["overtime"]:
        word += ", over time"
    return word


def gradings(n: int) -> str:
    """'not graded', 'graded once', 'graded 3 times'."""
    return "not graded" if n == 0 else f"graded {times(n)}"


# -- questions ----------------------------------------------------------------------------
def follow_ups(k, heading: str = "An interviewer would ask next:", indent: int = 2) -> Text:
    lines: list[Text | str] = [Text(heading, style="bold")] if heading else []
    pad = " " * indent
    for i, f in enumerate(k.follow_ups, 1):
        lines.append(textwrap.fill(f.question, width=min(88, term.width()), initial_indent=f"{pad}{i}. ",
                                   subsequent_indent=pad + "   "))
    return term.join(lines)


def question(k) -> Text:
    """The interview question: the stub's docstrings (module, then each function's,
    under its signature)."""
    try:
        source = k.stub.read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return Text(k.title)
    parts: list[Text | str] = []
    doc = ast.get_docstring(tree)
    if doc:
        parts.append(doc)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            fdoc = ast.get_docstring(node)
            m = re.search(rf"^def {node.name}\((.*?)\)\s*(?:->[^:]*)?:", source, re.M | re.S)
            args = " ".join(m.group(1).split()) if m else ast.unparse(node.args)
            sig = Text(f"def {node.name}({args}):", style="bold")
            parts.append(sig + ("\n" + _indent(fdoc, 4) if fdoc else ""))
    return term.join(parts, "\n\n") if parts else Text(k.title)


def path(p) -> Text:
    return Text(paths.shown(p), style="bold cyan")
