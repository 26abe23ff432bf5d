"""Grader for single_head_attention(x, W_q, W_k, W_v, causal=True) -> (out, weights).

Cases give T, d_model and d_k, so a shrunk failing case is always a valid call. The first
call of a grading is causal with T = 5, so that an attempt that keeps its first mask shows
it on later calls of other sizes instead of looking like one that never masks.
"""
import numpy as np

from graders.engine import grammar
from graders.engine.vocabulary import (
    CheckFailed,
    check,
    expect_causal,
    expect_close,
    expect_finite,
    expect_inputs_unchanged,
    expect_prefix_invariant,
    expect_repeatable,
    expect_rows_sum_to_one,
    expect_shape,
    expect_tuple,
)

SHAPES = "returns (out, weights) shaped (T, d_k) and (T, T)"
AGREES = "agrees with the reference"
SCALE = "the scores are divided by sqrt(d_k), the width of q and k"
ROWS = "every row of the weights sums to 1"
CAUSAL = "nothing attends to the future (causal=True, the default)"
PAST = "each position still sees itself and its past (the diagonal is not masked)"
OPEN = "with causal=False every position attends to every position"
PREFIX = "truncating x leaves the earlier outputs unchanged (causal=True)"
SHUFFLE = "shuffling the rows of x shuffles out and the weights the same way (causal=False)"
HUGE = "stays finite and correct when the scores reach 1e4 (float32: past exp's limit of 89)"
ZEROS = "rows of x that are exactly zero (scores exactly 0) are attended to like any other"
TINY = "weights far below a row's largest (exp(-20) to exp(-60), float64) are exact, not rounded up"
UNCHANGED = "leaves x and the weight matrices unchanged"
LONG_CHECK = "works past 1024 positions (a mask or buffer of a fixed size would not)"


# ----------------------------------------------------------------------------- helpers

def make(new, T, d_model, d_k, dtype="float64", scale=1.0, suffix=""):
    """x and the three projections; W entries of variance 1/d_model keep the scores near unit size."""
    x = new.normal(f"x{suffix}", (T, d_model), scale=scale, dtype=dtype)
    w_scale = float(1 / np.sqrt(d_model))
    W_q, W_k, W_v = (new.normal(n + suffix, (d_model, d_k), scale=w_scale, dtype=dtype) for n in ("W_q", "W_k", "W_v"))
    return x, W_q, W_k, W_v


def reference(ref, x, W_q, W_k, W_v, causal=True):
    """The reference in float64 on the same (possibly float32) values."""
    return ref.single_head_attention(*(np.asarray(a, dtype=np.float64) for a in (x, W_q, W_k, W_v)), causal=causal)


def _result(result, T, d_k, source):
    """(out, weights) of one call, once they have the right shapes."""
    out, weights = expect_tuple(result, 2, source)
    if T != d_k and np.shape(out) == (T, T) and np.shape(weights) == (T, d_k):
        raise CheckFailed(f"{source} returned (weights, out): return (out, weights), in that order", kind="shape")
    out = expect_shape(out, (T, d_k), f"out, the first result of {source},")
    weights = expect_shape(weights, (T, T), f"weights, the second result of {source},")
    return out, weights


def attend(impl, x, W_q, W_k, W_v, **flag):
    """Call the attempt; return (out, weights, how the call was written)."""
    result = impl.single_head_attention(x, W_q, W_k, W_v, **flag)
    source = impl.last_call()
    return (*_result(result, x.shape[0], W_q.shape[1], source), source)


def expect_agrees(got, want, source, dtype="float64", extreme=False):
    """The attempt's weights, then its out, against the reference's."""
    expect_close(got[1], want[1], f"the weight matrix of {source}", dtype, extreme=extreme)
    expect_close(got[0], want[0], f"out of {source}", dtype, extreme=extreme)


def _fmt(v):
    return f"{float(v):.6g}"


def nan_row(weights):
    """The first row that holds a NaN or inf, else None."""
    bad = ~np.isfinite(weights.astype(np.float64))
    return int(np.argwhere(bad)[0][0]) if np.any(bad) else None


def implied_scale(weights, raw, visible):
    """The c for which weights == softmax(raw / c) over the visible entries, or None if there is none."""
    w = weights.astype(np.float64)
    if not np.all(np.isfinite(w)) or np.any(w[visible] <= 0):
        return None
    with np.errstate(divide="ignore"):
        logw = np.log(w)
    num = den = 0.0
    pairs = []
    for i in range(raw.shape[0]):
        seen = visible[i]
        if seen.sum() < 2:
            continue
        a = logw[i, seen] - logw[i, seen].mean()
        b = raw[i, seen] - raw[i, seen].mean()
        num, den = num + a @ b, den + b @ b
        pairs.append((a, b))
    if not pairs or den == 0 or num <= 0:
        return None
    slope = num / den
    misfit = max(np.abs(a - slope * b).max() for a, b in pairs)
    largest = max(np.abs(a).max() for a, _ in pairs)
    return 1 / slope if misfit <= 1e-6 * (1 + largest) else None


# ----------------------------------------------------------------------------- checks

@check(SHAPES, [
    {"T": 5, "d_model": 8, "d_k": 3, "causal": True, "seed": 1},
    {"T": 5, "d_model": 8, "d_k": 3, "causal": False, "seed": 2},
    {"T": 1, "d_model": 4, "d_k": 3, "causal": True},
    {"T": 2, "d_model": 3, "d_k": 5, "causal": True, "seed": 3},
    {"T": 7, "d_model": 6, "d_k": 6, "causal": False, "seed": 4},
])
def shapes(impl, new, T, d_model, d_k, causal):
    x, W_q, W_k, W_v = make(new, T, d_model, d_k)
    attend(impl, x, W_q, W_k, W_v, causal=causal)


@check(AGREES, [
    {"T": 1, "d_model": 4, "d_k": 2, "causal": True, "dtype": "float64"},
    {"T": 3, "d_model": 5, "d_k": 2, "causal": True, "dtype": "float64", "seed": 1},
    {"T": 6, "d_model": 8, "d_k": 8, "causal": False, "dtype": "float64", "seed": 2},
    {"T": 7, "d_model": 6, "d_k": 3, "causal": True, "dtype": "float32", "seed": 3},
    {"T": 4, "d_model": 3, "d_k": 5, "causal": False, "dtype": "float32", "seed": 4},
    {"T": 9, "d_model": 7, "d_k": 4, "causal": True, "dtype": "float64", "seed": 5},
    {"T": 5, "d_model": 4, "d_k": 4, "causal": False, "dtype": "float64", "seed": 6},
])
def agrees(impl, new, ref, T, d_model, d_k, causal, dtype):
    x, W_q, W_k, W_v = make(new, T, d_model, d_k, dtype, scale=1.5)
    want = reference(ref, x, W_q, W_k, W_v, causal)
    out, weights, source = attend(impl, x, W_q, W_k, W_v, causal=causal)
    expect_agrees((out, weights), want, source, dtype)


def _scales_differ(case):
    """1, sqrt(d_model), d_k, d_model, sqrt(d_k) and sqrt(T) all distinct, so a wrong scale can be named."""
    T, d_model, d_k = case["T"], case["d_model"], case["d_k"]
    return (T >= 2 and min(d_model, d_k) >= 2 and d_model != d_k and d_k ** 2 != d_model != d_k ** 0.5
            and T not in (d_model, d_k, d_k ** 2, d_model ** 2))


@check(SCALE, [
    {"T": 5, "d_model": 9, "d_k": 4, "causal": False},
    {"T": 6, "d_model": 8, "d_k": 2, "causal": True, "seed": 1},
    {"T": 4, "d_model": 3, "d_k": 7, "causal": False, "seed": 2},
], valid=_scales_differ)
def scale(impl, new, ref, T, d_model, d_k, causal):
    x, W_q, W_k, W_v = make(new, T, d_model, d_k, scale=1.5)
    want = reference(ref, x, W_q, W_k, W_v, causal)
    raw = (x @ W_q) @ (x @ W_k).T                                  # (T, T), not scaled yet
    out, weights, source = attend(impl, x, W_q, W_k, W_v, causal=causal)
    visible = ~np.triu(np.ones((T, T), dtype=bool), k=1) if causal else np.ones((T, T), dtype=bool)
    c = implied_scale(weights, raw, visible)
    right = np.sqrt(d_k)
    if c is not None and not np.isclose(c, right, rtol=1e-4):
        # the case's sizes make these values distinct (see _scales_differ), so a match names the scale
        known = [(1.0, "no scaling at all"), (np.sqrt(d_model), f"sqrt(d_model) = sqrt({d_model})"),
                 (float(d_k), "d_k itself, not its square root"), (float(d_model), "d_model"),
                 (np.sqrt(T), f"sqrt(T) = sqrt({T}), the number of positions")]
        named = next((f" (that is {text})" for value, text in known if np.isclose(c, value, rtol=1e-4)), "")
        raise CheckFailed(
            f"{source} divides the scores by {c:.4g}{named}; divide by sqrt(d_k) = "
            f"sqrt({d_k}) = {right:.4g}, where d_k = W_q.shape[1] is the width of q and k (d_model = {d_model})")
    expect_agrees((out, weights), want, source)


@check(ROWS, [
    {"T": 1, "d_model": 3, "d_k": 2, "causal": True},
    {"T": 5, "d_model": 6, "d_k": 3, "causal": True, "seed": 1},
    {"T": 6, "d_model": 4, "d_k": 5, "causal": False, "seed": 2},
    {"T": 7, "d_model": 5, "d_k": 3, "causal": True, "dtype": "float32", "seed": 3},
])
def rows_sum_to_one(impl, new, T, d_model, d_k, causal, dtype="float64"):
    x, W_q, W_k, W_v = make(new, T, d_model, d_k, dtype, scale=1.5)
    _, weights, source = attend(impl, x, W_q, W_k, W_v, causal=causal)
    expect_rows_sum_to_one(weights, f"the weights of {source}")


@check(CAUSAL, [
    {"T": 5, "d_model": 6, "d_k": 4, "seed": 1},
    {"T": 8, "d_model": 5, "d_k": 3, "dtype": "float32", "seed": 2},
    {"T": 2, "d_model": 3, "d_k": 2},
], minimum={"T": 5})  # a failure is drawn as a grid: five positions or more read as a pattern
def causal(impl, new, T, d_model, d_k, dtype="float64"):
    x, W_q, W_k, W_v = make(new, T, d_model, d_k, dtype, scale=1.5)
    _, weights, source = attend(impl, x, W_q, W_k, W_v)    # the default must be causal
    expect_causal(weights, what=f"the weights of {source}")


@check(PAST, [
    {"T": 4, "d_model": 5, "d_k": 3},
    {"T": 6, "d_model": 4, "d_k": 4, "dtype": "float32", "seed": 1},
])
def sees_past(impl, new, T, d_model, d_k, dtype="float64"):
    x, W_q, W_k, W_v = make(new, T, d_model, d_k, dtype)
    _, weights, source = attend(impl, x, W_q, W_k, W_v, causal=True)
    row = nan_row(weights)
    if row is not None:
        raise CheckFailed(f"row {row} of the weights of {source} holds "
                          f"{weights[row][~np.isfinite(weights[row])][0]}", kind="finite")
    for i in range(T):
        for j in range(i + 1):
            if not weights[i, j] > 0:
                who = "itself" if i == j else f"the earlier position {j}"
                raise CheckFailed(f"{source}: position {i} gives weight {_fmt(weights[i, j])} to {who}; only "
                                  f"later positions (j > {i}) are blocked")


@check(OPEN, [
    {"T": 4, "d_model": 5, "d_k": 3},
    {"T": 7, "d_model": 3, "d_k": 4, "dtype": "float32", "seed": 1},
], minimum={"T": 2})
def not_causal(impl, new, T, d_model, d_k, dtype="float64"):
    x, W_q, W_k, W_v = make(new, T, d_model, d_k, dtype)
    _, weights, source = attend(impl, x, W_q, W_k, W_v, causal=False)
    row = nan_row(weights)
    if row is not None:
        raise CheckFailed(f"row {row} of the weights of {source} holds "
                          f"{weights[row][~np.isfinite(weights[row])][0]}", kind="finite")
    blocked = np.argwhere(~(weights > 0))
    if len(blocked):
        i, j = (int(v) for v in blocked[0])
        raise CheckFailed(f"{source}: position {i} gives weight {_fmt(weights[i, j])} to position {j}; "
                          f"with causal=False nothing is blocked ({grammar.count(len(blocked), 'weight')} of {T * T} "
                          f"{grammar.verb(len(blocked), 'is', 'are')} 0)")


@check(PREFIX, [
    {"T_short": 3, "extra": 2, "d_model": 5, "d_k": 3},
    {"T_short": 1, "extra": 4, "d_model": 4, "d_k": 4, "seed": 1},
    {"T_short": 4, "extra": 3, "d_model": 6, "d_k": 2, "seed": 2},
])
def prefix(impl, new, T_short, extra, d_model, d_k):
    T = T_short + extra
    x, W_q, W_k, W_v = make(new, T, d_model, d_k, scale=1.5)
    x_short = new.let("x_short", x[:T_short], f"x[:{T_short}]")
    out, weights, source = attend(impl, x, W_q, W_k, W_v, causal=True)
    out_short, weights_short, source_short = attend(impl, x_short, W_q, W_k, W_v, causal=True)
    for value, what in ((weights, f"the weights of {source}"), (out, f"out of {source}"),
                        (weights_short, f"the weights of {source_short}"), (out_short, f"out of {source_short}")):
        expect_finite(value, what)
    expect_prefix_invariant([("the weights", weights_short, weights[:T_short, :T_short]),
                             ("out", out_short, out[:T_short])], T_short, T)


@check(SHUFFLE, [
    {"T": 5, "d_model": 4, "d_k": 3},
    {"T": 6, "d_model": 6, "d_k": 2, "seed": 1},
], minimum={"T": 2})
def shuffle(impl, new, T, d_model, d_k):
    x, W_q, W_k, W_v = make(new, T, d_model, d_k, scale=1.5)
    order = new.array("order", new.rng.permutation(T))
    x_shuffled = new.let("x_shuffled", x[order], "x[order]")
    out, weights, source = attend(impl, x, W_q, W_k, W_v, causal=False)
    out_s, weights_s, source_s = attend(impl, x_shuffled, W_q, W_k, W_v, causal=False)
    for value, what in ((weights, f"the weights of {source}"), (out, f"out of {source}"),
                        (weights_s, f"the weights of {source_s}"), (out_s, f"out of {source_s}")):
        expect_finite(value, what)
    expect_close(weights_s, weights[np.ix_(order, order)], f"the weights of {source_s}",
                 against=f"the weights of {source} with rows and columns taken in that order, "
                         f"weights[order][:, order],")
    expect_close(out_s, out[order], f"out of {source_s}", against=f"out[order] of {source}")


@check(HUGE, [
    {"T": 5, "d_model": 6, "d_k": 4, "causal": True, "scale": 100.0, "dtype": "float64"},
    {"T": 4, "d_model": 5, "d_k": 4, "causal": True, "scale": 100.0, "dtype": "float64", "repel": True, "seed": 1},
    {"T": 5, "d_model": 4, "d_k": 3, "causal": False, "scale": 100.0, "dtype": "float32", "seed": 2},
    {"T": 4, "d_model": 4, "d_k": 4, "causal": True, "scale": 15.0, "dtype": "float32", "seed": 3},
], shrink=False)
def huge_scores(impl, new, ref, T, d_model, d_k, causal, scale, dtype, repel=False):
    x, W_q, W_k, W_v = make(new, T, d_model, d_k, dtype, scale=scale)
    if repel:
        # every key points away from its own query: each position's score with itself is about -2e4
        W_k = new.let("W_k", -W_q, "-W_q")
    want = reference(ref, x, W_q, W_k, W_v, causal)
    out, weights, source = attend(impl, x, W_q, W_k, W_v, causal=causal)
    x64, Wq64, Wk64 = (a.astype(np.float64) for a in (x, W_q, W_k))
    top = float(np.max(np.abs((x64 @ Wq64) @ (x64 @ Wk64).T / np.sqrt(d_k))))
    what = f"{source}, with scores up to {top:.3g} in magnitude,"
    expect_finite(weights, f"the weights of {what}")
    expect_finite(out, f"out of {what}")
    if causal:
        expect_causal(weights, what=f"the weights of {what}")
    expect_agrees((out, weights), want, what, dtype, extreme=True)


@check(ZEROS, [
    {"T": 4, "d_model": 5, "d_k": 3, "causal": True},
    {"T": 5, "d_model": 3, "d_k": 4, "causal": False, "seed": 1},
    {"T": 6, "d_model": 4, "d_k": 2, "causal": True, "dtype": "float32", "seed": 2},
], minimum={"T": 3}, shrink=False)
def zero_rows(impl, new, ref, T, d_model, d_k, causal, dtype="float64"):
    x, W_q, W_k, W_v = make(new, T, d_model, d_k, dtype, scale=1.5)
    padded = x.copy()
    padded[[0, T // 2]] = 0
    x = new.let("x", padded, f"x.copy(); x[[0, {T // 2}]] = 0  # two padding rows")
    want = reference(ref, x, W_q, W_k, W_v, causal)
    out, weights, source = attend(impl, x, W_q, W_k, W_v, causal=causal)
    expect_agrees((out, weights), want, f"{source}, where rows 0 and {T // 2} of x are zero,", dtype)


@check(TINY, shrink=False)
def tiny_weights(impl, new, ref):
    # d_model = d_k = 2 with W_q = sqrt(2) I and W_k = I, so the score of query i with key j is
    # x[i] . x[j]: query 0 (x[0] = (1, 0)) scores the keys 1, -5, -21, -25, -35, -60
    x = new.array("x", [[1.0, 0.0], [-5.0, 0.0], [-21.0, 0.0], [-25.0, 0.0], [-35.0, 0.0], [-60.0, 0.0]])
    W_q = new.let("W_q", np.sqrt(2.0) * np.eye(2), "np.sqrt(2.0) * np.eye(2)")
    W_k = new.let("W_k", np.eye(2), "np.eye(2)")
    W_v = new.array("W_v", [[0.5, -1.0], [2.0, 0.25]])
    want = reference(ref, x, W_q, W_k, W_v, causal=False)
    out, weights, source = attend(impl, x, W_q, W_k, W_v, causal=False)
    expect_agrees((out, weights), want, source)


@check(UNCHANGED, [
    {"T": 4, "d_model": 5, "d_k": 3, "causal": True},
    {"T": 3, "d_model": 3, "d_k": 4, "causal": False, "dtype": "float32", "seed": 1},
])
def inputs_unchanged(impl, new, T, d_model, d_k, causal, dtype="float64"):
    x, W_q, W_k, W_v = make(new, T, d_model, d_k, dtype)
    impl.single_head_attention(x, W_q, W_k, W_v, causal=causal)
    expect_inputs_unchanged(impl)


# T past the 1024 positions of a precomputed mask, judged on its first and last rows, after a
# shorter call (a mask or buffer sized by the first call shows too)
LONG = (1025, 3, 2)


def _judge_rows(ref, x, W_q, W_k, W_v, rows=(0, 1, -2, -1)):
    """A judge of the attempt's (out, weights) for a long x on a few rows only, in float64."""
    x, W_q, W_k, W_v = (np.asarray(a, dtype=np.float64) for a in (x, W_q, W_k, W_v))
    T, d_k = x.shape[0], W_q.shape[1]
    picked = np.arange(T)[list(rows)]                                  # (r,) the rows judged
    s = (x[picked] @ W_q) @ (x @ W_k).T / np.sqrt(d_k)                 # (r, T)
    s[np.arange(T)[None, :] > picked[:, None]] = -np.inf               # causal
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    w /= w.sum(axis=-1, keepdims=True)                                 # (r, T)
    out = w @ (x @ W_v)                                                # (r, d_k)

    def judge(result, what):
        got_out, got_w = _result(result, T, d_k, what)
        expect_close(got_w[picked], w, f"rows {list(picked)} of the weights of {what}")
        expect_close(got_out[picked], out, f"rows {list(picked)} of out of {what}")
    return judge


# an answer that loops over positions in Python takes seconds at T = 1025: correct, so given time
@check(LONG_CHECK, [{"seed": 0}], shrink=False, timeout=20, slow="a call at T = 1025")
def long_sequence(impl, new, ref):
    short = make(new, 4, 5, 3, scale=1.5, suffix="_short")
    arrays = make(new, *LONG, scale=1.5)
    expect_repeatable(impl, [(lambda: impl.single_head_attention(*short), reference(ref, *short)),
                             (lambda: impl.single_head_attention(*arrays), _judge_rows(ref, *arrays))],
                      names=("out", "the weights"))
