"""The processes around the attempt: the template that forks them, the reaper that ends them.

- the template imports NumPy once and waits; each grading asks it for a fresh worker,
  which it forks (milliseconds instead of a new interpreter);
- the reaper, forked from the template, starts a new session, adopts orphans
  (PR_SET_CHILD_SUBREAPER on Linux) and, when the judge closes its control socket or
  dies, kills every process the attempt started;
- the worker (graders.engine.worker), forked from the reaper, runs the attempt.

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


def reaper(chan_w: socket.socket, out_w: int, ctl: socket.socket) -> None:
    """Start the worker; report how it ended; kill everything when the judge lets go."""
    os.setsid()
    _set_subreaper()
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

        worker(chan_w, out_w)
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
                os._exit(0)


def template(fd: int) -> None:
    """Import NumPy once, then fork a reaper (and through it a worker) per request."""
    sock = socket.socket(fileno=fd)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # reapers are reaped by the kernel
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        # Everything a reaper and a worker import, imported once here: each fork starts warm.
        import ctypes, linecache, resource, tokenize, tracemalloc, traceback, types, warnings  # noqa: F401,E401

        from graders.engine import worker  # noqa: F401
        _np()
        _set_subreaper_function()
    except BaseException as exc:  # tell the judge why grading cannot start
        sock.sendall(b"E" + f"NumPy cannot be imported: {type(exc).__name__}: {exc}".encode())
        os._exit(1)
    while True:
        try:
            request = sock.recv(1)
        except OSError:
            request = b""
        if not request:
            os._exit(0)
        chan_j, chan_w = socket.socketpair()
        ctl_j, ctl_r = socket.socketpair()
        out_r, out_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            sock.close()
            chan_j.close()
            ctl_j.close()
            os.close(out_r)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            try:
                reaper(chan_w, out_w, ctl_r)
            finally:
                os._exit(71)
        chan_w.close()
        ctl_r.close()
        os.close(out_w)
        socket.send_fds(sock, [b"P" + struct.pack(">i", pid)], [chan_j.fileno(), out_r, ctl_j.fileno()])
        chan_j.close()
        ctl_j.close()
        os.close(out_r)
