"""Mistakes candidates make in single-head scaled dot-product attention: each is BASE, a
correct answer, with one mistake edited in. Mistakes of a mask sliced out of a table (the
nanoGPT `block_size` habit) are edits of BASE_TABLE, whose table is built for the sizes
asked. Entries marked stateful keep something between calls."""
from graders.engine.bugs import Bug, edited

BASE = """import numpy as np


def single_head_attention(x, W_q, W_k, W_v, causal=True):
    T = x.shape[0]
    d_k = W_q.shape[1]
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    scores = q @ k.T / d_k ** 0.5
    if causal:
        scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return w @ v, w
"""

MASK = "    if causal:\n        scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores)\n"
FUTURE = "np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores)"
ROW_MAX = "scores.max(axis=-1, keepdims=True)"
ROW_SUM = "e.sum(axis=-1, keepdims=True)"
RETURN = "return w @ v, w"
SHIFTED_EXP = f"np.exp(scores - {ROW_MAX})"

# the mask sliced out of a module-level table, rebuilt whenever a call needs more positions
BASE_TABLE = edited(BASE, ("def single_head_attention(", "_MASK = np.zeros((0, 0), dtype=bool)\n\n\n"
                                                         "def single_head_attention("),
                    ("    T = x.shape[0]\n", "    global _MASK\n    T = x.shape[0]\n"),
                    (MASK, "    if causal:\n"
                           "        if T > len(_MASK):\n"
                           "            _MASK = np.triu(np.ones((T, T), dtype=bool), k=1)\n"
                           "        scores = np.where(_MASK[:T, :T], -np.inf, scores)\n"))
GROW = "        if T > len(_MASK):\n"


BUGS = [
    # ------------------------------------------------------------------ the scale
    Bug("no_scaling", "scale",
        "the scores are not divided by sqrt(d_k): they grow with the width of q and k and the softmax "
        "saturates towards one-hot rows",
        edited(BASE, ("q @ k.T / d_k ** 0.5", "q @ k.T"))),
    Bug("sqrt_d_model", "scale",
        "the scores are divided by sqrt(d_model) (x.shape[1]); the dot products run over d_k = W_q.shape[1] "
        "features, so divide by sqrt(d_k)",
        edited(BASE, ("d_k ** 0.5", "x.shape[1] ** 0.5"))),
    Bug("divides_by_d_k", "scale",
        "the scores are divided by d_k instead of sqrt(d_k): the variance of a dot product is d_k, so its "
        "standard deviation, the thing to divide by, is sqrt(d_k)",
        edited(BASE, ("d_k ** 0.5", "d_k"))),
    # FrancescoSaverioZuppichini/ViT#2 (att = F.softmax(energy, dim=-1) * self.scaling, fixed 2023)
    Bug("scale_after_softmax", "rows_sum_to_one",
        "the weights are multiplied by 1/sqrt(d_k) after the softmax instead of the scores before it: the rows "
        "sum to 1/sqrt(d_k) and the softmax sees unscaled scores; divide the scores, then take the softmax",
        edited(BASE, ("q @ k.T / d_k ** 0.5", "q @ k.T"),
               ("    w = e / e.sum(axis=-1, keepdims=True)\n",
                "    w = e / e.sum(axis=-1, keepdims=True) / d_k ** 0.5\n"))),
    # ------------------------------------------------------------------ the softmax
    Bug("softmax_over_queries", "rows_sum_to_one",
        "the softmax runs over axis 0, so each column (key) sums to 1; it must run over the last axis, "
        "across the keys each query compares against",
        edited(BASE, ("axis=-1", "axis=0"), count=2)),
    Bug("sum_without_keepdims", "rows_sum_to_one",
        "the row sums are taken without keepdims=True: a (T,) vector broadcasts along the rows, so column j "
        "is divided by the sum of row j",
        edited(BASE, (ROW_SUM, "e.sum(axis=-1)"))),
    Bug("max_without_keepdims", "agrees",
        "the row max is subtracted without keepdims=True: a (T,) vector broadcasts along the rows, so column j "
        "is shifted by the max of row j, which is not a constant per row and changes the weights",
        edited(BASE, (ROW_MAX, "scores.max(axis=-1)"))),
    Bug("no_max_shift", "huge_scores",
        "exp of the raw scores: without subtracting each row's max, exp(1e4) is inf (and exp(-1e4) is 0), "
        "giving inf / inf or 0 / 0 = NaN",
        edited(BASE, (f"np.exp(scores - {ROW_MAX})", "np.exp(scores)"))),
    Bug("global_max_shift", "huge_scores",
        "the max of the whole score matrix is subtracted instead of each row's: a row far below the global "
        "max underflows to all zeros, and 0 / 0 is NaN",
        edited(BASE, (ROW_MAX, "np.max(scores)"))),
    Bug("shift_only_past_float64_limit", "huge_scores",
        "the max is subtracted only when scores pass float64's exp limit (~709); float32's exp already "
        "overflows at 89, so always subtract it",
        edited(BASE, (f"    e = np.exp(scores - {ROW_MAX})\n",
                      f"    if np.abs(scores[np.isfinite(scores)]).max() > 700:\n        scores = scores - {ROW_MAX}\n"
                      "    e = np.exp(scores)\n"))),
    # ------------------------------------------------------------------ the mask
    Bug("sum_over_everything", "rows_sum_to_one",
        "the exponentials are divided by the sum of the whole matrix (e.sum() with no axis) instead of "
        "each row's sum",
        edited(BASE, (ROW_SUM, "e.sum()"))),
    Bug("mask_after_softmax", "rows_sum_to_one",
        "the future is zeroed after the softmax without renormalising, so each row sums to less than 1; "
        "set the future scores to -inf before the softmax instead",
        edited(BASE, (MASK, ""),
               (f"    {RETURN}", f"    if causal:\n        w = w * np.tril(np.ones((T, T)))\n    {RETURN}"))),
    Bug("mask_blocks_diagonal", "sees_past",
        "the mask is np.triu(..., k=0), which also blocks the diagonal: position 0 is left with nothing to "
        "attend to (a row of NaN); the future is only j > i, np.triu(..., k=1)",
        edited(BASE, ("dtype=bool), k=1)", "dtype=bool))"))),
    Bug("mask_inverted", "causal",
        "the lower triangle (np.tril) is masked instead of the upper one: True must mark the future, "
        "j > i, which is np.triu(..., k=1)",
        edited(BASE, ("np.triu(np.ones((T, T), dtype=bool), k=1)", "np.tril(np.ones((T, T), dtype=bool), k=-1)"))),
    Bug("mask_off_by_one", "causal",
        "the allowed pairs are np.tril(..., k=1), which also lets each position see the next one; the "
        "allowed pairs are j <= i, np.tril(..., k=0) (or block np.triu(..., k=1))",
        edited(BASE, (FUTURE, "np.where(np.tril(np.ones((T, T), dtype=bool), k=1), scores, -np.inf)"))),
    Bug("mask_by_multiplying", "causal",
        "the scores are multiplied by a 0/1 lower triangle, which makes the future scores 0, not -inf, and "
        "exp(0) is not 0: use np.where(mask, -np.inf, scores)",
        edited(BASE, (FUTURE, "scores * np.tril(np.ones((T, T)))"))),
    # lucidrains/memory-compressed-attention#2 (-float('-inf') in the causal mask, fixed in 49d2e74)
    Bug("plus_inf_fill", "causal",
        "the future is filled with -float('-inf'), which is +inf: the row max is then inf and every row with a "
        "future is NaN; the fill is -inf, with one minus sign",
        edited(BASE, ("-np.inf, scores)", "-float('-inf'), scores)"))),
    Bug("mask_fill_minus_1e4", "huge_scores",
        "the future is filled with -10000 rather than -inf: when a row's real scores are below -1e4 the "
        "'masked' future wins the softmax; use -inf",
        edited(BASE, ("-np.inf, scores)", "-10000.0, scores)"))),
    Bug("causal_never_applied", "causal",
        "the `causal` flag is never used, so the mask is never applied and every position sees the future",
        edited(BASE, (MASK, ""))),
    Bug("causal_always_applied", "not_causal",
        "the mask is applied whatever `causal` says: wrap it in `if causal:` so causal=False sees every position",
        edited(BASE, ("    if causal:\n        scores", "    scores"))),
    Bug("mask_sized_by_d_model", "shapes",
        "the mask is built from x.shape[1] (d_model) instead of x.shape[0] (T): the score matrix is (T, T)",
        edited(BASE, ("T = x.shape[0]", "T = x.shape[1]"))),
    # ------------------------------------------------------------------ the products
    Bug("scores_transposed", "agrees",
        "the scores are k @ q.T, the transpose of q @ k.T: row i must hold query i against every key",
        edited(BASE, ("q @ k.T", "k @ q.T"))),
    Bug("weights_transposed_in_output", "prefix",
        "out is weights.T @ v: row i of out then mixes the values by column i of the weights, which "
        "reaches into the future; out = weights @ v",
        edited(BASE, (RETURN, "return w.T @ v, w"))),
    # rasbt LLMs-from-scratch ch. 3.3.1 (the context vector as a weighted sum of the inputs)
    Bug("values_not_projected", "agrees",
        "the weights mix the inputs x instead of the values v = x @ W_v (the weightless tutorial step): "
        "out = weights @ v",
        edited(BASE, (RETURN, "return w @ x, w"))),
    # rasbt LLMs-from-scratch ch. 3.3.1 (attn_weights_2_tmp = attn_scores_2 / attn_scores_2.sum())
    Bug("sum_normalisation_not_softmax", "agrees",
        "the scores are divided by their row sum instead of going through a softmax: negative scores give "
        "negative weights, and a row summing to near 0 blows up; exponentiate (after the max shift) first",
        edited(BASE, (f"    e = {SHIFTED_EXP}\n", "    e = np.where(np.isneginf(scores), 0.0, scores)\n"))),
    Bug("returns_swapped", "shapes",
        "the results come back as (weights, out); the contract is (out, weights)",
        edited(BASE, (RETURN, "return w, w @ v"))),
    # discuss.pytorch.org "Understanding nn.MultiheadAttention" (in_proj_weight used as x @ W)
    Bug("projections_transposed", "agrees",
        "the projections are applied as x @ W.T (the nn.Linear (out, in) habit); here W_q, W_k and W_v are "
        "(d_model, d_k), laid out for x @ W (when d_model != d_k the shapes do not even match)",
        edited(BASE, ("q, k, v = x @ W_q, x @ W_k, x @ W_v", "q, k, v = x @ W_q.T, x @ W_k.T, x @ W_v.T"))),
    # ------------------------------------------------------------------ the inputs
    Bug("scales_W_q_in_place", "inputs_unchanged",
        "`W_q /= np.sqrt(d_k)` folds the scale into the caller's weight matrix, in place: scale q (or the "
        "scores) instead, or use W_q = W_q / np.sqrt(d_k)",
        edited(BASE, ("    q, k, v =", "    W_q /= np.sqrt(d_k)\n    q, k, v ="), ("q @ k.T / d_k ** 0.5", "q @ k.T"))),
    # ------------------------------------------------------------------ sizes and state
    Bug("precomputed_mask_1024", "long_sequence",
        "the mask is sliced out of a table built once for 1024 positions (a fixed block_size), so a sequence "
        "longer than 1024 gets a mask that does not fit its scores; build the mask for the T of the call",
        edited(BASE_TABLE, ("_MASK = np.zeros((0, 0), dtype=bool)",
                            "_MASK = np.triu(np.ones((1024, 1024), dtype=bool), k=1)"), (GROW, "        if False:\n"))),
    Bug("mask_from_first_call", "agrees",
        "the mask table is built at the first call's length and never grown, so a later, longer sequence gets "
        "a mask that does not fit its scores",
        edited(BASE_TABLE, (GROW, "        if len(_MASK) == 0:\n")), stateful=True),
    Bug("weights_buffer_reused", "repeated_calls",
        "the weights are written into one module-level buffer per shape and returned, so the next call of that "
        "shape overwrites weights the caller still holds; return a new array each call",
        edited(BASE, ("def single_head_attention(", "_W = {}\n\n\ndef single_head_attention("),
               ("    w = e / e.sum(axis=-1, keepdims=True)\n",
                "    w = _W.setdefault((e.shape, e.dtype), np.empty_like(e))\n"
                "    np.divide(e, e.sum(axis=-1, keepdims=True), out=w)\n")), stateful=True),
    # ------------------------------------------------------------------ special values and tolerance edges
    Bug("zero_scores_taken_as_masked", "zero_rows",
        "the future is zeroed by multiplying with a 0/1 triangle and every 0 then replaced by -inf, so a score "
        "that is exactly 0 (a zero row of x, padding) is masked too, and a zero query's row becomes 0 / 0; "
        "choose the masked entries from the mask, not from the values",
        edited(BASE, (MASK, "    if causal:\n        scores = scores * np.tril(np.ones((T, T)))\n"
                            "    scores = np.where(scores == 0, -np.inf, scores)\n"))),
    Bug("clipped_exponent", "tiny_weights",
        "the shifted scores are clipped at -20 before exp, so every weight below exp(-20) = 2e-9 is rounded up "
        "to it (and the masked future gets 2e-9 instead of 0); exp of a very negative number needs no clipping",
        edited(BASE, (SHIFTED_EXP, f"np.exp(np.maximum(scores - {ROW_MAX}, -20.0))"))),
    Bug("reshape_instead_of_transpose", "agrees",
        "k.reshape(d_k, T) is not k.T: it keeps the entries in their order and cuts them into rows of T, so the "
        "scores mix features of different positions; transpose with k.T",
        edited(BASE, ("q @ k.T", "q @ k.reshape(d_k, T)"))),
]

# Close to a catalogued bug, but a different mistake: the grader must fail each one without
# naming any entry of BUGS.
NEAR_MISSES = [
    Bug("stale_mask_from_first_call", "shapes",
        "the mask built at the first call is kept and used whole by every later call: right at the first "
        "length, a broadcasting error or a wrong shape at any other",
        edited(BASE, ("def single_head_attention(", "_MASK = None\n\n\ndef single_head_attention("),
               (MASK, "    global _MASK\n"
                      "    if _MASK is None:\n"
                      "        _MASK = np.triu(np.ones((T, T), dtype=bool), k=1)\n"
                      "    if causal:\n"
                      "        scores = np.where(_MASK, -np.inf, scores)\n")), stateful=True, says=('history',)),
    Bug("clipped_exponent_at_minus_30", "causal",
        "the shifted scores are clipped at -30 before exp: float64's tolerance does not see the weights rounded "
        "up to 9e-14, but the masked future gets 9e-14 instead of exactly 0",
        edited(BASE, (SHIFTED_EXP, f"np.exp(np.maximum(scores - {ROW_MAX}, -30.0))")), says=('clip', 'mask')),
    Bug("max_over_queries", "agrees",
        "the max subtracted before exp is each column's (axis 0), not each row's: the shift is no longer "
        "constant along a row, so the weights change",
        edited(BASE, (ROW_MAX, "scores.max(axis=0, keepdims=True)")), says=('normalised', 'needs@scale')),
    Bug("sum_over_queries", "rows_sum_to_one",
        "the exponentials are divided by each column's sum (axis 0) while the max is each row's: the columns, "
        "not the rows, sum to 1",
        edited(BASE, (ROW_SUM, "e.sum(axis=0, keepdims=True)")), says=('normalised',)),
    Bug("scale_sqrt_T", "scale",
        "the scores are divided by sqrt(T), the number of positions, instead of sqrt(d_k), the width of q and k",
        edited(BASE, ("d_k ** 0.5", "T ** 0.5")), says=('scale',)),
    # Shen-Lab/TALE#5 (a reader took `q *= depth ** -0.5` for a multiplication by sqrt(d_k))
    Bug("multiplies_by_sqrt_dk", "scale",
        "the scores are multiplied by sqrt(d_k) instead of divided by it",
        edited(BASE, ("q @ k.T / d_k ** 0.5", "q @ k.T * d_k ** 0.5")), says=('scale',)),
]

# Catalogued mistakes with their trigger moved (another offset, another factor): no entry above is them,
# and the report must say what each is without a name.
VARIANTS = [
    Bug("mask_off_by_two", "causal",
        "the mask is np.triu(..., k=3): each position also sees the next two",
        edited(BASE, ("np.triu(np.ones((T, T), dtype=bool), k=1)", "np.triu(np.ones((T, T), dtype=bool), k=3)")),
        says=("mask",)),
    Bug("scale_twice_sqrt_d_k", "scale",
        "the scores are divided by 2 * sqrt(d_k): the factor 2 does not belong",
        edited(BASE, ("q @ k.T / d_k ** 0.5", "q @ k.T / (2 * d_k ** 0.5)")), says=("scale",)),
]
