"""Grader for single_head_attention(x, W_q, W_k, W_v, causal=True) -> (out, weights)."""
import numpy as np

from graders.checks import (LOG, CheckFailed, check, expect_close, expect_finite, expect_inputs_unchanged,
                            expect_rows_sum_to_one, expect_shape, expect_tuple)

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
UNCHANGED = "leaves x and the weight matrices unchanged"


# ----------------------------------------------------------------------------- helpers

def make(new, T, d_model, d_k, dtype="float64", scale=1.0):
    """x and the three projections; W entries of variance 1/d_model keep the scores near unit size."""
    x = new.normal("x", (T, d_model), scale=scale, dtype=dtype)
    w_scale = float(1 / np.sqrt(d_model))
    W_q, W_k, W_v = (new.normal(n, (d_model, d_k), scale=w_scale, dtype=dtype) for n in ("W_q", "W_k", "W_v"))
    return x, W_q, W_k, W_v


def reference(ref, x, W_q, W_k, W_v, causal=True):
    """The reference in float64 on the same values (computed before the attempt sees the inputs)."""
    return ref.single_head_attention(*(a.astype(np.float64) for a in (x, W_q, W_k, W_v)), causal=causal)


def attend(impl, x, W_q, W_k, W_v, **flag):
    """Call the attempt; return (out, weights) once they have the right shapes."""
    T, d_k = x.shape[0], W_q.shape[1]
    result = impl.single_head_attention(x, W_q, W_k, W_v, **flag)
    source = LOG.calls[-1].source
    out, weights = expect_tuple(result, 2, source)
    out_shape, w_shape = np.shape(out), np.shape(weights)
    if T != d_k and out_shape == (T, T) and w_shape == (T, d_k):
        raise CheckFailed(f"{source} returned (weights, out): return (out, weights), in that order", kind="shape")
    out = expect_shape(out, (T, d_k), f"out, the first result of {source},")
    weights = expect_shape(weights, (T, T), f"weights, the second result of {source},")
    return out, weights


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


def expect_same(got, want, what, why):
    """Two results of the attempt that must agree (float64 inputs)."""
    got, want = got.astype(np.float64), want.astype(np.float64)
    ok = np.isclose(got, want, rtol=1e-6, atol=1e-9, equal_nan=False)
    if not np.all(ok):
        idx = tuple(int(i) for i in np.argwhere(~ok)[0])
        raise CheckFailed(f"{what} at index {list(idx)} is {_fmt(got[idx])}, expected {_fmt(want[idx])}: {why}")


# ----------------------------------------------------------------------------- checks

@check(SHAPES, [
    {"T": 1, "d_model": 4, "d_k": 3, "causal": True},
    {"T": 5, "d_model": 8, "d_k": 3, "causal": True, "seed": 1},
    {"T": 5, "d_model": 8, "d_k": 3, "causal": False, "seed": 2},
    {"T": 2, "d_model": 3, "d_k": 5, "causal": True, "seed": 3},
    {"T": 7, "d_model": 6, "d_k": 6, "causal": False, "seed": 4},
])
def test_shapes(impl, new, T, d_model, d_k, causal):
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
def test_agrees(impl, new, ref, T, d_model, d_k, causal, dtype):
    x, W_q, W_k, W_v = make(new, T, d_model, d_k, dtype, scale=1.5)
    want_out, want_w = reference(ref, x, W_q, W_k, W_v, causal)
    out, weights = attend(impl, x, W_q, W_k, W_v, causal=causal)
    call = LOG.calls[-1].source
    expect_close(weights, want_w, f"weights of {call}", dtype)
    expect_close(out, want_out, f"out of {call}", dtype)


def _scales_differ(case):
    """1, sqrt(d_model), d_k, d_model and sqrt(d_k) all distinct, so a wrong scale can be named."""
    d_model, d_k = case["d_model"], case["d_k"]
    return case["T"] >= 2 and min(d_model, d_k) >= 2 and d_model != d_k and d_k ** 2 != d_model != d_k ** 0.5


@check(SCALE, [
    {"T": 5, "d_model": 9, "d_k": 4, "causal": False},
    {"T": 6, "d_model": 8, "d_k": 2, "causal": True, "seed": 1},
    {"T": 4, "d_model": 3, "d_k": 7, "causal": False, "seed": 2},
], valid=_scales_differ)
def test_scale(impl, new, ref, T, d_model, d_k, causal):
    x, W_q, W_k, W_v = make(new, T, d_model, d_k, scale=1.5)
    want_out, want_w = reference(ref, x, W_q, W_k, W_v, causal)
    raw = (x @ W_q) @ (x @ W_k).T                                  # (T, T), not scaled yet
    out, weights = attend(impl, x, W_q, W_k, W_v, causal=causal)
    visible = ~np.triu(np.ones((T, T), dtype=bool), k=1) if causal else np.ones((T, T), dtype=bool)
    c = implied_scale(weights, raw, visible)
    right = np.sqrt(d_k)
    if c is not None and not np.isclose(c, right, rtol=1e-4):
        known = [(1.0, "no scaling at all"), (np.sqrt(d_model), f"sqrt(d_model) = sqrt({d_model})"),
                 (float(d_k), "d_k itself, not its square root"), (float(d_model), "d_model")]
        named = next((f" (that is {text})" for value, text in known if np.isclose(c, value, rtol=1e-4)), "")
        raise CheckFailed(
            f"{LOG.calls[-1].source} divides the scores by {c:.4g}{named}; divide by sqrt(d_k) = "
            f"sqrt({d_k}) = {right:.4g}, where d_k = W_q.shape[1] is the width of q and k (d_model = {d_model})")
    call = LOG.calls[-1].source
    expect_close(weights, want_w, f"weights of {call}")
    expect_close(out, want_out, f"out of {call}")


@check(ROWS, [
    {"T": 1, "d_model": 3, "d_k": 2, "causal": True},
    {"T": 5, "d_model": 6, "d_k": 3, "causal": True, "seed": 1},
    {"T": 6, "d_model": 4, "d_k": 5, "causal": False, "seed": 2},
    {"T": 7, "d_model": 5, "d_k": 3, "causal": True, "dtype": "float32", "seed": 3},
])
def test_rows_sum_to_one(impl, new, T, d_model, d_k, causal, dtype="float64"):
    x, W_q, W_k, W_v = make(new, T, d_model, d_k, dtype, scale=1.5)
    _, weights = attend(impl, x, W_q, W_k, W_v, causal=causal)
    expect_rows_sum_to_one(weights, f"the weights of {LOG.calls[-1].source}")


@check(CAUSAL, [
    {"T": 2, "d_model": 3, "d_k": 2},
    {"T": 5, "d_model": 6, "d_k": 4, "seed": 1},
    {"T": 8, "d_model": 5, "d_k": 3, "dtype": "float32", "seed": 2},
], minimum={"T": 2})
def test_causal(impl, new, T, d_model, d_k, dtype="float64"):
    x, W_q, W_k, W_v = make(new, T, d_model, d_k, dtype, scale=1.5)
    _, weights = attend(impl, x, W_q, W_k, W_v)    # the default must be causal
    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    leak = future & (weights != 0)
    if np.any(leak):
        i, j = (int(v) for v in np.argwhere(leak)[0])
        raise CheckFailed(f"{LOG.calls[-1].source}: position {i} attends to position {j} "
                          f"(weight {_fmt(weights[i, j])}); the future must get weight exactly 0, "
                          f"so set its scores to -inf before the softmax")


@check(PAST, [
    {"T": 4, "d_model": 5, "d_k": 3},
    {"T": 6, "d_model": 4, "d_k": 4, "dtype": "float32", "seed": 1},
])
def test_sees_past(impl, new, T, d_model, d_k, dtype="float64"):
    x, W_q, W_k, W_v = make(new, T, d_model, d_k, dtype)
    _, weights = attend(impl, x, W_q, W_k, W_v, causal=True)
    call = LOG.calls[-1].source
    row = nan_row(weights)
    if row is not None:
        raise CheckFailed(f"row {row} of the weights of {call} holds {weights[row][~np.isfinite(weights[row])][0]}: "
                          f"if the mask also blocks the diagonal, position 0 has nothing left to attend to "
                          f"(np.triu(..., k=1) blocks only j > i)")
    for i in range(T):
        for j in range(i + 1):
            if not weights[i, j] > 0:
                who = "itself" if i == j else f"the earlier position {j}"
                raise CheckFailed(f"{call}: position {i} gives weight {_fmt(weights[i, j])} to {who}; "
                                  f"the mask must block only the future (j > i), never the diagonal or the past")


@check(OPEN, [
    {"T": 4, "d_model": 5, "d_k": 3},
    {"T": 7, "d_model": 3, "d_k": 4, "dtype": "float32", "seed": 1},
], minimum={"T": 2})
def test_not_causal(impl, new, T, d_model, d_k, dtype="float64"):
    x, W_q, W_k, W_v = make(new, T, d_model, d_k, dtype)
    _, weights = attend(impl, x, W_q, W_k, W_v, causal=False)
    call = LOG.calls[-1].source
    row = nan_row(weights)
    if row is not None:
        raise CheckFailed(f"row {row} of the weights of {call} is not finite "
                          f"({weights[row][~np.isfinite(weights[row])][0]})")
    blocked = np.argwhere(~(weights > 0))
    if len(blocked):
        i, j = (int(v) for v in blocked[0])
        raise CheckFailed(f"{call}: position {i} gives weight {_fmt(weights[i, j])} to position {j}; "
                          f"with causal=False nothing is masked, so apply the mask only when causal is True")


@check(PREFIX, [
    {"T_short": 3, "extra": 2, "d_model": 5, "d_k": 3},
    {"T_short": 1, "extra": 4, "d_model": 4, "d_k": 4, "seed": 1},
    {"T_short": 4, "extra": 3, "d_model": 6, "d_k": 2, "seed": 2},
])
def test_prefix(impl, new, T_short, extra, d_model, d_k):
    T = T_short + extra
    x, W_q, W_k, W_v = make(new, T, d_model, d_k, scale=1.5)
    x_short = new.let("x_short", x[:T_short], f"x[:{T_short}]")
    out, weights = attend(impl, x, W_q, W_k, W_v, causal=True)
    out_short, weights_short = attend(impl, x_short, W_q, W_k, W_v, causal=True)
    for value, what in ((weights, "the weight matrix for x"), (out, "out for x"),
                        (weights_short, "the weight matrix for x_short"), (out_short, "out for x_short")):
        expect_finite(value, what)
    early = "position 0" if T_short == 1 else f"positions 0 to {T_short - 1}"
    added = "1 more row was" if extra == 1 else f"{extra} more rows were"
    why = (f"{early} changed when {added} appended to x, "
           f"so {'it sees' if T_short == 1 else 'they see'} what comes after")
    expect_same(weights[:T_short, :T_short], weights_short,
                f"weights[:{T_short}, :{T_short}] of the full x, compared with the weights of x[:{T_short}],", why)
    expect_same(out[:T_short], out_short, f"out[:{T_short}] of the full x, compared with out of x[:{T_short}],", why)


@check(SHUFFLE, [
    {"T": 5, "d_model": 4, "d_k": 3},
    {"T": 6, "d_model": 6, "d_k": 2, "seed": 1},
], minimum={"T": 2})
def test_shuffle(impl, new, T, d_model, d_k):
    x, W_q, W_k, W_v = make(new, T, d_model, d_k, scale=1.5)
    order = new.array("order", new.rng.permutation(T))
    x_shuffled = new.let("x_shuffled", x[order], "x[order]")
    out, weights = attend(impl, x, W_q, W_k, W_v, causal=False)
    out_s, weights_s = attend(impl, x_shuffled, W_q, W_k, W_v, causal=False)
    for value, what in ((weights, "the weight matrix for x"), (out, "out for x"),
                        (weights_s, "the weight matrix for x[order]"), (out_s, "out for x[order]")):
        expect_finite(value, what)
    why = ("attention without a mask treats its input as a set: reordering the rows of x must "
           "reorder the results the same way and change nothing else")
    expect_same(weights_s, weights[np.ix_(order, order)],
                "the weights of x[order], compared with weights[order][:, order],", why)
    expect_same(out_s, out[order], "out of x[order], compared with out[order],", why)


@check(HUGE, [
    {"T": 5, "d_model": 6, "d_k": 4, "causal": True, "scale": 100.0, "dtype": "float64"},
    {"T": 4, "d_model": 5, "d_k": 4, "causal": True, "scale": 100.0, "dtype": "float64", "repel": True, "seed": 1},
    {"T": 5, "d_model": 4, "d_k": 3, "causal": False, "scale": 100.0, "dtype": "float32", "seed": 2},
    {"T": 4, "d_model": 4, "d_k": 4, "causal": True, "scale": 15.0, "dtype": "float32", "seed": 3},
], shrink=False)
def test_huge_scores(impl, new, ref, T, d_model, d_k, causal, scale, dtype, repel=False):
    x, W_q, W_k, W_v = make(new, T, d_model, d_k, dtype, scale=scale)
    if repel:
        # every key points away from its own query: each position's score with itself is about -2e4
        W_k = new.let("W_k", -W_q, "-W_q")
    want_out, want_w = reference(ref, x, W_q, W_k, W_v, causal)
    out, weights = attend(impl, x, W_q, W_k, W_v, causal=causal)
    call = LOG.calls[-1].source
    expect_finite(weights, f"the weight matrix of {call}")
    expect_finite(out, f"out of {call}")
    if causal:
        leak = np.triu(np.ones((T, T), dtype=bool), k=1) & (weights != 0)
        if np.any(leak):
            i, j = (int(v) for v in np.argwhere(leak)[0])
            raise CheckFailed(f"{call}: position {i} attends to position {j} (weight {_fmt(weights[i, j])}) "
                              f"once the scores reach 1e4; the future must get exactly 0 whatever the real "
                              f"scores are, so fill it with -inf, not a finite number they can fall below")
    expect_close(weights, want_w, f"weights of {call}", dtype, extreme=True)
    expect_close(out, want_out, f"out of {call}", dtype, extreme=True)


@check(UNCHANGED, [
    {"T": 4, "d_model": 5, "d_k": 3, "causal": True},
    {"T": 3, "d_model": 3, "d_k": 4, "causal": False, "dtype": "float32", "seed": 1},
])
def test_inputs_unchanged(impl, new, T, d_model, d_k, causal, dtype="float64"):
    x, W_q, W_k, W_v = make(new, T, d_model, d_k, dtype)
    impl.single_head_attention(x, W_q, W_k, W_v, causal=causal)
    expect_inputs_unchanged()
