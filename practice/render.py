"""Plain terminal rendering (click.style only; no rich here, so `kata check` stays instant).

Each function returns text; kata.py echoes it, and click drops the colours when the output
is not a terminal or NO_COLOR is set.
"""
from __future__ import annotations

import re
import sys
import textwrap

import click

from practice import clock, grading, paths


def _can(text: str) -> bool:
    enc = getattr(sys.stdout, "encoding", None) or "ascii"
    try:
        text.encode(enc)
        return True
    except (UnicodeEncodeError, LookupError):
        return False


def symbols() -> dict[str, str]:
    if _can("✓✗…·–"):
        return {"pass": "✓", "fail": "✗", "todo": "…", "skip": "–", "dot": "·"}
    return {"pass": "ok", "fail": "X", "todo": "..", "skip": "-", "dot": "|"}


def _indent(text: str, n: int) -> str:
    return textwrap.indent(text.rstrip("\n"), " " * n)


# -- a grading report -------------------------------------------------------------------
def report(rep: dict, repro: bool = True) -> str:
    """One line per check (a failed one with its message and repro), then the diagnosis.
    An untouched stub says 'not implemented yet' once."""
    sym = symbols()
    lines: list[str] = []
    checks = rep.get("checks") or []
    n_pass, n_total = grading.counts(rep)
    out = rep.get("stdout") or ""
    if out.strip():
        shown_lines = out.rstrip("\n").splitlines()
        lines.append(click.style("  your code printed:", dim=True))
        for ln in shown_lines[:8]:
            lines.append(click.style(f"    | {ln}", dim=True))
        if len(shown_lines) > 8:
            lines.append(click.style(f"    | ... ({len(shown_lines) - 8} more lines)", dim=True))
    if rep.get("not_implemented") and n_pass == 0:
        messages = []
        for c in checks:
            m = (c.get("message") or "").strip()
            low = m.lower()
            if low.startswith("not implemented yet"):
                m = m[len("not implemented yet"):].lstrip(" :.-")
            if m and m not in messages:
                messages.append(m)
        for m in messages or ["not implemented yet"]:
            lines.append(click.style(f"  {sym['todo']} ", fg="yellow") + m)
        return "\n".join(lines)
    for c in checks:
        status = c.get("status") or ("passed" if c.get("passed") else "failed")
        name = c.get("name", "check")
        if c.get("passed"):
            lines.append(f"  {click.style(sym['pass'], fg='green')} {name}")
        elif status == "skipped":
            lines.append(click.style(f"  {sym['skip']} {name} (skipped)", dim=True)
                         + (f": {c['message']}" if c.get("message") else ""))
        elif status == "not_implemented":
            lines.append(f"  {click.style(sym['todo'], fg='yellow')} {name}: "
                         + click.style("not implemented yet", fg="yellow"))
        else:
            lines.append(f"  {click.style(sym['fail'], fg='red', bold=True)} "
                         + click.style(name, bold=True))
            if c.get("message"):
                lines.append(_indent(c["message"], 6))
            if c.get("repro") and repro:
                lines.append(click.style("      reproduce:", dim=True))
                lines.append(_indent(c["repro"], 10))
    if rep.get("diagnosis"):
        lines.append(click.style(f"  Likely cause: {rep['diagnosis']}", fg="magenta"))
    return "\n".join(lines)


def summary(rep: dict) -> str:
    n_pass, n_total = grading.counts(rep)
    skipped = sum(1 for c in rep.get("checks") or [] if c.get("status") == "skipped")
    if rep.get("not_implemented") and n_pass == 0:
        text = "not implemented yet"
    else:
        text = f"{n_pass}/{n_total} checks passed"
        if skipped:
            text += f" ({skipped} skipped)"
    color = "green" if rep.get("passed") else ("yellow" if rep.get("not_implemented") else "red")
    return click.style(text, fg=color, bold=True)


# -- clocks ------------------------------------------------------------------------------
def clock_text(row: dict, t: float) -> str:
    """'12:31 used, 27:29 left', '3:05 over the 40:00 budget', with the clock's state."""
    used = clock.elapsed(row, t)
    budget = row["budget"]
    if used <= budget:
        text = f"{clock.fmt(used)} used, {clock.fmt(budget - used)} left of {clock.fmt(budget)}"
    else:
        text = click.style(f"{clock.fmt(used)} used, {clock.fmt(used - budget)} over the "
                           f"{clock.fmt(budget)} budget", fg="red")
    state = row.get("clock")
    if state == "paused":
        text += " (paused)"
    elif state == "solved":
        text += " (solved: clock stopped)"
    elif state == "stopped":
        text += " (finished)"
    return text


# -- tables ------------------------------------------------------------------------------
def columns(rows: list[list[str]], header: list[str] | None = None) -> str:
    """Left-aligned columns separated by two spaces, no borders. The first column first."""
    table = ([header] if header else []) + rows
    widths = [max(len(click.unstyle(r[i])) for r in table) for i in range(len(table[0]))]
    out = []
    for j, r in enumerate(table):
        cells = []
        for i, cell in enumerate(r):
            pad = widths[i] - len(click.unstyle(cell))
            cells.append(cell + " " * pad if i < len(r) - 1 else cell)
        line = "  ".join(cells).rstrip()
        out.append(click.style(line, bold=True) if header and j == 0 else line)
    return "\n".join(out)


def result_text(r: dict | None) -> str:
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


def mock_report(data: dict) -> str:
    sym = symbols()
    m = data["mock"]
    reason = {"deadline": "ended at the deadline", "submitted": "submitted"}.get(
        m.get("end_reason") or "", "")
    lines = [click.style(f"Interview report: mock interview #{m['id']} (seed {m['seed']})",
                         bold=True)]
    lines.append(f"Time used: {clock.fmt(m['time_used'] or 0)} of {clock.fmt(m['budget'])}"
                 + (f", {reason}" if reason else ""))
    lines.append("")
    rows = []
    for r in data["rows"]:
        a, rep = r["attempt"], r["report"]
        passed = bool(rep and rep.get("passed"))
        if rep is None:
            result = "not checked"
        elif passed:
            result = "passed"
        elif rep.get("not_implemented") and not grading.counts(rep)[0]:
            result = "not implemented"
        else:
            n_pass, n_total = grading.counts(rep)
            result = f"failed {n_pass}/{n_total}"
        mark = click.style(sym["pass"], fg="green") if passed else click.style(sym["fail"], fg="red")
        t_used = a["time_used"] if a["time_used"] is not None else a["elapsed"]
        rows.append([f"{mark} {a['kata']}", result, clock.fmt(t_used or 0),
                     f"{r['n_checks']} check{'s' if r['n_checks'] != 1 else ''}"])
    lines.append(columns(rows, ["  kata", "result", "time", "checks"]))
    for r in data["rows"]:
        if r.get("note"):
            lines.append(f"  {r['attempt']['kata']}: {r['note']}")
        if r["failing"]:
            lines.append(f"  {r['attempt']['kata']} still fails:")
            lines += [f"    - {name}" for name in r["failing"]]
        if r["report"] and r["report"].get("diagnosis"):
            lines.append(f"  {r['attempt']['kata']}, likely cause: {r['report']['diagnosis']}")
    lines.append("")
    lines.append(click.style("Follow-up questions to answer aloud:", bold=True))
    for r in data["rows"]:
        k = r["kata"]
        if len(data["rows"]) > 1:
            lines.append(f"  {k.name}:")
        for i, q in enumerate(k.follow_ups, 1):
            lines.append(textwrap.fill(q, width=88, initial_indent=f"  {i}. ",
                                       subsequent_indent="     "))
    return "\n".join(lines)


def follow_ups(k) -> str:
    lines = [click.style("An interviewer would ask next:", bold=True)]
    for i, q in enumerate(k.follow_ups, 1):
        lines.append(textwrap.fill(q, width=88, initial_indent=f"  {i}. ",
                                   subsequent_indent="     "))
    return "\n".join(lines)


def question(k) -> str:
    """The interview question: the stub's docstrings (module, then each function's,
    under its signature)."""
    import ast

    try:
        source = k.stub.read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return k.title
    parts = []
    doc = ast.get_docstring(tree)
    if doc:
        parts.append(doc)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            fdoc = ast.get_docstring(node)
            m = re.search(rf"^def {node.name}\((.*?)\)\s*(?:->[^:]*)?:", source, re.M | re.S)
            args = " ".join(m.group(1).split()) if m else ast.unparse(node.args)
            sig = click.style(f"def {node.name}({args}):", bold=True)
            parts.append(sig + ("\n" + _indent(fdoc, 4) if fdoc else ""))
    return "\n\n".join(parts) or k.title


def path(p) -> str:
    return click.style(paths.shown(p), fg="cyan", bold=True)


# -- the commands' messages --------------------------------------------------------------
def attempt_label(a: dict) -> str:
    """softmax (attempt 2), or rope (mock interview #1)."""
    if a["mode"] == "mock":
        return f"{a['kata']} (mock interview #{a['mock_id']})"
    n = a.get("n")
    return f"{a['kata']}" + (f" (attempt {n})" if n else "")


def _paused(res: dict) -> list[str]:
    return [f"Paused {o['kata']} at {clock.fmt(o['elapsed'])}." for o in res["paused"]]


def started(k, res: dict, t: float) -> str:
    """What `kata start` says: what it paused or archived, the question, the file, the clock."""
    a = res["attempt"]
    lines = _paused(res)
    if res.get("closed"):
        c = res["closed"]
        lines.append(f"Archived the previous attempt ({clock.fmt(c['time_used'] or 0)} on its "
                     f"clock, {attempt_result(c)}) as {path(res['archived'] or c['path'])}.")
    elif res.get("archived"):
        lines.append(f"Kept the previous file as {path(res['archived'])}.")
    lines += [click.style(f"{k.name}: {k.title}", bold=True) + f" ({k.difficulty}, {k.minutes} min)",
              "", question(k), ""]
    if res["resumed"]:
        was = {"paused": "it was paused; the clock runs again",
               "solved": "it already passes; the clock is stopped"}.get(res["was"], "")
        lines.append(click.style("Resuming the attempt in progress", fg="yellow", bold=True)
                     + (f" ({was})" if was else "") + ".")
        if res.get("minutes_ignored"):
            lines.append("--minutes applies to a new attempt; `kata start NAME --fresh "
                         "--minutes N` starts one.")
        if res.get("recreated"):
            lines.append("Its file was missing, so the stub was copied there again.")
    else:
        lines.append(click.style("Clock started.", fg="green", bold=True))
        if res.get("adopted"):
            lines.append(f"{paths.shown(a['path'])} was already there with no session, so it "
                         "is your attempt as it stands; `kata start NAME --fresh` archives it "
                         "and starts from the stub.")
    lines += [f"Edit:  {path(a['path'])}", f"Clock: {clock_text(a, t)}",
              "Then `kata check` grades it, `kata watch` re-grades on every save, "
              "`kata hint` gives a hint, `kata submit` finishes."]
    return "\n".join(lines)


def after_grading(before: dict, after: dict, t: float) -> str:
    """The clock after `kata check`, and what the grading did to it."""
    if after["state"] != "open":
        return (f"(this attempt was already {after['state']}; the check is kept in its "
                "history)")
    lines = [f"Clock: {clock_text(after, t)}"]
    if after["clock"] == "solved" and before["clock"] != "solved":
        lines.append(click.style(f"Solved in {clock.fmt(after['solved_at'])}.", fg="green",
                                 bold=True) + " The clock is stopped; `kata submit` records the result.")
    elif after["clock"] == "running" and before["clock"] == "solved":
        lines.append("It no longer passes, so the clock runs again.")
    elif after["clock"] == "paused":
        lines.append("The clock is paused; `kata resume` restarts it.")
    return "\n".join(lines)


def status(view: dict, t: float) -> str:
    """`kata status` from `Practice.status()`."""
    from practice import catalogue

    if "mock" in view:
        m = view["mock"]
        lines = [click.style(f"Mock interview #{m['id']}", bold=True)
                 + f": {clock_text(dict(m, clock='running'), t)}"]
        for a, last in view["questions"]:
            lines.append(f"  {a['kata']:<24} {path(a['path'])}  last check: {result_text(last)}")
        lines.append("Hints and solutions wait until it ends; `kata submit` ends it.")
        return "\n".join(lines)
    if "next" in view:
        nxt = view["next"]
        return "No kata in progress." + (
            f" Next up: {nxt.kata} ({nxt.reason}); `kata start {nxt.kata}`." if nxt else "")
    a, last = view["attempt"], view["last"]
    k = catalogue.get(a["kata"])
    lines = [click.style(f"{a['kata']}: {k.title}", bold=True),
             f"  file:   {path(a['path'])}",
             f"  clock:  {clock_text(a, t)}",
             f"  checks: {view['n_checks']}, last: {result_text(last)}"
             + (f" at {clock.when(last['at'])}" if last else ""),
             f"  hints:  {a['hints']} of {len(k.hints)}"
             + ("; solution viewed" if a["solution_viewed"] else "")]
    lines += [f"Also in progress: {o['kata']} ({clock_text(o, t)})" for o in view["others"]]
    return "\n".join(lines)


def submitted(k, a: dict, rep: dict, n_checks: int) -> str:
    """`kata submit`: the final grading, what was recorded, the follow-up questions."""
    result = click.style("passed", fg="green", bold=True) if a["passed"] else \
        click.style("not passed", fg="red", bold=True)
    over = (click.style(f", {clock.fmt(a['time_used'] - a['budget'])} over time", fg="red")
            if a["overtime"] else f" of {clock.fmt(a['budget'])}")
    return "\n".join([
        click.style(f"{k.name}: final grading of {paths.shown(a['path'])}", bold=True),
        report(rep), summary(rep),
        f"Recorded: {result} in {clock.fmt(a['time_used'])}{over}; {n_checks} "
        f"check{'s' if n_checks != 1 else ''}, {a['hints']} "
        f"hint{'s' if a['hints'] != 1 else ''}, solution "
        f"{'viewed' if a['solution_viewed'] else 'not viewed'}.",
        "", follow_ups(k)])


def mock_started(res: dict) -> str:
    """`kata mock`: the interview's clock and every question with its file."""
    from practice import catalogue

    m, attempts = res["mock"], res["attempts"]
    lines = _paused(res)
    lines.append(click.style(f"Mock interview #{m['id']}: {len(attempts)} "
                             f"question{'s' if len(attempts) > 1 else ''}, "
                             f"{clock.fmt(m['budget'])} on one clock", bold=True)
                 + f" (seed {m['seed']}).")
    lines.append("No hints or solutions until it ends. `kata watch` shows the countdown; "
                 "`kata submit` ends the interview.")
    for i, a in enumerate(attempts, 1):
        k = catalogue.get(a["kata"])
        lines += ["", click.style(f"Question {i}: {k.name}: {k.title}", bold=True), "",
                  question(k), "", f"Edit:  {path(a['path'])}"]
    return "\n".join(lines)


def hint(k, res: dict) -> str:
    """`kata hint`: the next hint, or every hint once they are all out."""
    if res["hint"] is None:
        return "\n".join([f"No more hints for {k.name}: all {res['total']} are shown below. "
                          f"`kata compare {k.name}` puts the reference beside your attempt."]
                         + [f"  {i}. {h}" for i, h in enumerate(res["all"], 1)])
    return (click.style(f"Hint {res['index']} of {res['total']} for {k.name}:", bold=True)
            + f"\n  {res['hint']}")


def reset_done(k, res: dict) -> str:
    lines = []
    if res["closed"]:
        c = res["closed"]
        lines.append(f"Closed the attempt in progress ({clock.fmt(c['time_used'] or 0)} on "
                     f"its clock, {attempt_result(c)}).")
    if res["archived"]:
        lines.append(f"Archived the old file as {path(res['archived'])}.")
    lines.append(f"{path(res['path'])} is the stub again. `kata start {k.name}` starts the clock.")
    return "\n".join(lines)
