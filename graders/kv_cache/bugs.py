"""Mistakes candidates make in attention over a KV cache.

Every entry is the plain answer BASE with one mistake edited in. The `stateful` entries keep
something at module level between calls, so the diagnosis replays them on every call in order.
"""
from graders.engine.bugs import Bug, edited

BASE = """import numpy as np


def attend_with_cache(x, W_q, W_k, W_v, W_o, n_heads, cache=None):
    B, t_new, d_model = x.shape
    if d_model % n_heads != 0:
        raise ValueError("n_heads must divide d_model")
    if t_new == 0:
        raise ValueError("no new positions")
    d_head = d_model // n_heads

    def split(t):
        return t.reshape(B, t_new, n_heads, d_head).transpose(0, 2, 1, 3)

    q, k, v = split(x @ W_q), split(x @ W_k), split(x @ W_v)
    if cache is not None:
        k_past, v_past = cache
        if k_past.ndim != 4 or k_past.shape[:2] != (B, n_heads) or k_past.shape[3] != d_head:
            raise ValueError("the cached keys do not fit x and n_heads")
        if v_past.shape != k_past.shape:
            raise ValueError("the cached keys and values differ in shape")
        k = np.concatenate([k_past, k], axis=2)
        v = np.concatenate([v_past, v], axis=2)
    t_past = k.shape[2] - t_new
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_head)
    mask = np.triu(np.ones((t_new, t_past + t_new), dtype=bool), k=t_past + 1)
    scores = np.where(mask, -np.inf, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    out = (w @ v).transpose(0, 2, 1, 3).reshape(B, t_new, d_model)
    return out @ W_o, (k, v)
"""

CHECK_CACHE = """        if k_past.ndim != 4 or k_past.shape[:2] != (B, n_heads) or k_past.shape[3] != d_head:
            raise ValueError("the cached keys do not fit x and n_heads")
        if v_past.shape != k_past.shape:
            raise ValueError("the cached keys and values differ in shape")
"""
APPEND = """    if cache is not None:
        k_past, v_past = cache
""" + CHECK_CACHE + """        k = np.concatenate([k_past, k], axis=2)
        v = np.concatenate([v_past, v], axis=2)
"""


BUGS = [
    Bug("top_left_alignment", "chunks",
        "the mask puts new position i at absolute position i (top-left alignment), so it misses the cached "
        "positions after i; the new positions are the last t_new, so new position i sits at t_past + i",
        edited(BASE, ("k=t_past + 1)", "k=1)"))),
    Bug("mask_restarts_each_chunk", "chunks",
        "each chunk attends only to its own positions, as if the sequence restarted at every chunk: the keys "
        "and values are appended to the cache only after attention; new position i must see every cached "
        "position as well as new positions 0..i",
        edited(BASE, (APPEND, ""), ("    return out @ W_o, (k, v)\n", APPEND + "    return out @ W_o, (k, v)\n"))),
    Bug("no_mask_for_chunk", "chunks",
        "there is no causal mask: one token at a time that is right (a single new position may see every "
        "key), but a prompt or a chunk of several positions then sees its own future",
        edited(BASE, ("    scores = np.where(mask, -np.inf, scores)\n", ""))),
    Bug("cache_k_v_swapped", "cache_contents",
        "the returned cache is (v, k), values first: the next call then attends with the values as keys",
        edited(BASE, ("return out @ W_o, (k, v)", "return out @ W_o, (v, k)"))),
    Bug("keys_cached_prescaled", "cache_contents",
        "the keys are stored in the cache already divided by sqrt(d_head): attention comes out right on your "
        "own cache, but the cache must hold x @ W_k split into heads, unscaled, so that any caller's cache "
        "(and the causal_mha layer's keys) agree with it",
        edited(BASE, ("split(x @ W_k), split(x @ W_v)", "split(x @ W_k) / np.sqrt(d_head), split(x @ W_v)"),
               ("q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_head)", "q @ k.transpose(0, 1, 3, 2)"))),
    Bug("np_append_flattens", "cache_contents",
        "np.append without an axis flattens both arrays, so after the reshape the new positions are spread "
        "over the wrong heads and sequences; append along the positions axis, axis 2",
        edited(BASE, ("np.concatenate([k_past, k], axis=2)", "np.append(k_past, k).reshape(B, n_heads, -1, d_head)"),
               ("np.concatenate([v_past, v], axis=2)", "np.append(v_past, v).reshape(B, n_heads, -1, d_head)"))),
    Bug("cache_in_b_t_h_d_layout", "shapes",
        "the cache is kept as (B, t, n_heads, d_head), before the heads are moved in front of the positions; "
        "the contract's cache is (B, n_heads, t, d_head), the layout the scores are computed in",
        edited(BASE,
               ("    q, k, v = split(x @ W_q), split(x @ W_k), split(x @ W_v)\n",
                "    q = split(x @ W_q)\n    k = (x @ W_k).reshape(B, t_new, n_heads, d_head)\n"
                "    v = (x @ W_v).reshape(B, t_new, n_heads, d_head)\n"),
               (CHECK_CACHE, ""),
               ("np.concatenate([k_past, k], axis=2)", "np.concatenate([k_past, k], axis=1)"),
               ("np.concatenate([v_past, v], axis=2)", "np.concatenate([v_past, v], axis=1)"),
               ("t_past = k.shape[2] - t_new", "t_past = k.shape[1] - t_new"),
               ("q @ k.transpose(0, 1, 3, 2)", "q @ k.transpose(0, 2, 3, 1)"),
               ("(w @ v)", "(w @ v.transpose(0, 2, 1, 3))"))),
    # huggingface/transformers PR #30108 (past_key_values used "to reinstantiate a new DynamicCache()"); karpathy/nanoGPT#148
    Bug("given_cache_dropped", "chunks",
        "the cache passed in is never read (or a new, empty one is made): the new positions attend only to "
        "themselves and the returned cache holds only them; concatenate the cached keys and values in front "
        "of the new ones",
        edited(BASE, ("    if cache is not None:\n", "    if False:\n"))),
    # deepspeedai/Megatron-DeepSpeed PR #112 ("past_key are cat with key_layer on dim 0 ... can only cat with dim 1")
    Bug("cache_concat_on_batch_axis", "chunks",
        "the cached and new keys and values are concatenated on axis 0, the batch, which stacks sequences "
        "instead of positions (and raises when their lengths differ); concatenate on the positions axis, axis 2",
        edited(BASE, ("np.concatenate([k_past, k], axis=2)", "np.concatenate([k_past, k], axis=0)"),
               ("np.concatenate([v_past, v], axis=2)", "np.concatenate([v_past, v], axis=0)"))),
    # UChi-JCL/CacheGen PR #8 ("always dropped the last position... silently produced off-by-one KV caches")
    Bug("cache_trimmed_by_one", "shapes",
        "the returned cache drops its last position (an off-by-one slice, [:-1]): the next call never sees "
        "the token just added; return every position, t_past + t_new of them",
        edited(BASE, ("return out @ W_o, (k, v)", "return out @ W_o, (k[:, :, :-1], v[:, :, :-1])"))),
    Bug("merge_without_transpose", "agrees",
        "the heads are merged by reshaping (B, n_heads, t_new, d_head) straight to (B, t_new, d_model): right "
        "for one new token, but with several the positions and heads are interleaved; transpose(0, 2, 1, 3) first",
        edited(BASE, ("(w @ v).transpose(0, 2, 1, 3).reshape", "(w @ v).reshape"))),
    Bug("scale_sqrt_d_model", "agrees",
        "the scores are divided by sqrt(d_model); each head's dot product has d_head terms, so the scale is "
        "sqrt(d_head)",
        edited(BASE, ("/ np.sqrt(d_head)", "/ np.sqrt(d_model)"))),
    Bug("global_cache_state", "repeated_calls",
        "the keys and values are kept in a module-level variable and the cache passed in is ignored once it "
        "holds something: two sequences decoded in turn then read each other's keys; use only the cache given",
        edited(BASE, ("def attend_with_cache(", "_KV = []\n\n\ndef attend_with_cache("),
               ("        k_past, v_past = cache\n", "        k_past, v_past = _KV if _KV else cache\n"),
               ("    t_past = k.shape[2] - t_new\n", "    _KV[:] = [k, v]\n    t_past = k.shape[2] - t_new\n")),
        stateful=True),
    Bug("output_buffer_reused", "state",
        "y is written into a module-level buffer kept per shape, so the next call of the same shape overwrites "
        "the y an earlier call returned; return a new array from every call",
        edited(BASE, ("def attend_with_cache(", "_OUT = {}\n\n\ndef attend_with_cache("),
               ("    return out @ W_o, (k, v)\n",
                "    y = _OUT.setdefault((out.shape, out.dtype), np.empty(out.shape, out.dtype))\n"
                "    np.matmul(out, W_o, out=y)\n    return y, (k, v)\n")),
        stateful=True),
    Bug("fixed_mask_table_2048", "long_cache",
        "the causal mask is sliced from a table built once for 2048 positions (a fixed block_size), so a "
        "longer cache gets a mask of the wrong size; build the mask for t_past + t_new positions",
        edited(BASE, ("def attend_with_cache(", "FUTURE = np.triu(np.ones((2048, 2048), dtype=bool), k=1)\n\n\n"
                                                 "def attend_with_cache("),
               ("np.triu(np.ones((t_new, t_past + t_new), dtype=bool), k=t_past + 1)",
                "FUTURE[t_past:t_past + t_new, :t_past + t_new]"))),
    Bug("flatten_assumes_contiguous", "layouts",
        "x is flattened by assigning to .shape of a view, which only works when x is C-contiguous; a slice, "
        "a transposed view or a Fortran-ordered x cannot be reshaped in place (use reshape, which copies "
        "when it must)",
        edited(BASE, ("    q, k, v = split(x @ W_q), split(x @ W_k), split(x @ W_v)\n",
                      "    flat = x.view()\n    flat.shape = (B * t_new, d_model)\n"
                      "    q, k, v = (split((flat @ W).reshape(B, t_new, d_model)) for W in (W_q, W_k, W_v))\n"))),
    Bug("scale_folded_into_W_q", "inputs_unchanged",
        "`W_q /= np.sqrt(d_head)` folds the scale into the caller's W_q, and every later call divides it "
        "again; scale q or the scores, a new array",
        edited(BASE, ("q, k, v = split(x @ W_q), split(x @ W_k), split(x @ W_v)",
                      "k, v = split(x @ W_k), split(x @ W_v)"),
               ("    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_head)\n",
                "    W_q /= np.sqrt(d_head)\n    q = split(x @ W_q)\n    scores = q @ k.transpose(0, 1, 3, 2)\n"))),
    Bug("global_max_shift", "far_below_zero",
        "the maximum subtracted before exp is that of all the scores, not of each row: a row whose scores all "
        "lie far below another row's underflows to 0 / 0",
        edited(BASE, ("scores.max(axis=-1, keepdims=True)", "scores.max()"))),
    Bug("mask_by_zero_test", "zero_rows",
        "the mask is applied by multiplying the scores by 0 and then sending every score equal to 0 to -inf; "
        "a score that is exactly 0 (a zero row of x) is then masked too, and a row of them is 0 / 0",
        edited(BASE, ("    scores = np.where(mask, -np.inf, scores)\n",
                      "    scores = scores * ~mask\n    scores[scores == 0] = -np.inf\n"))),
    Bug("no_max_shift", "huge_scores",
        "the softmax does not subtract the row maximum, so exp of a score near 1e4 is inf and inf / inf is NaN",
        edited(BASE, ("    scores = scores - scores.max(axis=-1, keepdims=True)\n", ""))),
    Bug("exp_clipped_at_minus_20", "tiny_weights",
        "the shifted scores are clipped at -20 before exp: every weight below exp(-20) ~ 2e-9, the masked "
        "future included, is raised to it, which shows wherever such weights meet large values",
        edited(BASE, ("w = np.exp(scores)", "w = np.exp(np.maximum(scores, -20.0))"))),
    Bug("cache_copy_broadcasts", "raises_cache",
        "the cache is copied into a preallocated array by slice assignment, which broadcasts: a cache with 1 "
        "sequence or 1 head is silently repeated instead of refused; check its shape and raise ValueError",
        edited(BASE, (CHECK_CACHE, ""),
               ("        k = np.concatenate([k_past, k], axis=2)\n        v = np.concatenate([v_past, v], axis=2)\n",
                "        t_all = k_past.shape[2] + t_new\n"
                "        k_all = np.empty((B, n_heads, t_all, d_head))\n"
                "        v_all = np.empty((B, n_heads, v_past.shape[2] + t_new, d_head))\n"
                "        k_all[:, :, :-t_new], k_all[:, :, -t_new:] = k_past, k\n"
                "        v_all[:, :, :-t_new], v_all[:, :, -t_new:] = v_past, v\n"
                "        k, v = k_all, v_all\n"))),
    Bug("t_new_zero_accepted", "raises_empty",
        "x with no new positions is not refused: with a cache it returns empty arrays instead of raising "
        "ValueError",
        edited(BASE, ('    if t_new == 0:\n        raise ValueError("no new positions")\n', ""))),
]

# Close to a catalogued bug, but a different mistake: none may be named as a catalogued one.
NEAR_MISSES = [
    Bug("mask_offset_one_ahead", "chunks",
        "the mask's offset is t_past + 1, one too many: each new position also sees the next one",
        edited(BASE, ("k=t_past + 1)", "k=t_past + 2)")), says=('mask',)),
    Bug("mask_blocks_own_position", "chunks",
        "the mask's offset is t_past, one too few: each new position misses its own key (and the first "
        "position of a prompt sees nothing at all)",
        edited(BASE, ("k=t_past + 1)", "k=t_past)")), says=('mask',)),
    Bug("scale_by_d_head", "agrees",
        "the scores are divided by d_head, not by its square root",
        edited(BASE, ("/ np.sqrt(d_head)", "/ d_head")), says=('scale',)),
    Bug("attention_k_v_swapped", "agrees",
        "inside the attention the keys and values trade places (scores against v, weights applied to k); "
        "the returned cache is right",
        edited(BASE, ("q @ k.transpose(0, 1, 3, 2)", "q @ v.transpose(0, 1, 3, 2)"), ("(w @ v)", "(w @ k)")),
        says=('held',)),
    Bug("new_before_cached", "chunks",
        "the new keys and values are put in front of the cached ones instead of after them",
        edited(BASE, ("np.concatenate([k_past, k], axis=2)", "np.concatenate([k, k_past], axis=2)"),
               ("np.concatenate([v_past, v], axis=2)", "np.concatenate([v, v_past], axis=2)")), says=('axes',)),
]

# Catalogued mistakes with their trigger moved (another part of the cache, another buffer): no entry
# above is them, and the report must say what each is without a name.
VARIANTS = [
    Bug("returns_only_new_keys_and_values", "cache_contents",
        "the returned cache holds only the new positions' keys and values: the cached ones must stay in it",
        edited(BASE, ("    return out @ W_o, (k, v)\n",
                      "    return out @ W_o, (k[:, :, t_past:], v[:, :, t_past:])\n")),
        says=("shape",)),
    Bug("y_buffer_keyed_by_shape", "repeated_calls",
        "every call whose y has a given shape writes y into the same module-level buffer and returns it",
        edited(BASE, ("def attend_with_cache(", "_Y = {}\n\n\ndef attend_with_cache("),
               ("    return out @ W_o, (k, v)\n",
                "    y = _Y.setdefault((B, t_new, d_model, x.dtype), np.empty((B, t_new, d_model), dtype=x.dtype))\n"
                "    np.matmul(out, W_o, out=y)\n    return y, (k, v)\n")),
        stateful=True, says=("conduct", "history")),
]
