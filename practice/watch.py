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
import sys
import threading
import time
from pathlib import Path

import click

from practice import clock, paths, records, render
from practice import mock as mocks
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
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
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
        self.report: dict | None = None
        self.note: str | None = None  # why the last grading was not recorded
        self.graded_at: float | None = None


def run(p: Practice, attempts: list[dict], poll: bool = False, interval: float = 1.0,
        echo=click.echo) -> None:
    targets = [Target(a) for a in attempts]
    live = sys.stdout.isatty()
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
        state = _clock_line(p, targets)
        echo(f"Stopped watching. {state}")
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
    report = mocks.expire(p)
    if report:
        echo("")
        echo(click.style("Time is up: the mock interview is over.", fg="yellow", bold=True))
        echo(render.mock_report(report))
        for t in targets:
            t.attempt = p.attempt(t.attempt["id"])
    return bool(report)


def _grade(p: Practice, t: Target) -> None:
    t.sig = _signature(t.path)
    if not t.path.is_file():
        t.report = None
        return
    fresh = p.attempt(t.attempt["id"])
    g = p.grade(fresh, "watch")
    t.graded_digest = hashlib.sha256(g.code).hexdigest()  # of the bytes graded
    t.report, t.attempt, t.note = g.report, g.attempt, g.note
    t.graded_at = clock.now()


def _block(p: Practice, t: Target, repro: bool = True) -> str:
    a = t.attempt
    head = click.style(f"{a['kata']}: {paths.shown(t.path)}", bold=True)
    if t.report is None:
        return f"{head}\n  (the file is missing)"
    when = time.strftime("%H:%M:%S", time.localtime(t.graded_at)) if t.graded_at else "-"
    return "\n".join([head, render.report(t.report, repro=repro),
                      render.summary(t.report) + click.style(f"  (graded {when})", dim=True)]
                     + ([click.style(t.note, fg="yellow")] if t.note else []))


def _clock_line(p: Practice, targets: list[Target]) -> str:
    now = clock.now()
    a = targets[0].attempt
    if a["mode"] == "mock":
        m = records.mock(p.store, a["mock_id"])
        text = f"Mock interview: {render.clock_text(m, now)}"
    else:
        a = p.attempt(a["id"])
        text = f"Clock: {render.clock_text(a, now)}"
    if all(t.report and t.report.get("passed") for t in targets):
        text += click.style("  Every check passes: `kata submit` records it.", fg="green")
    return text


def _draw(p: Practice, targets: list[Target], how: str, echo, note: str = "") -> None:
    """Redraw the screen: the clock on top, the checks (without repro code, which
    `kata check` prints), cut to the terminal's height so the countdown stays in view."""
    import shutil

    cols, rows = shutil.get_terminal_size((100, 40))
    body = []
    for t in targets:
        body += _block(p, t, repro=False).splitlines() + [""]
    footer = click.style(f"Save to re-grade ({how}). Ctrl-C to leave."
                         + (f"  {note}" if note else ""), dim=True)

    def height(line: str) -> int:
        return max(1, -(-len(click.unstyle(line)) // max(1, cols)))

    room = rows - 1 - height(_clock_line(p, targets)) - 1 - height(footer)
    shown, used = [], 0
    for i, line in enumerate(body):
        if used + height(line) > room - 1 and i < len(body) - 1:
            shown.append(click.style(f"... {len(body) - i} more lines: `kata check` shows "
                                     "them all", dim=True))
            break
        shown.append(line)
        used += height(line)
    echo("\x1b[H\x1b[2J" + "\n".join([_clock_line(p, targets), ""] + shown + [footer]))
