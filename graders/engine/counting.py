"""What a call costs, counted rather than timed: the Python lines it runs in one file, and
the peak of the memory it allocates (graders.engine.efficiency reads both).

    reply = {}
    result = lines(lambda: fn(*args), "/path/of/the/file.py", reply)
    reply["lines"]           # [[line, times run], ...] for that file's lines, in line order
    reply["lines_capped"]    # True when counting stopped at LINE_CAP events

    result = peak(lambda: fn(*args), reply)
    reply["peak"]            # bytes, the tracer's peak above what was in use when the call began

    result = timed(lambda: fn(*args), reply)
    reply["timed"]           # seconds the call took, and nothing else (the one figure that is timed)

Both are the same in the attempt's process (graders.engine.worker, for the attempt's file)
and in the judge (for the reference's file), so the two are counted alike. A line event is
what `sys.settrace` reports: a line about to run, once each time it runs (a loop's line once
per iteration); lines of other files (NumPy's, the standard library's) are not counted. The
same code on the same inputs runs the same lines on any machine, under any load. Counting
stops at LINE_CAP events (the call goes on, uncounted), so that a loop that runs millions of
lines costs no more to count than that many.

Only the standard library may be imported here: the attempt's process uses it.
"""
from __future__ import annotations

import _tracemalloc
import sys
import time

LINE_CAP = 200_000      # line events counted in one call, at most

# Bound now, before any attempt runs: what the attempt rebinds in these modules does not reach them.
_settrace, _gettrace = sys.settrace, sys.gettrace
_start, _stop, _is_tracing = _tracemalloc.start, _tracemalloc.stop, _tracemalloc.is_tracing
_traced_memory, _reset_peak = _tracemalloc.get_traced_memory, _tracemalloc.reset_peak
_perf_counter = time.perf_counter


def lines(call, filename: str, reply: dict):
    """`call()`, counting the line events of code compiled from `filename`: reply["lines"] holds
    [line, count] pairs, and reply["lines_capped"] is True when counting stopped at LINE_CAP."""
    counts: dict[int, int] = {}
    total = [0]

    def local(frame, event, arg):
        if event == "line" and total[0] < LINE_CAP:
            n = frame.f_lineno
            counts[n] = counts.get(n, 0) + 1
            total[0] += 1
        return local

    def starts(frame, event, arg):  # a new frame: traced line by line only when it is of the file
        return local if frame.f_code.co_filename == filename and total[0] < LINE_CAP else None

    before = _gettrace()
    _settrace(starts)
    try:
        return call()
    finally:
        _settrace(before)
        reply["lines"] = [[n, counts[n]] for n in sorted(counts)]
        if total[0] >= LINE_CAP:
            reply["lines_capped"] = True


def peak(call, reply: dict):
    """`call()` under the memory tracer, in this process: reply["peak"] holds the peak in bytes
    above what was traced when it began (0 when the call stopped the tracer)."""
    was = _is_tracing()
    if was:
        _reset_peak()
    else:
        _start()
    began = _traced_memory()[0]
    try:
        return call()
    finally:
        if _is_tracing():
            reply["peak"] = max(0, _traced_memory()[1] - began)
            if not was:
                _stop()
        else:
            reply["peak"] = 0


def timed(call, reply: dict):
    """`call()`, with reply["timed"] the seconds it took (only the call: what the judge does
    around it is not in it, so the attempt and the reference are timed alike)."""
    started = _perf_counter()
    try:
        return call()
    finally:
        reply["timed"] = _perf_counter() - started
