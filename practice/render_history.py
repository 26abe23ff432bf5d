"""`kata history` as text: past attempts, best times, what next, and the replay of one
attempt check by check (the queries are in practice.history and practice.records)."""
from __future__ import annotations

import difflib
import io
import json
import textwrap
import tokenize

import click

from practice import catalogue, clock, grading, history, paths, records, render
from practice.clock import elapsed


def overview(s, kata: str | None = None) -> str:
    t = clock.now()
    attempts = history.attempts_of(s, kata)
    lines = []
    if not attempts:
        lines.append("No attempts yet" + (f" at {kata}." if kata else "."))
    else:
        lines.append(click.style("Attempts", bold=True))
        rows = []
        for a in attempts:
            used = a["time_used"] if a["time_used"] is not None else elapsed(a, t)
            where = a["archive"] or a["path"]
            result = render.attempt_result(a)
            if a["restarted_from"]:
                result += ", a restart"
            rows.append([
                a["kata"], str(a["n"]), clock.when(a["started_at"]),
                "mock" if a["mode"] == "mock" else "practice",
                clock.fmt(used), result, str(a["n_checks"]), str(a["hints"]),
                "viewed" if a["solution_viewed"] else "-", paths.shown(where),
            ])
        lines.append(render.columns(rows, ["kata", "#", "started", "mode", "time", "result",
                                           "checks", "hints", "solution", "file"]))
        if kata:
            lines.append(f"`kata history {kata} --attempt N` replays attempt N check by check.")
    best = history.best_times(s)
    if best:
        lines.append("")
        lines.append(click.style("Best time per kata", bold=True))
        rows = [[k.name, clock.fmt(best[k.name]), f"of {k.minutes} min"]
                for k in catalogue.katas() if k.name in best and (not kata or k.name == kata)]
        if rows:
            lines.append(render.columns(rows))
    lines.append("")
    lines.append(click.style("What to practise next", bold=True))
    plan = [d for d in history.plan(s) if not kata or d.kata == kata]
    rows = []
    for d in plan[:5] if not kata else plan:
        when = due_text(d, t)
        rows.append([d.kata, when, d.reason])
    lines.append(render.columns(rows))
    return "\n".join(lines)


def due_text(d, t: float) -> str:
    if not d.tried:
        return "now"
    delta = d.due_at - t
    if delta <= 0:
        days = int(-delta // 86400)
        return "due now" if days == 0 else f"overdue by {days} day{'s' if days != 1 else ''}"
    if delta >= 86400:
        n = round(delta / 86400)
        return f"in {n} day{'s' if n != 1 else ''}"
    h = round(delta / 3600)
    return f"in {h} hour{'s' if h != 1 else ''}" if h >= 1 else "within the hour"


REPLAYED_EVENTS = ("pause", "unpause", "hint", "solution", "compare", "solved", "unsolved",
                   "restart", "reset", "submit")


def replay(s, kata: str, number: int, full: bool = False) -> str:
    attempts = history.attempts_of(s, kata)
    match = [a for a in attempts if a["n"] == number]
    if not match:
        raise click.UsageError(
            f"{kata} has {len(attempts)} attempt{'s' if len(attempts) != 1 else ''}; "
            f"there is no attempt {number}")
    a = match[0]
    k = catalogue.get(kata)
    t = clock.now()
    lines = [click.style(f"{kata} attempt {number}", bold=True)
             + f" ({'mock interview #' + str(a['mock_id']) if a['mode'] == 'mock' else 'practice'}),"
             f" started {clock.when(a['started_at'])}: {render.attempt_result(a)},"
             f" {clock.fmt(a['time_used'] if a['time_used'] is not None else elapsed(a, t))}"
             f" of {clock.fmt(a['budget'])}"]
    lines.append(f"File: {paths.shown(a['archive'] or a['path'])}")
    if a["restarted_from"]:
        lines.append("A restart: the attempt before it was archived with `--fresh`.")
    events = records.events_of(s, a["id"], REPLAYED_EVENTS)
    timeline = [("event", e["at"], e) for e in events]
    timeline += [("check", c["at"], c) for c in records.checks(s, a["id"])]
    timeline.sort(key=lambda x: (x[1], 0 if x[0] == "check" else 1))
    previous = None
    n = 0
    for kind, at, item in timeline:
        if kind == "event":
            lines.append(click.style(f"{clock.when(at)}  {_event_text(item, k)}", dim=True))
            continue
        n += 1
        lines += _grading_lines(n, item, previous, full)
        previous = source_text(item["code"])
    if n == 0:
        lines.append("")
        lines.append("No checks were run on this attempt.")
    return "\n".join(lines)


def source_text(code: bytes | str) -> str:
    """The text of graded bytes as Python reads them: the encoding its coding line or
    byte-order mark declares, else UTF-8 (rows from before bytes were kept hold text)."""
    if isinstance(code, bytes):
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(code).readline)
            code = code.decode(encoding)
        except (SyntaxError, LookupError, UnicodeDecodeError):
            code = code.decode("utf-8", errors="replace")
    return code.replace("\r\n", "\n").replace("\r", "\n")  # as Python reads lines


def _grading_lines(n: int, item: dict, previous: str | None, full: bool) -> list[str]:
    """One grading of a replay: its result, what failed, and its code (whole the first
    time or with --full, else as a diff against the grading before)."""
    rep = json.loads(item["report"])
    head = (f"check {n} at {clock.fmt(item['clock'])} on the clock ({item['source']}): "
            + click.unstyle(render.summary(rep)))
    lines = ["", click.style(head, bold=True, fg="green" if item["passed"] else None)]
    fails = grading.failing(rep)
    if fails and not (rep.get("not_implemented") and not grading.counts(rep)[0]):
        lines.append("  failing: " + "; ".join(fails))
    if rep.get("diagnosis"):
        lines.append(f"  likely cause: {rep['diagnosis']}")
    code = source_text(item["code"])
    if previous is None or full:
        lines.append(textwrap.indent(code.rstrip("\n") or "(empty file)", "    |",
                                     lambda line: True))
    elif code == previous:
        lines.append("    (code unchanged)")
    else:
        diff = difflib.unified_diff(previous.splitlines(), code.splitlines(),
                                    "before", "after", lineterm="", n=2)
        for d in list(diff)[2:]:
            color = "green" if d.startswith("+") else "red" if d.startswith("-") else None
            lines.append(click.style("    " + d, fg=color))
    return lines


def _event_text(e: dict, k: catalogue.Kata) -> str:
    kind = e["kind"]
    if kind == "hint":
        i = int(e["detail"] or 0)
        text = k.hints[i - 1] if 0 < i <= len(k.hints) else ""
        return f"hint {i}: {text}"
    return {
        "pause": "clock paused" + (f" ({e['detail']})" if e["detail"] else ""),
        "unpause": "clock resumed",
        "solution": "reference solution viewed" + (f" ({e['detail']})" if e["detail"] else ""),
        "compare": "compared with the reference" + (f" ({e['detail']})" if e["detail"] else ""),
        "solved": "every check passes: clock stopped",
        "unsolved": "a check fails again: clock running",
        "restart": "set aside for a fresh start",
        "reset": "reset to the stub",
        "submit": f"submitted ({e['detail']})",
    }.get(kind, kind)
