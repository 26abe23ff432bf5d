"""What `kata check` shows on a terminal while it grades: the attempt's header and a
"grading" line at once, then each check as it ends (the grading process reports each one as
it ends, as it does for `kata watch`), drawn in place and cleared when the report is printed.

Only which checks passed and failed shows here (practice.render's lines of the checks): the
report that follows says the rest, as `kata check` prints it anywhere else.
"""
from __future__ import annotations

import time

from rich.text import Text

from graders.engine.grammar import count
from graders.engine.report import CheckResult, Report
from practice import paths, render, term

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

    def __exit__(self, *exc) -> None:
        self.live.stop()

    def add(self, check: CheckResult) -> None:
        """A check has ended: drawn now."""
        self.checks.append(check)
        self.live.refresh()

    def drawn(self) -> Text:
        """The header, the checks ended so far, and how long the grading has taken."""
        sym = render.symbols()
        lines = [part for part in render.parts(Report(self.kata, list(self.checks)), repro=False)
                 if part.kind in LINES] if self.checks else []
        seconds = int(time.monotonic() - self.began)
        done = f", {count(len(self.checks), 'check')} done" if self.checks else ""
        wait = Text.assemble("  ", (sym["todo"], "yellow"), (f" grading{done} ({seconds} s)", "yellow"))
        return term.join([self.head] + [ln for part in lines for ln in part.lines] + [wait])
