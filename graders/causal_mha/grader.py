"""Grader for causal_mha(x, W_q, W_k, W_v, W_o, n_heads): batched causal multi-head attention.

Sizes are given per case as B, T, n_heads and d_head (d_model = n_heads * d_head), so a
shrunk failing case is always a valid call.
"""
import numpy as np

from graders.engine.vocabulary import (
    CheckFailed,
    check,
    expect_causal,
    expect_close,
    expect_finite,
    expect_inputs_unchanged,
    expect_prefix_invariant,
    expect_raises,
    expect_repeatable,
    expect_rows_sum_to_one,
    expect_shape,
    expect_tuple,
    mismatch,
    tolerance,
    with_dtypes,
)

SHAPES = "returns y (B, T, d_model) and weights (B, n_heads, T, T)"
AGREES = "agrees with the reference"
ROWS = "every row of the weights sums to 1"
CAUSAL = "nothing attends to the future (the strict upper triangle of the weights is exactly 0)"
PREFIX = "the first t positions do not depend on later ones (prefix invariance)"
HUGE = "stays finite, causal and correct for scores of 1e4 and more"
HEADS = "head h is attention on feature columns h*d_head:(h+1)*d_head"
BATCH = "each sequence of the batch is computed on its own"
RAISES = "raises ValueError when n_heads does not divide d_model"
UNCHANGED = "leaves its inputs unchanged"
LONG = "works past 1024 positions (a mask or buffer of a fixed size would not)"

# T, n_heads and d_head differ from one another in most cases, so a transpose of the wrong
# axes changes a shape or a value instead of hiding; one case has n_heads == T on purpose.
CASES = [
    {"B": 2, "T": 5, "n_heads": 3, "d_head": 2, "seed": 0},
    {"B": 1, "T": 1, "n_heads": 2, "d_head": 3, "seed": 1},
    {"B": 3, "T": 4, "n_heads": 1, "d_head": 5, "seed": 2},
    {"B": 2, "T": 7, "n_heads": 4, "d_head": 1, "seed": 3},
    {"B": 1, "T": 6, "n_heads": 2, "d_head": 4, "seed": 4},
    {"B": 2, "T": 3, "n_heads": 3, "d_head": 2, "seed": 5},
]
DTYPES = with_dtypes(CASES)
CALL = "causal_mha({x}, W_q, W_k, W_v, W_o, {n_heads})"


# ----------------------------------------------------------------------------- helpers

def _inputs(new, B, T, n_heads, d_head, dtype="float64", x_scale=1.0, w_scale=0.5, suffix=""):
    """x and the four projections, registered so that a repro rebuilds them."""
    d_model = n_heads * d_head
    x = new.normal(f"x{suffix}", (B, T, d_model), scale=x_scale, dtype=dtype)
    weights = [new.normal(name + suffix, (d_model, d_model), scale=w_scale, dtype=dtype)
               for name in ("W_q", "W_k", "W_v", "W_o")]
    return x, weights


def _call(impl, x, Ws, n_heads, what=None):
    """The attempt's (y, weights), their shapes checked."""
    B, T, d_model = x.shape
    what = what or CALL.format(x="x", n_heads=n_heads)
    y, w = expect_tuple(impl.causal_mha(x, *Ws, n_heads), 2, what)
    y = expect_shape(y, (B, T, d_model), f"y from {what}")
    w = expect_shape(w, (B, n_heads, T, T), f"the weights array from {what}")
    return y, w


def _ref(ref, x, Ws, n_heads):
    """The reference in float64 on the same (possibly float32) values."""
    return ref.causal_mha(x.astype(np.float64), *(W.astype(np.float64) for W in Ws), n_heads)


def _g(v):
    return f"{v:.6g}"


def _scores(x, W_q, W_k, n_heads):
    """The reference's scores (B, n_heads, T, T) before masking, in float64."""
    x, W_q, W_k = (np.asarray(a, dtype=np.float64) for a in (x, W_q, W_k))
    B, T, d_model = x.shape
    d_head = d_model // n_heads
    q = (x @ W_q).reshape(B, T, n_heads, d_head).transpose(0, 2, 1, 3)
    k = (x @ W_k).reshape(B, T, n_heads, d_head).transpose(0, 2, 1, 3)
    return q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)


def _single_head(x, W_q, W_k, cols):
    """Causal single-head weights of q = x @ W_q[:, cols], k = x @ W_k[:, cols], in float64."""
    x, W_q, W_k = (np.asarray(a, dtype=np.float64) for a in (x, W_q, W_k))
    q, k = x @ W_q[:, cols], x @ W_k[:, cols]                        # (B, T, d_head)
    T, d_head = x.shape[1], q.shape[-1]
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)                 # (B, T, T)
    s = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, s)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)                         # (B, T, T)


# ----------------------------------------------------------------------------- the checks

@check(SHAPES, CASES)
def shapes(impl, new, B, T, n_heads, d_head):
    x, Ws = _inputs(new, B, T, n_heads, d_head)
    _call(impl, x, Ws, n_heads)


@check(AGREES, DTYPES)
def agrees(impl, new, ref, B, T, n_heads, d_head, dtype):
    x, Ws = _inputs(new, B, T, n_heads, d_head, dtype)
    if T > 2:  # a padding row of zeros: its scores, and every score against it, are exactly 0
        x = new.let("x", np.concatenate([x[:, :1], 0 * x[:, 1:2], x[:, 2:]], axis=1),
                    "np.concatenate([x[:, :1], 0 * x[:, 1:2], x[:, 2:]], axis=1)")
    y_ref, w_ref = _ref(ref, x, Ws, n_heads)
    y, w = _call(impl, x, Ws, n_heads)
    expect_close(w, w_ref, "the weights array", dtype)
    hint = ("with T = 1 every weight is 1, so y is (x @ W_v) @ W_o here" if T == 1 else
            "the weights agree, so the difference lies in the values, the merge of the heads or W_o")
    expect_close(y, y_ref, "y", dtype, hint=hint)


@check(ROWS, CASES)
def rows_sum_to_one(impl, new, B, T, n_heads, d_head):
    x, Ws = _inputs(new, B, T, n_heads, d_head)
    _, w = _call(impl, x, Ws, n_heads)
    expect_rows_sum_to_one(w, "the weights array")


@check(CAUSAL, [
    {"B": 2, "T": 5, "n_heads": 2, "d_head": 3, "seed": 0},
    {"B": 1, "T": 4, "n_heads": 1, "d_head": 2, "seed": 1},
    {"B": 2, "T": 3, "n_heads": 3, "d_head": 2, "seed": 2},
    {"B": 1, "T": 7, "n_heads": 4, "d_head": 1, "seed": 3},
], minimum={"T": 5})  # a failure is drawn as a grid: five positions or more read as a pattern
def causal(impl, new, B, T, n_heads, d_head):
    x, Ws = _inputs(new, B, T, n_heads, d_head)
    _, w = _call(impl, x, Ws, n_heads)
    expect_causal(w, what="the weights array")


@check(PREFIX, [
    {"B": 2, "T": 6, "t": 3, "n_heads": 2, "d_head": 3, "seed": 0},
    {"B": 1, "T": 5, "t": 1, "n_heads": 3, "d_head": 2, "seed": 1},
    {"B": 2, "T": 7, "t": 4, "n_heads": 1, "d_head": 4, "dtype": "float32", "seed": 2},
], valid=lambda c: c["t"] < c["T"])
def prefix(impl, new, B, T, t, n_heads, d_head, dtype="float64"):
    x, Ws = _inputs(new, B, T, n_heads, d_head, dtype)
    x_short = new.let("x_short", x[:, :t].copy(), f"x[:, :{t}].copy()")
    y, w = _call(impl, x, Ws, n_heads)
    y_short, w_short = _call(impl, x_short, Ws, n_heads, CALL.format(x="x_short", n_heads=n_heads))
    expect_prefix_invariant([("the weights", w_short, w[:, :, :t, :t]), ("y", y_short, y[:, :t])], t, T, dtype)


@check(HUGE, [
    {"B": 2, "T": 5, "n_heads": 2, "d_head": 3, "dtype": "float64", "x_scale": 25.0, "seed": 0},
    {"B": 2, "T": 5, "n_heads": 2, "d_head": 3, "dtype": "float32", "x_scale": 25.0, "seed": 1},
    {"B": 1, "T": 6, "n_heads": 3, "d_head": 2, "dtype": "float64", "x_scale": 25.0, "seed": 2},
    {"B": 2, "T": 5, "n_heads": 2, "d_head": 3, "dtype": "float64", "x_scale": 40.0, "seed": 1},
], shrink=False)  # smaller cases have smaller scores: a failure is shown where the scores reach 1e4
def huge_scores(impl, new, ref, B, T, n_heads, d_head, dtype, x_scale):
    x, Ws = _inputs(new, B, T, n_heads, d_head, dtype, x_scale=x_scale, w_scale=1.0)
    y_ref, w_ref = _ref(ref, x, Ws, n_heads)
    y, w = _call(impl, x, Ws, n_heads)
    # what the scores reached, so that a failure says how large they were
    top = f"(scores up to {float(np.max(np.abs(_scores(x, Ws[0], Ws[1], n_heads)))):.2g} here)"
    expect_finite(w, f"the weights array {top}")
    expect_finite(y, f"y {top}")
    expect_causal(w, what=f"the weights array {top}")
    expect_close(w, w_ref, f"the weights array {top}", dtype, extreme=True)
    expect_close(y, y_ref, f"y {top}", dtype, extreme=True)


@check(HEADS, [
    {"B": 2, "T": 5, "n_heads": 3, "d_head": 2, "seed": 0},
    {"B": 1, "T": 4, "n_heads": 2, "d_head": 3, "seed": 1},
    {"B": 2, "T": 6, "n_heads": 4, "d_head": 2, "dtype": "float32", "seed": 2},
])
def head_columns(impl, new, B, T, n_heads, d_head, dtype="float64"):
    x, Ws = _inputs(new, B, T, n_heads, d_head, dtype)
    x64, W_q, W_k = x.astype(np.float64), Ws[0].astype(np.float64), Ws[1].astype(np.float64)
    _, w = _call(impl, x, Ws, n_heads)
    rtol, atol = tolerance(dtype)

    def matches(h, cols):
        return mismatch(w[:, h], _single_head(x64, W_q, W_k, cols), rtol, atol) is None

    for h in range(n_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        found = mismatch(w[:, h], _single_head(x64, W_q, W_k, cols), rtol, atol)
        if found is None:
            continue
        _, (b, i, j), got, want = found
        where = f"{h * d_head}:{(h + 1) * d_head}"
        if matches(h, slice(h, None, n_heads)):
            also = (f"; they match the strided columns {h}::{n_heads} instead: the split put d_head "
                    f"before n_heads, where (B, T, n_heads, d_head) is meant")
        else:
            other = [g for g in range(n_heads) if g != h and matches(h, slice(g * d_head, (g + 1) * d_head))]
            also = (f"; they match the columns of head {other[0]} instead" if other else
                    "; they match no other block of d_head columns either" if n_heads > 1 else "")
        raise CheckFailed(f"the weights of head {h} are not causal single-head attention on feature columns "
                          f"{where} of q and k: in batch {b}, query {i}, key {j} the weight is {_g(got)}, "
                          f"expected {_g(want)}{also}")


@check(BATCH, [
    {"B": 3, "T": 4, "n_heads": 2, "d_head": 3, "seed": 0},
    {"B": 2, "T": 5, "n_heads": 3, "d_head": 1, "seed": 1},
], minimum={"B": 2})
def batch_independence(impl, new, B, T, n_heads, d_head):
    x, Ws = _inputs(new, B, T, n_heads, d_head)
    y, w = _call(impl, x, Ws, n_heads)
    for b in range(B):
        xb = new.let(f"x{b}", x[b:b + 1].copy(), f"x[{b}:{b + 1}].copy()")
        y_b, w_b = _call(impl, xb, Ws, n_heads, CALL.format(x=f"x{b}", n_heads=n_heads))
        for name, alone, together in (("the weights", w_b, w[b:b + 1]), ("y", y_b, y[b:b + 1])):
            expect_close(together, alone, f"{name} of sequence {b} (of {B}) in the batch",
                         against=f"{name} of x[{b}:{b + 1}] alone", hint="sequences must not mix")


# more heads than features first: a check that refuses only that passes it, and shows on a later case
@check(RAISES, [
    {"B": 1, "T": 2, "d_model": 4, "n_heads": 8},
    {"B": 1, "T": 3, "d_model": 8, "n_heads": 3},
    {"B": 2, "T": 2, "d_model": 6, "n_heads": 4},
    {"B": 1, "T": 2, "d_model": 5, "n_heads": 2},
], valid=lambda c: c["d_model"] % c["n_heads"] != 0 and c["n_heads"] < c["d_model"])
def raises(impl, new, B, T, d_model, n_heads):
    x = new.normal("x", (B, T, d_model))
    Ws = [new.normal(name, (d_model, d_model), scale=0.5) for name in ("W_q", "W_k", "W_v", "W_o")]
    expect_raises(ValueError, impl.causal_mha, x, *Ws, n_heads,
                  why=f"n_heads={n_heads} does not divide d_model={d_model}")


@check(UNCHANGED, with_dtypes([
    {"B": 2, "T": 4, "n_heads": 2, "d_head": 3},
    {"B": 1, "T": 3, "n_heads": 3, "d_head": 2},
]))
def inputs_unchanged(impl, new, B, T, n_heads, d_head, dtype):
    x, Ws = _inputs(new, B, T, n_heads, d_head, dtype)
    impl.causal_mha(x, *Ws, n_heads)
    expect_inputs_unchanged(impl)


def _last_rows(ref, x, Ws, n_heads, rows=3):
    """A judge of the attempt's (y, weights) on the last `rows` positions only, in float64."""
    x64, (W_q, W_k, W_v, W_o) = x.astype(np.float64), (W.astype(np.float64) for W in Ws)
    B, T, d_model = x.shape                                           # one head: d_head = d_model
    s = (x64[:, -rows:] @ W_q) @ np.swapaxes(x64 @ W_k, -1, -2) / np.sqrt(d_model)  # (B, rows, T)
    s[:, np.arange(T)[None, :] > np.arange(T - rows, T)[:, None]] = -np.inf             # the future
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    w /= w.sum(axis=-1, keepdims=True)
    y = (w @ (x64 @ W_v)) @ W_o                                       # (B, rows, d_model)

    def judge(out, what):
        y_got, w_got = _call_result(out, B, T, d_model, n_heads, what)
        expect_close(w_got[:, 0, -rows:], w, f"the last {rows} rows of the weights from {what}")
        expect_close(y_got[:, -rows:], y, f"the last {rows} rows of y from {what}")
    return judge


def _call_result(out, B, T, d_model, n_heads, what):
    y, w = expect_tuple(out, 2, what)
    return (expect_shape(y, (B, T, d_model), f"y from {what}"),
            expect_shape(w, (B, n_heads, T, T), f"the weights array from {what}"))


@check(LONG, [{"B": 1, "T": 1025, "n_heads": 1, "d_head": 2, "seed": 0}], shrink=False, timeout=20,
       slow="a call at T = 1025")
def long_sequence(impl, new, ref, B, T, n_heads, d_head):
    small = _inputs(new, 1, 4, n_heads, d_head, suffix="_short")
    x, Ws = _inputs(new, B, T, n_heads, d_head)
    # a short call first, so that a mask or buffer sized by the first call shows too
    expect_repeatable(impl, [(lambda: impl.causal_mha(small[0], *small[1], n_heads), _ref(ref, *small, n_heads)),
                             (lambda: impl.causal_mha(x, *Ws, n_heads), _last_rows(ref, x, Ws, n_heads))],
                      names=("y", "weights"))
