"""What `kata check` shows besides the reports (practice.views.report): on a terminal, while it
grades, the attempt's header and a "grading" line at once, then each check as it ends (the
grading process reports each one as it ends, as it does for `kata watch`), drawn in place and
cleared when the report is printed; after the reports, the clock and what the grading did to
it (in a mock interview, the interview's clock and, when strict, the gradings used).

Only which checks passed and failed shows while it grades (the report's lines of the checks):
the report that follows says the rest, as `kata check` prints it anywhere else.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.text import Text

from graders.engine.grammar import count, verb
from graders.engine.report import CheckResult, Report
from practice import clock, paths, term
from practice.store import Attempt
from practice.views.attempt import clock_text
from practice.views.report import parts, symbols

if TYPE_CHECKING:  # types only: a terminal's `kata check` loads this module before it draws
    from practice.mock import Interview

LINES = ("passed", "failed", "skipped", "todo")  # the parts of a report drawn while it grades
REFRESH = 2  # times a second the elapsed time is drawn again


class Progress:
    """One grading on a terminal: `with Progress(label, file, kata) as shown:` draws at once,
    `shown.add` is the grading's `progress` (each check as it ends), and leaving clears it."""

    def __init__(self, label: str, file, kata: str):
        self.head = Text(f"{label}: {paths.shown(file)}", style="bold")
        self.kata = kata
        self.checks: list[CheckResult] = []
        self.began = time.monotonic()
        self.live = None

    def __enter__(self):
        from rich.live import Live

        # a warning written meanwhile (stderr) is printed above what is drawn, not into it
        self.live = Live(get_renderable=self.drawn, console=term.console(), transient=True,
                         auto_refresh=True, refresh_per_second=REFRESH, redirect_stdout=False,
                         redirect_stderr=True)
        self.live.start(refresh=True)
        return self

    def __exit__(self, *_exc) -> None:
        self.live.stop()

    def add(self, check: CheckResult) -> None:
        """A check has ended: drawn now."""
        self.checks.append(check)
        self.live.refresh()

    def drawn(self) -> Text:
        """The header, the checks ended so far, and how long the grading has taken."""
        sym = symbols()
        lines = [part for part in parts(Report(self.kata, list(self.checks)), repro=False)
                 if part.kind in LINES] if self.checks else []
        seconds = int(time.monotonic() - self.began)
        done = f", {count(len(self.checks), 'check')} done" if self.checks else ""
        wait = Text.assemble("  ", (sym["todo"], "yellow"), (f" grading{done} ({seconds} s)", "yellow"))
        return term.join([self.head] + [ln for part in lines for ln in part.lines] + [wait])


def after_grading(pairs: list[tuple[Attempt, Attempt]], t: float,
                  interview: Interview | None = None) -> Text:
    """The clock after `kata check`, and what the grading did to it: (attempt before,
    attempt after) for each attempt graded; in a mock interview, its one clock."""
    before, after = pairs[-1]
    if after.state != "open":
        return Text(f"(this attempt was already {after.state}; the grading is kept in "
                    "its history)")
    if interview:
        return _interview_clock(pairs, t, interview)
    lines: list[Text | str] = [Text("Clock: ") + clock_text(after, t)]
    if after.clock == "solved" and before.clock != "solved":
        lines.append(Text(f"Solved in {clock.fmt(after.solved_at)}.", style="bold green")
                     + " The clock is stopped; `kata submit` records the result.")
    elif after.clock == "running" and before.clock == "solved":
        lines.append("It no longer passes, so the clock runs again.")
    elif after.clock == "paused":
        lines.append("The clock is paused; `kata resume` restarts it.")
    return term.join(lines)


def _interview_clock(pairs: list[tuple[Attempt, Attempt]], t: float, interview: Interview) -> Text:
    from practice.mock import STRICT_GRADINGS

    m, solved, total = interview.mock, interview.solved, interview.total
    lines: list[Text | str] = [Text("Interview clock: ") + clock_text(m, t)]
    for before, after in pairs:
        if after.clock == "solved" and before.clock != "solved" and solved < total:
            lines.append(f"{after.kata} passes every check ({solved} of {total} questions "
                         f"{verb(solved, 'does', 'do')}); the interview clock runs on until every question passes or "
                         "`kata submit` ends the interview.")
        elif after.clock == "running" and before.clock == "solved":
            lines.append(f"{after.kata} no longer passes.")
    if solved == total and any(b.clock != "solved" for b, _ in pairs):
        lines.append(Text("Every question passes: the interview clock is stopped.",
                          style="bold green") + " `kata submit` ends the interview.")
    if interview.used is not None:
        lines.append("Gradings used: " + ", ".join(f"{kata} {n} of {STRICT_GRADINGS}"
                                                   for kata, n in interview.used.items()) + ".")
    return term.join(lines)
