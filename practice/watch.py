"""`kata watch`: a live countdown and the check list, graded again when the attempt's bytes change.

Changes are noticed two ways at once: watchdog events on the attempt's folder wake the
loop at once (a write, an editor's new file renamed over the old one, a deletion; not an
open or a read, which is all watch itself does to the file), and every tick the file's
size, time and inode are compared, which works where no event ever arrives (network and
WSL file systems) or with --poll. A change is graded once the file has stopped changing,
and only when its bytes differ from the bytes last graded. On a terminal the screen
(practice.views.watch) is drawn again only when what it shows changes, the checks appearing
as they end; elsewhere each grading is printed as `kata check` prints it.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
from pathlib import Path

from rich.text import Text

from graders.engine.report import CheckResult, Report
from practice import clock, mock, paths, term
from practice.errors import NothingToGrade
from practice.sessions import Practice
from practice.store import Attempt, Mock, records
from practice.views.attempt import clock_text
from practice.views.mock import mock_report
from practice.views.watch import Screen, block

SETTLE = 0.15  # seconds a file must stay unchanged before it is graded
# The file events that may change its bytes ("closed": closed after writing); an open or a
# read is none of them, so watch reading the file does not wake watch.
CHANGES = frozenset({"modified", "created", "moved", "deleted", "closed"})
PROGRESS_EVERY = 0.25  # seconds between two screens drawn for checks that ended


def _wait(event: threading.Event, timeout: float) -> bool:
    """Sleep until a file event or the timeout (tests replace this)."""
    return event.wait(timeout)


def _signature(path: Path):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(paths.read_attempt(path)).hexdigest()
    except (OSError, NothingToGrade):
        return None


def _observer(folders: set[Path], wanted: set[str], event: threading.Event):
    """A watchdog observer that sets `event` on any change to a wanted file; None if
    watchdog is unavailable or cannot watch here (then polling alone does the work)."""
    try:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer
    except ImportError:
        return None

    class Handler(FileSystemEventHandler):
        def on_any_event(self, ev):
            if ev.event_type not in CHANGES:
                return
            for p in (getattr(ev, "src_path", ""), getattr(ev, "dest_path", "")):
                if p and os.path.abspath(os.fsdecode(p)) in wanted:
                    event.set()

    try:
        obs = Observer()
        for folder in folders:
            obs.schedule(Handler(), str(folder), recursive=False)
        obs.daemon = True
        obs.start()
        return obs
    except Exception:  # inotify limits, unsupported file systems
        return None


class Target:
    def __init__(self, attempt: Attempt):
        self.attempt = attempt
        self.path = Path(attempt.path)
        self.sig = None
        self.graded_digest = None
        self.report: Report | None = None
        self.note: str | None = None  # why the last grading was not recorded
        self.graded_at: float | None = None
        self.partial: list[CheckResult] | None = None  # the checks ended so far, while it is graded

    def missing_report(self) -> str:
        """Why there is no report to show: what the last grading noted, a file not there, or
        a grading still to come (another question is graded first)."""
        return self.note or ("waiting to be graded" if self.path.is_file() else "the file is missing")


class Watch:
    """One `kata watch`: the attempts, the clock they run on, and where they are shown."""

    def __init__(self, p: Practice, attempts: list[Attempt], how: str, interval: float, echo):
        self.p, self.echo = p, echo
        self.targets = [Target(a) for a in attempts]
        self.mock_id = attempts[0].mock_id if attempts[0].mode == "mock" else None
        self.view = Screen(self.targets, how, interval) if term.live() else None
        self.clock: tuple[str, Attempt | Mock] = self.read_clock()

    def read_clock(self) -> tuple[str, Attempt | Mock]:
        """What the clock line shows: the interview's clock, or the attempt's."""
        if self.mock_id is not None:
            self.clock = ("Mock interview: ", records.mock(self.p.store, self.mock_id))
        else:
            self.clock = ("Clock: ", self.p.attempt(self.targets[0].attempt.id))
        if self.view is not None:
            self.view.clock = self.clock
        return self.clock

    def clock_text(self) -> Text:
        label, row = self.clock
        text = Text(label) + clock_text(row, clock.now())
        if all(t.report and t.report.passed for t in self.targets):
            text += Text("  Every check passes: `kata submit` records it.", style="green")
        return text

    def grade(self, t: Target) -> None:
        """Grade `t` now: on a terminal, its checks appear as they end, the clock ticking."""
        t.sig = _signature(t.path)
        if not t.path.is_file():
            t.report, t.graded_digest, t.note = None, None, None
            return self.show(t)
        t.partial, drawn = [], [0.0]
        self.show(None)

        def progress(check: CheckResult) -> None:
            t.partial.append(check)
            if time.monotonic() - drawn[0] >= PROGRESS_EVERY:
                drawn[0] = time.monotonic()
                self.view.draw()

        try:
            with self.view.ticking() if self.view else contextlib.nullcontext():
                g = self.p.grade(self.p.attempt(t.attempt.id), "watch", progress if self.view else None)
        except NothingToGrade as e:  # gone, or not a file one can grade, since it was looked at
            t.report, t.note, t.graded_digest = None, str(e), None
            return self.show(t)
        finally:
            t.partial = None
        t.graded_digest = hashlib.sha256(g.code).hexdigest()  # of the bytes graded
        t.report, t.attempt, t.note = g.report, g.attempt, g.note
        t.graded_at = clock.now()
        self.read_clock()
        self.show(t)

    def show(self, t: Target | None) -> None:
        """The screen drawn again (only if it changed), or, without one, `t`'s grading printed."""
        if self.view is not None:
            self.view.draw()
        elif t is not None:
            self.echo(block(t))
            self.echo(self.clock_text())

    def changed(self, woke: bool) -> list[Target]:
        """The targets whose bytes differ from the bytes last graded, once they have settled."""
        out = []
        for t in self.targets:
            sig = _signature(t.path)
            if sig == t.sig and not woke:
                continue
            t.sig = sig
            if _digest(t.path) != t.graded_digest:
                _settle(t)
                out.append(t)
        return out


def run(p: Practice, attempts: list[Attempt], poll: bool = False, interval: float = 1.0,
        echo=term.out) -> None:
    """Watch until Ctrl-C (KeyboardInterrupt, raised again once the screen is left) or, in
    a mock interview, until its deadline."""
    folders = {Path(a.path).parent.resolve() for a in attempts}
    event = threading.Event()
    observer = None if poll else _observer(folders, {os.path.abspath(Path(a.path).resolve())
                                                     for a in attempts}, event)
    w = Watch(p, attempts, "file events, and polling" if observer else "polling", interval, echo)
    if w.view is None:
        echo(f"Watching {', '.join(paths.shown(t.path) for t in w.targets)} "
             f"({'file events, and polling' if observer else 'polling'}); Ctrl-C to leave.")
    try:
        for t in w.targets:
            w.grade(t)
        while True:
            woke = _wait(event, interval)
            event.clear()
            if _deadline(w):
                return
            for t in w.changed(woke):
                w.grade(t)
            w.read_clock()
            if w.view is not None:
                w.view.tick()
    except KeyboardInterrupt:
        _stopped(w)
        raise
    finally:
        if observer is not None:
            observer.stop()


def _settle(t: Target) -> None:
    """Wait (briefly, real time) until the file stops changing mid-save."""
    last = _signature(t.path)
    for _ in range(20):
        time.sleep(SETTLE)
        now = _signature(t.path)
        if now == last:
            break
        last = now
    t.sig = last


def _deadline(w: Watch) -> bool:
    """End a mock interview whose time is up, print its report; True if it ended."""
    if w.mock_id is None:
        return False
    report = mock.expire(w.p)
    if report:
        if w.view is not None:
            w.view.close()
        w.echo("")
        w.echo(Text("Time is up: the mock interview is over.", style="bold yellow"))
        w.echo(mock_report(report))
    return bool(report)


def _stopped(w: Watch) -> None:
    """What Ctrl-C leaves on the screen: the clock, and what keeps it running (no record is
    read: a command interrupted ends at once)."""
    if w.view is not None:
        w.view.close()
    w.echo("")
    w.echo(Text("Stopped watching. ") + w.clock_text())
    if w.mock_id is not None:
        w.echo("The interview clock keeps running: `kata submit` ends the interview.")
    elif w.clock[1].clock == "running":
        w.echo("The clock keeps running: `kata pause` stops it, `kata submit` finishes.")

