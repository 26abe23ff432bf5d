"""`kata watch`: a live countdown and the check list, re-graded on every save.

Saves are noticed two ways at once: watchdog events on the attempt's folder (which catch
editors that write a new file and rename it over the old one) wake the loop at once, and
every tick the file's size, time and inode are compared, which works where no event ever
arrives (network and WSL file systems) or with --poll. A change is graded only once the
file has stopped changing and its content differs from what was last graded.
"""
from __future__ import annotations

import hashlib
import os
import threading
import time
from pathlib import Path

from rich.text import Text

from graders.engine.report import Report
from practice import clock, messages, paths, records, render, term
from practice import mock
from practice.errors import NothingToGrade
from practice.sessions import Practice

SETTLE = 0.15  # seconds a file must stay unchanged before it is graded


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
    def __init__(self, attempt: dict):
        self.attempt = attempt
        self.path = Path(attempt["path"])
        self.sig = None
        self.graded_digest = None
        self.report: Report | None = None
        self.note: str | None = None  # why the last grading was not recorded
        self.graded_at: float | None = None


def run(p: Practice, attempts: list[dict], poll: bool = False, interval: float = 1.0,
        echo=term.out) -> None:
    targets = [Target(a) for a in attempts]
    live = term.live()
    event = threading.Event()
    observer = None
    if not poll:
        observer = _observer({t.path.parent.resolve() for t in targets},
                             {os.path.abspath(t.path.resolve()) for t in targets}, event)
    how = "file events, and polling" if observer else "polling"
    if not live:
        echo(f"Watching {', '.join(paths.shown(t.path) for t in targets)} ({how}); "
             "Ctrl-C to leave.")
    try:
        for t in targets:
            _grade(p, t)
            if not live:
                echo(_block(p, t))
                echo(_clock_line(p, targets))
        if live:
            _draw(p, targets, how, echo)
        while True:
            woke = _wait(event, interval)
            event.clear()
            if _deadline(p, targets, echo):
                return
            changed = [t for t in targets if _signature(t.path) != t.sig]
            if woke or changed:
                for t in changed or targets:
                    _settle(t)
                    if _digest(t.path) != t.graded_digest and t.path.exists():
                        if live:
                            _draw(p, targets, how, echo, note=f"grading {t.attempt['kata']}...")
                        _grade(p, t)
                        if not live:
                            echo(_block(p, t))
                            echo(_clock_line(p, targets))
                    else:
                        t.sig = _signature(t.path)
            if live:
                _draw(p, targets, how, echo)
    except KeyboardInterrupt:
        echo("")
        echo(Text("Stopped watching. ") + _clock_line(p, targets))
        if any(t.attempt["clock"] == "running" for t in targets):
            echo("The clock keeps running: `kata pause` stops it, `kata submit` finishes.")
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


def _deadline(p: Practice, targets: list[Target], echo) -> bool:
    """End a mock interview whose time is up, print its report; True if it ended."""
    if targets[0].attempt["mode"] != "mock":
        return False
    report = mock.expire(p)
    if report:
        echo("")
        echo(Text("Time is up: the mock interview is over.", style="bold yellow"))
        echo(messages.mock_report(report))
        for t in targets:
            t.attempt = p.attempt(t.attempt["id"])
    return bool(report)


def _grade(p: Practice, t: Target) -> None:
    t.sig = _signature(t.path)
    if not t.path.is_file():
        t.report = None
        return
    fresh = p.attempt(t.attempt["id"])
    try:
        g = p.grade(fresh, "watch")
    except NothingToGrade as e:  # not a file one can grade (a FIFO, a file of gigabytes)
        t.report, t.note = None, str(e)
        return
    t.graded_digest = hashlib.sha256(g.code).hexdigest()  # of the bytes graded
    t.report, t.attempt, t.note = g.report, g.attempt, g.note
    t.graded_at = clock.now()


def _block(p: Practice, t: Target, repro: bool = True) -> str:
    a = t.attempt
    head = Text(f"{a['kata']}: {paths.shown(t.path)}", style="bold")
    if t.report is None:
        return term.join([head, f"  ({t.note or 'the file is missing'})"])
    when = time.strftime("%H:%M:%S", time.localtime(t.graded_at)) if t.graded_at else "-"
    return term.join([head, render.report(t.report, repro=repro),
                      render.summary(t.report) + Text(f"  (graded {when})", style="dim")]
                     + ([Text(t.note, style="yellow")] if t.note else []))


def _clock_line(p: Practice, targets: list[Target]) -> Text:
    now = clock.now()
    a = targets[0].attempt
    if a["mode"] == "mock":
        m = records.mock(p.store, a["mock_id"])
        text = Text("Mock interview: ") + render.clock_text(m, now)
    else:
        a = p.attempt(a["id"])
        text = Text("Clock: ") + render.clock_text(a, now)
    if all(t.report and t.report.passed for t in targets):
        text += Text("  Every check passes: `kata submit` records it.", style="green")
    return text


def _draw(p: Practice, targets: list[Target], how: str, echo, note: str = "") -> None:
    """Redraw the screen: the clock on top, the checks (without repro code, which
    `kata check` prints), cut to the terminal's height so the countdown stays in view."""
    cols, rows = term.width(), term.height()
    body: list[Text] = []
    for t in targets:
        body += list(_block(p, t, repro=False).split("\n", allow_blank=True)) + [Text("")]
    footer = Text(f"Save to re-grade ({how}). Ctrl-C to leave." + (f"  {note}" if note else ""),
                  style="dim")

    def height(line: Text) -> int:
        return max(1, -(-line.cell_len // max(1, cols)))

    top = _clock_line(p, targets)
    room = rows - 1 - height(top) - 1 - height(footer)
    shown, used = [], 0
    for i, line in enumerate(body):
        if used + height(line) > room - 1 and i < len(body) - 1:
            shown.append(Text(f"... {len(body) - i} more lines: `kata check` shows them all",
                              style="dim"))
            break
        shown.append(line)
        used += height(line)
    term.clear()
    echo(term.join([top, ""] + shown + [footer]))
