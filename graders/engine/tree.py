"""Processes and folders as the judge sees them from outside: what /proc says of a process,
the tree below it, how to end that tree, and how to remove an attempt's folder.

The attempt's process is a child subreaper (graders.engine.confine), so whatever it starts
(a thread, a child, a daemon that forked twice into a session of its own) stays in the
tree below it until the judge ends that tree: every process in it is stopped first, so
that none can fork meanwhile, then killed.

Only the standard library may be imported here: the attempt's process's forker uses it.
"""
from __future__ import annotations

import functools
import os
import signal
import time


def stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command's name (state first, then the
    parent's pid...), None when the process is gone (Linux)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode("ascii", "replace")
    except OSError:
        return None
    return text.rsplit(")", 1)[-1].split() or None


def state(pid: int) -> str | None:
    """A process's state letter (R, S, T for stopped, Z...), None when it is gone."""
    fields = stat_fields(pid)
    return fields[0] if fields else None


def parent(pid: int) -> int | None:
    fields = stat_fields(pid)
    return int(fields[1]) if fields and len(fields) > 1 else None


def alive(pid: int) -> bool:
    return state(pid) not in (None, "Z", "X")


def status(pid: int) -> dict[str, int]:
    """The numeric fields of /proc/PID/status that end in kB, in bytes (VmHWM, RssAnon...),
    and Threads; {} when the process is gone."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            lines = f.read().decode("ascii", "replace").splitlines()
    except OSError:
        return {}
    out = {}
    for line in lines:
        name, _, value = line.partition(":")
        parts = value.split()
        if len(parts) == 2 and parts[1] == "kB" and parts[0].isdigit():
            out[name] = int(parts[0]) * 1024
        elif name == "Threads" and parts and parts[0].isdigit():
            out[name] = int(parts[0])
    return out


@functools.cache
def _children_listed() -> bool:
    """The kernel lists each task's children in /proc/PID/task/TID/children (asked once)."""
    return os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def children(pid: int) -> list[int]:
    """The children of `pid` (every thread's), [] for a process that is gone."""
    if not _children_listed():
        return [p for p, ppid in _all_parents().items() if ppid == pid]
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


def _all_parents() -> dict[int, int]:
    """pid -> parent pid, for every process (where the kernel keeps no lists of children)."""
    out = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for entry in entries:
        if entry.isdigit():
            fields = stat_fields(int(entry))
            if fields and len(fields) > 1:
                out[int(entry)] = int(fields[1])
    return out


def descendants(root: int) -> list[int]:
    """Every process below `root`, live or not yet reaped, parents before their children."""
    found, todo = [], [root]
    while todo:
        kids = children(todo.pop(0))
        found += kids
        todo += kids
    return found


def threads(pid: int) -> int:
    """How many threads `pid` runs now (0 when it is gone): /proc/PID/task has a link for each,
    and two more (a stat, cheaper than listing them)."""
    try:
        return max(0, os.stat(f"/proc/{pid}/task").st_nlink - 2)
    except OSError:
        return 0


def end_tree(root: int) -> None:
    """Kill `root` and every process below it. Each is stopped as it is found (a stopped
    process cannot fork), until a walk finds nothing new; then all are killed, the deepest
    first, `root` last, so that no orphan leaves the tree while it is being ended."""
    _signal(root, signal.SIGSTOP)
    seen: list[int] = []
    for _ in range(64):  # each walk stops what the last one found; a fork bomb is bounded by RLIMIT_NPROC
        new = [p for p in descendants(root) if p not in seen]
        if not new:
            break
        for pid in new:
            _signal(pid, signal.SIGSTOP)
        seen += new
    for pid in reversed(seen):
        _signal(pid, signal.SIGKILL)
    _signal(root, signal.SIGKILL)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def wait_gone(pid: int, seconds: float = 2.0) -> None:
    """Reap `pid` if it is this process's child; else wait until it is gone from /proc (its
    parent reaps it), for at most `seconds`."""
    end = time.monotonic() + seconds
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                return
        except ChildProcessError:
            if state(pid) in (None, "Z", "X"):
                return
        if time.monotonic() > end:
            return
        time.sleep(0.001)


# ----------------------------------------------------------------------------- folders

def remove_folder(folder: str | None) -> None:
    """Remove an attempt's folder and everything in it, however deep and whatever modes the
    attempt gave what it made. Nothing outside `folder` is ever changed: a folder inside it
    that refuses is opened up (its own mode, never its parent's), and the walk keeps its
    own stack, so depth costs no recursion."""
    if not folder:
        return
    try:
        top = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return
    stack: list[tuple[int, list[str]]] = [(top, _names(top))]
    while stack:
        fd, names = stack[-1]
        if not names:
            stack.pop()
            os.close(fd)
            if stack:  # the folder just emptied is an entry of its parent, which removes it
                parent_fd, parent_names = stack[-1]
                _rmdir(parent_fd, parent_names.pop())
            continue
        name = names[-1]
        try:
            os.unlink(name, dir_fd=fd)
            names.pop()
            continue
        except IsADirectoryError:
            pass
        except PermissionError:  # unlinking from a folder without write permission
            if not _open_up(fd):
                names.pop()
                continue
            try:
                os.unlink(name, dir_fd=fd)
                names.pop()
                continue
            except IsADirectoryError:
                pass
            except OSError:
                names.pop()
                continue
        except FileNotFoundError:
            names.pop()
            continue
        except OSError:
            names.pop()
            continue
        child = _open_dir(fd, name)
        if child is None:
            names.pop()
            continue
        stack.append((child, _names(child)))
    try:
        os.rmdir(folder)
    except OSError:
        pass


def _open_dir(parent_fd: int, name: str) -> int | None:
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        return os.open(name, flags, dir_fd=parent_fd)
    except PermissionError:
        try:  # a folder the attempt made unreadable: it is inside the attempt's folder, so open it up
            os.chmod(name, 0o700, dir_fd=parent_fd, follow_symlinks=False)
            return os.open(name, flags, dir_fd=parent_fd)
        except OSError:
            return None
    except OSError:
        return None


def _names(fd: int) -> list[str]:
    try:
        return os.listdir(fd)
    except PermissionError:
        if _open_up(fd):
            try:
                return os.listdir(fd)
            except OSError:
                return []
        return []
    except OSError:
        return []


def _open_up(fd: int) -> bool:
    try:
        os.chmod(fd, 0o700)
        return True
    except OSError:
        return False


def _rmdir(parent_fd: int, name: str) -> None:
    try:
        os.rmdir(name, dir_fd=parent_fd)
    except PermissionError:
        if _open_up(parent_fd):
            try:
                os.rmdir(name, dir_fd=parent_fd)
            except OSError:
                pass
    except OSError:
        pass
