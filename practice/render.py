"""Reports, clocks and questions as rich Text, for practice.term to print.

A report is the grader's `Report` (graders/engine/report.py): one line per check, a failing
check with its message, its picture (practice.picture) and the lines that reproduce it,
then the likely cause. The messages of whole commands are in practice.messages.
"""
from __future__ import annotations

import ast
import re
import textwrap

from rich.text import Text

from graders.engine.report import CheckResult, Report, Status
from practice import clock, paths, picture, term


def symbols() -> dict[str, str]:
    if term.can_encode("✓✗…·–"):
        return {"pass": "✓", "fail": "✗", "todo": "…", "skip": "–", "dot": "·"}
    return {"pass": "ok", "fail": "X", "todo": "..", "skip": "-", "dot": "|"}


def _indent(text: str, n: int) -> str:
    return textwrap.indent(text.rstrip("\n"), " " * n)


# -- a grading report -------------------------------------------------------------------
def report(rep: Report, repro: bool = True, room: int | None = None) -> Text:
    """One line per check (a failed one with its message, picture and repro), then the
    diagnosis. An untouched stub says 'not implemented yet' once."""
    sym = symbols()
    lines: list[Text | str] = _printed(rep.stdout)
    checks = rep.checks
    if rep.untouched:  # the summary says "not implemented yet"
        functions = dict.fromkeys(c.function for c in checks
                                  if c.status is Status.NOT_IMPLEMENTED)
        lines += [Text.assemble((f"  {sym['todo']} ", "yellow"),
                                f"{f}: still the stub" if f else "still the stub")
                  for f in functions]
        return term.join(lines)
    for c in checks:
        lines += _check_lines(c, sym, repro, room)
    if rep.diagnosis:
        lines.append(Text(f"  Likely cause: {rep.diagnosis}", style="magenta"))
    return term.join(lines)


def _printed(out: str) -> list[Text]:
    """What the attempt printed, its first lines."""
    if not out.strip():
        return []
    shown = out.rstrip("\n").splitlines()
    lines = [Text("  your code printed:", style="dim")]
    lines += [Text(f"    | {ln}", style="dim") for ln in shown[:8]]
    if len(shown) > 8:
        lines.append(Text(f"    | ... ({len(shown) - 8} more lines)", style="dim"))
    return lines


def _check_lines(c: CheckResult, sym: dict, repro: bool, room: int | None) -> list[Text | str]:
    name = c.name
    if c.status is Status.PASSED:
        return [Text.assemble(f"  ", (sym["pass"], "green"), f" {name}")]
    if c.status is Status.SKIPPED:
        return [Text(f"  {sym['skip']} {name} (not run)"
                     + (f": {c.message}" if c.message else ""), style="dim")]
    if c.status is Status.NOT_IMPLEMENTED:
        return [Text.assemble(f"  ", (sym["todo"], "yellow"), f" {name}: ",
                              ("not implemented yet", "yellow"))]
    lines: list[Text | str] = [Text.assemble("  ", (sym["fail"], "bold red"), " ",
                                             (name, "bold"))]
    if c.message:
        lines.append(_indent(c.message, 6))
    if c.picture:
        lines.append(picture.grid(c.picture, indent=6, room=room))
    if c.repro and repro:
        lines += [Text("      reproduce:", style="dim"), _indent(c.repro, 10)]
    return lines


def summary(rep: Report) -> Text:
    """'7/13 checks passed (1 not run)', or 'not implemented yet'."""
    n = rep.counts
    if rep.untouched:
        text = "not implemented yet"
    else:
        text = f"{n.passed}/{n.total} checks passed" + (f" ({n.skipped} not run)" if n.skipped else "")
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


def times(n: int) -> str:
    """'never', 'once', '3 times'."""
    return "never" if n == 0 else "once" if n == 1 else f"{n} times"


def gradings(n: int) -> str:
    """'not graded', 'graded once', 'graded 3 times'."""
    return "not graded" if n == 0 else f"graded {times(n)}"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


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
