"""What a failure needs: the nearest cases that pass.

From the smallest failing case, one dimension of the case changes at a time, and each
neighbour is graded again: each size one larger and one smaller, each flag toggled, the
other dtype, plain values for a special family, a scalar parameter at its other values, the
reduction along another axis (a case's `axis`), the data scaled down (by 0.1, 0.01, 0.001) and
up (by 10, 100), a whole number the call is given outright one more and twice as large, a given
keyword left at its default. A neighbour that passes says what the failure needs ("fails with
n_heads = 1 and B = 2; passes with B = 1 and with n_heads = 2"); a dependence is said only when
the same change makes a second failing case, of other sizes, pass too (graders.engine.explain).

Sizes, flags, the dtype, the family and the scalars change in the check's own case, which
the check makes again; the scale and the defaults change the failing call's arguments, and
the answer is compared with the reference's here. A neighbour passes on a size only above
its trivial values (one key passes for most mistakes, and says nothing), and on the scale
only cleanly (to round-off: a formula that fades out with smaller values is no threshold);
scaled up, only where the reference's answer is not saturated (a softmax of large scores is
one-hot for many mistakes) and the error grows as the data shrinks. Every neighbour is a
count, never a time.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from graders.engine import calls as make
from graders.engine.cases import Size, case_sizes, shown, with_size
from graders.engine.compared import arguments, explored
from graders.engine.failures import AttemptRaised, NotApplicable
from graders.engine.recorder import Call, clone
from graders.engine.said import Said
from graders.engine.vocabulary import tolerance

DOWN = (0.1, 0.01, 0.001)      # the data scaled down, until a neighbour passes
UP = (10.0, 100.0)             # and up
CLEAN = 1e-3                   # a clean pass: the largest error at most this share of the tolerance (round-off)
SENSITIVE = 1e-3               # the data changed by this share: a reference answer that moves less is saturated
MAX_NEIGHBOURS = 12            # neighbours of the case graded on the smallest case, at most
MAX_CALL_NEIGHBOURS = 8        # and neighbours of its failing call (scaled data, whole numbers, defaults)
LARGE_BYTES = 1 << 16          # a failing call with larger arguments is past a cheap boundary
LARGE_SIZE = 64                # ... and its sizes from this one up are the boundary's
BISECTIONS = 5                 # steps of bisection towards such a boundary, at most


@dataclass(frozen=True)
class Neighbour:
    """One change of the failing case: on the case (`on_case`) or on the failing call's
    arguments (`on_call`), in words: `dimension` ("T"), the failing setting ("T = 1025") and the
    one that passes ("T = 1024")."""

    dimension: str
    failing: str
    passing: str
    on_case: Callable[[dict], dict] | None = None
    on_call: Callable[[dict], dict | None] | None = None
    related: str = ""            # "t_q < t_k" when the passing value makes two sizes equal
    scale: float = 0.0           # the factor, for a neighbour that scales the data ...
    data: str = ""               # ... and the argument it scales
    large_size: bool = False     # one less of a size past a cheap boundary


@dataclass
class Budget:
    """The calls of the attempt an explanation may make: a count, never a time."""

    grading: Any                 # graders.engine.recorder.Grading, whose `sent` counts the calls
    limit: int
    start: int = 0

    def __post_init__(self):
        self.start = self.grading.sent

    def left(self) -> bool:
        return self.grading.sent - self.start < self.limit


@dataclass
class Failing:
    """A failing case and its failing call, as the contrast changes them."""

    case: dict
    call: Call
    rerun: Any                   # graders.engine.runner.Rerun


def neighbours_that_pass(one: Failing, other, ref, domain, budget: Budget) -> list[Neighbour]:
    """The neighbours of the smallest failing case that pass, made in `other` (a process of
    the attempt): at most MAX_NEIGHBOURS are graded. A case past a cheap boundary (16,385 rows,
    1,025 positions) is changed only in its large sizes, each one smaller: the boundary."""
    passing, tried = [], 0
    large = not one.call.recorded or _bytes(one.call) > LARGE_BYTES
    neighbours = _case_neighbours(one, domain)
    if large:
        neighbours = [n for n in neighbours if n.large_size]
        for s in (s for s in case_sizes(one.case, ()) if s.value >= LARGE_SIZE):
            if not budget.left():
                break
            found = _boundary(one, s, other, ref)
            if found is not None:
                passing.append(found)
        neighbours = [n for n in neighbours if n.dimension not in {p.dimension for p in passing}]
    for n in neighbours:
        if tried >= MAX_NEIGHBOURS or not budget.left():
            break
        tried += 1
        if passes(n, one, other, ref):
            passing.append(n)
    tried = 0   # the call's own neighbours are counted apart: a case with many sizes leaves them their turn
    for chain in _call_neighbours(one, ref, domain) if not large and disagrees(one.call, ref) else ():
        for n in chain:   # scaled by 0.1, then 0.01, ...: the first that passes
            if tried >= MAX_CALL_NEIGHBOURS or not budget.left():
                break
            tried += 1
            if passes(n, one, other, ref):
                passing.append(n)
                break
    return passing


def _boundary(one: Failing, s: Size, other, ref) -> Neighbour | None:
    """For a size past a cheap boundary (16,385 rows, 4,097 tokens): the boundary itself, found by
    halving, then bisecting between a value that passes and one that fails (BISECTIONS steps)."""
    def at(v):
        return Neighbour(s.name, f"with {s.name} = {fail}", f"with {s.name} = {v}",
                         on_case=lambda c: with_size(c, s, v), large_size=True)
    fail, good = s.value, None
    for v in (s.value - 1, s.value // 2, s.value // 4):
        if v >= 1 and passes(at(v), one, other, ref):
            good = v
            break
        fail = min(fail, v) if v >= 1 else fail
    if good is None:
        return None
    for _ in range(BISECTIONS):
        if fail - good <= 1:
            break
        mid = (fail + good) // 2
        if passes(at(mid), one, other, ref):
            good = mid
        else:
            fail = mid
    return at(good)


def passes(n: Neighbour, at: Failing, other, ref) -> bool:
    """The neighbour `n` of the failing case `at` passes."""
    try:
        if n.on_case is not None:
            case = n.on_case(at.case)
            return at.rerun.allows(case) and at.rerun.attempt(other, case) is None
        if not disagrees(at.call, ref):
            return False
        if n.dimension != "scale":
            return _call_passes(n, at.call, other, ref)
        # the data scaled the same way: a threshold may lie elsewhere on other sizes, so every
        # factor in the same direction from the one that passed is tried
        factors = [f for f in (DOWN if n.scale < 1 else UP) if (f <= n.scale if n.scale < 1 else f >= n.scale)]
        return any(_call_passes(replace(n, on_call=lambda a, f=f, d=n.data: {**a, d: a[d] * f}, scale=f), at.call,
                                other, ref) for f in factors)
    except (NotApplicable, ValueError, TypeError, KeyError, IndexError):
        return False


def disagrees(call: Call, ref) -> bool:
    """The failing call's answer is not the reference's (a call that fails a check for what it
    wrote into an input, or what it kept, may give the right answer): only then does a change
    of its arguments that makes it agree say what the failure needs."""
    if not (call.recorded and call.kept and call.returned):
        return False
    want = make.expected(ref, call.function, *clone((call.args, call.kwargs)))
    return want is not make.REFUSED and error_ratio(call.outcome, want, _dtype(call.args, call.kwargs)) > 1


def _dtype(args, kwargs):
    return next((a.dtype for a in (*args, *kwargs.values()) if isinstance(a, np.ndarray) and a.dtype.kind == "f"),
                np.float64)


# ----------------------------------------------------------------------------- the neighbours

def _case_neighbours(one: Failing, domain) -> list[Neighbour]:
    case, out = one.case, []
    ex = explored(domain, one.call.function)
    sizes = case_sizes(case, ())
    for s in sizes:
        for v in (s.value + 1, s.value - 1):
            if v < 0 or (v < s.value and v <= _trivial(ex, s)):
                continue
            out.append(Neighbour(s.name, f"with {s.name} = {s.value}", f"with {s.name} = {v}",
                                 on_case=lambda c, s=s, v=v: with_size(c, s, v), related=_related(s, v, sizes),
                                 large_size=v < s.value and s.value >= LARGE_SIZE))
    for k, v in case.items():
        if isinstance(v, bool):
            out.append(Neighbour(k, f"with {k}={v}", f"with {k}={not v}", on_case=lambda c, k=k, v=v: {**c, k: not v}))
    for v in _other_axes(case, one.call, ex):
        out.append(Neighbour("axis", f"with axis = {case['axis']}", f"with axis = {v}",
                             on_case=lambda c, v=v: {**c, "axis": v}))
    if case.get("dtype") == "float32":  # float64 is held to a tighter tolerance: passing in float32 says nothing
        out.append(Neighbour("dtype", "in float32", "in float64", on_case=lambda c: {**c, "dtype": "float64"}))
    if case.get("values") not in (None, "normal"):
        out.append(Neighbour("values", f"with values: {case['values']}", "with plain values",
                             on_case=lambda c: {**c, "values": "normal"}))
    for k, values in (ex.scalars.items() if ex is not None else ()):
        if k in case and isinstance(case[k], (int, float, str, type(None))):
            # a scalar at 0 or next to it (temperature 0 or 1e-6, a nucleus of one token) makes most
            # answers agree: that it passes there says nothing of what the failure needs
            others = [v for v in values if v != case[k] and not isinstance(v, (str, bool)) and not _trivial_value(v)]
            for v in _nearest(case[k], others):
                out.append(Neighbour(k, f"with {k} = {shown(case[k])}", f"with {k} = {shown(v)}",
                                     on_case=lambda c, k=k, v=v: {**c, k: v}))
    return out


def _other_axes(case: dict, call: Call, ex) -> list[int]:
    """The other axes a case's `axis` may name (the two nearest to it, counted from 0): the
    mistake of a reduction along a fixed axis shows along every axis but that one."""
    axis = case.get("axis")
    if not isinstance(axis, int) or isinstance(axis, bool):
        return []
    if isinstance(case.get("shape"), tuple):
        ndim = len(case["shape"])
    elif ex is not None and ex.axis is not None:
        ndim = ex.axis[1] + int(case.get("lead", 0))
    else:
        ndim = max((a.ndim for a in call.args if isinstance(a, np.ndarray)), default=0)
    if not -ndim <= axis < ndim:
        return []
    return sorted((k for k in range(ndim) if k != axis % ndim), key=lambda k: abs(k - axis % ndim))[:2]


def _nearest(value, others: list) -> list:
    """The nearest of `others` below `value` and the nearest above (a number), else the first two."""
    if not isinstance(value, (int, float)) or not all(isinstance(v, (int, float)) for v in others):
        return others[:2]
    below = [v for v in others if v < value]
    above = [v for v in others if v > value]
    return ([max(below)] if below else []) + ([min(above)] if above else [])


def _trivial_value(v) -> bool:
    """A scalar at 0 or next to it (a temperature of 0 or a top_p of 1e-6 keeps one token)."""
    return isinstance(v, (int, float)) and abs(v) <= 1e-3


def _bytes(call: Call) -> int:
    return sum(a.nbytes for a in (*call.args, *call.kwargs.values()) if isinstance(a, np.ndarray))


def _trivial(ex, s: Size) -> int:
    """The size at or below which a passing case says nothing (graders.engine.domain.Dim.trivial)."""
    dim = ex.dims.get(s.key) if ex is not None else None
    return dim.trivial if dim is not None else 1


def _related(s: Size, v: int, sizes: list[Size]) -> str:
    """"t_q < t_k" when moving `s` to `v` makes it equal another size it was below (or above)."""
    for o in sizes:
        if o is not s and o.value == v and o.value != s.value:
            return f"{s.name} < {o.name}" if s.value < o.value else f"{s.name} > {o.name}"
    return ""


def _call_neighbours(one: Failing, ref, domain) -> list[list[Neighbour]]:
    """Chains of neighbours on the failing call's arguments: the data scaled down, scaled up,
    each whole number given outright one more, then twice as large (the same values on a second
    case: a threshold or a multiple), and each keyword given a value left at its default."""
    named = arguments(ref, one.call)
    ex = explored(domain, one.call.function)
    data = _scaled_name(named, ex)
    chains = []
    if data is not None:
        for factors in (DOWN, UP):
            chains.append([Neighbour("scale", _magnitude(ex, named, data, 1.0), _magnitude(ex, named, data, f, True),
                                     on_call=lambda a, f=f, data=data: {**a, data: a[data] * f}, scale=f, data=data)
                           for f in factors])
    try:
        params = inspect.signature(getattr(ref, one.call.function)).parameters
    except (TypeError, ValueError, AttributeError):
        params = {}
    for k, v in named.items():   # a whole number the call is given outright (not a size of the case)
        if k in one.case or isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < 1:
            continue
        chains.append([Neighbour(k, f"with {k} = {v}", f"with {k} = {n}", on_call=lambda a, k=k, n=n: {**a, k: n})
                       for n in (int(v) + 1, 2 * int(v))])
    for k, v in one.call.kwargs.items():
        p = params.get(k)
        if p is None or p.default is inspect.Parameter.empty or make.equal(v, p.default):
            continue
        if isinstance(v, (np.ndarray, np.random.Generator)):
            continue
        chains.append([Neighbour(k, f"with {k}={v!r}", f"with {k} at its default ({p.default!r})",
                                 on_call=lambda a, k=k, d=p.default: {**a, k: d})])
    return chains


def _scaled_name(named: dict, ex) -> str | None:
    """The argument the data scale applies to: the domain's choice, else the first float array."""
    chosen = getattr(ex, "scaled", None) if ex is not None else None
    if chosen and isinstance(named.get(chosen), np.ndarray):
        return chosen
    return next((k for k, v in named.items() if isinstance(v, np.ndarray) and v.dtype.kind == "f" and v.size), None)


def _magnitude(ex, named: dict, data: str, factor: float, scaled: bool = False) -> str:
    """Words for the size of the values at `factor` times the data: "z up to 2.5e+04 in magnitude"."""
    values = {**named, data: named[data] * factor}
    what, top = None, None
    measure = getattr(ex, "magnitude", None) if ex is not None else None
    if measure is not None:
        try:
            what, top = measure(values)
        except Exception:
            what = None
    if what is None:
        a = np.asarray(values[data], dtype=np.float64)
        finite = a[np.isfinite(a)]
        what, top = data, float(np.max(np.abs(finite))) if finite.size else 0.0
    amount = f"{what} up to {top:.2g} in magnitude"
    return f"{data} scaled by {factor:g} ({amount})" if scaled else amount


def _call_passes(n: Neighbour, call: Call, other, ref) -> bool:
    """The failing call with its arguments changed by `n`, made in `other`, agrees cleanly with
    the reference's answer to the same arguments. The data scaled up passes only where the
    error grows as the data shrinks (an eps, an underflow), never where a larger scale merely
    saturates a softmax into ones and zeros."""
    ratio, sensitive = _call_ratio(n, call, other, ref)
    if ratio > CLEAN or (n.dimension == "scale" and n.scale > 1 and not sensitive):
        return False
    if n.dimension == "scale" and n.scale > 1:
        smaller, _ = _call_ratio(replace(n, on_call=lambda a, d=n.data: {**a, d: a[d] * DOWN[0]}, scale=DOWN[0]),
                                 call, other, ref)
        return smaller > error_ratio(call.outcome, make.expected(ref, call.function, *clone((call.args, call.kwargs))),
                                     _dtype(call.args, call.kwargs))
    return True


def _call_ratio(n: Neighbour, call: Call, other, ref) -> tuple[float, bool]:
    """(the error of the changed call as a share of the tolerance, whether the reference's answer
    moves when the scaled argument moves a little)."""
    named = arguments(ref, call)
    changed = n.on_call(clone(named))
    if changed is None:
        return float("inf"), False
    params = list(inspect.signature(getattr(ref, call.function)).parameters)
    args = tuple(changed[p] for p in params[:len(call.args)])
    kwargs = {k: changed[k] for k in call.kwargs}
    want = make.expected(ref, call.function, clone(args), clone(kwargs))
    if want is make.REFUSED:
        return float("inf"), False
    try:
        got = getattr(other, call.function)(*args, **kwargs)
    except AttemptRaised:
        return float("inf"), False
    dtype = _dtype(args, kwargs)
    ratio = error_ratio(got, want, dtype)
    sensitive = n.dimension == "scale" and n.scale > 1 and ratio <= CLEAN and \
        _sensitive(ref, call.function, args, kwargs, n.data, dtype, want)
    return ratio, sensitive


def _sensitive(ref, function: str, args: tuple, kwargs: dict, data: str, dtype, want) -> bool:
    """The reference's answer to the scaled call moves when the scaled argument moves a little: a
    softmax saturated into ones and zeros, which any scale of its scores gives alike, does not."""
    params = list(inspect.signature(getattr(ref, function)).parameters)
    named = {**dict(zip(params, args)), **kwargs}
    a = named.get(data)
    if not isinstance(a, np.ndarray):
        return False
    noise = np.random.default_rng(0).standard_normal(a.shape)
    moved = {**named, data: a * (1 + SENSITIVE * noise)}
    args2 = tuple(moved[p] for p in params[:len(args)])
    other = make.expected(ref, function, args2, {k: moved[k] for k in kwargs})
    return other is not make.REFUSED and error_ratio(other, want, dtype) > 1


def error_ratio(got: Any, want: Any, dtype) -> float:
    """The largest difference between `got` and `want`, as a share of the contract's tolerance
    for `dtype` (1 at the edge; inf for another shape, type or NaN where a number is due)."""
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return float("inf")
        return max((error_ratio(g, w, dtype) for g, w in zip(got, want)), default=0.0)
    if isinstance(want, dict):
        if not isinstance(got, dict) or set(got) != set(want):
            return float("inf")
        return max((error_ratio(got[k], want[k], dtype) for k in want), default=0.0)
    try:
        g, w = np.asarray(got), np.asarray(want)
        if g.shape != w.shape or g.dtype.kind not in "biuf" or w.dtype.kind not in "biuf":
            return float("inf")
        if w.dtype.kind in "biu" or g.dtype.kind == "b":
            return 0.0 if np.array_equal(g, w) else float("inf")
        g, w = g.astype(np.float64), w.astype(np.float64)
    except (TypeError, ValueError):
        return float("inf")
    rtol, atol = tolerance(dtype)
    with np.errstate(all="ignore"):
        same = (g == w) | (np.isnan(g) & np.isnan(w))
        gap = np.where(same, 0.0, np.abs(g - w) / (atol + rtol * np.abs(w)))
    gap = np.where(np.isnan(gap), np.inf, gap)
    return float(np.max(gap)) if gap.size else 0.0


# ----------------------------------------------------------------------------- what they say

def said(confirmed: list[Neighbour]) -> list[Said]:
    """The sentences of the dependences confirmed on a second case: the sizes, flags and
    settings in one, the scale in one."""
    out, seen = [], set()
    nearest = []
    for n in confirmed:  # one neighbour a dimension: the nearest (sizes first, then the call's keywords)
        if n.dimension not in seen:
            seen.add(n.dimension)
            nearest.append(n)
    confirmed = nearest
    for n in (n for n in confirmed if n.related):
        out.append(Said("needs", n.dimension, f"fails only when {n.related} ({n.failing[5:]}); passes "
                                             f"{n.passing}, where they are equal"))
    settings = [n for n in confirmed if n.dimension != "scale" and not n.related]
    if settings:
        failing = _phrases(list(dict.fromkeys(n.failing for n in settings)))
        passing = " and ".join(n.passing for n in settings)
        dims = ", ".join(dict.fromkeys(n.dimension for n in settings))
        out.append(Said("needs", dims, f"fails {failing}; passes {passing}"))
    scale = next((n for n in confirmed if n.dimension == "scale"), None)
    if scale is not None:
        how = ("fails only for values this large: a clip, an overflow, or a constant that is small only next to "
               "values near 1") if scale.scale < 1 else ("fails only for values this small: an underflow, or a "
                                                         "constant that is large next to them")
        out.append(Said("needs", "scale", f"fails with {scale.failing}; passes with {scale.passing}: {how}"))
    return out


def _phrases(items: list[str]) -> str:
    """"with n_heads = 1 and B = 2, in float32": phrases that start with the same word share it."""
    groups: dict[str, list[str]] = {}
    for item in items:
        word, _, rest = item.partition(" ")
        groups.setdefault(word, []).append(rest)
    return ", ".join(f"{word} {_and(rest)}" for word, rest in groups.items())


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
