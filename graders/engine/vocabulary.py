"""The vocabulary graders are written in: what a property expects of the attempt's answers.

A grader (graders/KATA/grader.py) is a list of properties, each a function decorated with
`@check` (graders.engine.runner) and run on a few small cases. Its body draws inputs from
`new` (graders.engine.inputs.Inputs), calls the attempt through `impl`
(graders.engine.recorder.Candidate) and states what must hold with the `expect_...`
functions below; each raises CheckFailed with one line that says what was observed.
Everything a grader needs is importable from here.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from graders.engine import grammar
from graders.engine.failures import AttemptRaised, CheckFailed, NotImplementedYet, changed_inputs  # noqa: F401
from graders.engine.inputs import LAYOUT_CHECK, LAYOUTS, Inputs, with_dtypes  # noqa: F401
from graders.engine.recorder import Candidate, Recorded, value_differs
from graders.engine.runner import check  # noqa: F401
from graders.engine.wire import kind_of  # noqa: F401  ("a list", "an OrderedDict": the attempt's own type, for messages)

TOLERANCE = {np.dtype(np.float64): (1e-6, 1e-9), np.dtype(np.float32): (1e-4, 1e-5)}
# A float32 logit near 1e4 carries only about three significant digits of its own.
EXTREME_FLOAT32_RTOL = 1e-3


def tolerance(dtype: Any, extreme: bool = False) -> tuple[float, float]:
    rtol, atol = TOLERANCE.get(np.dtype(dtype), TOLERANCE[np.dtype(np.float32)])
    if extreme and np.dtype(dtype) == np.float32:
        rtol = EXTREME_FLOAT32_RTOL
    return rtol, atol


def as_array(value: Any, what: str) -> np.ndarray:
    """The attempt's result as an array, or a one-line failure if it is not one."""
    if value is None:
        raise CheckFailed(f"{what} is None: did the function forget to `return`?", kind="type")
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (float, int, np.generic, bool)):  # a number: a 0-d array (a list is not an array)
        return np.asarray(value)
    raise CheckFailed(f"{what} is {kind_of(value)}, expected a NumPy array", kind="type")


def expect_tuple(value: Any, n: int, what: str) -> tuple:
    if not isinstance(value, (tuple, list)) or len(value) != n:
        got = kind_of(value) + (f" of length {len(value)}" if isinstance(value, (tuple, list)) else "")
        raise CheckFailed(f"{what} returned {got}, expected a tuple of {grammar.count(n, 'array')}", kind="type")
    return tuple(value)


def expect_shape(value: Any, shape: tuple, what: str) -> np.ndarray:
    arr = as_array(value, what)
    if arr.shape != tuple(shape):
        raise CheckFailed(f"{what} has shape {arr.shape}, expected {tuple(shape)}", kind="shape")
    return arr


def expect_finite(value: Any, what: str) -> np.ndarray:
    arr = as_array(value, what)
    if np.issubdtype(arr.dtype, np.number) and not np.all(np.isfinite(arr)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise CheckFailed(f"{what} contains {arr[bad]} at index {list(bad)}", kind="finite")
    return arr


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def expect_close(value: Any, expected: np.ndarray, what: str, dtype: Any = np.float64,
                 extreme: bool = False, rtol: float | None = None, atol: float | None = None,
                 against: str = "the reference", hint: str | None = None) -> np.ndarray:
    """Agreement with `expected` within the contract's tolerance for `dtype`. The message
    says "{what} differs from {against} ..."; `hint` adds what the observation points to."""
    expected = np.asarray(expected)
    arr = expect_shape(value, expected.shape, what)
    r, a = tolerance(dtype, extreme)
    r, a = rtol if rtol is not None else r, atol if atol is not None else a
    if arr.dtype == np.bool_ or expected.dtype == np.bool_:  # a mask: the same entries, exactly
        ok = (arr == expected) if arr.dtype == expected.dtype else np.zeros(arr.shape, dtype=bool)
        got, want = arr.astype(np.float64), expected.astype(np.float64)
    else:
        got, want = arr.astype(np.float64), expected.astype(np.float64)
        ok = np.isclose(got, want, rtol=r, atol=a, equal_nan=True)
    if not np.all(ok):
        with np.errstate(invalid="ignore"):
            diff = np.where(ok, 0.0, np.abs(got - want))
            diff = np.where(np.isnan(diff), np.inf, diff)
            if not np.any(diff):  # the dtypes differ (bool against numbers): any entry will do
                diff = (~ok).astype(np.float64)
        idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(diff)), diff.shape)) if diff.ndim else ()
        n_bad = int((~ok).sum())
        nan = np.isnan(got[idx]) or np.isnan(want[idx])  # no "by up to NaN": the values say it
        gap = "" if nan else f", by up to {_fmt(float(np.abs(got[idx] - want[idx])))}"
        shown_got, shown_want = _apart(got[idx], want[idx])
        kind = f" ({grammar.a(str(arr.dtype))} array, expected {expected.dtype})" if (arr.dtype == np.bool_) != (
            expected.dtype == np.bool_) else ""
        raise CheckFailed(
            f"{what}{kind} {grammar.agrees(what, 'differs', 'differ')} from {against} in "
            f"{grammar.of(n_bad, ok.size, 'entry', 'its')}{gap}: "
            f"at index {list(idx)} it is {shown_got}, expected {shown_want}"
            + (f" ({hint})" if hint else ""),
            kind="close",
        )
    return arr


def mismatch(got: Any, want: Any, rtol: float, atol: float):
    """None when `got` is close to `want`, else (how many entries differ, the index of the
    largest gap, the value there, the value wanted) for a message of a check's own."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    ok = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    if np.all(ok):
        return None
    with np.errstate(invalid="ignore"):
        gap = np.where(ok, 0.0, np.abs(got - want))
    gap = np.where(np.isnan(gap), np.inf, gap)
    idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(gap)), gap.shape))
    return int((~ok).sum()), idx, float(got[idx]), float(want[idx])


def _apart(a: float, b: float) -> tuple[str, str]:
    """Two numbers with as many digits as it takes for them to read differently (up to 17)."""
    for digits in (6, 9, 12, 17):
        x, y = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if x != y:
            return x, y
    return x, y


def expect_rows_sum_to_one(weights: Any, what: str = "the weights") -> None:
    w = as_array(weights, what)
    sums = w.sum(axis=-1)
    bad = ~np.isclose(sums, 1.0, rtol=1e-5, atol=1e-6)
    if np.any(bad):
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        row = idx[-1] if idx else 0
        where = f"row {row}" if len(idx) <= 1 else f"row {row} (at {list(idx[:-1])})"
        raise CheckFailed(f"{where} of {what} sums to {_fmt(float(sums[idx]))}, not 1", kind="rowsum")


def weights_picture(w: Any, marked, title: str) -> dict | None:
    """A (T_q, T_k) slice of weights as a picture for the report (see report.CheckResult),
    with the entries the message is about marked; None when it is too large to draw."""
    w = np.asarray(w, dtype=np.float64)
    if w.ndim != 2 or not 0 < w.shape[0] <= 40 or not 0 < w.shape[1] <= 40:
        return None
    values = [[None if not np.isfinite(v) else round(float(v), 4) for v in row] for row in w]
    return {"title": title, "values": values, "marked": [[int(i), int(j)] for i, j in marked],
            "rows": "query", "cols": "key"}


def expect_causal(weights: Any, t_k: int | None = None, what: str = "the weights") -> None:
    """Nothing attends to the future: blocked entries (bottom-right alignment) are exactly 0."""
    w = as_array(weights, what)
    t_q, tk = w.shape[-2], w.shape[-1]
    blocked = np.arange(tk)[None, :] > (tk - t_q + np.arange(t_q))[:, None]
    leak = (w != 0) & blocked       # NaN != 0 counts as a leak
    if np.any(leak):
        idx = tuple(int(i) for i in np.argwhere(leak)[0])
        lead = f" (at {list(idx[:-2])})" if len(idx) > 2 else ""
        plane = w[idx[:-2]]
        raise CheckFailed(
            f"in {what}{lead}, position {idx[-2]} attends to the later position {idx[-1]} (weight "
            f"{_fmt(float(w[idx]))}; {_not_zero(int(leak.sum()))} in the future): the future must get "
            f"weight exactly 0", kind="causal",
            picture=weights_picture(plane, np.argwhere(leak[idx[:-2]]), f"{what}{lead}: later positions marked"))


def _not_zero(n: int) -> str:
    return f"{grammar.count(n, 'entry')} {grammar.verb(n, 'is', 'are')} not 0"


def _entries(n: int) -> str:
    return grammar.count(n, "entry")


def expect_prefix_invariant(pairs: list[tuple[str, Any, Any]], t: int, total: int, dtype: Any = np.float64) -> None:
    """Cutting the input to its first t of `total` positions leaves those positions' outputs as
    they were. `pairs` holds (what, output for the first t positions alone, the same part of
    the output for all positions)."""
    rtol, atol = tolerance(dtype)
    for what, short, full in pairs:
        short, full = as_array(short, what).astype(np.float64), as_array(full, what).astype(np.float64)
        if short.shape != full.shape:
            raise CheckFailed(f"{what} of the first {t} positions alone has shape {short.shape}, but "
                              f"{full.shape} within all {total}", kind="prefix")
        ok = np.isclose(short, full, rtol=rtol, atol=atol, equal_nan=True)
        if not np.all(ok):
            idx = tuple(int(i) for i in np.argwhere(~ok)[0])
            raise CheckFailed(f"cutting the input to its first {t} of {total} positions changes {what} of those "
                              f"positions ({_entries(int((~ok).sum()))}): at index {list(idx)} it is "
                              f"{_fmt(short[idx])} with the first {t} alone and {_fmt(full[idx])} with all "
                              f"{total}; the past must not depend on the future", kind="prefix")


def expect_close_all(value: Any, expected: Any, what: str, dtype: Any = np.float64,
                     names: tuple[str, ...] = (), **kw) -> None:
    """expect_close through tuples, lists and dicts of results (e.g. (y, weights)), each part
    named in the message by `names` ("weights from <what>"), else by its index."""
    if isinstance(expected, (tuple, list)):
        got = expect_tuple(value, len(expected), what)
        for i, (g, e) in enumerate(zip(got, expected)):
            part = f"{names[i]} from {what}" if i < len(names) else f"result [{i}] of {what}"
            expect_close_all(g, e, part, dtype, **kw)
    elif isinstance(expected, dict):
        if not isinstance(value, dict) or set(value) != set(expected):
            raise CheckFailed(f"{what} has keys {sorted(value) if isinstance(value, dict) else type(value).__name__}, "
                              f"expected {sorted(expected)}", kind="type")
        for k in expected:
            expect_close_all(value[k], expected[k], f"{what}[{k!r}]", dtype, **kw)
    else:
        expect_close(value, expected, what, dtype, **kw)


def expect_repeatable(impl: "Candidate", calls: list[tuple[Callable[[], Any], Any]], dtype: Any = np.float64,
                      names: tuple[str, ...] = ()) -> None:
    """Calls do not leak into each other. `calls` holds (a function that makes one call of the
    attempt, the reference answer for it), in order: typically a first size, the same shape
    with other values, a larger size than any before, a smaller one again. Each answer is
    compared with its reference as it comes back (or judged by the reference, when that is a
    function `judge(answer, what)` that raises CheckFailed: for a large call whose answer is
    checked in part); after the last call, every earlier answer is fetched again from the
    attempt's process and must be what it was (a buffer reused by a later call shows here)."""
    made = []
    with impl.options(keep=True):
        for n, (make, expected) in enumerate(calls, 1):
            out = make()
            call = impl.grading.calls[-1]
            what = f"call {n} of {len(calls)}, {call.source}"
            if callable(expected):
                expected(out, what)
            else:
                expect_close_all(out, expected, what, dtype, names)
            made.append((n, call, out))
    try:
        last = made[-1][1].id
        for n, call, out in made[:-1]:
            now = impl.fetch(call)
            call.later, call.later_seen, call.later_after = now, True, last
            if value_differs(out, now):
                where = first_difference(out, now, names)
                raise CheckFailed(f"what call {n}, {call.source}, returned was changed by the calls made after "
                                  f"it{where}: a result must stay as it was returned", kind="stale")
    finally:
        impl.forget()


def first_difference(a: Any, b: Any, names: tuple[str, ...] = (), what: str = "the result") -> str:
    """' (the weights at [0, 1] was 0.25 when returned, 0.5 now)' for the first entry that changed."""
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        for i, (x, y) in enumerate(zip(a, b)):
            if value_differs(x, y):
                return first_difference(x, y, (), names[i] if i < len(names) else f"{what}[{i}]")
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and a.size:
        same = (a == b) | (np.isnan(a) & np.isnan(b)) if a.dtype.kind in "fc" else a == b
        idx = tuple(int(i) for i in np.argwhere(~same)[0])
        return f" ({what} at {list(idx)} was {_fmt(float(a[idx]))} when returned, {_fmt(float(b[idx]))} now)"
    return f" ({what})"


def expect_memory_below(impl: Candidate, make_call: Callable[[], Any], t: int, t_k: int | None = None,
                        narrower: Callable[[], Any] | None = None) -> Any:
    """The contract's memory rule for blockwise attention: during `make_call()` (a call with
    `t` queries over `t_k` keys, default `t`), the peak that tracemalloc sees stays below
    t * t_k bytes, one boolean (T_q, T_k) array. An allocation of four bytes a (query, key)
    pair or more fails at once in the attempt's process rather than being computed. Names
    `full_boolean_mask` (under four bytes a pair: a boolean or byte array, with the
    temporaries that build it) or `full_score_matrix` (four or more: float32 or float64
    scores) as the cause, when the peak is that of a (T_q, T_k) array: `narrower` makes the same call with
    half the features, and a peak that shrinks with them is something of T x d kept (the partial outputs
    of every block), said as such and named as no cause."""
    t_k = t if t_k is None else t_k
    budget, cap = t * t_k, 4 * t * t_k
    sizes = f"T={t}" if t == t_k else f"T_q={t}, T_k={t_k}"
    pairs = "T x T" if t == t_k else "T_q x T_k"
    try:
        with impl.unrecorded(), impl.options(memory=True, memory_cap=cap):
            out = make_call()
    except AttemptRaised as exc:
        if not exc.original.is_a(MemoryError):
            raise
        raise CheckFailed(f"{impl.last_call()} asked for more than {cap / 2**20:.0f} MiB beyond what it began with, "
                          f"4 bytes or more for each of the {pairs} (query, key) pairs at {sizes}; the budget is "
                          f"{budget / 2**20:.0f} MiB, one byte a pair (one boolean {pairs} array)",
                          kind="memory", bug="full_score_matrix") from None
    peak = impl.grading.calls[-1].peak or 0
    if peak >= budget:
        per_pair = peak / budget
        named = "full_boolean_mask" if per_pair < 4 else "full_score_matrix"
        source = impl.last_call()
        share = _share(impl, narrower, peak)
        shrinks = "" if share is None else f"; with half the features it is {share:.2g} of that"
        if share is not None and share < 0.8:  # a (T_q, T_k) array does not depend on the features
            named = None
            shrinks += (" (not a (T_q, T_k) array, which has no feature axis: something of T x d kept whole, the "
                        "partial outputs of every block say)")
        failure = CheckFailed(f"the peak memory during {source} was {peak / 2**20:.0f} MiB, {per_pair:.2g} bytes "
                              f"for each of the {pairs} (query, key) pairs at {sizes}{shrinks}; the budget is "
                              f"{budget / 2**20:.0f} MiB, one byte a pair (one boolean {pairs} array)", kind="memory",
                              bug=named)
        if named is None:  # what was measured says what the memory holds (graders.engine.explain)
            failure.observation = (f"the memory {source} holds at its peak shrinks with the number of features "
                                   f"({share:.2g} of it with half of them): it keeps something of T x d for every "
                                   f"block, not a (T_q, T_k) array")
        raise failure
    return out


def _share(impl: Candidate, narrower: Callable[[], Any] | None, peak: int) -> float | None:
    """The peak of the same call with half the features, as a share of `peak`."""
    if narrower is None:
        return None
    try:
        with impl.unrecorded(), impl.options(memory=True):
            narrower()
    except AttemptRaised:
        return None
    return (impl.grading.calls[-1].peak or 0) / peak


def expect_raises(error: type, fn: Recorded, *args, why: str, **kwargs) -> None:
    """The call `fn(*args, **kwargs)` of the attempt raises `error` (the contract names the ValueErrors)."""
    last_call = fn.candidate.last_call
    try:
        fn(*args, **kwargs)
    except AttemptRaised as exc:
        if exc.original.is_a(error):
            return
        raise CheckFailed(f"{last_call()} raised {exc.original.type_name}, expected {error.__name__} ({why})",
                          kind="raises") from None
    raise CheckFailed(f"{last_call()} returned normally, expected {error.__name__} ({why})", kind="raises")


def expect_inputs_unchanged(impl: Candidate) -> None:
    """No call wrote into its arguments or replaced an entry of a list or dict it was given:
    neither in this case nor in any earlier check of the grading (every call's arguments are
    compared after it, whatever their dtype or size)."""
    g = impl.grading
    for c in g.calls:
        if c.mutated:
            raise CheckFailed(f"{c.source} {changed_inputs(c.mutated)}", kind="mutated")
    earlier = next((c for c in g.mutations if c not in g.calls), None)
    if earlier is not None:
        failure = CheckFailed(f"{earlier.source} {changed_inputs(earlier.mutated)} (a call made in the check "
                              f"'{earlier.check}')", kind="mutated")
        failure.calls, failure.earlier = [earlier], earlier
        raise failure
