"""Mistakes candidates make in the backward pass of attention.

Every entry is BASE, a plain correct answer, with one edit (`edited` insists that the
edited text is there exactly once). NEAR_MISSES sit next to a catalogued bug (a constant
squared where the catalogued one drops it, a mask one key off where the catalogued one
drops it): each fails the grader and must not be named as the bug it resembles.
"""
from graders.engine.bugs import Bug, edited

BASE = """import numpy as np


def attention_backward(q, k, v, d_out, causal=True):
    t_q, d = q.shape[-2:]
    t_k = k.shape[-2]
    if causal and t_q > t_k:
        raise ValueError("causal attention needs t_q <= t_k")
    scale = 1.0 / np.sqrt(d)
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        future = np.arange(t_k)[None, :] > (t_k - t_q + np.arange(t_q))[:, None]
        s = np.where(future, -np.inf, s)
    s = s - s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    p = p / p.sum(axis=-1, keepdims=True)
    dv = np.swapaxes(p, -1, -2) @ d_out
    dp = d_out @ np.swapaxes(v, -1, -2)
    ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True))
    dq = ds @ k * scale
    dk = np.swapaxes(ds, -1, -2) @ q * scale
    return dq, dk, dv
"""

MASK = "        s = np.where(future, -np.inf, s)\n"
FUTURE = "(t_k - t_q + np.arange(t_q))[:, None]"
DS = "ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True))"
DQ = "dq = ds @ k * scale"
DK = "dk = np.swapaxes(ds, -1, -2) @ q * scale"
SHIFT = "    s = s - s.max(axis=-1, keepdims=True)\n"
SCORES = "    s = q @ np.swapaxes(k, -1, -2) * scale\n"
CHECK = '    if causal and t_q > t_k:\n        raise ValueError("causal attention needs t_q <= t_k")\n'


BUGS = [
    # --- the products
    Bug("dv_not_transposed", "shapes",
        "dv = P @ d_out: out = P v, so each value row collects the d_out of the queries that weighted it, "
        "dv = P^T d_out, shaped (..., T_k, d)",
        edited(BASE, ("dv = np.swapaxes(p, -1, -2) @ d_out", "dv = p @ d_out"))),
    Bug("dk_not_transposed", "shapes",
        "dk = dS @ q: S = q k^T, so the key gradient is dS^T q, one row per key",
        edited(BASE, (DK, "dk = ds @ q * scale"))),
    Bug("dp_without_v_transposed", "shapes",
        "dP = d_out @ v: the gradient of P v with respect to P is d_out v^T, shaped (..., T_q, T_k)",
        edited(BASE, ("dp = d_out @ np.swapaxes(v, -1, -2)", "dp = d_out @ v"))),
    Bug("k_dot_T_batched", "shapes",
        "k.T reverses every axis of a batched k, not just the last two; use np.swapaxes(k, -1, -2)",
        edited(BASE, ("s = q @ np.swapaxes(k, -1, -2) * scale", "s = q @ k.T * scale"))),
    Bug("dq_uses_v", "finite_differences",
        "dq = dS v: the scores are q k^T, so dq = dS k (times the scale); v enters only through dP",
        edited(BASE, (DQ, "dq = ds @ v * scale"))),
    Bug("dq_from_p", "finite_differences",
        "dq = P k: the query gradient goes through the softmax, dq = dS k, with dS = P * (dP - rowsum(dP * P))",
        edited(BASE, (DQ, "dq = p @ k * scale"))),
    # --- the softmax backward
    Bug("rowsum_term_missing", "finite_differences",
        "dS = P * dP drops the second term of the softmax Jacobian: dS = P * (dP - rowsum(dP * P))",
        edited(BASE, (DS, "ds = p * dp"))),
    Bug("rowsum_without_p", "finite_differences",
        "the row term is rowsum(dP), not rowsum(dP * P): each dP_ij is weighted by P_ij before summing",
        edited(BASE, (DS, "ds = p * (dp - dp.sum(axis=-1, keepdims=True))"))),
    # Stack Overflow "numpy: calculate the derivative of the softmax function" (one gradient[i] per i, so the
    # off-diagonal terms of the Jacobian are lost); deep-ml problem 219 (the full Jacobian diag(S) - S S^T)
    Bug("diagonal_jacobian_only", "finite_differences",
        "dS = P * (1 - P) * dP keeps only the diagonal of the softmax Jacobian: every weight of a row depends on "
        "every score of it, so dS = P * (dP - rowsum(dP * P))",
        edited(BASE, (DS, "ds = p * (1 - p) * dp"))),
    # Stack Overflow "numpy: calculate the derivative of the softmax function" (self.value[i] * (1 - self.input[i]):
    # the softmax's inputs where its outputs belong)
    Bug("rowsum_with_scores_not_probs", "finite_differences",
        "the row term weights dP by the scores (the softmax's input) instead of the weights P (its output): "
        "dS = P * (dP - rowsum(dP * P))",
        edited(BASE, (DS, "ds = p * (dp - (dp * np.where(np.isinf(s), 0.0, s)).sum(axis=-1, keepdims=True))"))),
    # triton-lang/triton#919 and #1934 (the tutorial's backward recomputes p = exp(qk - m) with "NOTE: `do` is
    # pre-divided by `l`; no normalization here"); triton-lang/triton PR #2020
    Bug("unnormalised_p_recomputed", "finite_differences",
        "the weights are recomputed as exp(S - max) without dividing by the row sum (the tutorial kernel this "
        "follows divides d_out by it instead); P = exp(S - max) / sum(exp(S - max)), in dV and in dS",
        edited(BASE, ("    p = p / p.sum(axis=-1, keepdims=True)\n", ""))),
    Bug("rowsum_over_queries", "finite_differences",
        "the row term is summed over the queries (axis -2); it belongs to each query's row, summed over "
        "the keys (axis -1)",
        edited(BASE, (DS, "ds = p * (dp - (dp * p).sum(axis=-2, keepdims=True))"))),
    # --- the scale
    Bug("backward_unscaled", "finite_differences",
        "the scale 1/sqrt(d) is applied in the forward pass but not to dq and dk; S = q k^T * scale, so "
        "both gradients carry it once",
        edited(BASE, (DQ, "dq = ds @ k"), (DK, "dk = np.swapaxes(ds, -1, -2) @ q"))),
    Bug("scale_by_d", "finite_differences",
        "the scores are divided by d rather than sqrt(d)",
        edited(BASE, ("scale = 1.0 / np.sqrt(d)", "scale = 1.0 / d"))),
    # --- the mask
    Bug("no_causal_mask", "unseen_keys_get_zero",
        "the causal mask is missing: every query sees every key, so the future gets gradient",
        edited(BASE, (MASK, ""))),
    Bug("top_left_alignment", "bottom_right",
        "the mask is aligned to the top-left (query i sees keys 0..i); with T_q < T_k the queries are the "
        "last T_q positions, so query i sees keys up to T_k - T_q + i",
        edited(BASE, (FUTURE, "np.arange(t_q)[:, None]"))),
    Bug("mask_after_softmax", "finite_differences",
        "the future weights are zeroed after the softmax without renormalising, so the rows no longer sum to 1; "
        "mask the scores with -inf before it",
        edited(BASE, (MASK, ""), ("    p = p / p.sum(axis=-1, keepdims=True)\n",
                                  "    p = p / p.sum(axis=-1, keepdims=True)\n    if causal:\n"
                                  "        p = np.where(future, 0.0, p)\n"))),
    Bug("mask_always_applied", "not_causal",
        "the mask is applied whatever causal says; causal=False lets every query see every key",
        edited(BASE, ("    if causal:\n        future", "    if True:\n        future"))),
    Bug("fixed_mask_table", "long_sequences",
        "the mask is cut from a table built once for 2048 positions; longer sequences do not fit. Build it "
        "from T_q and T_k at each call",
        edited(BASE, ("def attention_backward(", "_FUTURE = np.triu(np.ones((2048, 2048), dtype=bool), 1)\n\n\n"
                                                "def attention_backward("),
               ("        future = np.arange(t_k)[None, :] > " + FUTURE + "\n",
                "        future = _FUTURE[t_k - t_q:t_k, :t_k]\n"))),
    # --- extreme values
    Bug("no_max_shift", "huge_scores",
        "exp of the raw scores overflows at scores near 1e4 (inf / inf is NaN); subtract each row's max first",
        edited(BASE, (SHIFT, ""))),
    Bug("mask_fill_minus_1e4", "huge_scores",
        "the future is filled with -1e4 rather than -inf: a row whose real scores lie below -1e4 puts its "
        "weight on the masked keys",
        edited(BASE, (MASK, "        s = np.where(future, -1e4, s)\n"))),
    Bug("clip_before_exp", "unseen_keys_get_zero",
        "masked keys keep a tiny weight instead of exactly 0 (the exponent clipped, here at -30, or an "
        "epsilon added to the weights), so they receive gradient; exp(-inf) is exactly 0",
        edited(BASE, ("    p = np.exp(s)\n", "    p = np.exp(np.clip(s, -30.0, None))\n"))),
    # --- ValueErrors
    Bug("no_value_error", "value_error",
        "a causal call with T_q > T_k is not refused; the first queries then see no key at all (0 / 0)",
        edited(BASE, (CHECK, ""))),
    Bug("value_error_without_causal", "not_causal",
        "T_q > T_k is refused even with causal=False, where every query sees every key and nothing is wrong",
        edited(BASE, ("if causal and t_q > t_k:", "if t_q > t_k:"))),
    # --- inputs and state
    Bug("scale_in_place", "inputs_unchanged",
        "q *= scale writes into the caller's q (and fails on a read-only one); scale a new array",
        edited(BASE, (SCORES, "    q *= scale\n    s = q @ np.swapaxes(k, -1, -2)\n"),
               (DK, "dk = np.swapaxes(ds, -1, -2) @ q"))),
    Bug("write_through_reshape", "inputs_unchanged",
        "q.reshape(-1, d) is a view of a contiguous q, so scaling it in place writes into the caller's q; "
        "reshape copies only when it has to, so the bug hides on other layouts",
        edited(BASE, (SCORES, "    rows = q.reshape(-1, d)\n    rows *= scale\n    q_scaled = rows.reshape(q.shape)\n"
                              "    s = q_scaled @ np.swapaxes(k, -1, -2)\n"),
               (DK, "dk = np.swapaxes(ds, -1, -2) @ q_scaled"))),
    # --- state kept between calls
    Bug("results_buffer_reused", "repeated_calls",
        "the gradients are copied into module-level buffers reused by every call of the same shapes, so the "
        "next call overwrites arrays the caller still holds; return new arrays",
        edited(BASE, ("def attention_backward(", "_OUT = {}\n\n\ndef attention_backward("),
               ("    return dq, dk, dv\n",
                "    key = (dq.shape, dk.shape, dv.shape, dq.dtype)\n"
                "    if key not in _OUT:\n"
                "        _OUT[key] = (np.empty_like(dq), np.empty_like(dk), np.empty_like(dv))\n"
                "    for buf, g in zip(_OUT[key], (dq, dk, dv)):\n"
                "        buf[...] = g\n"
                "    return _OUT[key]\n")), stateful=True),
]


NEAR_MISSES = [
    Bug("scale_squared", "finite_differences",
        "dq and dk are multiplied by scale**2 = 1/d: the scale is not missing but applied twice; each "
        "gradient carries 1/sqrt(d) once",
        edited(BASE, (DQ, "dq = ds @ k * scale ** 2"), (DK, "dk = np.swapaxes(ds, -1, -2) @ q * scale ** 2")),
        says=('scale',)),
    Bug("mask_one_key_late", "unseen_keys_get_zero",
        "the mask starts one key too late (j > T_k - T_q + i + 1), so each query also sees the key after "
        "its own position: a mask, aligned bottom-right, off by one",
        edited(BASE, (FUTURE, "(t_k - t_q + 1 + np.arange(t_q))[:, None]")), says=('mask',)),
    Bug("mask_one_key_early", "bottom_right",
        "the offset is T_k - T_q - 1, one less than bottom-right: each query misses its own key, and with "
        "T_q == T_k the first query sees nothing (0 / 0)",
        edited(BASE, (FUTURE, "(t_k - t_q - 1 + np.arange(t_q))[:, None]")), says=('mask',)),
    Bug("rowsum_without_keepdims", "finite_differences",
        "the row sum lost keepdims=True, so the (T_q,) sums broadcast along the keys: key j gets query j's "
        "sum (and unequal T_q and T_k cannot broadcast at all)",
        edited(BASE, (DS, "ds = p * (dp - (dp * p).sum(axis=-1))")), says=('conduct',)),
    Bug("max_over_queries", "finite_differences",
        "the max subtracted is each key's max over the queries (axis -2), a different constant for each "
        "key of a row, which changes the softmax; each row needs its own max over the keys",
        edited(BASE, (SHIFT, "    s = s - s.max(axis=-2, keepdims=True)\n")), says=('normalised', 'needs@scale')),
]

# Catalogued mistakes with their trigger moved (another offset, another factor): no entry above is them,
# and the report must say what each is without a name.
VARIANTS = [
    Bug("mask_two_keys_late", "bottom_right",
        "the mask starts two keys too late: each query also sees the two keys after its own position",
        edited(BASE, (FUTURE, "(t_k - t_q + 2 + np.arange(t_q))[:, None]")), says=("mask",)),
    Bug("dv_scaled", "agrees",
        "dv is multiplied by the scale 1/sqrt(d) as dq and dk are; dv = p.T @ d_out carries no scale",
        edited(BASE, ("    dv = np.swapaxes(p, -1, -2) @ d_out\n",
                      "    dv = np.swapaxes(p, -1, -2) @ d_out * scale\n")),
        says=("scale",)),
]
