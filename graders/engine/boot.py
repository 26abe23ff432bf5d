"""How an attempt's process starts: forked, with NumPy already imported, from a process that
holds nothing of the judge, then confined before it waits for the attempt.

Two processes fork attempts:

- the grading service forks the first attempt of a `kata` command from itself once it has
  imported NumPy and before it imports any grader (graders.engine.service), so that a
  `kata check` runs the command, the judge and the attempt, and nothing else;
- a zygote, a Python started from a whitelisted environment that imports NumPy and waits,
  forks every other (`python -S -s -c BOOT ...`, graders.engine.sandbox.Zygote). It adopts
  and kills what an attempt that died left behind, and removes the folders of its attempts
  when the judge lets go of it or dies.

An attempt's process may also fork a twin of itself on request (graders.engine.worker):
asked right after loading, that twin is a copy in which the attempt has not been called.

Each attempt gets an empty folder of its own (`kata-attempt-*` in the temporary folder,
with `work` in it), three channels to the judge (requests and replies, what it prints, and
where its stack is written when the judge asks, with SIGUSR1, what a call that overran its
time was doing), and then `attempt()` runs in it.

Only the standard library and NumPy may be imported here: the attempt's process uses it.
"""
from __future__ import annotations

import os
import signal
import socket
import sys
from dataclasses import dataclass

from graders.engine import confine, tree

# The zygote's start: the engine's own modules, then the loop that forks the attempts' processes.
BOOT = ("import sys; sys.path[:0] = sys.argv[1:3]; from graders.engine.boot import zygote; "
        "zygote(int(sys.argv[3]), sys.argv[4])")
PYTHON_IGNORES = ("SIGPIPE", "SIGXFSZ")  # signals a fresh Python interpreter ignores
STACK_SIGNAL = signal.SIGUSR1


@dataclass
class Ends:
    """The attempt's ends of its channels to the judge, and its folder."""

    chan: socket.socket
    out: int
    stack: int
    folder: str | None


@dataclass
class Opened:
    """The judge's ends: what `new_ends` makes for one attempt."""

    chan: socket.socket
    out: int
    stack: int
    folder: str | None


def new_folder() -> str | None:
    """An empty folder for an attempt (`work`), in an empty folder of its own; None if none can be made."""
    import tempfile

    try:
        folder = tempfile.mkdtemp(prefix="kata-attempt-")
        os.chmod(folder, 0o711)  # its own folder: an attempt that runs as a user id of its own passes through
        os.mkdir(os.path.join(folder, "work"), 0o700)
    except OSError:
        return None
    return folder


def new_ends() -> tuple[Opened, Ends]:
    folder = new_folder()
    chan_j, chan_a = socket.socketpair()
    out_r, out_w = os.pipe()
    stack_r, stack_w = os.pipe()
    for fd in (out_r, stack_r):
        os.set_blocking(fd, False)
    return Opened(chan_j, out_r, stack_r, folder), Ends(chan_a, out_w, stack_w, folder)


def close_ends(ends) -> None:
    for part in (ends.chan,):
        try:
            part.close()
        except OSError:
            pass
    for fd in (ends.out, ends.stack):
        try:
            os.close(fd)
        except OSError:
            pass


def attempt(ends: Ends, megabytes: int) -> None:
    """Become the attempt's process: its own process group, output to the judge, confined,
    then serving the judge's requests. Never returns."""
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(ends.out, 1)
        os.dup2(ends.out, 2)
        for fd in {ends.out, null} - {0, 1, 2}:
            os.close(fd)
        sys.stdout = sys.__stdout__ = _text_stream(1)
        sys.stderr = sys.__stderr__ = _text_stream(2)
        _as_python_starts()
        import faulthandler

        faulthandler.register(STACK_SIGNAL, file=os.fdopen(ends.stack, "w", closefd=False), all_threads=True)
        from graders.engine.protocol import Channel
        from graders.engine.worker import Worker

        guard = confine.confine(ends.folder, megabytes)
        Worker(Channel(_out_of_the_way(ends.chan)), guard).serve()
    except BaseException:
        import traceback

        traceback.print_exc()  # to the judge's output pipe: shown with what the attempt printed
    finally:
        os._exit(70)


def fork_attempt(megabytes: int) -> tuple[int, Opened]:
    """Fork a new attempt's process from this one (which must hold nothing of the judge yet):
    its pid and the judge's ends."""
    opened, ends = new_ends()
    pid = os.fork()
    if pid == 0:
        close_ends(opened)
        attempt(ends, megabytes)
    close_ends(ends)
    return pid, opened


def _out_of_the_way(chan: socket.socket) -> socket.socket:
    """The channel on a descriptor far above the ones files get (an attempt that writes to
    descriptors 0 to 20, say, does not write into it by chance)."""
    import fcntl

    try:
        high = fcntl.fcntl(chan.fileno(), fcntl.F_DUPFD_CLOEXEC, 200)
    except OSError:
        return chan
    chan.close()
    return socket.socket(fileno=high)


def _as_python_starts() -> None:
    """Signal handling as a fresh Python interpreter has it."""
    for sig in signal.valid_signals():
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            try:
                signal.signal(sig, signal.SIG_DFL)
            except (ValueError, OSError):
                pass
    for name in PYTHON_IGNORES:
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _text_stream(fd: int):
    import io

    return io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), encoding="utf-8", errors="replace",
                            line_buffering=True)


def warm() -> None:
    """Import now what every attempt's process needs, so that each fork starts warm."""
    import ctypes  # noqa: F401,E401

    from graders.engine import arena, keeping, memory, protocol, worker  # noqa: F401
    from graders.engine.wire import numpy_names

    numpy_names()


# ----------------------------------------------------------------------------- the zygote

def zygote(fd: int, settings: str) -> None:
    """Wait for requests on the socket `fd` (graders.engine.wire messages, as every message
    is): {"op": "fork"} forks an attempt's process and answers its pid and folder, with the
    judge's three ends as descriptors; {"op": "sweep"} reaps the attempts that ended and kills
    what they left behind. Ends, killing what is left of its attempts and removing their
    folders, when the judge lets go or dies."""
    import json

    from graders.engine.protocol import Channel
    from graders.engine.wire import WireError, encode

    chan = Channel(socket.socket(fileno=fd))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    options = json.loads(settings)
    megabytes, landlock = int(options["megabytes"]), bool(options["landlock"])
    import tempfile

    tempfile.tempdir = options.get("tempdir") or None  # the attempts' folders go where the judge's would
    try:
        warm()
        confine.prepare(landlock)
    except BaseException as exc:  # tell the judge why grading cannot start
        chan.send(encode({"error": f"NumPy cannot be imported: {type(exc).__name__}: {exc}"}))
        os._exit(1)
    if confine.PLAN.libc is not None:
        confine.PLAN.libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: an attempt's orphans come here
        confine.PLAN.libc.prctl(1, 9, 0, 0, 0)   # PR_SET_PDEATHSIG: it ends with the judge
    import gc

    # What every fork inherits is never collected: its collector skips it (less work per attempt)
    # and leaves its pages unwritten, so they stay shared instead of being copied into each child.
    gc.collect()
    gc.freeze()
    attempts: dict[int, str | None] = {}
    while True:
        try:
            op = chan.receive().get("op")
        except (EOFError, OSError, WireError):
            op = None
        _sweep(attempts)
        if op == "sweep":
            chan.send(encode({"op": "swept"}))
            continue
        if op != "fork":
            for pid, folder in attempts.items():
                tree.end_tree(pid)
                tree.wait_gone(pid)
                tree.remove_folder(folder)
            os._exit(0)
        opened, ends = new_ends()
        pid = os.fork()
        if pid == 0:
            chan.close()
            close_ends(opened)
            attempt(ends, megabytes)
        chan.send(encode({"pid": pid, "folder": opened.folder}), [opened.chan.fileno(), opened.out, opened.stack])
        close_ends(opened)
        close_ends(ends)
        attempts[pid] = opened.folder


def _sweep(attempts: dict[int, str | None]) -> None:
    """Reap the attempts that ended (the judge removes their folders); kill every other
    process that came here (an orphan adopted from an attempt that died first)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        attempts.pop(pid, None)
    for pid in tree.children(os.getpid()):
        if pid not in attempts and tree.alive(pid):
            tree.end_tree(pid)
