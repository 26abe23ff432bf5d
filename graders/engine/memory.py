"""A call whose memory is measured: made in a child of the attempt's process, read from outside.

The attempt's process forks a child for each call the judge asks to measure (Options.memory)
and tells the judge the child's pid; the child waits. The judge caps the child's address
space from outside (prlimit: its size now plus the cap, a limit the child cannot raise),
reads how much anonymous memory it holds, and lets it go. The child makes the call under
tracemalloc, hands its reply to its parent, and waits again; the judge stops it and reads
its peak resident size (VmHWM) from /proc before killing it. The contract's figure is the
tracer's peak above what was in use when the call began; where the resident peak, less the
files and shared memory it maps (the inputs are shared memory), grew far more than the
tracer saw (more than three times it, and 32 MiB, over), that growth counts instead: an
attempt that switched the tracer off, or allocated where it does not look, is measured all
the same. A child whose peak cannot be read (it ended, or would not wait) fails the rule.
The child may start threads but no process (graders.engine.seccomp.child_filter), whose
memory would not be counted.

Only the standard library and NumPy may be imported here: the attempt's process uses it.
"""
from __future__ import annotations

import _tracemalloc
import os
import resource
import signal
import struct

from graders.engine.confine import no_processes as _no_processes

# Bound now, before any attempt runs: what the attempt rebinds in these modules does not reach them.
_start, _stop, _is_tracing = _tracemalloc.start, _tracemalloc.stop, _tracemalloc.is_tracing
_traced_memory, _trace_of = _tracemalloc.get_traced_memory, _tracemalloc._get_object_traceback
_read, _write, _close, _pipe = os.read, os.write, os.close, os.pipe
_waitpid, _exit, _kill, _getpid, _signal = os.waitpid, os._exit, os.kill, os.getpid, signal.signal
_unpack = struct.unpack
TRACER_STOPPED = ("the call stopped or restarted the memory tracer (tracemalloc) that measures its peak, "
                  "so the memory rule cannot be checked")
SLACK = 32 << 20        # resident growth this far past three times the tracer's peak counts instead


# ----------------------------------------------------------------------------- the attempt's side

def in_child(worker, call_id: int, cap: int | None, make_reply) -> None:
    """Make the call (`make_reply()` makes it and returns the reply) in a forked child, with
    the judge measuring it from outside; send the judge the child's reply. Ends this process
    as the child ended when it sent nothing."""
    go_r, go_w = _pipe()
    result_r, result_w = _pipe()
    pid = worker.fork()  # the child loses the channel to the judge (Worker._forked)
    if pid == 0:
        _close(go_w)
        _close(result_r)
        try:
            _no_processes()
            _cap(cap)
            _read(go_r, 1)  # the judge reads where the call starts from, then lets it go
            data = worker.encode_reply(make_reply())
            view = memoryview(data)
            while view:
                view = view[_write(result_w, view):]
            _read(go_r, 1)  # the judge reads the peak, then kills this process
        finally:
            _exit(0)
    _close(go_r)
    _close(result_w)
    try:
        worker.send({"id": call_id, "measuring": pid})
        request = worker.chan.receive(worker.arenas, worker.kept_object)
        if request.get("op") != "go":
            _kill(pid, signal.SIGKILL)
            raise RuntimeError("a measured call was not let go")
        _write(go_w, b"g")
        data = _read_message(result_r)
        if data is None:
            _end_as(_wait(pid))
        worker.send(data)
        _wait(pid)  # the judge kills it once it has read its peak
    finally:
        _close(go_w)
        _close(result_r)


def _read_message(fd: int) -> bytes | None:
    """One length-prefixed message from the pipe; None if it ends first."""
    head = _read_exactly(fd, 8)
    if head is None:
        return None
    body = _read_exactly(fd, _unpack(">Q", head)[0])
    return None if body is None else head + body


def _read_exactly(fd: int, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = _read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _wait(pid: int) -> int | None:
    try:
        return _waitpid(pid, 0)[1]
    except ChildProcessError:  # the attempt set SIGCHLD to SIG_IGN: the kernel reaped it
        return None


def _end_as(status: int | None) -> None:
    """End this process as the child ended (killed by a signal, or an exit status)."""
    if status is None:
        _exit(70)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        _signal(-code, signal.SIG_DFL)
        _kill(_getpid(), -code)
    _exit(code if code > 0 else 70)


def _cap(extra: int | None) -> None:
    """The child's own hard address-space limit, its size now plus `extra` bytes (the judge
    sets the same from outside; whichever is lower holds)."""
    if not extra:
        return
    try:
        with open("/proc/self/statm", "rb") as f:
            size = int(f.read().split()[0]) * resource.getpagesize()
        limit = size + int(extra)
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (OSError, ValueError, IndexError):
        pass


def traced(call, reply: dict):
    """`call()` with the tracer's peak (bytes above what was in use when it began) in
    reply["peak"]; reply["tracer_stopped"] when the tracer was tampered with."""
    _start()
    sentinel = bytearray(64)  # allocated while tracing: its trace is gone if the traces were
    try:
        return call()
    finally:
        intact = _is_tracing() and _trace_of(sentinel) is not None
        reply["peak"] = _traced_memory()[1] if intact else 0
        _stop()
        if not intact:
            reply["tracer_stopped"] = True


def tracer_stopped() -> dict:
    """How a call that stopped the tracer is described to the judge (as if it raised)."""
    return {"type": "MemoryTracerStopped", "module": "builtins", "bases": ["RuntimeError", "Exception", "BaseException"],
            "message": TRACER_STOPPED, "where": None}


# ----------------------------------------------------------------------------- the judge's side

class Measure:
    """The judge's view of one measured call's child, from /proc."""

    def __init__(self, pid: int, cap: int | None):
        from graders.engine import tree

        self.pid, self.start = pid, tree.status(pid)
        if cap and "VmSize" in self.start:
            limit = self.start["VmSize"] + int(cap)
            try:
                resource.prlimit(pid, resource.RLIMIT_AS, (limit, limit))
            except (OSError, ValueError, AttributeError):
                pass

    def end(self) -> int | None:
        """Stop the child, read how far its anonymous memory grew, kill it; None when unreadable."""
        from graders.engine import tree

        try:
            _kill(self.pid, signal.SIGSTOP)
        except OSError:
            return None
        end = tree.status(self.pid)
        try:
            _kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        if "VmHWM" not in end or "RssAnon" not in self.start:
            return None
        return max(0, end["VmHWM"] - end.get("RssFile", 0) - end.get("RssShmem", 0) - self.start["RssAnon"])


def peak(traced_peak: int | None, grown: int) -> int:
    """The call's peak: the tracer's, unless the process grew far more than the tracer saw."""
    seen = traced_peak or 0
    return grown if grown > 3 * seen + SLACK else seen
