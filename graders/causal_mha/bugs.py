"""Mistakes candidates make in batched causal multi-head attention.

Every entry is BASE, a correct answer, with one mistake edited in, so each bug reads as
exactly one mistake. Two mistakes only exist in another layout, so they are edits of a
correct answer written that way, BASE_EINSUM and BASE_LOOP. Entries marked stateful keep
something between calls (a buffer, a cached mask), so only the whole sequence of calls, in
order, shows what they do. NEAR_MISSES sit next to a catalogued bug without being it: the
grader fails each one and names no bug for it.
"""
from graders.engine.bugs import Bug, edited

# the signature and the check on the head count, which every layout below shares
HEAD = """import numpy as np


def causal_mha(x, W_q, W_k, W_v, W_o, n_heads):
    B, T, d_model = x.shape
    if d_model % n_heads != 0:
        raise ValueError("n_heads must divide d_model")
    d_head = d_model // n_heads
"""

BASE = HEAD + """
    def split(t):
        return t.reshape(B, T, n_heads, d_head).transpose(0, 2, 1, 3)

    q, k, v = split(x @ W_q), split(x @ W_k), split(x @ W_v)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_head)
    mask = np.triu(np.ones((T, T), dtype=bool), k=1)
    scores = np.where(mask, -np.inf, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    out = (w @ v).transpose(0, 2, 1, 3).reshape(B, T, d_model)
    return out @ W_o, w
"""

# the heads kept after the positions, (B, T, n_heads, ...), and contracted with einsum
BASE_EINSUM = edited(
    BASE,
    (".transpose(0, 2, 1, 3)\n\n", "\n\n"),
    ("q @ k.transpose(0, 1, 3, 2)", 'np.einsum("bqhd,bkhd->bqhk", q, k)'),
    ("np.where(mask,", "np.where(mask[:, None, :],"),
    ("(w @ v).transpose(0, 2, 1, 3)", 'np.einsum("bqhk,bkhd->bqhd", w, v)'),
    ("return out @ W_o, w", "return out @ W_o, w.transpose(0, 2, 1, 3)"))

# the heads cut with np.array_split and attended to one at a time
BASE_LOOP = HEAD + """    q, k, v = x @ W_q, x @ W_k, x @ W_v
    mask = np.triu(np.ones((T, T), dtype=bool), k=1)
    outs, weights = [], []
    for qh, kh, vh in zip(np.array_split(q, n_heads, axis=-1), np.array_split(k, n_heads, axis=-1),
                          np.array_split(v, n_heads, axis=-1)):
        s = qh @ kh.transpose(0, 2, 1) / np.sqrt(d_head)
        s = np.where(mask, -np.inf, s)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        w = e / e.sum(axis=-1, keepdims=True)
        outs.append(w @ vh)
        weights.append(w)
    return np.concatenate(outs, axis=-1) @ W_o, np.stack(weights, axis=1)
"""

CHECK = '    if d_model % n_heads != 0:\n        raise ValueError("n_heads must divide d_model")\n'
MASKING = "    scores = np.where(mask, -np.inf, scores)\n"
NORMALISE = "    w = w / w.sum(axis=-1, keepdims=True)\n"
ZERO_FUTURE = "    w = np.where(mask, 0.0, w)\n"
MERGE = "(w @ v).transpose(0, 2, 1, 3)"
SCORES = "q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_head)"
NO_SCALE = (SCORES, "q @ k.transpose(0, 1, 3, 2)")
MASK = "np.triu(np.ones((T, T), dtype=bool), k=1)"
RETURN = f"    out = {MERGE}.reshape(B, T, d_model)\n    return out @ W_o, w\n"
# module state: a line before the function, and `global` as its first statement
STATE = ("def causal_mha(", "{}\n\n\ndef causal_mha(")
GLOBAL = ("    B, T, d_model = x.shape\n", "    global {}\n    B, T, d_model = x.shape\n")


def with_state(name, value, *changes):
    """BASE with a module-level variable `name` (first set to `value`) and the edits `changes`."""
    return edited(BASE, (STATE[0], STATE[1].format(f"{name} = {value}")),
                  (GLOBAL[0], GLOBAL[1].format(name)), *changes)


BUGS = [
    Bug("k_dot_T_on_4d", "shapes",
        "`k.T` on the 4-D key array reverses all four axes, (B, n_heads, T, d_head) -> (d_head, T, "
        "n_heads, B); swap only the last two: k.transpose(0, 1, 3, 2) or np.swapaxes(k, -1, -2)",
        edited(BASE, ("k.transpose(0, 1, 3, 2)", "k.T"))),
    Bug("merge_without_transpose", "agrees",
        "the heads are merged by reshaping (B, n_heads, T, d_head) straight to (B, T, d_model): the "
        "shape is right but positions and heads are interleaved; transpose(0, 2, 1, 3) first",
        edited(BASE, (MERGE + ".reshape", "(w @ v).reshape"))),
    Bug("split_by_straight_reshape", "head_columns",
        "the heads are split by reshaping (B, T, d_model) straight to (B, n_heads, T, d_head), which "
        "cuts across positions; reshape to (B, T, n_heads, d_head), then transpose(0, 2, 1, 3)",
        edited(BASE, ("t.reshape(B, T, n_heads, d_head).transpose(0, 2, 1, 3)", "t.reshape(B, n_heads, T, d_head)"),
               (MERGE + ".reshape", "(w @ v).reshape"))),
    Bug("split_transpose_0231", "shapes",
        "the split used transpose(0, 2, 3, 1), giving (B, n_heads, d_head, T): that is the layout of "
        "k transposed, not of q, k and v; use transpose(0, 2, 1, 3)",
        edited(BASE, ("transpose(0, 2, 1, 3)\n\n", "transpose(0, 2, 3, 1)\n\n"))),
    Bug("reshape_heads_swapped", "shapes",
        "n_heads and d_head are swapped in the reshape, (B, T, d_head, n_heads): every head then has "
        "the wrong size, and the weights get d_head heads instead of n_heads",
        edited(BASE, ("t.reshape(B, T, n_heads, d_head)", "t.reshape(B, T, d_head, n_heads)"))),
    Bug("split_strided_columns", "head_columns",
        "the split reshaped to (B, T, d_head, n_heads), so head h takes every n_heads-th feature "
        "(columns h::n_heads) instead of the block h*d_head:(h+1)*d_head",
        edited(BASE, ("t.reshape(B, T, n_heads, d_head).transpose(0, 2, 1, 3)",
                      "t.reshape(B, T, d_head, n_heads).transpose(0, 3, 1, 2)"))),
    Bug("scale_sqrt_d_model", "agrees",
        "the scores are divided by sqrt(d_model); each head's dot product has d_head terms, so the "
        "scale is sqrt(d_head)",
        edited(BASE, ("np.sqrt(d_head)", "np.sqrt(d_model)"))),
    Bug("no_scaling", "agrees",
        "the scores are not divided by sqrt(d_head), so they grow with the head size and the softmax "
        "saturates",
        edited(BASE, NO_SCALE)),
    Bug("scale_sqrt_T", "prefix",
        "the scores are divided by sqrt(T), the number of keys, instead of sqrt(d_head), the size of "
        "a head; the output then changes with the sequence's length",
        edited(BASE, ("np.sqrt(d_head)", "np.sqrt(T)"))),
    Bug("softmax_over_queries", "rows_sum_to_one",
        "the softmax runs over axis -2 (the queries); it must run over the last axis, the keys, so "
        "that each query's weights sum to 1",
        edited(BASE, ("axis=-1", "axis=-2"), count=2)),
    Bug("mask_blocks_diagonal", "rows_sum_to_one",
        "the mask is np.triu(..., k=0), which also blocks the diagonal: position 0 then has no key "
        "left and its row is 0 / 0; use k=1, since a position may attend to itself",
        edited(BASE, ("k=1)", "k=0)"))),
    Bug("mask_blocks_the_past", "causal",
        "the mask is np.tril(..., k=-1), which blocks the past instead of the future; the future is "
        "the strict upper triangle, np.triu(..., k=1)",
        edited(BASE, ("np.triu(np.ones((T, T), dtype=bool), k=1)", "np.tril(np.ones((T, T), dtype=bool), k=-1)"))),
    Bug("no_causal_mask", "causal",
        "there is no causal mask: set the scores of later positions to -inf before the softmax",
        edited(BASE, (MASKING, ""))),
    Bug("mask_multiplies_scores", "causal",
        "the future scores are multiplied by 0, but a score of 0 still gets exp(0) > 0 of the weight; "
        "set them to -inf instead",
        edited(BASE, ("np.where(mask, -np.inf, scores)", "scores * ~mask"))),
    Bug("future_zeroed_after_softmax", "rows_sum_to_one",
        "the future weights are zeroed after the softmax without renormalising, so the rows no longer "
        "sum to 1; mask the scores with -inf before the softmax instead",
        edited(BASE, (MASKING, ""), (NORMALISE, NORMALISE + ZERO_FUTURE))),
    Bug("mask_after_softmax_renormalised", "huge_scores",
        "the mask is applied after the softmax and the rows renormalised: exact in theory, but a large "
        "future score underflows every allowed weight to 0 first, and 0 / 0 is NaN; mask before",
        edited(BASE, (MASKING, ""), (NORMALISE, NORMALISE + ZERO_FUTURE + NORMALISE))),
    Bug("no_max_shift", "huge_scores",
        "the softmax does not subtract the row maximum, so exp of a score near 1e4 is inf and inf / inf "
        "is NaN",
        edited(BASE, ("    scores = scores - scores.max(axis=-1, keepdims=True)\n", ""))),
    Bug("global_max_shift", "huge_scores",
        "the maximum subtracted before exp is that of the whole array, not of each row: rows far below "
        "it underflow to 0 / 0; use scores.max(axis=-1, keepdims=True)",
        edited(BASE, ("scores.max(axis=-1, keepdims=True)", "scores.max()"))),
    # lucidrains/memory-compressed-attention#2 (-float('-inf') in the causal mask, fixed in 49d2e74)
    Bug("plus_inf_fill", "causal",
        "the future is filled with -float('-inf'), which is +inf: the row max is then inf and every row with a "
        "future is NaN; the fill is -inf, with one minus sign",
        edited(BASE, ("np.where(mask, -np.inf, scores)", "np.where(mask, -float('-inf'), scores)"))),
    Bug("additive_mask_minus_1e4", "huge_scores",
        "the future is masked by adding -1e4 (the old additive-mask habit): once scores are of order 1e4 "
        "a masked score can still beat the allowed ones; set the future to -inf",
        edited(BASE, ("np.where(mask, -np.inf, scores)", "scores - 1e4 * mask"))),
    Bug("mask_fill_minus_1e4", "huge_scores",
        "the future is filled with -1e4 rather than -inf: when a row's real scores fall below -1e4 the "
        "masked entries win the softmax; -inf is below every score",
        edited(BASE, ("np.where(mask, -np.inf, scores)", "np.where(mask, -1e4, scores)"))),
    Bug("mask_off_by_one", "causal",
        "the mask is np.triu(..., k=2), so each position also sees the next one; the future starts right "
        "after the diagonal, k=1",
        edited(BASE, ("k=1)", "k=2)"))),
    Bug("boolean_mask_on_4d_scores", "shapes",
        "`scores[mask] = -np.inf` with a (T, T) mask indexes the first two axes of the 4-D scores (batch "
        "and heads), not the last two; write scores[..., mask] = -np.inf or use np.where",
        edited(BASE, (MASKING, "    scores[mask] = -np.inf\n"))),
    Bug("merge_swaps_batch_axis", "batch_independence",
        "the heads are merged with swapaxes(0, 2), which swaps the batch axis with the positions; it "
        "looks right for one sequence and mixes sequences in a batch; use transpose(0, 2, 1, 3)",
        edited(BASE, (MERGE, "(w @ v).swapaxes(0, 2)"))),
    Bug("projections_transposed", "agrees",
        "the projections are applied as x @ W.T (the nn.Linear habit); here W is (d_model, d_model) "
        "laid out for x @ W",
        edited(BASE, ("split(x @ W_q), split(x @ W_k), split(x @ W_v)",
                      "split(x @ W_q.T), split(x @ W_k.T), split(x @ W_v.T)"))),
    Bug("output_projection_transposed", "agrees",
        "the output projection is applied as merged @ W_o.T; the contract's W_o is laid out for merged @ W_o",
        edited(BASE, ("out @ W_o", "out @ W_o.T"))),
    Bug("in_place_scale", "inputs_unchanged",
        "`W_q /= np.sqrt(d_head)` folds the scale into the caller's W_q; scale a new array "
        "(q = x @ W_q / ...) instead",
        edited(BASE, ("    q, k, v = split(x @ W_q)", "    W_q /= np.sqrt(d_head)\n    q, k, v = split(x @ W_q)"),
               NO_SCALE)),
    Bug("mask_on_wrong_axes", "causal",
        "the scores are laid out (B, T, n_heads, T), so the (T, T) mask broadcasts against the (n_heads, "
        "T) axes: an error when n_heads != T, a wrong mask when they are equal; move the heads in front "
        "of the positions, or index the mask as mask[:, None, :]",
        edited(BASE_EINSUM, ("np.where(mask[:, None, :],", "np.where(mask,"))),
    Bug("no_value_error_array_split", "raises",
        "np.array_split quietly makes heads of unequal size when n_heads does not divide d_model; check "
        "d_model % n_heads and raise ValueError",
        edited(BASE_LOOP, (CHECK, ""))),
    Bug("heads_averaged_through_W_o", "agrees",
        "each head is projected by its own rows of W_o and the results are averaged; concatenating the "
        "heads and applying W_o is their sum, not their mean",
        edited(BASE, (RETURN,
                      "    W_o_heads = W_o.reshape(n_heads, d_head, d_model)     # the rows of W_o each head feeds\n"
                      "    per_head = (w @ v) @ W_o_heads                        # (B, n_heads, T, d_model)\n"
                      "    return per_head.mean(axis=1), w\n"))),
    # pytorch/pytorch#122959 ("I forgot to set batch_first=True"); jadore801120/attention-is-all-you-need-pytorch#179
    Bug("seq_first_layout", "batch_independence",
        "x is read as (T, B, d_model), nn.MultiheadAttention's default batch_first=False: every reshape then cuts "
        "the array at the wrong sizes, mixing the positions of different sequences, and y comes back (T, B, "
        "d_model); here x is (B, T, d_model)",
        edited(BASE, ("    B, T, d_model = x.shape\n", "    T, B, d_model = x.shape\n"))),
    # PyTorch forum "Understanding nn.MultiheadAttention" (q @ k.T / sqrt(embed_dim // num_heads), no split)
    Bug("heads_never_split", "agrees",
        "the heads are never split: one attention runs over all d_model features (while the scale is still "
        "sqrt(d_head)); reshape q, k and v to (B, n_heads, T, d_head) so that each head has its own weights",
        edited(BASE, ("        return t.reshape(B, T, n_heads, d_head).transpose(0, 2, 1, 3)\n",
                      "        return t[:, None]\n"))),
    # torch nn.MultiheadAttention(average_attn_weights=True), the default
    Bug("weights_averaged_over_heads", "shapes",
        "the weights are averaged over the heads before they are returned (nn.MultiheadAttention's "
        "average_attn_weights=True): the contract returns each head's, (B, n_heads, T, T)",
        edited(BASE, ("    return out @ W_o, w\n", "    return out @ W_o, w.mean(axis=1)\n"))),
    # mentords.ru MHA interview trainer, "Typical mistakes": "Forget output projection"
    Bug("output_projection_missing", "agrees",
        "the merged heads are returned without the output projection: y = merged @ W_o",
        edited(BASE, ("    return out @ W_o, w\n", "    return out, w\n"))),
    # --- sizes: nanoGPT's habit of a mask precomputed for block_size positions
    Bug("mask_table_1024", "long_sequence",
        "the mask is sliced from a table precomputed at a fixed size (nanoGPT's block_size habit), which a "
        "longer sequence outgrows; build the mask for the T of the call",
        edited(BASE, (STATE[0], STATE[1].format("FUTURE = np.triu(np.ones((1024, 1024), dtype=bool), k=1)")),
               (f"mask = {MASK}", "mask = FUTURE[:T, :T]"))),
    # --- state kept between calls
    Bug("weights_buffer_reused", "repeated_calls",
        "the weights are written into a module-level buffer that every call of the same shape reuses, so the "
        "next call overwrites weights the caller still holds; return a new array each call",
        with_state("_weights", "{}", (NORMALISE, NORMALISE +
                   "    buf = _weights.setdefault((w.shape, w.dtype), np.empty_like(w))\n"
                   "    buf[...] = w\n    w = buf\n")), stateful=True),
    # --- input layouts: an in-place reshape works on a contiguous x only
    Bug("flattens_x_by_setting_shape", "layouts",
        "x is flattened by assigning x.shape (and restored afterwards), which works only when x is "
        "C-contiguous: a transposed, strided or Fortran-ordered x cannot be reshaped in place; use "
        "x.reshape(B * T, d_model), which copies when it must",
        edited(BASE, ("    q, k, v = split(x @ W_q), split(x @ W_k), split(x @ W_v)\n",
                      "    x.shape = (B * T, d_model)\n"
                      "    q, k, v = split(x @ W_q), split(x @ W_k), split(x @ W_v)\n"
                      "    x.shape = (B, T, d_model)\n"))),
    # --- special values: a row of zeros (padding) has scores of exactly 0
    Bug("mask_by_zero_scores", "agrees",
        "the future is found as the scores equal to 0 after zeroing it (scores[scores == 0] = -inf), which "
        "also blocks every real score that is exactly 0: a row of x that is all zeros (padding) then has no "
        "key left (0 / 0), and no query sees it; mask by position, np.triu(..., k=1)",
        edited(BASE, (MASKING, "    scores = np.where(mask, 0.0, scores)\n    scores[scores == 0] = -np.inf\n"))),
    # --- tolerance edges: clipping before exp is exact only while no score reaches the clip
    Bug("scores_clipped", "huge_scores",
        "the scores are clipped to [-88, 88] before the softmax (so that exp cannot overflow): scores beyond "
        "that all become equal and share the weight; subtracting each row's maximum already keeps exp finite",
        edited(BASE, (f"scores = {SCORES}", f"scores = np.clip({SCORES}, -88.0, 88.0)"))),
    # --- the contract's error
    Bug("assert_instead_of_value_error", "raises",
        "the head count is checked with assert, which raises AssertionError (and vanishes under python -O); "
        "the contract asks for ValueError",
        edited(BASE, (CHECK, '    assert d_model % n_heads == 0, "n_heads must divide d_model"\n'))),
]


# Close to a catalogued bug, but another mistake: the grader fails each and names no bug.
NEAR_MISSES = [
    Bug("mask_cached_from_first_call", "shapes",
        "the mask is built at the first call's T and reused by every later call, whatever its T: not a table "
        "of fixed size, but one as large as the first sequence happened to be",
        with_state("_future", "None", (f"    mask = {MASK}\n",
                                       f"    if _future is None:\n        _future = {MASK}\n    mask = _future\n")),
        stateful=True, says=('history',)),
    Bug("y_buffer_reused", "repeated_calls",
        "y (not the weights) is written into a module-level buffer that every call of the same shape reuses",
        with_state("_y", "{}", ("    return out @ W_o, w\n",
                                "    y = out @ W_o\n    buf = _y.setdefault((y.shape, y.dtype), np.empty_like(y))\n"
                                "    buf[...] = y\n    return buf, w\n")), stateful=True, says=('conduct', 'history')),
    Bug("scores_clipped_after_masking", "causal",
        "the scores are clipped to [-88, 88] after the mask, so the masked -inf becomes -88 and the future "
        "gets a small weight that is not 0",
        edited(BASE, (MASKING, MASKING + "    scores = np.clip(scores, -88.0, 88.0)\n")),
        says=('mask', 'clip', 'needs@scale')),
    Bug("value_check_more_heads_than_features", "raises",
        "the check refuses more heads than features, not a head count that does not divide d_model, and "
        "np.array_split quietly makes unequal heads",
        edited(BASE_LOOP, ("if d_model % n_heads != 0:", "if n_heads > d_model:")), says=('conduct',)),
    Bug("zero_rows_give_zero_output", "agrees",
        "rows of x that are all zero are treated as padding and their output set to 0; the contract has no "
        "padding, a zero row is a position like any other",
        edited(BASE, ("    return out @ W_o, w\n",
                      "    y = out @ W_o\n    y[np.all(x == 0, axis=-1)] = 0.0\n    return y, w\n")),
        says=('where@y', 'input')),
]

# Catalogued mistakes with their trigger moved (another factor, another cache key): no entry above is
# them, and the report must say what each is without a name.
VARIANTS = [
    Bug("scale_by_n_heads_too", "agrees",
        "the scores are divided by sqrt(d_head) and by n_heads as well",
        edited(BASE, ("/ np.sqrt(d_head)", "/ np.sqrt(d_head) / n_heads")), says=("scale",)),
    Bug("mask_cached_by_batch", "agrees",
        "the mask is cached by the batch size B, so a later call with as many sequences and another T gets a mask "
        "of the earlier T",
        edited(BASE, ("def causal_mha(", "_MASKS = {}\n\n\ndef causal_mha("),
               ("    mask = np.triu(np.ones((T, T), dtype=bool), k=1)\n",
                "    if B not in _MASKS:\n        _MASKS[B] = np.triu(np.ones((T, T), dtype=bool), k=1)\n"
                "    mask = _MASKS[B]\n")),
        stateful=True, says=("history",)),
]
