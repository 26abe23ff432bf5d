"""Efficiency as an interviewer sees it: Python loops, growth and memory, counted the same on
any machine, measured once every check passes.

    found = measure("causal_mha", ref, candidate, deadline)    # a graders.engine.costs.Efficiency

Each function of the kata whose cost grows declares how (graders.engine.domain.Grows, in
graders/KATA/domain.py): its main dimension (T, the rows, the vocabulary) and the sizes to
measure it at, and other dimensions a loop may run over (the heads, the batch). The attempt
is called at each size in one batch, in its own process, with its line events counted
(graders.engine.counting: the lines of its own file, not NumPy's), then again with its
memory traced, then twice plainly at the largest size for the time; the reference makes the
same calls here, in the judge, counted the same way (once per process: its figures do not
change). How each count grows with the size (the same at every size, as T, as T squared)
and at what rate, side by side with the reference's, is what graders.engine.costs turns into
remarks. Everything but the time is counted, not timed: the same file gets the same figures
and remarks on an idle machine and on a busy one. The time, the attempt's against the
reference's at the largest size, is labelled indicative and decides nothing.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from graders.engine import calls as make
from graders.engine import counting, files
from graders.engine.costs import (
    CONSTANT,
    CUBIC,
    LINEAR,
    QUADRATIC,
    RANK,
    UNKNOWN,
    Along,
    Cost,
    Dimension,
    Efficiency,
    FunctionCost,
    Loop,
    Timing,
    not_measured,
    remarks,
)
from graders.engine.domain import Explore, Grows
from graders.engine.explorer import base_case
from graders.engine.inputs import Inputs
from graders.engine.protocol import CallRequest, Done, Options
from graders.engine.sandbox import AttemptGone, CallTimedOut
from graders.engine.wire import visible
from graders.engine.worker import decode_source

TIMED = 3               # timed calls of the attempt at the largest size (the quickest counts)
REFERENCE_TIMED = 3     # and of the reference
MEMORY_TOLERANCE = 1024     # bytes of growth in a peak that count as none
CODE_WIDTH = 60         # characters of a line's code quoted
ONCE = 0.9              # a line run this often per unit, or more, runs once per unit (a loop's own line)


@dataclass
class Counted:
    """What one call ran: its line events by line number, whether counting stopped, its peak."""

    lines: dict
    capped: bool = False
    peak: int | None = None

    @property
    def total(self) -> int:
        return sum(self.lines.values())


@dataclass
class Measured:
    """One side's calls of a function: along each dimension the calls counted at each size, the
    peaks along the main one, and its quickest time at the largest size."""

    along: list[list[Counted]]
    peaks: list[int]
    seconds: float


# ----------------------------------------------------------------------------- measuring

def measure(kata: str, ref, candidate, deadline: float) -> Efficiency | None:
    """The attempt's efficiency beside the reference's (None: no function of the kata grows)."""
    domain = files.domain(kata)
    functions = [ex for ex in (domain.functions if domain else ()) if ex.grows and ex.function in candidate.functions]
    if not functions:
        return None
    g = candidate.grading
    requests, made = [], []
    for ex in functions:
        calls = [(n, a, k) for n, a, k in planned(ex, ref)]
        made.append(len(calls))
        requests += [CallRequest(g.next_id(), ex.function, list(args), dict(kwargs), opts) for opts, args, kwargs in calls]
    try:
        candidate.box.send(requests, deadline)
    except AttemptGone as exc:
        return not_measured(_gone(exc))
    theirs = [reference(kata, ref, ex) for ex in functions]   # while the attempt's process runs its calls
    lines = decode_source(candidate.box.source).splitlines()
    found, at = [], 0
    try:
        for ex, n, ref_side in zip(functions, made, theirs):
            dones = [_done(candidate.box.next_done(deadline), requests[at + i], ex) for i in range(n)]
            at += n
            ref_side = replace(ref_side, seconds=timed(ref, ex))   # after the attempt's calls: not beside them
            found.append(compare(ex, _measured(ex, dones), ref_side, lines, _reference_lines(ref)))
    except AttemptGone as exc:
        return not_measured(_gone(exc))
    except _Unmeasured as exc:
        _drain(candidate.box, len(requests) - at, deadline)
        return not_measured(str(exc))
    return Efficiency(True, None, found, remarks(found))


def _gone(exc: AttemptGone) -> str:
    """Why the calls that measure the attempt did not all come back."""
    if isinstance(exc, CallTimedOut):
        return "the calls that measure it did not finish in time"
    return f"the attempt's process {exc.message} while its calls were measured"


class _Unmeasured(Exception):
    """A call made for the efficiency did not return (it raised, or the process failed on it)."""


def planned(ex: Explore, ref) -> list[tuple[Options, tuple, dict]]:
    """The calls that measure `ex`, in order: along each dimension its lines at each size, then
    (the main dimension) its peak memory at each size, then plain calls at the largest size."""
    out = []
    for i, grows in enumerate(ex.grows):
        cases = [arguments(ex, grows, n, ref) for n in grows.sizes]
        out += [(Options(lines=True), a, k) for a, k in cases]
        if i == 0:
            out += [(Options(peak=True), a, k) for a, k in cases]
            out += [(Options(timed=True), *cases[-1])] * TIMED
    return out


def arguments(ex: Explore, grows: Grows, n: int, ref) -> tuple[tuple, dict]:
    """The call of `ex` at size `n` of `grows`: its plain case with the sizes `grows` sets (drawn
    once per process: the same seeded case gives the same arrays, which no call changes)."""
    key = (id(ref), id(ex), id(grows), n)
    if key not in _ARGUMENTS:
        case = dict(base_case(ex, 0), **grows.case(n))
        if not ex.allows(case):
            raise ValueError(f"{ex.function}: the case at {grows.name} = {n} is not a valid call: {case}")
        _ARGUMENTS[key] = make.arguments(ex, Inputs(case.get("seed", 0)), case, ref)
    return _ARGUMENTS[key]


_ARGUMENTS: dict[tuple, tuple] = {}


def _done(done: Done, request: CallRequest, ex: Explore) -> Done:
    if done.error is not None or done.missing or done.raised is not None:
        why = done.error or (f"{done.raised.type}: {done.raised.message}" if done.raised else "no such function")
        raise _Unmeasured(f"`{ex.function}` did not return on a call made to measure it ({visible(why)[:200]})")
    return done


def _drain(box, n: int, deadline: float) -> None:
    """Read the replies still due, so that the process is ready for what comes next."""
    try:
        for _ in range(n):
            box.next_done(deadline)
    except AttemptGone:
        pass


def _measured(ex: Explore, dones: list[Done]) -> Measured:
    """The attempt's replies, in the order planned(), as figures."""
    along, peaks, seconds, at = [], [], float("inf"), 0
    for i, grows in enumerate(ex.grows):
        k = len(grows.sizes)
        along.append([Counted(dict(map(tuple, d.lines)), d.lines_capped) for d in dones[at:at + k]])
        at += k
        if i == 0:
            peaks = [d.peak or 0 for d in dones[at:at + k]]
            seconds = min(d.timed if d.timed is not None else d.seconds for d in dones[at + k:at + k + TIMED])
            at += k + TIMED
    return Measured(along, peaks, seconds)


# The reference's counted figures, once per process: the same calls give the same counts.
_REFERENCE: dict[tuple, Measured] = {}


def reference(kata: str, ref, ex: Explore) -> Measured:
    """The reference's calls of `ex`, counted here as the attempt's are in its process (its
    time is not in it: timed() times it at each grading, beside the attempt)."""
    key = (kata, id(ref), ex.function)
    if key not in _REFERENCE:
        fn, filename = getattr(ref, ex.function), ref.__file__
        along, peaks = [], []
        for i, grows in enumerate(ex.grows):
            cases = [arguments(ex, grows, n, ref) for n in grows.sizes]
            counted = []
            for args, kwargs in cases:
                reply: dict = {}
                args, kwargs = make.fresh_generators((args, kwargs))   # the drawn ones stay as drawn
                counting.lines(lambda: fn(*args, **kwargs), filename, reply)
                counted.append(Counted({n: c for n, c in reply["lines"]}, bool(reply.get("lines_capped"))))
            along.append(counted)
            if i == 0:
                for args, kwargs in cases:
                    reply = {}
                    args, kwargs = make.fresh_generators((args, kwargs))
                    counting.peak(lambda: fn(*args, **kwargs), reply)
                    peaks.append(reply["peak"])
        _REFERENCE[key] = Measured(along, peaks, 0.0)
    return _REFERENCE[key]


def timed(ref, ex: Explore) -> float:
    """The reference's quickest time at the largest size of the main dimension, now."""
    fn = getattr(ref, ex.function)
    args, kwargs = arguments(ex, ex.grows[0], ex.grows[0].sizes[-1], ref)
    seconds = float("inf")
    for _ in range(REFERENCE_TIMED):
        reply: dict = {}
        a, k = make.fresh_generators((args, kwargs))
        counting.timed(lambda: fn(*a, **k), reply)
        seconds = min(seconds, reply["timed"])
    return seconds


def _reference_lines(ref) -> list[str]:
    try:
        with open(ref.__file__, encoding="utf-8") as f:
            return f.read().splitlines()
    except OSError:
        return []


# ----------------------------------------------------------------------------- comparing

def compare(ex: Explore, mine: Measured, theirs: Measured, my_lines: list[str], ref_lines: list[str]) -> FunctionCost:
    """The attempt's figures beside the reference's, dimension by dimension."""
    alongs = []
    for i, grows in enumerate(ex.grows):
        dim = Dimension(grows.name, grows.unit, list(grows.sizes), grows.note)
        a = cost(grows.sizes, mine.along[i], my_lines, mine.peaks if i == 0 else None)
        r = cost(grows.sizes, theirs.along[i], ref_lines, theirs.peaks if i == 0 else None)
        alongs.append(Along(dim, a, r))
    timing = Timing(ex.grows[0].sizes[-1], mine.seconds, theirs.seconds)
    return FunctionCost(ex.function, alongs[0], alongs[1:], timing)


def cost(sizes: tuple[int, ...], counted: list[Counted], source: list[str], peaks: list[int] | None) -> Cost:
    """One side's figures along a dimension: its lines, how they grow, its loop, its memory."""
    capped = [c.capped for c in counted]
    kept = [(n, c) for n, c, stopped in zip(sizes, counted, capped) if not stopped]
    growth, rate = grows([n for n, _ in kept], [c.total for _, c in kept])
    memory_growth = grows(list(sizes), peaks, MEMORY_TOLERANCE)[0] if peaks is not None else None
    return Cost([c.total for c in counted], growth, rate, capped, loop(kept, source), peaks, memory_growth)


def loop(kept: list[tuple[int, Counted]], source: list[str]) -> Loop | None:
    """The loop the counts show, as the line that names it best: among the lines whose counts
    grow fastest (as T squared before as T), the one run least often but at least about once
    per unit (the loop's own line rather than a loop inside it; the first in the file on a
    tie), else the one run most often; None when no line's count grows."""
    if len(kept) < 2:
        return None
    sizes = [n for n, _ in kept]
    first, last = kept[0][1].lines, kept[-1][1].lines
    found = []
    for line in sorted(last):
        if last[line] > first.get(line, 0):
            counts = [c.lines.get(line, 0) for _, c in kept]
            growth, rate = grows(sizes, counts)
            if growth != CONSTANT:
                found.append((line, counts, growth, rate))
    if not found:
        return None
    top = max(RANK[g] for _, _, g, _ in found)
    found = [f for f in found if RANK[f[2]] == top]
    once = [f for f in found if f[3] >= ONCE]
    line, counts, growth, rate = min(once, key=lambda f: (f[3], f[0])) if once else \
        max(found, key=lambda f: (f[3], -f[0]))
    code = source[line - 1].strip() if 0 < line <= len(source) else ""
    code = visible(code)
    if len(code) > CODE_WIDTH:
        code = code[:CODE_WIDTH - 1] + "…"
    return Loop(line, code, counts, growth, rate)


def grows(sizes: list[int], values: list[int], tolerance: int = 0) -> tuple[str, float]:
    """How `values` grow with `sizes` (each the one before times the same factor r): constant,
    linear, quadratic or cubic, from how the last step's growth compares with the one before
    (r times as much grows linearly, r**2 times quadratically), and the rate: per unit, per
    pair or per triple of units."""
    if len(values) < 2:
        return UNKNOWN, 0.0
    if len(values) == 2:
        (n1, n2), (y1, y2) = sizes, values
        if y2 - y1 <= tolerance:
            return CONSTANT, 0.0
        power = math.log(y2 / y1) / math.log(n2 / n1) if y1 > 0 else 1.0
        return _classed(power, sizes[-2:], values[-2:])
    (n1, n2, n3), (y1, y2, y3) = sizes[-3:], values[-3:]
    d1, d2 = y2 - y1, y3 - y2
    if d1 <= tolerance and d2 <= tolerance:
        return CONSTANT, 0.0
    if d1 <= tolerance or d2 <= 0:
        return LINEAR, _round(max(d2, y3 - y1) / (n3 - n2 if d2 > 0 else n3 - n1))
    power = math.log(d2 / d1) / math.log(n3 / n2)   # n**p grows by (r**p) from one step to the next
    return _classed(power, [n1, n2, n3], [y1, y2, y3])


def _classed(power: float, sizes: list[int], values: list[int]) -> tuple[str, float]:
    """The growth a power is closest to, and its rate."""
    n, y = sizes[-1], values[-1]
    if power < 1.5:
        slope = (values[-1] - values[-2]) / (sizes[-1] - sizes[-2])
        return LINEAR, _round(slope)
    if power < 2.5:
        if len(sizes) == 3:
            (n1, n2, n3), (y1, y2, y3) = sizes, values
            second = ((y3 - y2) / (n3 - n2) - (y2 - y1) / (n2 - n1)) / (n3 - n1)
            if second > 0:
                return QUADRATIC, _round(second)
        return QUADRATIC, _round(y / n ** 2)
    return CUBIC, _round(y / n ** 3)


def _round(x: float) -> float:
    """Three significant figures: what the report shows, the same wherever it is computed."""
    return float(f"{x:.3g}") if x else 0.0
