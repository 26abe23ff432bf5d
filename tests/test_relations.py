"""graders.engine.relations: each relation observed on a realistic mistake, in the exact
words the candidate reads; nothing said about unrelated differences; and, over many random
seeds, no relation claimed that an independent check does not confirm."""
from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from graders.engine.relations import findings, observe  # noqa: E402

STRUCTURAL = {"transpose", "transposed_shape", "permutation", "same_slice", "shift", "factor", "negated",
              "offset", "plus_input", "minus_input", "input", "renormalised", "zero", "constant", "other_part"}

B, H, T, D_HEAD = 2, 3, 5, 4
D_MODEL = H * D_HEAD
AXES = {1: "heads", 2: "query positions", 3: "key positions"}
CONSTANTS = {"sqrt(d_head)": np.sqrt(D_HEAD), "sqrt(d_model)": np.sqrt(D_MODEL),
             "sqrt(d_model/d_head)": np.sqrt(D_MODEL / D_HEAD), "n_heads": H, "T": T}


# ----------------------------------------------------------------------------- references

def softmax(s, axis=-1):
    e = np.exp(s - np.max(s, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def causal(t):
    return np.tril(np.ones((t, t), dtype=bool))


def qkv(seed=0, b=B, h=H, t=T, d=D_HEAD):
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(size=(b, h, t, d)) for _ in range(3))


def scores(q, k, scale):
    return q @ k.swapaxes(-1, -2) / scale


def attention(q, k, v, scale=np.sqrt(D_HEAD), mask=True):
    s = scores(q, k, scale)
    if mask:
        s = np.where(causal(s.shape[-1]), s, -np.inf)
    w = softmax(s)
    return w @ v, w


def rope_half(x, pos):
    """Rotary embedding, rotate-half layout: x (T, d)."""
    d = x.shape[-1]
    inv = 1.0 / 10000 ** (np.arange(0, d, 2) / d)
    ang = pos[:, None] * inv[None, :]
    cos, sin = np.concatenate([np.cos(ang)] * 2, -1), np.concatenate([np.sin(ang)] * 2, -1)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return x * cos + np.concatenate([-x2, x1], -1) * sin


def rope_interleaved(x, pos, odd_sign=1.0):
    d = x.shape[-1]
    inv = 1.0 / 10000 ** (np.arange(0, d, 2) / d)
    ang = pos[:, None] * inv[None, :]
    cos, sin = np.cos(ang), np.sin(ang)
    xe, xo = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = xe * cos - xo * sin
    out[..., 1::2] = xo * cos + odd_sign * xe * sin
    return out


# ----------------------------------------------------------------------------- independent checks

def close_entries(a, b, rtol=1e-6, atol=1e-9):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return False
    ok = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    both = (np.isnan(a) & np.isnan(b)) | (np.isinf(a) & (a == b))
    return bool(np.all(ok | both))


def confirm(f, got, want, inputs=None):
    """Check a finding's claim from its `detail`, with plain NumPy."""
    G, W = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    d = f.detail
    if f.kind == "tempered":  # softmax(c * log W) along the last axis is G
        with np.errstate(divide="ignore"):
            L = d[0] * np.log(W)
        E = np.exp(L - L.max(axis=-1, keepdims=True))
        return close_entries(G, E / E.sum(axis=-1, keepdims=True))
    if f.kind == "transpose" or f.kind == "transposed_shape":
        return close_entries(G, np.transpose(W, d[0]))
    if f.kind == "permutation":
        k, perm = d
        return sorted(perm) == list(range(W.shape[k])) and list(perm) != sorted(perm) and \
            close_entries(G, np.take(W, perm, axis=k))
    if f.kind == "same_slice":
        k, s = d
        return close_entries(G, np.take(W, [s] * W.shape[k], axis=k))
    if f.kind == "shift":
        k, s, wraps = d
        g, w = np.moveaxis(G, k, 0), np.moveaxis(W, k, 0)
        ok = close_entries(g[1:], w[:-1]) if s == 1 else close_entries(g[:-1], w[1:])
        return ok and (not wraps or close_entries(G, np.roll(W, s, axis=k)))
    if f.kind == "factor":
        return close_entries(G, d[0] * W)
    if f.kind == "negated":
        return close_entries(G, -W)
    if f.kind == "zero":
        return close_entries(G, np.zeros_like(G))
    if f.kind == "offset":
        return close_entries(G, W + d[0])
    if f.kind in ("plus_input", "minus_input", "input"):
        name, sign = d
        x = np.asarray(inputs[name], dtype=np.float64)
        return close_entries(G, W + sign * x) if sign else close_entries(G, x)
    if f.kind == "renormalised":
        return close_entries(G, W / W.sum(axis=d[0], keepdims=True))
    if f.kind == "constant":
        return np.all(G == d[0]) and np.all(W == W.flat[0])
    if f.kind == "sums":
        b, a = d
        return np.allclose(G.sum(axis=b), 1, atol=1e-6) and np.allclose(W.sum(axis=a), 1, atol=1e-6) and \
            not np.allclose(G.sum(axis=a), 1, atol=1e-6)
    if f.kind in ("lower_diag", "lower_strict", "diagonal", "upper_diag", "upper_strict"):
        r, c = W.shape[-2:]
        pattern = {"lower_diag": np.tri(r, c, 0, dtype=bool), "lower_strict": np.tri(r, c, -1, dtype=bool),
                   "diagonal": np.eye(r, c, dtype=bool), "upper_diag": ~np.tri(r, c, -1, dtype=bool),
                   "upper_strict": ~np.tri(r, c, 0, dtype=bool)}[f.kind]
        ok = np.isclose(G, W, rtol=1e-6, atol=1e-9, equal_nan=True)
        return np.array_equal(ok, np.broadcast_to(pattern, ok.shape))
    if f.kind in ("prefix", "suffix", "first_half", "second_half", "even", "odd", "indices"):
        k = d[0]
        n = W.shape[k]
        ok = np.moveaxis(np.isclose(G, W, rtol=1e-6, atol=1e-9, equal_nan=True), k, 0).reshape(n, -1)
        rows = ok.all(axis=1)
        if not np.all(rows | ~ok.any(axis=1)):
            return False
        idx = list(np.flatnonzero(rows))
        expected = {"prefix": lambda: list(range(d[1])), "suffix": lambda: list(range(n - d[1], n)),
                    "first_half": lambda: list(range(n // 2)), "second_half": lambda: list(range(n // 2, n)),
                    "even": lambda: list(range(0, n, 2)), "odd": lambda: list(range(1, n, 2)),
                    "indices": lambda: list(d[1])}[f.kind]()
        return idx == expected
    if f.kind == "ratio":
        return close_entries(G, d[0] * W)
    if f.kind == "difference":
        return close_entries(G, W + d[0])
    if f.kind == "opposite_sign":
        return close_entries(G, -W)
    if f.kind == "rolled":
        k, s = d
        return close_entries(G, np.roll(W, s, axis=k))
    if f.kind in ("floor", "ceiling"):
        return close_entries(G, (np.maximum if f.kind == "floor" else np.minimum)(W, d[0])) and not close_entries(G, W)
    if f.kind == "slice_factor":
        k = d[0]
        g, w = np.moveaxis(G, k, -1), np.moveaxis(W, k, -1)
        c = (g * w).sum(axis=-1, keepdims=True) / (w * w).sum(axis=-1, keepdims=True)
        return close_entries(g, c * w) and np.ptp(c) > 0
    if f.kind == "count":
        ok = np.isclose(G, W, rtol=1e-6, atol=1e-9, equal_nan=True)
        return int(ok.sum()) == d[0] and ok.size == d[1]
    if f.kind == "input_offset":
        name, stat, sign = d
        x = np.asarray(inputs[name], dtype=np.float64)
        top = x.max(axis=-1) if x.ndim else x
        shift = {"row_max_mean": np.mean(top), "max": np.max(x), "row_max_sum": np.sum(top)}[stat]
        return close_entries(G, W + sign * shift)
    if f.kind == "zero_rows":
        zero = np.all(np.asarray(inputs[d[0]]) == 0, axis=-1)
        return bool(np.all(G[zero] == 0)) and close_entries(G[~zero], W[~zero]) and not close_entries(G, W)
    if f.kind == "reweighted":   # each key's column times a number of its own, each row renormalised
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(W > 0, G / W, np.nan)
            pair = ratio[..., :, :, None] / ratio[..., :, None, :]     # d_j / d_j', the same in every row
            spread = np.nanmax(pair, axis=-3) - np.nanmin(pair, axis=-3)
            top = np.nanmax(np.abs(pair), axis=-3)
        return bool(np.all(np.nan_to_num(spread) <= 1e-6 * np.nan_to_num(top) + 1e-9)) and \
            np.array_equal(G == 0, W == 0) and not close_entries(G, W)
    if f.kind == "mask" and d == ("not_zero",):
        return close_entries(G, W) and bool(np.any((W == 0) & (G != 0)))
    raise AssertionError(f"no independent check for {f.kind}")


# ----------------------------------------------------------------------------- 1. a factor

def test_scale_by_sqrt_d_model_instead_of_sqrt_d_head():
    q, k, _ = qkv()
    want = scores(q, k, np.sqrt(D_HEAD))
    got = scores(q, k, np.sqrt(D_MODEL))
    assert observe(got, want, constants=CONSTANTS, what="the scores", axes=AXES) == [
        "the scores equal the reference times 0.57735 (1/sqrt(d_model/d_head))"]


def test_scale_forgotten_is_named_after_sqrt_d_head():
    d_head = 9
    q, k, _ = qkv(1, d=d_head)
    want = scores(q, k, np.sqrt(d_head))
    got = scores(q, k, 1.0)
    out = observe(got, want, constants={"sqrt(d_head)": 3.0, "n_heads": 3})
    assert out == ["the output equals the reference times 3 (sqrt(d_head) or n_heads)"]


def test_scale_multiplied_instead_of_divided_is_named_d_head():
    q, k, _ = qkv(2)
    want = scores(q, k, np.sqrt(D_HEAD))
    got = q @ k.swapaxes(-1, -2) * np.sqrt(D_HEAD)
    assert observe(got, want, constants={"d_head": D_HEAD}) == ["the output equals the reference times 4 (d_head)"]


def test_unnamed_factor_is_given_to_six_digits():
    q, k, _ = qkv(3)
    want = scores(q, k, np.sqrt(D_HEAD))
    assert observe(want * 1.2345678, want) == ["the output equals the reference times 1.23457"]


def test_factor_named_after_an_inverse_and_ignores_masked_infinities():
    q, k, _ = qkv(4)
    want = np.where(causal(T), scores(q, k, 1.0), -np.inf)
    got = want / T
    assert observe(got, want, constants={"T": T}) == ["the output equals the reference times 0.2 (1/T)"]


def test_negated_gradient():
    q, k, v = qkv(5)
    y, _ = attention(q, k, v)
    assert observe(-y, y, what="dq") == ["dq is the reference negated"]


def test_all_zeros():
    q, k, v = qkv(6)
    y, _ = attention(q, k, v)
    assert observe(np.zeros_like(y), y) == ["the output is 0 everywhere"]


# ----------------------------------------------------------------------------- 2. offsets and inputs

def test_constant_offset_named():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(4, 6))
    beta = 0.5
    want = (x - x.mean(-1, keepdims=True)) / x.std(-1, keepdims=True) + beta
    got = want + beta  # the bias added twice
    assert observe(got, want, constants={"beta": beta}) == [
        "the output equals the reference plus 0.5 (beta) everywhere"]
    assert observe(want - 3, want) == ["the output equals the reference minus 3 everywhere"]


def test_differences_at_the_edge_of_the_tolerance_are_no_offset_or_factor():
    """eps added outside the square root moves each entry by a few 1e-7, up and down: a
    constant that halves the largest difference still leaves it, so no offset is claimed."""
    want = np.array([[-0.6663722], [-0.66636967]])  # rms_norm's smallest failing case, x of shape (2, 1)
    got = want + np.array([[3.15115692e-07], [-8.21683338e-07]])
    said = " ".join(observe(got, want))
    assert "everywhere" not in said and "times" not in said, said
    varied = np.array([[-0.6663722], [1.3], [0.2]])  # an offset well past the tolerance is still named
    assert observe(varied + 2.53e-3, varied) == ["the output equals the reference plus 0.00253 everywhere"]


def test_residual_that_does_not_belong():
    rng = np.random.default_rng(8)
    x = rng.normal(size=(B, T, D_MODEL))
    wo = rng.normal(size=(D_MODEL, D_MODEL)) / np.sqrt(D_MODEL)
    want = np.tanh(x @ wo)          # the sublayer alone
    got = x + np.tanh(x @ wo)        # with the residual, which the caller adds
    assert observe(got, want, inputs={"x": x}) == [
        "the output equals the reference plus the input x (a residual that does not belong)"]


def test_residual_missing():
    rng = np.random.default_rng(9)
    x = rng.normal(size=(B, T, D_MODEL))
    want = x + np.tanh(x)
    got = np.tanh(x)
    assert observe(got, want, inputs={"x": x, "unused": np.ones(3)}) == [
        "the output equals the reference minus the input x (the residual x is missing)"]


def test_input_returned_unchanged():
    rng = np.random.default_rng(10)
    x = rng.normal(size=(T, 8))
    want = rope_half(x, np.arange(T) + 1.0)
    assert observe(x, want, inputs={"x": x}) == ["the output equals the input x"]


# ----------------------------------------------------------------------------- 3. transposed

def test_weights_transposed():
    q, k, v = qkv(11)
    _, w = attention(q, k, v)
    assert observe(w.swapaxes(-1, -2), w, axes=AXES, what="the weights") == [
        "the weights are the reference with the last two axes (query positions and key positions) swapped"]


def test_output_returned_with_the_last_two_axes_swapped_has_another_shape():
    q, k, v = qkv(12)
    y, _ = attention(q, k, v)                       # (B, H, T, D_HEAD)
    assert observe(y.swapaxes(-1, -2), y) == [
        "the output has shape (2, 3, 4, 5) where the reference has (2, 3, 5, 4): the last two axes are swapped"]


def test_heads_not_transposed_back_named_axes():
    q, k, v = qkv(13)
    y, _ = attention(q, k, v)                       # (B, H, T, d): the reference keeps heads first
    got = y.transpose(0, 2, 1, 3)                   # (B, T, H, d)
    out = observe(got, y, axes={1: "heads", 2: "positions"})
    assert out == ["the output has shape (2, 5, 3, 4) where the reference has (2, 3, 5, 4): "
                   "axes 1 (heads) and 2 (positions) are swapped"]


def test_swap_of_two_equal_axes_that_are_not_last():
    rng = np.random.default_rng(14)
    want = rng.normal(size=(4, 4, 3))
    assert observe(want.swapaxes(0, 1), want) == ["the output is the reference with axes 0 and 1 swapped"]


def test_shapes_swapped_but_values_not_just_state_the_shapes():
    rng = np.random.default_rng(15)
    want = rng.normal(size=(2, 4, 3))
    got = rng.normal(size=(2, 3, 4))
    assert observe(got, want) == ["the output has shape (2, 3, 4) where the reference has (2, 4, 3)"]


def test_extra_and_missing_axis_of_size_one():
    q, k, v = qkv(16)
    y, _ = attention(q, k, v)
    m = y.mean(-1)
    assert observe(y.mean(-1, keepdims=True), m) == [
        "the output has shape (2, 3, 5, 1) where the reference has (2, 3, 5): an extra axis of size 1 (axis 3), "
        "with the same values"]
    assert observe(m, y.mean(-1, keepdims=True), axes={3: "features"}) == [
        "the output has shape (2, 3, 5) where the reference has (2, 3, 5, 1): a missing axis of size 1 "
        "(axis 3 (features)), with the same values"]
    assert observe(2 * y.mean(-1, keepdims=True), m) == [
        "the output has shape (2, 3, 5, 1) where the reference has (2, 3, 5)"]


def test_reshape_without_transpose_back():
    q, k, v = qkv(17)
    y, _ = attention(q, k, v)
    got = y.reshape(B, H, T * D_HEAD)
    assert observe(got, y) == ["the output has shape (2, 3, 20) where the reference has (2, 3, 5, 4): "
                               "the same values in the same order (a reshape of the reference)"]


# ----------------------------------------------------------------------------- 4. permuted along an axis

def test_heads_permuted():
    q, k, v = qkv(18, h=4)
    _, w = attention(q, k, v)
    out = observe(w[:, [0, 2, 1, 3]], w, axes=AXES, what="the weights")
    assert out == ["along axis 1 (heads), the weights hold the slices of the reference in the order 0, 2, 1, 3"]
    found = findings(w[:, [0, 2, 1, 3]], w)
    assert [(f.kind, f.detail) for f in found] == [("permutation", (1, (0, 2, 1, 3)))]


def test_sequence_reversed():
    rng = np.random.default_rng(19)
    x = rng.normal(size=(6, 8))
    want = rope_half(x, np.arange(6.0))
    assert observe(want[::-1], want, axes={0: "positions"}) == [
        "along axis 0 (positions), the output holds the slices of the reference in the order 5, 4, 3, 2, 1, 0 "
        "(reversed)"]
    long_ = np.arange(40.0) ** 2
    assert observe(long_[::-1], long_) == [
        "along axis 0, the output holds the slices of the reference in reverse order"]


def test_every_head_equals_head_zero():
    q, k, v = qkv(20, h=4)
    _, w = attention(q, k, v)
    got = np.repeat(w[:, :1], 4, axis=1)  # every head built from head 0's projections
    assert observe(got, w, axes=AXES) == [
        "every slice of the output along axis 1 (heads) equals slice 0 of the reference"]


def test_no_permutation_when_slices_repeat():
    want = np.array([[1.0, 2.0], [1.0, 2.0], [3.0, 4.0]])
    got = np.array([[3.0, 4.0], [1.0, 2.0], [1.0, 2.0]])
    assert not [f for f in findings(got, want) if f.kind in ("permutation", "same_slice")]


# ----------------------------------------------------------------------------- 5. shifted by one

def test_exclusive_prefix_sum_is_shifted_by_one():
    rng = np.random.default_rng(21)
    x = rng.normal(size=(7, 3))
    want = np.cumsum(x, axis=0)                                     # inclusive
    got = np.concatenate([np.zeros((1, 3)), want[:-1]], axis=0)     # exclusive
    assert observe(got, want, axes={0: "positions"}) == [
        "the output is the reference shifted by one position along axis 0 (positions): "
        "entry i holds entry i-1 of the reference"]


def test_labels_rolled_the_other_way_wrap_around():
    q, k, v = qkv(22)
    y, _ = attention(q, k, v)
    out = observe(np.roll(y, -1, axis=2), y, axes=AXES)
    assert out == ["the output is the reference shifted by one position along axis 2 (query positions): "
                   "entry i holds entry i+1 of the reference (the first wraps around to the last)"]


# ----------------------------------------------------------------------------- 6. normalised along another axis

def test_weights_normalised_over_queries():
    q, k, v = qkv(23)
    _, want = attention(q, k, v)
    s = np.where(causal(T), scores(q, k, np.sqrt(D_HEAD)), -np.inf)
    got = softmax(s, axis=-2)
    out = observe(got, want, axes=AXES, what="the weights")
    assert out[0] == ("the weights sum to 1 along axis 2 (query positions) where the reference sums to 1 "
                      "along axis 3 (key positions)")
    # both are zero above the diagonal, and differ everywhere else
    assert out[1:] == ["the weights agree with the reference only on the strict upper triangle (above the "
                       "diagonal) of the last two axes (query positions and key positions), in every slice"]


def test_reference_renormalised_along_the_wrong_axis():
    q, k, v = qkv(24)
    _, want = attention(q, k, v, mask=False)
    got = want / want.sum(axis=2, keepdims=True)
    assert observe(got, want, axes=AXES) == [
        "the output equals the reference renormalised to sum to 1 along axis 2 (query positions)"]


# ----------------------------------------------------------------------------- 7. a pattern of agreement

def test_masked_scores_right_only_on_the_lower_triangle():
    q, k, _ = qkv(25)
    s = scores(q, k, np.sqrt(D_HEAD))
    want = np.where(causal(T), s, -np.inf)
    got = np.where(causal(T), s, 0.0)  # masked with 0 instead of -inf
    assert observe(got, want, axes=AXES, masks=("",)) == [
        "the output holds 0 where the reference holds -inf (the blocked entries), and agrees everywhere else: the "
        "mask's fill value is 0, not -inf"]
    got = np.where(causal(T), s, 0.0) + np.triu(np.arange(T * T).reshape(T, T), 1)  # no one fill value
    assert observe(got, want, axes=AXES) == [
        "the output agrees with the reference only on the lower triangle including the diagonal of the last "
        "two axes (query positions and key positions), in every slice"]


@pytest.mark.parametrize("kind, words, pattern", [
    ("lower_strict", "the strict lower triangle (below the diagonal)", np.tri(4, 4, -1, dtype=bool)),
    ("diagonal", "the diagonal", np.eye(4, dtype=bool)),
    ("upper_diag", "the upper triangle including the diagonal", ~np.tri(4, 4, -1, dtype=bool)),
])
def test_other_triangles(kind, words, pattern):
    rng = np.random.default_rng(26)
    want = rng.normal(size=(4, 4))
    got = np.where(pattern, want, want + 1 + rng.random((4, 4)))
    assert observe(got, want) == [f"the output agrees with the reference only on {words} of the last two axes"]
    assert [f.kind for f in findings(got, want)] == [kind]


def test_rope_only_first_half_right():
    rng = np.random.default_rng(27)
    x = rng.normal(size=(T, 8))
    pos = np.arange(T) + 3.0  # continuing after a prompt of 3
    want = rope_half(x, pos)
    x1, x2 = x[:, :4], x[:, 4:]
    inv = 1.0 / 10000 ** (np.arange(0, 8, 2) / 8)
    ang = pos[:, None] * inv
    got = np.concatenate([x1 * np.cos(ang) - x2 * np.sin(ang), x2 * np.cos(ang) - x1 * np.sin(ang)], -1)
    assert observe(got, want, axes={1: "features"}) == [
        "along axis 1 (features), only the first half of the output (features 0-3 of 8) agrees with the "
        "reference; the second half differs"]


def test_rope_interleaved_only_even_features_right():
    rng = np.random.default_rng(28)
    x = rng.normal(size=(T, 8))
    pos = np.arange(T) + 1.0
    want = rope_interleaved(x, pos)
    got = rope_interleaved(x, pos, odd_sign=-1.0)
    assert observe(got, want) == [
        "along axis 1, only the even-numbered slices of the output (0, 2, 4 and 6) agree with the reference; "
        "the odd-numbered ones differ"]


def test_kv_cache_right_only_on_the_prompt_positions():
    q, k, v = qkv(29, t=6)
    y, _ = attention(q, k, v)
    got = y.copy()
    got[:, :, 4:] += 0.25  # the two decoded positions go wrong
    assert observe(got, y, axes=AXES) == [
        "along axis 2 (query positions), only the first 4 query positions of the output agree with the reference; "
        "the last 2 query positions differ"]
    got = y.copy()
    got[:, :, 0] -= 1.0
    assert observe(got, y, axes=AXES) == [
        "along axis 2 (query positions), only the last 5 query positions of the output agree with the reference; "
        "the first query position differs"]
    got = y.copy()
    got[:, :, 1:] = 0.0
    assert observe(got, y, axes=AXES) == [
        "along axis 2 (query positions), only query position 0 of the output agrees with the reference; "
        "query positions 1, 2, 3, 4 and 5 differ"]


def test_only_some_heads_right():
    q, k, v = qkv(30, h=4)
    want, _ = attention(q, k, v, mask=False)
    q_wrong = q.copy()
    q_wrong[:, 1:] = q[:, :1]  # every head uses head 0's queries
    got, _ = attention(q_wrong, k, v, mask=False)
    assert observe(got, want, axes=AXES) == [
        "along axis 1 (heads), only head 0 of the output agrees with the reference; heads 1, 2 and 3 differ"]
    got = want.copy()
    got[:, [1, 3]] *= 1.5
    got[:, 3] += 1.0  # two different mistakes: no single factor
    assert observe(got, want, axes=AXES) == [
        "along axis 1 (heads), heads 0 and 2 of the output agree with the reference; heads 1 and 3 differ"]


def test_count_when_no_pattern():
    rng = np.random.default_rng(31)
    want = rng.normal(size=(3, 4))
    got = want.copy()
    wrong = np.zeros(12, dtype=bool)
    wrong[[0, 5, 6, 11, 9]] = True
    got[wrong.reshape(3, 4)] += 1.0 + rng.random(5)
    assert observe(got, want) == ["the output agrees with the reference on 7 of 12 entries"]


# ----------------------------------------------------------------------------- 8. several outputs

def test_weights_right_output_scaled():
    q, k, v = qkv(32)
    y, w = attention(q, k, v)
    out = observe((2 * y, w), (y, w), names=("y", "the weights"), constants=CONSTANTS)
    assert out == ["the weights agree with the reference; y differs",
                   "y equals the reference's y times 2 (sqrt(d_head))"]


def test_weights_over_a_single_key_are_not_said_to_agree():
    """At T = 1 every weight is 1 whatever the mistake: their agreeing says nothing, so the
    observation speaks of y alone."""
    q, k, v = qkv(34, t=1)
    y, w = attention(q, k, v)
    out = observe((2 * y, w), (y, w), names=("y", "the weights"), constants=CONSTANTS)
    assert not any("weights agree" in line for line in out), out
    assert "y equals the reference's y times 2 (sqrt(d_head))" in out


def test_output_right_weights_transposed():
    q, k, v = qkv(33)
    y, w = attention(q, k, v)
    out = observe((y, w.swapaxes(-1, -2)), (y, w), names=("y", "the weights"),
                  axes=[{}, AXES])
    assert out == ["y agrees with the reference; the weights differ",
                   "the weights are the reference's weights with the last two axes (query positions and key "
                   "positions) swapped"]


def test_outputs_returned_in_the_wrong_order():
    rng = np.random.default_rng(34)
    y, w = rng.normal(size=(3, 3)), softmax(rng.normal(size=(3, 3)))
    assert observe((w, y), (y, w), names=("y", "the weights")) == [
        "y equals the reference's weights", "the weights equal the reference's y"]


def test_several_outputs_all_agree_or_wrong_count():
    q, k, v = qkv(35)
    y, w = attention(q, k, v)
    assert observe((y, w), (y, w), names=("y", "the weights")) == []
    assert observe((y, w, w), (y, w)) == ["the output has 3 parts where the reference has 2"]
    assert observe(y, (y, w), names=("y", "the weights")) == [
        "the output is a single result equal to the reference's y, where the reference returns 2 outputs "
        "(y, the weights)"]


def test_several_outputs_both_differ_unrelated_gives_nothing():
    q, k, v = qkv(36)
    y, w = attention(q, k, v)
    rng = np.random.default_rng(0)
    assert observe((rng.normal(size=y.shape), rng.normal(size=w.shape)), (y, w), names=("y", "the weights")) == []


# ----------------------------------------------------------------------------- 9. scalars

def test_parameter_count_per_head_times_heads():
    want = 4 * 64 * 64 + 4 * 64
    assert observe(want * 4, want, constants={"n_heads": 4, "d_model": 64}) == [
        f"the output is 4 (n_heads) times the reference's value ({want * 4} instead of {want})"]


def test_parameter_count_missing_a_bias():
    want = 4 * 64 * 64 + 4 * 64
    assert observe(want - 64, want, constants={"d_model": 64}) == [
        f"the output is 64 (d_model) less than the reference's value ({want - 64} instead of {want})"]
    assert observe(want + 2, want) == [
        f"the output is 2 more than the reference's value ({want + 2} instead of {want})"]
    assert observe(want // 8, want) == [
        f"the output is 1/8 of the reference's value ({want // 8} instead of {want})"]


def test_loss_sign_and_mean_over_tokens():
    loss = 2.3176
    assert observe(-loss, loss, what="the loss") == ["the loss is the reference's value with the opposite sign"]
    assert observe(loss / T, loss, constants={"T": T}, what="the loss") == [
        "the loss is the reference's value times 0.2 (1/T)"]
    assert observe(np.float32(loss * 2), np.float64(loss), rtol=1e-4, atol=1e-5) == [
        "the output is the reference's value times 2"]
    assert observe(loss * 3.7, loss) == []  # any two numbers have a ratio: only a known one is said
    assert observe(np.array([loss * 3.7]), np.array([loss])) == []
    assert observe(-12, 12) == ["the output is the reference's value with the opposite sign (-12 instead of 12)"]


# ----------------------------------------------------------------------------- nothing to say

def test_agreeing_arrays_say_nothing():
    q, k, v = qkv(37)
    y, w = attention(q, k, v)
    assert observe(y, y) == []
    assert observe(y + 1e-12, y) == []
    assert observe(w.astype(np.float32), w, rtol=1e-4, atol=1e-5) == []
    assert observe(np.where(causal(T), 1.0, -np.inf), np.where(causal(T), 1.0, -np.inf)) == []


def test_random_noise_says_nothing():
    q, k, v = qkv(38)
    y, w = attention(q, k, v)
    rng = np.random.default_rng(1)
    assert observe(y + rng.normal(scale=1e-3, size=y.shape), y) == []
    assert observe(rng.normal(size=y.shape), y, inputs={"q": q}, constants=CONSTANTS, axes=AXES) == []


@pytest.mark.parametrize("mistake", ["scaled and transposed", "heads permuted and residual", "scaled and offset",
                                     "shifted and scaled"])
def test_two_mistakes_combined_say_nothing(mistake):
    q, k, v = qkv(39, h=4)
    y, w = attention(q, k, v, mask=False)
    if mistake == "scaled and transposed":
        got, want = 2 * w.swapaxes(-1, -2), w
    elif mistake == "heads permuted and residual":
        got, want = y[:, [1, 0, 2, 3]] + q, y
    elif mistake == "scaled and offset":
        got, want = 2 * y + 1, y
    else:
        got, want = 2 * np.roll(y, 1, axis=2), y
    assert observe(got, want, inputs={"q": q}, constants=CONSTANTS, axes=AXES) == []


def test_nan_filled_output_says_nothing():
    q, k, v = qkv(40)
    y, w = attention(q, k, v)
    assert observe(np.full_like(y, np.nan), y) == []
    assert observe(np.full_like(w, np.inf), w) == []
    assert observe((np.full_like(y, np.nan), np.full_like(w, np.nan)), (y, w), names=("y", "the weights")) == []


def test_shape_mismatch_without_relation_says_nothing():
    q, k, v = qkv(41)
    y, _ = attention(q, k, v)
    assert observe(y[:, :, :3] * 2, y) == ["the output has 3 along axis 2 where the reference has 5"]
    assert observe(y[:, :, :3], y) == [
        "the output has 3 along axis 2 where the reference has 5: they are the first 3 of its 5, the others are "
        "missing"]
    assert observe(np.ones((3, 7)), y) == []
    assert observe(np.ones(()), y) == []
    assert observe(np.zeros((0, 4)), np.zeros((4, 0))) == ["the output has shape (0, 4) where the reference has (4, 0)"]
    assert observe(np.zeros((0, 4)), np.zeros((2, 0))) == []


@pytest.mark.parametrize("odd", [None, object(), "a string", {"y": 1}, [[1.0, 2.0], [3.0]], np.array(["a", "b"]),
                                 np.array([1 + 2j, 3j]), np.array([object(), object()], dtype=object),
                                 lambda: 0, 10 ** 400])
def test_none_and_objects_say_nothing(odd):
    y = np.arange(6.0).reshape(2, 3)
    assert observe(odd, y) == []
    assert observe(y, odd) == []
    assert observe(odd, odd) == []


def test_booleans_are_not_numbers_to_relate():
    assert observe(True, False) == []
    assert observe(np.bool_(False), np.bool_(True)) == []


def test_integer_array_for_floats_is_compared_by_value():
    want = np.arange(12.0).reshape(3, 4)
    assert observe(want.astype(np.int64), want) == []
    assert observe(2 * want.astype(np.int64), want) == ["the output equals the reference times 2"]


def test_object_array_of_numbers_is_compared():
    want = np.arange(1.0, 7.0).reshape(2, 3)
    assert observe((want * 3).astype(object), want, constants={"T": 3}) == [
        "the output equals the reference times 3 (T)"]


def test_bad_arguments_never_raise():
    want = np.arange(1.0, 7.0)
    assert observe(want * 2, want, rtol=float("nan")) == []
    assert observe(want * 2, want, constants={"x": "a", 3: 4.0, "zero": 0, "inf": float("inf")},
                   inputs={"x": "text", "y": None, 3: want}, axes={"a": "b", 0: 7}, names=(None,)) == [
        "the output equals the reference times 2"]


def test_at_most_four_sentences_most_specific_first():
    rng = np.random.default_rng(42)
    ys = [rng.normal(size=(3, 4)) for _ in range(5)]
    out = observe(tuple(2 * y for y in ys), tuple(ys), names=("a", "b", "c", "d", "e"))
    assert len(out) == 4
    assert out[0] == "a equals the reference's a times 2"


def test_a_blocked_entry_made_small_is_not_zero():
    rng = np.random.default_rng(5)
    s = np.where(causal(4), rng.normal(size=(2, 4, 4)), -np.inf)
    want = softmax(s)
    got = softmax(np.maximum(s - s.max(axis=-1, keepdims=True), -30.0))
    found = findings(got, want, what="the weights")
    assert [f.kind for f in found] == ["mask"] and all(confirm(f, got, want) for f in found)
    assert found[0].text.startswith("the weights are not exactly 0 where the reference is (all 12 entries): "
                                    "they hold numbers from ")
    assert observe(want, want) == [] and observe(want + 1e-12 * (want > 0), want) == []


def test_a_max_over_the_queries_reweights_each_key():
    rng = np.random.default_rng(6)
    s = np.where(causal(5), rng.normal(size=(2, 5, 5)), -np.inf)
    want = softmax(s)
    e = np.exp(s - s.max(axis=-2, keepdims=True))      # each key's max over the queries
    got = e / e.sum(axis=-1, keepdims=True)
    found = findings(got, want, what="the weights")
    assert "reweighted" in [f.kind for f in found] and all(confirm(f, got, want) for f in found)
    assert not [f for f in findings(softmax(rng.normal(size=(2, 5, 5))), softmax(rng.normal(size=(2, 5, 5))))
                if f.kind == "reweighted"]


def test_a_shift_not_added_back_is_an_offset_by_an_input():
    logits = np.random.default_rng(7).normal(size=(3, 5))
    lse = np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1)) + logits.max(-1)
    want = float(np.mean(lse - logits[:, 0]))
    got = want - float(np.mean(logits.max(-1)))
    found = findings(got, want, inputs={"logits": logits}, what="the loss")
    assert [f.detail for f in found if f.kind == "input_offset"] == [("logits", "row_max_mean", -1)]
    assert found[0].text.startswith("the loss is the reference's value minus the mean of the row maxima of logits")
    assert all(confirm(f, got, want, {"logits": logits}) for f in found)


def test_rows_of_zeros_taken_for_padding():
    rng = np.random.default_rng(8)
    x = rng.normal(size=(2, 4, 3))
    x[0, 1] = 0.0
    want = rng.normal(size=(2, 4, 3))
    got = want.copy()
    got[0, 1] = 0.0
    found = findings(got, want, inputs={"x": x}, what="y")
    assert "zero_rows" in [f.kind for f in found] and all(confirm(f, got, want, {"x": x}) for f in found)
    assert not [f for f in findings(got, want, inputs={"x": x + 1}) if f.kind == "zero_rows"]


def test_an_order_of_slices_named_at_every_length():
    want = np.random.default_rng(9).normal(size=(8, 3))
    out = observe(want[[0, 2, 4, 6, 1, 3, 5, 7]], want)
    assert out == ["along axis 0, the output holds the slices of the reference in the order 0, 2, 4, 6, 1, 3, 5, 7 "
                   "(its even-numbered slices first, then its odd-numbered ones)"]
    assert observe(want[[0, 4, 1, 5, 2, 6, 3, 7]], want)[0].endswith("(its two halves interleaved: slice 2i holds its "
                                                                       "slice i, slice 2i + 1 its slice i + n/2)")


# ----------------------------------------------------------------------------- properties over seeds

@pytest.mark.parametrize("seed", range(60))
def test_random_unrelated_arrays_have_no_relation(seed):
    rng = np.random.default_rng(seed)
    ndim = int(rng.integers(1, 5))
    shape = tuple(int(n) for n in rng.integers(1, 5, size=ndim))
    kind = seed % 3
    if kind == 0:
        want, got = rng.normal(size=shape), rng.normal(size=shape)
    elif kind == 1:  # two softmaxes of unrelated logits: the same kind of thing, no relation
        want, got = softmax(rng.normal(size=shape)), softmax(rng.normal(size=shape))
    else:  # masked weights against an unrelated array that is masked the same way
        t = int(rng.integers(2, 6))
        want = softmax(np.where(causal(t), rng.normal(size=(2, t, t)), -np.inf))
        got = np.where(causal(t), rng.random((2, t, t)) + 0.01, 0.0)
    x = rng.normal(size=shape)
    found = findings(got, want, inputs={"x": x}, constants=CONSTANTS)
    assert not [f for f in found if f.kind in STRUCTURAL], found
    for f in found:
        assert confirm(f, got, want), f


@pytest.mark.parametrize("seed", range(200))
def test_every_relation_reported_on_small_discrete_arrays_holds(seed):
    """Few distinct values make real coincidences: whatever is said must then be true."""
    rng = np.random.default_rng(1000 + seed)
    ndim = int(rng.integers(1, 4))
    shape = tuple(int(n) for n in rng.integers(1, 4, size=ndim))
    values = np.array([0.0, 1.0, 2.0, -1.0])[: int(rng.integers(2, 5))]
    want = rng.choice(values, size=shape)
    pick = seed % 4
    if pick == 0:
        got = rng.choice(values, size=shape)
    elif pick == 1:
        got = np.flip(want, axis=int(rng.integers(ndim)))
    elif pick == 2:
        got = want * rng.choice([2.0, -1.0, 0.5]) + rng.choice([0.0, 0.0, 1.0]) * (rng.random(shape) < 0.3)
    else:
        got = np.swapaxes(want, 0, -1) if want.shape[0] == want.shape[-1] else want + 1
    x = rng.choice(values, size=shape)
    for f in findings(got, want, inputs={"x": x}, constants={"T": 3.0}):
        if f.kind == "shape":
            continue
        assert confirm(f, got, want, {"x": x}), (f, got, want)


@pytest.mark.parametrize("seed", range(30))
def test_realistic_mistakes_confirmed(seed):
    q, k, v = qkv(seed, h=4)
    y, w = attention(q, k, v)
    pairs = [(2 * w, w), (w[:, ::-1], w), (w.swapaxes(-1, -2), w), (np.roll(y, 1, axis=2), y), (-y, y),
             (y + q, y), (y + 0.5, y), (w / w.sum(axis=2, keepdims=True), w), (np.where(causal(T), w, w + 1), w)]
    for got, want in pairs:
        found = findings(got, want, inputs={"q": q}, constants=CONSTANTS, axes=AXES)
        assert found, got
        for f in found:
            assert confirm(f, got, want, {"q": q}), f


def test_a_wrong_scale_of_the_scores_is_a_softmax_at_another_temperature():
    rng = np.random.default_rng(3)
    q, k = rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 4))
    scores = q @ k.swapaxes(-1, -2)
    future = np.triu(np.ones((5, 5), dtype=bool), 1)
    want = softmax(np.where(future, -np.inf, scores / 2.0))          # divided by sqrt(d_head) = 2
    got = softmax(np.where(future, -np.inf, scores / 4.0))           # divided by d_head = 4
    found = observe(got, want, what="the weights", constants={"sqrt(d_head)": 2.0})
    assert found[0] == ("the weights are the reference at another temperature: what comes out of the softmax is "
                        "as if every score before it were multiplied by 0.5 (1/sqrt(d_head))")
    assert not any("temperature" in s for s in observe(softmax(rng.normal(size=(2, 5, 5))), want))
