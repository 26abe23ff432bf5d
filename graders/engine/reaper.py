"""The processes around the attempt: the template that forks them, the reaper that ends them.

- the template imports NumPy once and waits; each grading asks it for a fresh worker,
  which it forks (milliseconds instead of a new interpreter) with an empty folder of its
  own (`kata-attempt-*` in the temporary folder);
- the reaper, forked from the template, starts a new session, adopts orphans
  (PR_SET_CHILD_SUBREAPER on Linux), ignores every signal it can and, when the judge closes
  its control socket or dies, kills every process the attempt started and removes its folder;
- the worker (graders.engine.worker), forked from the reaper, runs the attempt.

Should the attempt stop or kill its reaper all the same (where Landlock cannot keep it from
signalling outside its own processes), nothing depends on it alone: the judge kills a
stopped reaper when it lets go (graders.engine.sandbox), and the template, a subreaper
too, kills whatever a dead reaper leaves behind and removes its folder.

The template runs as `python -I -c ... FD` (graders.engine.sandbox.Template), or is forked
from the grading service before it loads any grader (graders.engine.service). Only the
standard library and NumPy may be imported here.
"""
from __future__ import annotations

import functools
import os
import select
import signal
import socket
import struct
import sys
import time

from graders.engine import confine
from graders.engine.requests import request_names
from graders.engine.wire import _np

_PRCTL = None


def _set_subreaper_function():
    """libc's prctl, looked up once (Linux only)."""
    global _PRCTL
    if _PRCTL is None and sys.platform.startswith("linux"):
        try:
            import ctypes

            _PRCTL = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            _PRCTL = False
    return _PRCTL


def _set_subreaper() -> bool:
    """Orphans of the attempt's processes come to us, not to init (Linux only)."""
    prctl = _set_subreaper_function()
    return bool(prctl) and prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER


def _descendants(root: int) -> list[int]:
    """Live processes below `root` (Linux; empty elsewhere). Read down the tree from each
    process's list of children, which costs a few reads however many processes the machine
    runs; where the kernel keeps no such lists, from every process's parent in /proc."""
    if not _children_listed():
        return _descendants_by_scan(root)
    found, todo = [], [root]
    while todo:
        kids = _children(todo.pop())
        found += kids
        todo += kids
    return [pid for pid in found if _state(pid) not in ("Z", "X", None)]


@functools.cache
def _children_listed() -> bool:
    """The kernel lists each task's children in /proc/PID/task/TID/children (asked once)."""
    return os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def _children(pid: int) -> list[int]:
    """The children of `pid`, from /proc/PID/task/*/children; [] for a process that is gone."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    kids = []
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                kids += [int(k) for k in f.read().split()]
        except OSError:  # the thread ended meanwhile
            pass
    return kids


def _direct_children(pid: int) -> list[int]:
    if _children_listed():
        return _children(pid)
    return [p for p in _descendants_by_scan(pid) if _parent(p) == pid]


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[-1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def state(pid: int) -> str | None:
    """A process's state letter (R, S, T for stopped, Z...), None when it is gone (Linux)."""
    return _state(pid)


def _state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().decode("ascii", "replace").rsplit(")", 1)[-1].split()
    except OSError:
        return None
    return fields[0] if fields else None


def _descendants_by_scan(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    live = set()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) < 2:
            continue
        pid, state, ppid = int(entry), fields[0], int(fields[1])
        children.setdefault(ppid, []).append(pid)
        if state not in ("Z", "X"):
            live.add(pid)
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return [p for p in found if p in live]


def _reap() -> list[tuple[int, int]]:
    done = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return done
        if pid == 0:
            return done
        done.append((pid, status))


def kill_tree(group: int) -> None:
    """Kill every process below this one: the worker's process group first (threads die
    with their process), then, on Linux, whatever left the group (a new session, a
    daemon) and was adopted here."""
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
    for _ in range(100):
        victims = _descendants(os.getpid())
        if not victims:
            break
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _reap()
        time.sleep(0.002)
    _reap()


def remove_folder(folder: str | None) -> None:
    """Remove an attempt's folder and all it holds, whatever it made read-only."""
    import shutil

    def unlock(function, path, *_):
        try:
            os.chmod(os.path.dirname(path), 0o700)
            os.chmod(path, 0o700)
            function(path)
        except OSError:
            pass

    if folder:
        shutil.rmtree(folder, onerror=unlock)


def _ignore_signals() -> None:
    """Every signal the attempt could send this process is ignored (SIGKILL and SIGSTOP cannot be)."""
    for sig in signal.valid_signals():
        if sig not in (signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD):
            try:
                signal.signal(sig, signal.SIG_IGN)
            except (ValueError, OSError):
                pass


def reaper(chan_w: socket.socket, out_w: int, ctl: socket.socket, folder: str | None = None) -> None:
    """Start the worker; report how it ended; kill everything and remove the attempt's folder
    when the judge lets go."""
    os.setsid()
    _set_subreaper()
    _ignore_signals()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    pid = os.fork()
    if pid == 0:
        ctl.close()
        os.close(wake_r)
        os.close(wake_w)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        from graders.engine.worker import worker

        worker(chan_w, out_w, folder)
    chan_w.close()
    os.close(out_w)
    reported = False
    while True:
        try:
            ready, _, _ = select.select([ctl, wake_r], [], [], 1.0)
        except InterruptedError:
            ready = []
        if wake_r in ready:
            os.read(wake_r, 512)
        for child, status in _reap():
            if child == pid and not reported:
                reported = True
                code = os.waitstatus_to_exitcode(status)
                try:
                    ctl.sendall(struct.pack(">i", code))
                except OSError:
                    pass
        if ctl in ready:
            try:
                data = ctl.recv(16)
            except OSError:
                data = b""
            if not data:  # the judge is done with us, or gone
                kill_tree(pid)
                remove_folder(folder)
                os._exit(0)


def template(fd: int) -> None:
    """Import NumPy once, then fork a reaper (and through it a worker) per request; kill what
    a reaper that died early leaves behind."""
    sock = socket.socket(fileno=fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        # Everything a reaper and a worker import, imported once here: each fork starts warm.
        import ctypes, linecache, resource, tokenize, tracemalloc, traceback, types, warnings  # noqa: F401,E401

        from graders.engine import memory, worker  # noqa: F401
        _np()
        request_names()
        confine.prepare()
        _set_subreaper_function()
    except BaseException as exc:  # tell the judge why grading cannot start
        sock.sendall(b"E" + f"NumPy cannot be imported: {type(exc).__name__}: {exc}".encode())
        os._exit(1)
    _set_subreaper()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    import gc

    # What every fork inherits is never collected: its collector skips it (less work per grading)
    # and leaves its pages unwritten, so they stay shared instead of being copied into each child.
    gc.collect()
    gc.freeze()
    reapers: dict[int, str | None] = {}  # live reapers and their attempts' folders
    while True:
        try:
            ready, _, _ = select.select([sock, wake_r], [], [])
        except InterruptedError:
            continue
        if wake_r in ready:
            os.read(wake_r, 512)
            _sweep(reapers)
        if sock in ready:
            try:
                request = sock.recv(1)
            except OSError:
                request = b""
            if not request:
                os._exit(0)
            pid, folder = _fork_reaper(sock, (wake_r, wake_w))
            reapers[pid] = folder


def _new_folder() -> str | None:
    """An empty folder for an attempt, in an empty folder of its own; None if none can be made."""
    import tempfile

    try:
        folder = tempfile.mkdtemp(prefix="kata-attempt-")
        os.mkdir(os.path.join(folder, "work"), 0o700)
    except OSError:
        return None
    return folder


def _fork_reaper(sock: socket.socket, wake: tuple[int, int]) -> tuple[int, str | None]:
    """Fork a reaper and send the judge its pid, its attempt's folder and the worker's three ends."""
    folder = _new_folder()
    chan_j, chan_w = socket.socketpair()
    ctl_j, ctl_r = socket.socketpair()
    out_r, out_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        sock.close()
        chan_j.close()
        ctl_j.close()
        os.close(out_r)
        signal.set_wakeup_fd(-1)
        for fd in wake:
            os.close(fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        try:
            reaper(chan_w, out_w, ctl_r, folder)
        finally:
            os._exit(71)
    chan_w.close()
    ctl_r.close()
    os.close(out_w)
    message = b"P" + struct.pack(">i", pid) + (folder or "").encode()
    socket.send_fds(sock, [message], [chan_j.fileno(), out_r, ctl_j.fileno()])
    chan_j.close()
    ctl_j.close()
    os.close(out_r)
    return pid, folder


def _sweep(reapers: dict[int, str | None]) -> None:
    """Reap what ended; when a reaper is among them, kill every process it left behind (they
    are this process's children now) and remove its attempt's folder."""
    gone = [pid for pid, _ in _reap() if pid in reapers]
    if not gone:
        return
    for _ in range(100):
        orphans = [c for c in _direct_children(os.getpid()) if c not in reapers and _state(c) not in ("Z", "X", None)]
        if not orphans:
            break
        for pid in orphans + [d for c in orphans for d in _descendants(c)]:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _reap()
        time.sleep(0.002)
    for pid in gone:
        remove_folder(reapers.pop(pid))
