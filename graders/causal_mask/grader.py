"""Grader for causal_mask(t_q, t_k=None) and apply_causal_mask(scores).

The expected mask is written here from the contract (key j is blocked for query i when
j > t_k - t_q + i), independently of the reference. Masks are small here: the sizes past a
precomputed table or an index type of 16 bits, NaN, +inf and -inf among the scores, layouts
and sequences of calls are the explorer's (graders/causal_mask/domain.py).
"""
import numpy as np

from graders.engine import grammar
from graders.engine.vocabulary import (
    CheckFailed,
    as_array,
    check,
    expect_causal,
    expect_close,
    expect_inputs_unchanged,
    expect_raises,
    expect_rows_sum_to_one,
    expect_shape,
    weights_picture,
    with_dtypes,
)


def _blocked(t_q: int, t_k: int) -> np.ndarray:
    """The contract's mask, written independently of the reference: key j > t_k - t_q + i."""
    return np.arange(t_k)[None, :] > (t_k - t_q + np.arange(t_q))[:, None]   # (t_q, t_k)


def _call(t_q, t_k):
    return f"causal_mask({t_q})" if t_k is None else f"causal_mask({t_q}, {t_k})"


def _where(t_q: int, t_k: int) -> str:
    if t_q == t_k:
        return ""
    return f" (queries are the last {t_q} of {t_k} positions)"


def _expect_mask(out, t_q: int, t_k_arg, call: str | None = None) -> None:
    """The mask's values are the contract's: the first wrong entry explained in one line."""
    t_k = t_q if t_k_arg is None else t_k_arg
    call = call or _call(t_q, t_k_arg)
    got = expect_shape(out, (t_q, t_k), call)
    want = _blocked(t_q, t_k)
    wrong = np.argwhere(got.astype(bool) != want)
    if len(wrong):
        i, j = (int(v) for v in wrong[0])
        pos = t_k - t_q + i
        if want[i, j]:
            why = f"query {i} sits at position {pos}{_where(t_q, t_k)}, so key {j} is in its future"
        elif j == pos:
            why = f"query {i} sits at position {pos}{_where(t_q, t_k)}, so key {j} is its own position, " \
                  f"which it always sees"
        else:
            why = f"query {i} sits at position {pos}{_where(t_q, t_k)}, so key {j} is in its past"
        raise CheckFailed(f"{call}[{i}, {j}] is {bool(got[i, j])}, expected {bool(want[i, j])} "
                          f"(True means blocked): {why}; {grammar.of(len(wrong), want.size, 'entry')} "
                          f"{grammar.verb(len(wrong), 'is', 'are')} wrong",
                          picture=weights_picture(got.astype(bool), wrong,
                                                  f"{call}: 1 where blocked, the wrong entries marked"))


def _scores(new, lead, t_q, t_k, dtype="float64", scale=2.0, name="scores"):
    return new.normal(name, tuple(lead) + (t_q, t_k), scale=scale, dtype=dtype)


def _with_zeros(new, scores):
    """The same scores with exact zeros where a zero query or key puts them: the last query
    row (it sees every key) and the first key column (every query sees it)."""
    value = scores.copy()
    value[..., -1, :] = 0
    value[..., :, 0] = 0
    return new.let("scores", value, "scores.copy(); scores[..., -1, :] = 0; scores[..., :, 0] = 0")


def _index(lead_idx, i, j):
    return list(lead_idx) + [i, j]


# ----------------------------------------------------------------------------- causal_mask

@check("causal_mask returns a bool array of shape (t_q, t_k)", [
    {"t_q": 4, "t_k": 4}, {"t_q": 3, "t_k": 7}, {"t_q": 1, "t_k": 5},
    {"t_q": 5, "t_k": None}, {"t_q": 1, "t_k": None},
], valid=lambda c: c["t_k"] is None or c["t_q"] <= c["t_k"])
def mask_dtype_and_shape(impl, new, t_q, t_k):
    out = impl.causal_mask(t_q) if t_k is None else impl.causal_mask(t_q, t_k)
    call = _call(t_q, t_k)
    arr = as_array(out, call)
    if arr.dtype != np.bool_:
        raise CheckFailed(f"{call} returned an array of dtype {arr.dtype}, expected bool (True marks a blocked pair)",
                          kind="dtype")
    expect_shape(arr, (t_q, t_q if t_k is None else t_k), call)


# a failure is drawn as a grid: the first cases, and the smallest shrunk to, are big enough to read
@check("causal_mask(t) blocks exactly the strict upper triangle (the diagonal stays visible)", [
    {"t": 5, "given": False}, {"t": 8, "given": False}, {"t": 6, "given": True},
    {"t": 1, "given": False}, {"t": 2, "given": False}, {"t": 1, "given": True},
], minimum={"t": 4})
def square(impl, new, t, given):
    # t_k omitted and t_k = t_q must mean the same thing
    out = impl.causal_mask(t, t) if given else impl.causal_mask(t)
    _expect_mask(out, t, t if given else None)


@check("with t_q < t_k, query i sits at position t_k - t_q + i (decoding with a cache)", [
    {"t_q": 1, "t_k": 6}, {"t_q": 2, "t_k": 5}, {"t_q": 3, "t_k": 8},
    {"t_q": 4, "t_k": 5}, {"t_q": 1, "t_k": 2},
], valid=lambda c: c["t_q"] < c["t_k"])
def decoding_alignment(impl, new, t_q, t_k):
    _expect_mask(impl.causal_mask(t_q, t_k), t_q, t_k)


@check("more queries than keys (t_q > t_k, t_k = 0 included) raises ValueError", [
    {"t_q": 4, "t_k": 3, "lead": ()}, {"t_q": 2, "t_k": 1, "lead": (3,)},
    {"t_q": 7, "t_k": 2, "lead": (2, 2)}, {"t_q": 1, "t_k": 0, "lead": ()},
    {"t_q": 3, "t_k": 0, "lead": (2,)},
], valid=lambda c: c["t_q"] > c["t_k"])
def more_queries_than_keys(impl, new, t_q, t_k, lead):
    why = f"t_q={t_q} > t_k={t_k}: the first query would have no key to attend to"
    expect_raises(ValueError, impl.causal_mask, t_q, t_k, why=why)
    scores = _scores(new, lead, t_q, t_k)
    expect_raises(ValueError, impl.apply_causal_mask, scores, why=why)


# ----------------------------------------------------------------------------- apply_causal_mask

SHAPES = [
    {"lead": (), "t_q": 5, "t_k": 5, "seed": 0},
    {"lead": (), "t_q": 1, "t_k": 1, "seed": 1},
    {"lead": (3,), "t_q": 4, "t_k": 4, "seed": 2},
    {"lead": (1,), "t_q": 3, "t_k": 3, "seed": 3},
    {"lead": (2, 3), "t_q": 3, "t_k": 6, "seed": 4},
    {"lead": (2,), "t_q": 1, "t_k": 4, "seed": 5},
    {"lead": (), "t_q": 2, "t_k": 7, "seed": 6},
]
VALID = {"valid": lambda c: 1 <= c["t_q"] <= c["t_k"]}
DTYPES = with_dtypes(SHAPES)


@check("apply_causal_mask returns an array of the scores' shape", SHAPES, **VALID)
def apply_shape(impl, new, lead, t_q, t_k):
    scores = _scores(new, lead, t_q, t_k)
    expect_shape(impl.apply_causal_mask(scores), scores.shape, "apply_causal_mask(scores)")


@check("blocked entries become exactly -inf", DTYPES, **VALID)
def blocked_are_minus_inf(impl, new, lead, t_q, t_k, dtype):
    scores = _scores(new, lead, t_q, t_k, dtype)
    kept = scores.copy()
    out = expect_shape(impl.apply_causal_mask(scores), scores.shape, "apply_causal_mask(scores)")
    blocked = np.broadcast_to(_blocked(t_q, t_k), scores.shape)
    bad = blocked & ~np.isneginf(out)
    if np.any(bad):
        idx = tuple(int(v) for v in np.argwhere(bad)[0])
        i, j = idx[-2:]
        val = float(out[idx]) + 0.0   # + 0.0 prints -0.0 as 0
        what = "the score, unmasked" if val == float(kept[idx]) else f"{val:.6g}"
        raise CheckFailed(f"apply_causal_mask(scores){_index(idx[:-2], i, j)} is {what}, expected -inf: "
                          f"query {i} sits at position {t_k - t_q + i}{_where(t_q, t_k)}, "
                          f"so key {j} is in its future")


@check("allowed entries keep their scores exactly, exact zeros included", DTYPES, **VALID)
def allowed_unchanged(impl, new, lead, t_q, t_k, dtype):
    scores = _with_zeros(new, _scores(new, lead, t_q, t_k, dtype))
    kept = scores.copy()
    out = expect_shape(impl.apply_causal_mask(scores), scores.shape, "apply_causal_mask(scores)")
    allowed = np.broadcast_to(~_blocked(t_q, t_k), scores.shape)
    with np.errstate(invalid="ignore"):
        bad = allowed & ~(out.astype(np.float64) == kept.astype(np.float64))
    if np.any(bad):
        idx = tuple(int(v) for v in np.argwhere(bad)[0])
        i, j = idx[-2:]
        pos = t_k - t_q + i
        rel = "its own position" if j == pos else "in its past"
        raise CheckFailed(f"apply_causal_mask(scores){_index(idx[:-2], i, j)} is {float(out[idx]):.6g}, "
                          f"expected the score {float(kept[idx]):.6g} unchanged: query {i} sits at position {pos}"
                          f"{_where(t_q, t_k)}, so key {j} is {rel} and must stay visible")


@check("apply_causal_mask agrees with the reference for 0, 1 and 2 leading axes", DTYPES, **VALID)
def agrees(impl, new, ref, lead, t_q, t_k, dtype):
    scores = _scores(new, lead, t_q, t_k, dtype)
    want = ref.apply_causal_mask(scores.astype(np.float64))
    expect_close(impl.apply_causal_mask(scores), want, "apply_causal_mask(scores)", dtype)


def _softmax(z):
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.exp(z - np.max(z, axis=-1, keepdims=True))
        return e / np.sum(e, axis=-1, keepdims=True)


@check("after a softmax the future gets weight exactly 0 and rows sum to 1", [
    {"lead": (), "t_q": 6, "t_k": 6, "dtype": "float64", "seed": 0},
    {"lead": (2, 2), "t_q": 3, "t_k": 5, "dtype": "float32", "seed": 1},
    {"lead": (2,), "t_q": 1, "t_k": 5, "dtype": "float64", "seed": 2},
    {"lead": (3,), "t_q": 4, "t_k": 4, "dtype": "float32", "seed": 3},
], **VALID)
def softmax_of_masked(impl, new, lead, t_q, t_k, dtype):
    scores = _scores(new, lead, t_q, t_k, dtype, scale=3.0)
    out = expect_shape(impl.apply_causal_mask(scores), scores.shape, "apply_causal_mask(scores)")
    dead = np.all(np.isneginf(out), axis=-1)                   # (..., t_q)
    if np.any(dead):
        idx = tuple(int(v) for v in np.argwhere(dead)[0])
        lead_at = f" (at {list(idx[:-1])})" if len(idx) > 1 else ""
        raise CheckFailed(f"row {idx[-1]} of apply_causal_mask(scores){lead_at} is all -inf, so its softmax "
                          f"is 0/0 = NaN: query {idx[-1]} must at least see its own position")
    w = _softmax(out.astype(np.float64))                       # (..., t_q, t_k)
    what = "softmax(apply_causal_mask(scores))"
    expect_rows_sum_to_one(w, what)
    expect_causal(w, what=what)


@check("apply_causal_mask leaves scores unchanged and returns a new array", [
    {"lead": (), "t_q": 4, "t_k": 4, "dtype": "float64"},
    {"lead": (2,), "t_q": 2, "t_k": 5, "dtype": "float32"},
    {"lead": (), "t_q": 1, "t_k": 3, "dtype": "float64"},
], **VALID)
def input_unchanged(impl, new, lead, t_q, t_k, dtype):
    scores = _scores(new, lead, t_q, t_k, dtype)
    out = impl.apply_causal_mask(scores)
    expect_inputs_unchanged(impl)
    if isinstance(out, np.ndarray) and np.shares_memory(out, scores):
        raise CheckFailed("apply_causal_mask(scores) returned scores itself (or a view of it): "
                          "return a new array, so that writing to the result cannot change the caller's scores")
