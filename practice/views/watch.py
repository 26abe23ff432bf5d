"""What `kata watch` shows: on a terminal, its screen and when it is drawn; elsewhere, each
grading printed as `kata check` prints it (`block`).

The screen holds the clock on its first line, one status line per attempt watched (each
question of a mock interview), the details of those that do not pass (of all of them when
every one passes), and a footer. It is drawn again, cleared first, only when what it shows
changes: a grading began, a check ended, a report came. The clock line alone changes every
second; it is rewritten in place, without clearing, also while a grading runs (from a
thread of its own). A screen taller than the terminal leaves out the least useful lines
first, in the order of KEEP: repro code, what the attempt printed, pictures, the messages
of later failing checks, the efficiency's figures, passing checks, the first failing
check's message, what was observed and the efficiency's remarks, and the likely cause last.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager

from rich.text import Text

from graders.engine.grammar import count
from graders.engine.report import Report
from practice import clock, paths, term
from practice.store import Attempt, Mock
from practice.views.attempt import clock_text
from practice.views.report import Part, parts, report, summary, symbols

# What a part of a report is worth keeping on a short screen: the lowest goes first, and
# among equals the one shown last.
KEEP = {"repro": 1, "printed": 2, "picture": 3, "message": 4, "efficiency": 4.5, "passed": 5, "skipped": 5,
        "failed": 6, "todo": 6, "first": 7, "observed": 8, "remark": 8, "diagnosis": 9}
HEADER = 9.5    # the name over a question's details: kept while any of them is


class Screen:
    """The screen of one `kata watch`: `targets` are watch's (an attempt, its report, the
    checks of a grading under way); `clock`, what the first line shows (watch keeps it
    fresh: the ticking thread reads no records)."""

    def __init__(self, targets: list, how: str, interval: float):
        self.targets, self.how, self.interval = targets, how, interval
        self.clock: tuple[str, Attempt | Mock] | None = None  # ("Clock: ", the attempt) or the interview's
        self.shown: str | None = None   # the screen on display, as written
        self.top: str | None = None     # its first line, the clock, as written
        self.lock = threading.Lock()    # the ticking thread writes too
        self.closed = False

    def draw(self) -> None:
        """Draw the screen if what it shows has changed since it was last drawn."""
        cols, rows = term.width(), term.height()
        top = self.clock_line(cols)
        lines = [top, Text("")] + body(self.targets, rows - 3, cols) + [footer(self.how, cols)]
        screen = term.rendered(term.join(lines))
        with self.lock:
            if self.closed or screen == self.shown:
                return
            term.redraw(screen)
            self.shown, self.top = screen, term.rendered(top)

    def tick(self) -> None:
        """Rewrite the clock line in place when its text has changed."""
        line = term.rendered(self.clock_line(term.width()))
        with self.lock:
            if self.closed or self.shown is None or line == self.top:
                return
            term.rewrite_first_line(line)
            self.top = line

    @contextmanager
    def ticking(self):
        """The clock keeps ticking while the body inside waits (a grading)."""
        done = threading.Event()

        def run():
            while not done.wait(self.interval):
                self.tick()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()

    def close(self) -> None:
        """Nothing more is written (what follows is printed below the screen)."""
        with self.lock:
            self.closed = True

    def clock_line(self, cols: int) -> Text:
        if self.clock is None:
            return Text("")
        label, row = self.clock
        return term.cut(Text(label) + clock_text(row, clock.now()), max(1, cols - 1))


def body(targets: list, room: int, cols: int) -> list[Text]:
    """The status lines, then the details that fit in `room` rows (with the footer's)."""
    status = [term.cut(status_line(t), max(1, cols - 1)) for t in targets]
    pieces = []
    failing = [t for t in targets if not passes(t)]
    for n, t in enumerate(failing or targets):
        if len(targets) > 1:
            pieces.append((HEADER, n, [Text(f"{t.attempt.kata}:", style="bold")]))
        pieces += [(_keep(part), n, part.lines) for part in parts(report_of(t), room=cols)]
    if not failing and all(t.report for t in targets):
        done = ("Every question passes: `kata submit` ends the interview." if len(targets) > 1
                else "Every check passes: `kata submit` records it.")
        pieces.append((HEADER + 1, len(targets), [Text(done, style="green")]))
    details = fit(pieces, room - len(status) - 1, cols)
    return status + ([Text("")] + details if details else [])


def status_line(t) -> Text:
    """One line: the attempt, how its last grading went (or the one under way), its file
    last (the first thing cut on a narrow terminal)."""
    sym = symbols()
    name, where = t.attempt.kata, Text(f"  {paths.shown(t.path)}", style="dim")
    if t.partial is not None:
        done = count(len(t.partial), "check")
        return Text.assemble((sym["todo"], "yellow"), f" {name}  ", (f"grading: {done} done", "yellow")) + where
    if t.report is None:
        return Text(f"  {name}  ({t.missing_report()})") + where
    mark = (sym["pass"], "green") if t.report.passed else \
        (sym["todo"], "yellow") if t.report.not_implemented else (sym["fail"], "red")
    when = time.strftime("%H:%M:%S", time.localtime(t.graded_at)) if t.graded_at else "-"
    line = Text.assemble(mark, f" {name}  ") + summary(t.report) + Text(f"  (graded {when})", style="dim")
    return line + (Text(f"  {t.note}", style="yellow") if t.note else Text("")) + where


def footer(how: str, cols: int) -> Text:
    return term.cut(Text(f"Save to re-grade ({how}). Ctrl-C to leave.", style="dim"), max(1, cols - 1))


def passes(t) -> bool:
    return t.partial is None and bool(t.report and t.report.passed)


def report_of(t) -> Report:
    """The report to detail: the checks of the grading under way, else the last report."""
    if t.partial is not None:
        return Report(t.attempt.kata, list(t.partial))
    return t.report or Report(t.attempt.kata, [])


def _keep(part: Part) -> float:
    if part.first and part.kind in ("failed", "message"):
        return KEEP["first"]
    return KEEP[part.kind]


def fit(pieces: list[tuple], room: int, cols: int) -> list[Text]:
    """The lines of `pieces` ((keep, question, lines), in the order shown) in `room` rows:
    the pieces worth least are left out first (a question's before the one asked before
    it), and a line says how many lines were."""
    pieces = [(keep, n, [ln for line in lines for ln in _split(line)]) for keep, n, lines in pieces]
    heights = [sum(_height(ln, cols) for ln in lines) for _, _, lines in pieces]
    left_out, total = set(), sum(heights)
    for i in sorted(range(len(pieces)), key=lambda i: (pieces[i][0], -pieces[i][1], -i)):
        if total <= room - (1 if left_out else 0):
            break
        left_out.add(i)
        total -= heights[i]
    shown = [i for i in range(len(pieces)) if i not in left_out]
    shown = [i for i in shown if pieces[i][0] != HEADER
             or any(j != i and pieces[j][1] == pieces[i][1] for j in shown)]
    lines = [ln for i in shown for ln in pieces[i][2]]
    if left_out:
        hidden = sum(len(pieces[i][2]) for i in left_out)
        lines.append(Text(f"... {count(hidden, 'more line')}: `kata check` shows them all",
                          style="dim"))
    return _cut_rows(lines, room, cols)


def _cut_rows(lines: list[Text], room: int, cols: int) -> list[Text]:
    """At most `room` rows of `lines`, whatever they hold (a terminal of a few rows)."""
    out, used = [], 0
    for ln in lines:
        used += _height(ln, cols)
        if used > max(0, room):
            break
        out.append(ln)
    return out


def _split(line) -> list[Text]:
    text = line if isinstance(line, Text) else Text(line)
    return list(text.split("\n", allow_blank=True))


def _height(line: Text, cols: int) -> int:
    return max(1, -(-line.cell_len // max(1, cols)))


def block(t) -> Text:
    """A grading as `kata check` prints it, with the time it was graded (`t`: a target of
    practice.watch)."""
    head = Text(f"{t.attempt.kata}: {paths.shown(t.path)}", style="bold")
    if t.report is None:
        return term.join([head, f"  ({t.missing_report()})"])
    when = time.strftime("%H:%M:%S", time.localtime(t.graded_at)) if t.graded_at else "-"
    return term.join([head, report(t.report),
                      summary(t.report) + Text(f"  (graded {when})", style="dim")]
                     + ([Text(t.note, style="yellow")] if t.note else []))
