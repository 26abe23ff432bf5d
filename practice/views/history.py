"""`kata history` as rich Text: past attempts, each kata's time to pass over its attempts,
best times, what next, and the replay of one attempt grading by grading (the queries
are in practice.history and practice.store.records)."""
from __future__ import annotations

import difflib
import io
import math
import textwrap
import tokenize

import click
from rich.text import Text

from graders.engine.grammar import count, times
from practice import catalogue, clock, history, paths, term
from practice.clock import elapsed
from practice.store import Attempt, Event, Grading, records
from practice.views.attempt import attempt_result
from practice.views.report import summary

BARS = ("▁▂▃▄▅▆▇█", ".:-=+*#%")  # eight heights: a pass's time against the budget
FAILED = ("✗", "x")


def overview(s, kata: str | None = None) -> Text:
    t = clock.now()
    attempts = history.attempts_of(s, kata)
    if not attempts:
        lines: list[Text | str] = ["No attempts yet" + (f" at {kata}." if kata else ".")]
    else:
        lines = [Text("Attempts", style="bold"), _attempts_table(attempts, t)]
        if kata:
            lines.append(term.wrap(f"`kata history {kata} --attempt N` replays attempt N "
                                   "grading by grading."))
        lines += ["", Text("Time to pass, attempt by attempt", style="bold"),
                  term.wrap(f"(bar height: time used against the budget; {failed_mark()} "
                            "not passed)", style="dim"), progress(attempts)]
    best = history.best_times(s)
    rows = [[k.name, clock.fmt(best[k.name]), f"of {k.minutes} min"]
            for k in catalogue.katas() if k.name in best and (not kata or k.name == kata)]
    if rows:
        lines += ["", Text("Best time per kata", style="bold"), term.columns(rows)]
    plan = [d for d in history.plan(s) if not kata or d.kata == kata]
    rows = [[d.kata, due_text(d, t), d.reason] for d in (plan if kata else plan[:5])]
    lines += ["", Text("What to practise next", style="bold"),
              term.columns(rows, squeeze={2: 12, 1: 6}, drop=(2,))]
    return term.join(lines)


def _attempts_table(attempts: list[Attempt], t: float) -> Text:
    rows = []
    for a in attempts:
        used = a.time_used if a.time_used is not None else elapsed(a, t)
        result = attempt_result(a) + (", a restart" if a.restarted_from else "")
        rows.append([a.kata, str(a.n), clock.when(a.started_at),
                     "mock" if a.mode == "mock" else "practice", clock.fmt(used), result,
                     times(a.n_gradings), str(a.hints),
                     "viewed" if a.solution_viewed else "-",
                     paths.shown(a.archive or a.path)])
    header = ["kata", "#", "started", "mode", "time", "result", "graded", "hints",
              "solution", "file"]
    # When narrow: cut the file's path from the left, then leave out the least needed.
    return term.columns(rows, header, squeeze={9: 12, 5: 10}, drop=(9, 2, 3, 8, 7, 6),
                        cut_left=(9,))


def failed_mark() -> str:
    return FAILED[0] if term.can_encode(FAILED[0]) else FAILED[1]


def progress(attempts: list[Attempt]) -> Text:
    """One line per kata: a bar per finished attempt, as high as the time it took to pass
    against its budget, and the times themselves."""
    rows = []
    for k in catalogue.katas():
        done = [a for a in attempts if a.kata == k.name and a.state != "open"]
        if not done:
            continue
        times = [clock.fmt(a.time_used or 0) for a in done if a.passed]
        passed = f"passed {len(times)} of {len(done)}"
        arrow = " → " if term.can_encode("→") else " -> "
        said = f"{passed}: {arrow.join(times[-6:])}" if times else passed
        bars = spark([(a.passed, a.time_used, a.budget, a.overtime) for a in done])
        rows.append([k.name, bars, said + f" (budget {k.minutes} min)"])
    return term.columns(rows, squeeze={2: 12})


def spark(done: list[tuple]) -> Text:
    """A bar per finished attempt, each as (passed, time used, budget, over time), as high
    as the time it took to pass against its budget; a cross for one not passed."""
    bars = BARS[0] if term.can_encode(BARS[0]) else BARS[1]
    out = Text()
    for passed, used, budget, overtime in done:
        if not passed:
            out.append(failed_mark(), style="red")
            continue
        share = min(1.0, (used or 0) / (budget or 1))
        out.append(bars[max(0, math.ceil(share * len(bars)) - 1)],
                   style="red" if overtime else "green")
    return out


def due_text(d, t: float) -> str:
    if getattr(d, "in_progress", False) and not d.tried:
        return "in progress"
    if not d.tried:
        return "now"
    delta = d.due_at - t
    if delta <= 0:
        days = int(-delta // 86400)
        return "due now" if days == 0 else f"overdue by {count(days, 'day')}"
    if delta >= 86400:
        return f"in {count(round(delta / 86400), 'day')}"
    h = round(delta / 3600)
    return f"in {count(h, 'hour')}" if h >= 1 else "within the hour"


REPLAYED_EVENTS = ("pause", "unpause", "hint", "solution", "compare", "solved", "unsolved",
                   "restart", "reset", "submit")


def replay(s, kata: str, number: int, full: bool = False) -> Text:
    attempts = history.attempts_of(s, kata)
    match = [a for a in attempts if a.n == number]
    if not match:
        raise click.UsageError(
            f"{kata} has {count(len(attempts), 'attempt')}; there is no attempt {number}")
    a, k, t = match[0], catalogue.get(kata), clock.now()
    mode = f"mock interview #{a.mock_id}" if a.mode == "mock" else "practice"
    used = a.time_used if a.time_used is not None else elapsed(a, t)
    lines: list[Text | str] = [
        Text(f"{kata} attempt {number}", style="bold")
        + f" ({mode}), started {clock.when(a.started_at)}: {attempt_result(a)}, "
          f"{clock.fmt(used)} of {clock.fmt(a.budget)}",
        f"File: {paths.shown(a.archive or a.path)}"]
    if a.restarted_from:
        lines.append("A restart: the attempt before it was archived with `--fresh`.")
    timeline = [("event", e.at, e) for e in records.events_of(s, a.id, REPLAYED_EVENTS)]
    timeline += [("check", c.at, c) for c in records.gradings(s, a.id)]
    timeline.sort(key=lambda x: (x[1], 0 if x[0] == "check" else 1))
    previous, n = None, 0
    for kind, at, item in timeline:
        if kind == "event":
            lines.append(Text(f"{clock.when(at)}  {_event_text(item, k)}", style="dim"))
            continue
        n += 1
        lines += _grading_lines(n, item, previous, full)
        previous = source_text(item.code)
    if n == 0:
        lines += ["", "This attempt was never graded."]
    return term.join(lines)


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


def _grading_lines(n: int, item: Grading, previous: str | None, full: bool) -> list[Text | str]:
    """One grading of a replay: its result, what failed, and its code (whole the first
    time or with --full, else as a diff against the grading before)."""
    rep = records.stored_report(item)
    head = Text(f"grading {n} at {clock.fmt(item.clock)} on the clock ({item.command}): "
                + summary(rep).plain, style="bold green" if item.passed else "bold")
    lines: list[Text | str] = ["", head]
    fails = rep.failing
    if fails:
        lines.append("  failing: " + "; ".join(fails))
    if rep.diagnosis:
        lines.append(f"  likely cause: {rep.diagnosis}")
    code = source_text(item.code)
    if previous is None or full:
        lines.append(textwrap.indent(code.rstrip("\n") or "(empty file)", "    |",
                                     lambda line: True))
    elif code == previous:
        lines.append("    (code unchanged)")
    else:
        diff = difflib.unified_diff(previous.splitlines(), code.splitlines(),
                                    "before", "after", lineterm="", n=2)
        for d in list(diff)[2:]:
            style = "green" if d.startswith("+") else "red" if d.startswith("-") else ""
            lines.append(Text("    " + d, style=style))
    return lines


def _event_text(e: Event, k: catalogue.Kata) -> str:
    kind, detail = e.kind, e.detail
    if kind == "hint":
        i = int(detail or 0)
        return f"hint {i}: {k.hints[i - 1] if 0 < i <= len(k.hints) else ''}"
    return {
        "pause": "clock paused" + (f" ({detail})" if detail else ""),
        "unpause": "clock resumed",
        "solution": "reference solution viewed" + (f" ({detail})" if detail else ""),
        "compare": "compared with the reference" + (f" ({detail})" if detail else ""),
        "solved": "every check passes: clock stopped",
        "unsolved": "a check fails again: clock running",
        "restart": "set aside for a fresh start",
        "reset": "reset to the stub",
        "submit": f"submitted ({detail})",
    }.get(kind, kind)
