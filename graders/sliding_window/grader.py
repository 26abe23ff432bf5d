"""Grader for sliding_window_attention(q, k, v, window): causal attention over the last `window` positions."""
import numpy as np

from graders.engine import grammar
from graders.engine.vocabulary import (
    CheckFailed,
    NotImplementedYet,
    check,
    expect_close,
    expect_inputs_unchanged,
    expect_memory_below,
    expect_raises,
    expect_repeatable,
    expect_shape,
    mismatch,
    tolerance,
)

FUNCTION = "sliding_window_attention"
MEMORY = "never builds a full T x T array (tracemalloc peak at T=8192, d=16, window 16)"
PAST_INT16 = "works past 32,767 positions (an int16 position wraps there)"
LOCAL = "changing positions a query cannot see leaves its output unchanged"

CASES = [
    {"lead": (), "T": 1, "d": 1, "window": 1, "seed": 0},
    {"lead": (), "T": 7, "d": 3, "window": 3, "seed": 1},
    {"lead": (2,), "T": 12, "d": 4, "window": 5, "seed": 2},
    {"lead": (2, 3), "T": 9, "d": 2, "window": 2, "seed": 3},
    {"lead": (1,), "T": 10, "d": 5, "window": 10, "seed": 4},
    {"lead": (3,), "T": 6, "d": 2, "window": 11, "seed": 5},
    {"lead": (), "T": 300, "d": 3, "window": 37, "seed": 6},
    {"lead": (2,), "T": 130, "d": 2, "window": 70, "seed": 7},
]
DTYPES = [dict(c, dtype=dt) for c in CASES for dt in ("float64", "float32")]


def band_attention(q, k, v, window, t0=0):
    """softmax(q k^T / sqrt(d)) v over the band, with the whole score matrix, in float64: the yardstick.

    q holds the queries at positions t0, t0 + 1, ... of the sequence whose keys are k.
    """
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    i = t0 + np.arange(q.shape[-2])[:, None]                        # (T_q, 1)
    j = np.arange(k.shape[-2])[None, :]                             # (1, T)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])           # (..., T_q, T)
    s = np.where((j <= i) & (j > i - window), s, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ v                  # (..., T_q, d)


def gathered_attention(q, k, v, window):
    """The same band attention from each query's last `window` keys gathered, (..., T, window, d),
    in float64: O(T * window), the yardstick at lengths where a (T, T) matrix does not fit."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    T = q.shape[-2]
    j = np.arange(T)[:, None] - np.arange(min(window, T))[None, :]    # (T, w): keys i, i - 1, ...
    s = np.einsum("...td,...twd->...tw", q, k[..., np.maximum(j, 0), :]) / np.sqrt(q.shape[-1])
    s = np.where(j >= 0, s, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return np.einsum("...tw,...twd->...td", e / e.sum(axis=-1, keepdims=True), v[..., np.maximum(j, 0), :])


def qkv(new, lead, T, d, dtype="float64", scale=1.0):
    q = new.normal("q", (*lead, T, d), scale=scale, dtype=dtype)
    k = new.normal("k", (*lead, T, d), scale=scale, dtype=dtype)
    v = new.normal("v", (*lead, T, d), dtype=dtype)
    return q, k, v


def _call(impl, q, k, v, window, names=("q", "k", "v")):
    out = getattr(impl, FUNCTION)(q, k, v, window)
    return expect_shape(out, q.shape, f"{FUNCTION}({', '.join(names)}, {window})")


def _g(x):
    return f"{x:.6g}"


# ----------------------------------------------------------------------------- shapes and values

@check("returns (..., T, d)", CASES)
def shape(impl, new, lead, T, d, window):
    _call(impl, *qkv(new, lead, T, d), window)


@check("agrees with the reference", DTYPES)
def agrees(impl, new, ref, lead, T, d, window, dtype):
    q, k, v = qkv(new, lead, T, d, dtype)
    want = ref.sliding_window_attention(*(a.astype(np.float64) for a in (q, k, v)), window)
    expect_close(_call(impl, q, k, v, window), want, f"{FUNCTION}(q, k, v, {window})", dtype)


@check("window >= T is causal attention", [
    {"lead": (), "T": 6, "d": 3, "extra": 0, "seed": 0},
    {"lead": (2,), "T": 9, "d": 2, "extra": 1, "seed": 1},
    {"lead": (), "T": 5, "d": 4, "extra": 10_000, "seed": 2},
    {"lead": (3,), "T": 8, "d": 3, "extra": 0, "dtype": "float32", "seed": 3},
])
def window_covers_everything(impl, new, lead, T, d, extra, dtype="float64"):
    q, k, v = qkv(new, lead, T, d, dtype)
    window = T + extra
    want = band_attention(q, k, v, T)   # first, in case the attempt writes into its inputs
    expect_close(_call(impl, q, k, v, window), want, f"{FUNCTION}(q, k, v, {window})", dtype,
                 against=f"causal attention (T = {T}, so every earlier position is in the window)")


@check("window == 1 returns v", [
    {"lead": (), "T": 5, "d": 3, "seed": 0},
    {"lead": (2, 2), "T": 4, "d": 2, "seed": 1},
    {"lead": (), "T": 1, "d": 4, "dtype": "float32", "seed": 2},
])
def window_one(impl, new, lead, T, d, dtype="float64"):
    q, k, v = qkv(new, lead, T, d, dtype, scale=3.0)
    want = v.copy()
    expect_close(_call(impl, q, k, v, 1), want, f"{FUNCTION}(q, k, v, 1)", dtype,
                 against="v (each position sees only itself, with weight 1)")


@check(LOCAL, [
    {"lead": (), "T": 12, "d": 3, "window": 4, "cut": 5, "seed": 0},
    {"lead": (2,), "T": 10, "d": 2, "window": 3, "cut": 4, "seed": 1},
    {"lead": (), "T": 9, "d": 2, "window": 1, "cut": 3, "seed": 2},
    {"lead": (), "T": 11, "d": 3, "window": 6, "cut": 2, "dtype": "float32", "seed": 3},
], minimum={"T": 2}, valid=lambda c: c["cut"] < c["T"] and c["cut"] - 1 + c["window"] < c["T"])
def locality(impl, new, lead, T, d, window, cut, dtype="float64"):
    q, k, v = qkv(new, lead, T, d, dtype)
    before = _call(impl, q, k, v, window)
    expect_inputs_unchanged(impl)  # else the later calls would see other inputs
    rtol, atol = tolerance(dtype)
    others = [new.normal(f"{n}_other", (*lead, T, d), scale=5.0, dtype=dtype) for n in "qkv"]
    # the past (positions before cut) is invisible from position cut - 1 + window on; the future
    # (positions from cut on) is invisible to every position before cut
    for part, span, keep in (("past", slice(0, cut), slice(cut - 1 + window, T)),
                             ("future", slice(cut, T), slice(0, cut))):
        changed = []
        for name, a, other in zip("qkv", (q, k, v), others):
            value = a.copy()
            value[..., span, :] = other[..., span, :]
            span_s = f"{span.start}:{span.stop}"
            changed.append(new.let(f"{name}_{part}", value,
                                   f"{name}.copy(); {name}_{part}[..., {span_s}, :] = {name}_other[..., {span_s}, :]"))
        after = _call(impl, *changed, window, tuple(f"{n}_{part}" for n in "qkv"))
        found = mismatch(after[..., keep, :], before[..., keep, :], rtol, atol)
        if found:
            n, idx, a, b = found
            i = idx[-2] + keep.start
            where = f"positions 0..{cut - 1}" if part == "past" else f"positions {cut}..{T - 1}"
            raise CheckFailed(f"changing q, k and v at {where} changed the output at position {i} (index "
                              f"{list(idx[:-2]) + [i, idx[-1]]}: {_g(b)} before, {_g(a)} after; "
                              f"{grammar.count(n, 'entry')} {grammar.verb(n, 'differs', 'differ')}); with window = "
                              f"{window}, position {i} sees only positions "
                              f"{max(0, i - window + 1)}..{i}")


# ----------------------------------------------------------------------------- special values

def _band_scores(q, k, window):
    """(lowest, highest) visible score over the last two axes, per leading index, in float64."""
    q, k = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    T = q.shape[-2]
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    seen = (j <= i) & (j > i - window)
    return np.where(seen, s, np.inf).min(axis=(-2, -1)), np.where(seen, s, -np.inf).max(axis=(-2, -1))


def _expect_special(impl, q, k, v, window, dtype, note):
    """The attempt's output against the band attention, with what the inputs were like as a hint."""
    want = band_attention(q, k, v, window)
    expect_close(_call(impl, q, k, v, window), want, f"{FUNCTION}(q, k, v, {window})", dtype, extreme=True, hint=note)


@check("stays finite and exact for scores near 1e3", [
    {"lead": (), "T": 9, "d": 2, "window": 3, "dtype": "float64", "seed": 0},
    {"lead": (2,), "T": 8, "d": 4, "window": 5, "dtype": "float64", "seed": 1},
    {"lead": (), "T": 10, "d": 2, "window": 4, "dtype": "float32", "seed": 2},
], shrink=False)
def large_scores(impl, new, lead, T, d, window, dtype):
    # entries of 30 give scores q.k / sqrt(d) of order 1e3: exp(710) is already inf in float64
    q, k, v = qkv(new, lead, T, d, dtype, scale=30.0)
    low, high = _band_scores(q, k, window)
    _expect_special(impl, q, k, v, window, dtype,
                    f"the visible scores here run from {low.min():.3g} to {high.max():.3g}")


@check("rows whose visible scores are all near -800 get the right answer", [
    {"T": 8, "window": 3, "dtype": "float64", "seed": 0},
    {"T": 6, "window": 6, "dtype": "float32", "seed": 1},
    {"T": 5, "window": 1, "dtype": "float64", "seed": 2},
], shrink=False)
def far_below_zero(impl, new, T, window, dtype):
    # three heads: q = c (1, 0) + noise and k = (1, 0) + noise put head 0's scores near -800,
    # head 1's near 0 and head 2's near +800
    c = np.array([-800.0, 0.5, 800.0]) * np.sqrt(2.0)
    q0 = new.normal("q0", (3, T, 2), scale=0.1, dtype=dtype)
    q = new.let("q", ((q0 + np.array([1.0, 0.0])) * c[:, None, None]).astype(dtype),
                f"((q0 + np.array([1.0, 0.0])) * np.array({c.tolist()})[:, None, None]).astype(np.{dtype})")
    k0 = new.normal("k0", (3, T, 2), scale=0.1, dtype=dtype)
    k = new.let("k", (k0 + np.array([1.0, 0.0])).astype(dtype), f"(k0 + np.array([1.0, 0.0])).astype(np.{dtype})")
    v = new.normal("v", (3, T, 2), dtype=dtype)
    low, high = _band_scores(q, k, window)
    _expect_special(impl, q, k, v, window, dtype,
                    f"the visible scores of head 0 lie between {low[0]:.4g} and {high[0]:.4g}, of head 1 between "
                    f"{low[1]:.3g} and {high[1]:.3g}, of head 2 between {low[2]:.4g} and {high[2]:.4g}")


@check("zero rows of q and k (scores exactly 0) get the right answer", [
    {"lead": (), "T": 7, "d": 3, "window": 3, "dtype": "float64", "seed": 0},
    {"lead": (2,), "T": 6, "d": 2, "window": 4, "dtype": "float32", "seed": 1},
    {"lead": (), "T": 4, "d": 1, "window": 2, "dtype": "float64", "seed": 2},
])
def zero_rows(impl, new, lead, T, d, window, dtype):
    q0, k0, v = (new.normal(n, (*lead, T, d), dtype=dtype) for n in ("q0", "k0", "v"))
    q, k = q0.copy(), k0.copy()
    q[..., ::3, :] = 0
    k[..., 1::3, :] = 0
    q = new.let("q", q, "q0.copy(); q[..., ::3, :] = 0")
    k = new.let("k", k, "k0.copy(); k[..., 1::3, :] = 0")
    _expect_special(impl, q, k, v, window, dtype,
                    "q is 0 at positions 0, 3, ... and k at positions 1, 4, ..., so those rows and columns of the "
                    "scores are exactly 0")


@check("weights down to exp(-30) stay exact, and keys outside the window get exactly 0", [
    {"T": 12, "window": 5}, {"T": 9, "window": 2}, {"T": 16, "window": 9}], shrink=False)
def tiny_weights(impl, new, T, window):
    # d = 1 and q = 1: the score of key j is k_j, 60 at even positions (whose values are 0) and 30
    # at odd ones (whose values are 1), so each output is a sum of weights near exp(-30) ~ 1e-13
    q = new.let("q", np.ones((T, 1)), f"np.ones(({T}, 1))")
    k = new.let("k", np.where(np.arange(T) % 2 == 0, 60.0, 30.0)[:, None],
                f"np.where(np.arange({T}) % 2 == 0, 60.0, 30.0)[:, None]")
    v = new.let("v", (np.arange(T) % 2 == 1).astype(np.float64)[:, None],
                f"(np.arange({T}) % 2 == 1).astype(np.float64)[:, None]")
    want = band_attention(q, k, v, window)
    found = mismatch(_call(impl, q, k, v, window), want, *tolerance(np.float64))
    if found:
        n, (i, _), a, e = found
        raise CheckFailed(f"the output at position {i} is {_g(a)}, expected {_g(e)} "
                          f"({n} of {T} {grammar.verb(n, 'differs', 'differ')}): in this "
                          f"input each row's scores lie 0 or 30 below its largest, so weights of exp(-30) = 9.4e-14 "
                          f"count, and keys outside the window must get weight exactly 0")


# ----------------------------------------------------------------------------- many calls, sizes

# (T, window) of the calls, in order: the same length with other windows, then the first one again
CALLS = [(20, 3), (20, 7), (13, 3), (20, 3), (9, 20)]


def _judge_call(n, q, k, v, window, dtype):
    """judge(answer, what) for expect_repeatable: the answer against the band attention, saying
    when it is what another window, used by an earlier call of the same length, gives."""
    T, rtol, atol = q.shape[-2], *tolerance(dtype)
    want = band_attention(q, k, v, window)

    def judge(answer, what):
        got = expect_shape(answer, want.shape, what)
        found = mismatch(got, want, rtol, atol)
        if found:
            count, idx, a, b = found
            earlier = [w for t, w in CALLS[:n] if t == T and w != window]
            stale = [w for w in earlier if mismatch(got, band_attention(q, k, v, w), rtol, atol) is None]
            note = f"; it is what window {stale[0]}, used by an earlier call of the same length, gives" if stale else ""
            raise CheckFailed(f"{what} {grammar.agrees(what, 'differs', 'differ')} from sliding-window attention "
                              f"with window {window} in {grammar.count(count, 'entry')}: at index {list(idx)} it "
                              f"is {_g(a)}, expected {_g(b)}{note}", kind="close")
    return judge


def _make_call(impl, q, k, v, window):
    def make():
        out = getattr(impl, FUNCTION)(q, k, v, window)
        expect_inputs_unchanged(impl)  # else the comparisons would use other inputs
        return out
    return make


@check("earlier results stay right across later calls with other lengths and windows", [
    {"lead": (2,), "d": 3, "seed": 0},
    {"lead": (), "d": 2, "dtype": "float32", "seed": 1},
], shrink=False)
def state(impl, new, lead, d, dtype="float64"):
    calls = []
    for n, (T, window) in enumerate(CALLS):
        q, k, v = (new.normal(f"{a}{n}", (*lead, T, d), dtype=dtype) for a in "qkv")
        calls.append((_make_call(impl, q, k, v, window), _judge_call(n, q, k, v, window, dtype)))
    expect_repeatable(impl, calls, dtype)


@check("works at lengths past 4096", [
    {"T": 4100, "d": 2, "window": 3, "seed": 0},
    {"T": 4097, "d": 1, "window": 20, "dtype": "float32", "seed": 1},
], shrink=False, slow="calls at T = 4096 and past")
def long(impl, new, ref, T, d, window, dtype="float64"):
    # Unrecorded: replaying every known bug at these lengths (a full T x T one among them) would
    # cost the diagnosis seconds. When the call fails, the same call at T = 4096 tells a limit of
    # 4096 positions from other mistakes, and the check names that cause itself.
    try:
        _expect_long(impl, ref, new, T, d, window, dtype)
    except NotImplementedYet:
        raise
    except CheckFailed as exc:
        try:
            _expect_long(impl, ref, new, 4096, d, window, dtype)
        except CheckFailed:
            raise exc from None
        raise CheckFailed(f"{exc.message}; the same kind of call at T = 4096 gives the right answer", kind=exc.kind,
                          bug="fixed_position_table_4096") from None


def _expect_long(impl, ref, new, T, d, window, dtype):
    names = tuple(f"{a}{T}" for a in "qkv")
    q, k, v = (new.normal(n, (T, d), dtype=dtype) for n in names)
    want = ref.sliding_window_attention(*(a.astype(np.float64) for a in (q, k, v)), window)
    with impl.unrecorded():
        out = _call(impl, q, k, v, window, names)
    expect_close(out, want, f"{FUNCTION}({', '.join(names)}, {window}) at T = {T}", dtype)


# ----------------------------------------------------------------------------- errors, inputs, memory

@check("raises ValueError when window < 1", [{}], shrink=False)
def raises(impl, new):
    q, k, v = qkv(new, (), 4, 2)
    for window in (0, -1, -7):
        expect_raises(ValueError, getattr(impl, FUNCTION), q, k, v, window,
                      why=f"window = {window}: a query must see at least itself")


@check("leaves q, k and v unchanged", [
    {"lead": (2,), "T": 6, "d": 3, "window": 2, "dtype": "float64"},
    {"lead": (), "T": 9, "d": 2, "window": 4, "dtype": "float32"},
])
def inputs_unchanged(impl, new, lead, T, d, window, dtype):
    q, k, v = qkv(new, lead, T, d, dtype, scale=3.0)
    getattr(impl, FUNCTION)(q, k, v, window)
    expect_inputs_unchanged(impl)


@check(MEMORY, [{}], shrink=False, timeout=60, slow="a call at T = 8192")
def memory(impl, new):
    t, d, window = 8192, 16, 16
    q, k, v = qkv(new, (), t, d)
    h = d // 2
    out = expect_memory_below(impl, lambda: impl.sliding_window_attention(q, k, v, window), t,
                              narrower=lambda: impl.sliding_window_attention(q[:, :h].copy(), k[:, :h].copy(),
                                                                             v[:, :h].copy(), window))
    expect_shape(out, (t, d), "the output")
    # the values must still be right (checked on a slice, cheaply)
    rows = slice(t - 3, t)
    want = band_attention(q[rows], k[t - 3 - window:], v[t - 3 - window:], window, t0=window)
    expect_close(np.asarray(out)[rows], want, "the last rows of the output at T=8192")


# After the memory check: an attempt that builds a (T, T) array would run out of memory here,
# and the memory check is what names that mistake.
@check(PAST_INT16, [{"T": 32_769, "d": 1, "window": 2, "seed": 0}], shrink=False, timeout=60,
       slow="a call at T = 32,769")
def past_int16(impl, new, T, d, window):
    q, k, v = qkv(new, (), T, d)
    want = gathered_attention(q, k, v, window)
    with impl.unrecorded():   # no known mistake to replay at this length
        out = _call(impl, q, k, v, window)
    expect_close(out, want, f"{FUNCTION}(q, k, v, {window}) at T = {T}", against="sliding-window attention")
