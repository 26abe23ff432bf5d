"""A call whose memory is measured: made in a child of the worker, under a hard cap.

The worker (graders.engine.worker) forks a child for each call the judge asks to measure
(options memory=True). The child lowers its own hard address-space limit to its size now
plus the cap (a limit no code can raise again, and which ends with the child), traces the
call with tracemalloc, and sends the worker its reply through a pipe; the worker passes
it on to the judge. The attempt cannot switch the measure off unseen: a call that stopped
the tracer, restarted it or cleared its traces is a failure of its own, and where the
process's resident peak (which the attempt cannot reset without writing
/proc/self/clear_refs, which Landlock forbids) grew far more than the tracer saw (more than
three times, and 32 MiB, over: its peak was reset), that growth counts. A child that dies ends the worker the same way, so the judge reads it as if the
call had been made in the worker itself.

Only the standard library and NumPy may be imported here: the attempt's process uses it.
"""
from __future__ import annotations

import os
import resource
import signal
import struct

import _tracemalloc

# Bound now, before any attempt runs: what the attempt rebinds in these modules does not reach them.
_PAGE = resource.getpagesize()
_start, _stop, _is_tracing = _tracemalloc.start, _tracemalloc.stop, _tracemalloc.is_tracing
_traced_memory, _trace_of = _tracemalloc.get_traced_memory, _tracemalloc._get_object_traceback
_read, _write, _close, _pipe, _open = os.read, os.write, os.close, os.pipe, os.open
_waitpid, _exit, _kill, _getpid, _signal = os.waitpid, os._exit, os.kill, os.getpid, signal.signal
_getrlimit, _setrlimit, _unpack = resource.getrlimit, resource.setrlimit, struct.unpack
TRACER_STOPPED = ("the call stopped or restarted the memory tracer (tracemalloc) that measures its peak, "
                  "so the memory rule cannot be checked")


def in_child(worker, make_reply):
    """`make_reply()` (which makes the call and returns the reply dict) run in a forked child;
    the encoded reply. Ends this process as the child ended when it sent nothing."""
    read_end, write_end = _pipe()
    pid = worker.fork_keeping(write_end)
    if pid == 0:
        _close(read_end)
        try:
            data = worker.encode_reply(make_reply())
            view = memoryview(data)
            while view:
                view = view[_write(write_end, view):]
        finally:
            _exit(0)
    _close(write_end)
    try:
        data = _read_message(read_end)
    finally:
        _close(read_end)
    status = _wait(pid)
    if data is not None:
        return data
    _end_as(status)


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


def traced(call, reply: dict, cap: int | None):
    """`call()` with its peak measured into reply["peak"] (bytes above what was in use when it
    began); with `cap` (bytes), an allocation that would take the process that far past its
    size fails at once (MemoryError). Raises TracerStopped when the tracer was tampered with."""
    if cap:
        _cap(cap)
    resident = _resident()
    _start()
    sentinel = bytearray(64)  # allocated while tracing: its trace is gone if the traces were
    try:
        return call()
    finally:
        intact = _is_tracing() and _trace_of(sentinel) is not None
        traced_peak = _traced_memory()[1] if intact else 0
        _stop()
        grown = _peak_resident() - resident
        # blockwise code grows its resident size by at most about twice what the tracer sees
        reply["peak"] = grown if grown > 3 * traced_peak + (32 << 20) else traced_peak
        if not intact:
            reply["tracer"] = "stopped"


def tracer_stopped() -> dict:
    """How a call that stopped the tracer is described to the judge (as if it raised)."""
    return {"type": "MemoryTracerStopped", "module": "builtins", "bases": ["RuntimeError", "Exception", "BaseException"],
            "message": TRACER_STOPPED, "where": None}


def _cap(extra: int) -> None:
    """Hard address-space limit: this process's size now plus `extra` bytes (Linux)."""
    try:
        size = int(_proc("statm").split()[0]) * _PAGE
        soft, hard = _getrlimit(resource.RLIMIT_AS)
        limit = size + int(extra)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        _setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (OSError, ValueError, IndexError):
        pass


def _proc(name: str) -> bytes:
    fd = _open(f"/proc/self/{name}", os.O_RDONLY)
    try:
        return _read(fd, 1 << 16)
    finally:
        _close(fd)


def _resident() -> int:
    try:
        return int(_proc("statm").split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def _peak_resident() -> int:
    """The peak resident size of this process (VmHWM), since it was forked."""
    try:
        for line in _proc("status").splitlines():
            if line.startswith(b"VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0
