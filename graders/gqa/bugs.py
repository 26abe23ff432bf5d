"""Mistakes candidates make in grouped-query attention and in sizing the KV cache.

Every entry is BASE, a correct answer, with one mistake edited in. Two mistakes only
exist in another layout, so they are edits of a correct answer written that way,
BASE_GROUPED and BASE_LOOP. Entries marked stateful keep something between calls, so only
the whole sequence of calls, in order, shows what they do. NEAR_MISSES sit next to a
catalogued bug without being it: the grader fails each one and names no bug for it.
"""
from graders.engine.bugs import Bug, edited

# the signature, the checks on the head counts and the sizes, which every layout below shares
HEAD = """import numpy as np


def gqa(x, W_q, W_k, W_v, W_o, n_heads, n_kv_heads):
    B, T, d_model = x.shape
    if W_q.shape[1] % n_heads != 0:
        raise ValueError("n_heads must divide W_q.shape[1]")
    if n_heads % n_kv_heads != 0:
        raise ValueError("n_kv_heads must divide n_heads")
    d_head = W_q.shape[1] // n_heads
    group = n_heads // n_kv_heads
"""

CACHE = """

def kv_cache_bytes(n_layers, n_kv_heads, d_head, n_tokens, bytes_per_value=2):
    return 2 * n_layers * n_kv_heads * d_head * bytes_per_value * n_tokens
"""

BASE = HEAD + """    q = (x @ W_q).reshape(B, T, n_heads, d_head).transpose(0, 2, 1, 3)
    k = (x @ W_k).reshape(B, T, n_kv_heads, d_head).transpose(0, 2, 1, 3)
    v = (x @ W_v).reshape(B, T, n_kv_heads, d_head).transpose(0, 2, 1, 3)
    k = np.repeat(k, group, axis=1)
    v = np.repeat(v, group, axis=1)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_head)
    mask = np.triu(np.ones((T, T), dtype=bool), k=1)
    scores = np.where(mask, -np.inf, scores)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    out = weights @ v
    out = out.transpose(0, 2, 1, 3).reshape(B, T, n_heads * d_head)
    return out @ W_o, weights
""" + CACHE

REPEAT = "    k = np.repeat(k, group, axis=1)\n    v = np.repeat(v, group, axis=1)\n"

# query heads grouped by the KV head they read, (B, n_kv_heads, group, T, d_head), so
# that k and v (with a group axis of 1) broadcast over the group instead of being repeated
BASE_GROUPED = edited(
    BASE,
    ("(x @ W_q).reshape(B, T, n_heads, d_head).transpose(0, 2, 1, 3)",
     "(x @ W_q).reshape(B, T, n_kv_heads, group, d_head).transpose(0, 2, 3, 1, 4)"),
    ("(x @ W_k).reshape(B, T, n_kv_heads, d_head).transpose(0, 2, 1, 3)",
     "(x @ W_k).reshape(B, T, n_kv_heads, 1, d_head).transpose(0, 2, 3, 1, 4)"),
    ("(x @ W_v).reshape(B, T, n_kv_heads, d_head).transpose(0, 2, 1, 3)",
     "(x @ W_v).reshape(B, T, n_kv_heads, 1, d_head).transpose(0, 2, 3, 1, 4)"),
    (REPEAT, ""),
    ("k.transpose(0, 1, 3, 2)", "k.swapaxes(-1, -2)"),
    ("out.transpose(0, 2, 1, 3)", "out.transpose(0, 3, 1, 2, 4)"),
    ("return out @ W_o, weights", "return out @ W_o, weights.reshape(B, n_heads, T, T)"))

# one query head at a time, slicing its columns and those of the KV head it reads
BASE_LOOP = HEAD + """    q, k, v = x @ W_q, x @ W_k, x @ W_v
    mask = np.triu(np.ones((T, T), dtype=bool), 1)
    out = np.empty((B, T, n_heads * d_head), dtype=q.dtype)
    weights = np.empty((B, n_heads, T, T), dtype=q.dtype)
    for h in range(n_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        kv_cols = slice(h // group * d_head, (h // group + 1) * d_head)
        s = q[:, :, cols] @ k[:, :, kv_cols].transpose(0, 2, 1) / np.sqrt(d_head)
        s = np.where(mask, -np.inf, s)
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        weights[:, h] = p / p.sum(axis=-1, keepdims=True)
        out[:, :, cols] = weights[:, h] @ v[:, :, kv_cols]
    return out @ W_o, weights
""" + CACHE

CHECKS = ('    if W_q.shape[1] % n_heads != 0:\n        raise ValueError("n_heads must divide W_q.shape[1]")\n'
          '    if n_heads % n_kv_heads != 0:\n        raise ValueError("n_kv_heads must divide n_heads")\n')
KV_CACHE = "    return 2 * n_layers * n_kv_heads * d_head * bytes_per_value * n_tokens\n"
MASK = "np.triu(np.ones((T, T), dtype=bool), k=1)"
MASKING = "    scores = np.where(mask, -np.inf, scores)\n"
RETURN = "    return out @ W_o, weights\n"


def with_state(name, value, *changes, base=BASE):
    """`base` with a module-level variable `name`, first set to `value`, and the edits `changes`."""
    return edited(base, ("def gqa(", f"{name} = {value}\n\n\ndef gqa("),
                  ("    B, T, d_model = x.shape\n", f"    global {name}\n    B, T, d_model = x.shape\n"), *changes)


BUGS = [
    # --- which KV head a query head reads
    Bug("tile_instead_of_repeat", "grouping",
        "np.tile (like picking KV head h % n_kv_heads) interleaves the groups: query head 1 gets KV head 1. "
        "np.repeat(k, group, axis=1) puts each KV head next to itself, so head h gets KV head h // group",
        edited(BASE, (REPEAT, "    k = np.tile(k, (1, group, 1, 1))\n    v = np.tile(v, (1, group, 1, 1))\n"))),
    Bug("kv_head_is_position_in_group", "grouping",
        "query head h was given KV head h % group, its position inside its group; the KV head is the "
        "group's number, h // group",
        edited(BASE, (REPEAT, "    kv_of = np.arange(n_heads) % group\n    k = k[:, kv_of]\n    v = v[:, kv_of]\n"))),
    Bug("kv_head_divides_by_n_kv_heads", "grouping",
        "query head h was given KV head h // n_kv_heads; the divisor is the group size, "
        "n_heads // n_kv_heads, which equals n_kv_heads only when n_heads == n_kv_heads ** 2",
        edited(BASE, (REPEAT, "    kv_of = np.arange(n_heads) // n_kv_heads\n"
                              "    k = k[:, kv_of]\n    v = v[:, kv_of]\n"))),
    Bug("every_query_on_kv_head_0", "grouping",
        "every query head reads KV head 0 (its keys and values indexed with 0, or sliced [:, :1] and broadcast): "
        "the other KV heads are never used; query head h reads KV head h // (n_heads // n_kv_heads)",
        edited(BASE, (REPEAT, "    kv_of = np.zeros(n_heads, dtype=int)\n    k = k[:, kv_of]\n    v = v[:, kv_of]\n"))),
    # PrimeIntellect-ai/prime-rl PR #2681 (repeat_interleave on dim 1 of (batch, seq, heads, dim))
    Bug("repeat_on_sequence_axis", "grouping",
        "the KV heads are repeated along axis 1 while k and v are still (B, T, n_kv_heads, d_head), so it is the "
        "positions that are repeated, not the heads; repeat along the head axis, after the transpose",
        edited(BASE, ("k = (x @ W_k).reshape(B, T, n_kv_heads, d_head).transpose(0, 2, 1, 3)",
                      "k = np.repeat((x @ W_k).reshape(B, T, n_kv_heads, d_head), group, axis=1).transpose(0, 2, 1, 3)"),
               ("v = (x @ W_v).reshape(B, T, n_kv_heads, d_head).transpose(0, 2, 1, 3)",
                "v = np.repeat((x @ W_v).reshape(B, T, n_kv_heads, d_head), group, axis=1).transpose(0, 2, 1, 3)"),
               (REPEAT, ""))),
    Bug("kv_split_with_n_heads", "multi_query",
        "keys and values were split into n_heads heads like the queries; they have only n_kv_heads heads "
        "of width d_head, shared out afterwards",
        edited(BASE, ("k = (x @ W_k).reshape(B, T, n_kv_heads, d_head)", "k = (x @ W_k).reshape(B, T, n_heads, -1)"),
                 ("v = (x @ W_v).reshape(B, T, n_kv_heads, d_head)", "v = (x @ W_v).reshape(B, T, n_heads, -1)"))),
    # --- sizes and scale
    Bug("d_head_from_d_model", "d_model_differs",
        "d_head was taken as d_model // n_heads; in grouped-query attention it is W_q.shape[1] // n_heads, "
        "and n_heads * d_head need not equal d_model",
        edited(BASE, ("d_head = W_q.shape[1] // n_heads", "d_head = d_model // n_heads"))),
    Bug("scale_by_sqrt_d_model", "agrees",
        "the scores were divided by sqrt(d_model); the scale is sqrt(d_head), the width of one head's dot product",
        edited(BASE, ("/ np.sqrt(d_head)", "/ np.sqrt(d_model)"))),
    Bug("scale_by_d_model_over_heads", "d_model_differs",
        "the scores were divided by sqrt(d_model // n_heads), which is sqrt(d_head) only when "
        "d_model == n_heads * d_head; use the head width itself",
        edited(BASE, ("/ np.sqrt(d_head)", "/ np.sqrt(d_model // n_heads)"))),
    # --- head bookkeeping
    Bug("merge_without_transposing_back", "agrees",
        "the heads were merged by reshaping (B, n_heads, T, d_head) straight to (B, T, n_heads * d_head): "
        "right shape, but heads and positions are mixed; transpose to (B, T, n_heads, d_head) first",
        edited(BASE, ("out = out.transpose(0, 2, 1, 3).reshape(B, T, n_heads * d_head)",
                  "out = out.reshape(B, T, n_heads * d_head)"))),
    Bug("split_by_reshaping_straight_to_heads", "agrees",
        "heads were split by reshaping (B, T, n_heads * d_head) straight to (B, n_heads, T, d_head), which "
        "cuts across positions; reshape to (B, T, n_heads, d_head) and then transpose",
        edited(BASE, ("q = (x @ W_q).reshape(B, T, n_heads, d_head).transpose(0, 2, 1, 3)",
                  "q = (x @ W_q).reshape(B, n_heads, T, d_head)"),
                 ("k = (x @ W_k).reshape(B, T, n_kv_heads, d_head).transpose(0, 2, 1, 3)",
                  "k = (x @ W_k).reshape(B, n_kv_heads, T, d_head)"),
                 ("v = (x @ W_v).reshape(B, T, n_kv_heads, d_head).transpose(0, 2, 1, 3)",
                  "v = (x @ W_v).reshape(B, n_kv_heads, T, d_head)"))),
    Bug("grouped_weights_not_merged", "shapes",
        "the grouped form keeps weights as (B, n_kv_heads, group, T, T); reshape them to "
        "(B, n_heads, T, T) before returning",
        edited(BASE_GROUPED, ("weights.reshape(B, n_heads, T, T)", "weights"))),
    # --- mask and softmax
    Bug("no_causal_mask", "causal",
        "no causal mask: every position also attends to the ones after it",
        edited(BASE, ("    scores = np.where(mask, -np.inf, scores)\n", ""))),
    Bug("mask_blocks_the_diagonal", "rows_sum_to_one",
        "the mask also blocks the diagonal (np.triu with k=0): position 0 then has nothing to attend to "
        "and its row is NaN; a position may attend to itself, so use k=1",
        edited(BASE, ("np.triu(np.ones((T, T), dtype=bool), k=1)", "np.triu(np.ones((T, T), dtype=bool), k=0)"))),
    Bug("future_zeroed_after_softmax", "rows_sum_to_one",
        "the future was zeroed after the softmax, so the rows no longer sum to 1; mask the scores with "
        "-inf before the softmax",
        edited(BASE, ("    scores = np.where(mask, -np.inf, scores)\n", ""),
                 ("    weights = weights / weights.sum(axis=-1, keepdims=True)\n",
                  "    weights = weights / weights.sum(axis=-1, keepdims=True)\n"
                  "    weights = np.where(mask, 0.0, weights)\n"))),
    Bug("softmax_over_queries", "rows_sum_to_one",
        "the softmax normalises over the query axis (-2); each query's weights over the keys (axis -1) "
        "must sum to 1",
        edited(BASE, ("scores - scores.max(axis=-1, keepdims=True)", "scores - scores.max(axis=-2, keepdims=True)"),
                 ("weights / weights.sum(axis=-1, keepdims=True)", "weights / weights.sum(axis=-2, keepdims=True)"))),
    Bug("softmax_without_max_shift", "large_scores",
        "exp of the raw scores: without subtracting each row's max, large scores overflow to inf and "
        "inf / inf is NaN",
        edited(BASE, ("np.exp(scores - scores.max(axis=-1, keepdims=True))", "np.exp(scores)"))),
    # --- contract
    Bug("no_value_errors", "heads_must_divide_width",
        "nothing checks that n_heads divides W_q.shape[1] and that n_kv_heads divides n_heads; "
        "a loop over heads then quietly drops columns (or divides by zero) instead of raising ValueError",
        edited(BASE_LOOP, (CHECKS, ""))),
    Bug("scale_folded_into_W_q_in_place", "inputs_unchanged",
        "`W_q /= ...` scales the caller's weight matrix in place (and again on every call); "
        "divide the scores, or a copy, instead",
        edited(BASE, ("    d_head = W_q.shape[1] // n_heads\n",
                  "    d_head = W_q.shape[1] // n_heads\n    W_q /= np.sqrt(d_head)\n"),
                 ("scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_head)", "scores = q @ k.transpose(0, 1, 3, 2)"))),
    # --- kv_cache_bytes
    Bug("kv_cache_keys_only", "cache_figures",
        "the cache holds keys AND values: the factor 2 is missing",
        edited(BASE, (KV_CACHE, "    return n_layers * n_kv_heads * d_head * bytes_per_value * n_tokens\n"))),
    Bug("kv_cache_one_layer", "cache_figures",
        "every layer keeps its own keys and values: multiply by n_layers",
        edited(BASE, (KV_CACHE, "    return 2 * n_kv_heads * d_head * bytes_per_value * n_tokens\n"))),
    # rohitg00/ai-engineering-from-scratch PR #57 ("2 * 128 * 2 = 512 bytes is per *head*, not per layer")
    Bug("kv_cache_ignores_kv_heads", "cache_figures",
        "the size per token leaves out n_kv_heads, as if each layer kept one head: every KV head stores its own "
        "d_head keys and values, so multiply by n_kv_heads",
        edited(BASE, (KV_CACHE, "    return 2 * n_layers * d_head * bytes_per_value * n_tokens\n"))),
    Bug("kv_cache_in_bits", "cache_figures",
        "the count is in bits (times 8); the function returns bytes, and bytes_per_value already says "
        "how many bytes a number takes",
        edited(BASE, (KV_CACHE, "    return 2 * n_layers * n_kv_heads * d_head * bytes_per_value * 8 * n_tokens\n"))),
    Bug("kv_cache_in_kib", "cache_figures",
        "the result was converted to KiB; the function returns bytes (131072 bytes is the chapter's 128 KiB)",
        edited(BASE, ("bytes_per_value * n_tokens\n", "bytes_per_value * n_tokens // 1024\n"))),
    Bug("kv_cache_default_16", "cache_default",
        "the default bytes_per_value is 16, the number of bits; a 16-bit value takes 2 bytes",
        edited(BASE, ("bytes_per_value=2):", "bytes_per_value=16):"))),
    Bug("kv_cache_ignores_tokens", "cache_linear",
        "the size of one token was returned whatever n_tokens is; the cache holds every token read so far",
        edited(BASE, (KV_CACHE, "    return 2 * n_layers * n_kv_heads * d_head * bytes_per_value\n"))),
    Bug("kv_cache_float_division", "cache_int",
        "going through bits with `/ 8` makes the result a float; a byte count is an int: use // or stay in bytes",
        edited(BASE, (KV_CACHE, "    bits = 8 * bytes_per_value\n"
                            "    return 2 * n_layers * n_kv_heads * d_head * n_tokens * bits / 8\n"))),
    # --- state kept between calls
    Bug("kv_index_cached_from_first_call", "shapes",
        "the list of which KV head each query head reads is built at the first call and reused by later "
        "calls with other head counts; build it from each call's n_heads and n_kv_heads",
        with_state("_kv_of", "None", (REPEAT, "    if _kv_of is None:\n"
                                              "        _kv_of = np.arange(n_heads) // group\n"
                                              "    k = k[:, _kv_of]\n    v = v[:, _kv_of]\n")), stateful=True),
    Bug("output_buffer_reused", "repeated_calls",
        "y is written into a module-level buffer that every call of the same shape reuses, so the next call "
        "overwrites a y the caller still holds; return a new array each call",
        with_state("_y", "{}", (RETURN, "    buf = _y.setdefault((B, T, d_model, x.dtype), np.empty_like(x))\n"
                                        "    np.matmul(out, W_o, out=buf)\n    return buf, weights\n")),
        stateful=True),
    # --- sizes: nanoGPT's habit of a mask precomputed for block_size positions
    Bug("mask_table_1024", "long_sequence",
        "the mask is sliced from a table precomputed at a fixed size (nanoGPT's block_size habit), which a "
        "longer sequence outgrows; build the mask for the T of the call",
        edited(BASE, ("def gqa(", "FUTURE = np.triu(np.ones((1024, 1024), dtype=bool), k=1)\n\n\ndef gqa("),
               (f"mask = {MASK}", "mask = FUTURE[:T, :T]"))),
    Bug("kv_cache_int32_overflow", "cache_other_sizes",
        "the product is taken in 32-bit integers (np.int32, or np.prod's default on Windows), which wrap "
        "past 2**31 bytes: a long context on a large model is tens of GiB; use Python ints",
        edited(BASE, (KV_CACHE, "    sizes = np.array([2, n_layers, n_kv_heads, d_head, bytes_per_value, n_tokens], "
                                "dtype=np.int32)\n    return int(np.prod(sizes, dtype=np.int32))\n"))),
    # --- input layouts: a reshape is a view only of a contiguous array
    Bug("output_written_through_reshape", "layouts",
        "y is made with np.zeros_like(x) and filled through y.reshape(B * T, d_model): for an x that is not "
        "C-ordered (Fortran order, a transposed view), zeros_like keeps its layout and the reshape is a copy, "
        "so the result is written into the copy and y stays 0; use the product itself",
        edited(BASE, (RETURN, "    y = np.zeros_like(x)\n"
                              "    np.matmul(out.reshape(B * T, -1), W_o, out=y.reshape(B * T, d_model))\n"
                              "    return y, weights\n"))),
    # --- special values: exact zeros, and rows whose every visible score is far below 0
    Bug("mask_by_zero_scores", "agrees",
        "the future is found as the scores equal to 0 after zeroing it (scores[scores == 0] = -inf), which "
        "also blocks every real score that is exactly 0: a row of x that is all zeros (padding) then has no "
        "key left (0 / 0), and no query sees it; mask by position, np.triu(..., k=1)",
        edited(BASE, (MASKING, "    scores = np.where(mask, 0.0, scores)\n    scores[scores == 0] = -np.inf\n"))),
    Bug("mask_fill_minus_1e4", "large_scores",
        "the future is filled with -1e4 rather than -inf: a query whose visible scores are all below -1e4 "
        "then gives its weight to the future; -inf is below every score",
        edited(BASE, ("np.where(mask, -np.inf, scores)", "np.where(mask, -1e4, scores)"))),
]


# Close to a catalogued bug, but another mistake: the grader fails each and names no bug.
NEAR_MISSES = [
    Bug("kv_cache_ignores_bytes_per_value", "cache_other_sizes",
        "bytes_per_value is ignored and 2 bytes used always: right for 16-bit values only, where a missing "
        "factor 2 (keys and values) would be wrong everywhere",
        edited(BASE, (KV_CACHE, "    return 2 * n_layers * n_kv_heads * d_head * 2 * n_tokens\n")),
        says=('needs@bytes_per_value', 'scale')),
    Bug("divisibility_checked_on_d_model", "heads_must_divide_width",
        "the check is whether n_heads divides d_model, not W_q.shape[1]: in grouped-query attention they are "
        "different sizes, so a valid call can be refused and an invalid one let through",
        edited(BASE_LOOP, ("if W_q.shape[1] % n_heads != 0:", "if d_model % n_heads != 0:")), says=('conduct',)),
    Bug("mask_cached_from_first_call", "shapes",
        "the mask is built at the first call's T and reused by every later call: not a table of fixed size, "
        "but one as large as the first sequence happened to be",
        with_state("_future", "None", (f"    mask = {MASK}\n",
                                       f"    if _future is None:\n        _future = {MASK}\n    mask = _future\n")),
        stateful=True, says=('history',)),
    Bug("weights_buffer_reused", "repeated_calls",
        "the weights (not y) are written into a module-level buffer that every call of the same shape reuses",
        with_state("_w", "{}", (RETURN,
                                "    buf = _w.setdefault((weights.shape, weights.dtype), np.empty_like(weights))\n"
                                "    buf[...] = weights\n    return out @ W_o, buf\n")), stateful=True,
        says=('conduct', 'history')),
    Bug("additive_mask_minus_1e4", "large_scores",
        "-1e4 is added to the future scores (the additive-mask habit) rather than filled in: the masked "
        "scores keep their spread, and one can still beat a visible score below -1e4",
        edited(BASE, ("np.where(mask, -np.inf, scores)", "scores - 1e4 * mask")), says=('needs@scale',)),
    # huggingface/blog#2345 (the Llama 3.1 KV-cache table printed in GB)
    Bug("kv_cache_in_gib", "cache_figures",
        "the result was converted to GiB (divided by 2**30); the function returns bytes",
        edited(BASE, ("bytes_per_value * n_tokens\n", "bytes_per_value * n_tokens / 2**30\n")), says=('type', 'scale')),
]

# Catalogued mistakes with their trigger moved (another factor, another default): no entry above is
# them, and the report must say what each is without a name.
VARIANTS = [
    Bug("scale_by_sqrt_kv_width", "agrees",
        "the scores are divided by sqrt(n_kv_heads * d_head), the width of W_k, instead of sqrt(d_head)",
        edited(BASE, ("scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_head)",
                      "scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(n_kv_heads * d_head)")), says=("scale",)),
    Bug("kv_cache_default_4_bytes", "cache_default",
        "bytes_per_value defaults to 4 (32-bit) instead of 2 (16-bit)",
        edited(BASE, ("def kv_cache_bytes(n_layers, n_kv_heads, d_head, n_tokens, bytes_per_value=2):",
                      "def kv_cache_bytes(n_layers, n_kv_heads, d_head, n_tokens, bytes_per_value=4):")),
        says=("needs@bytes_per_value", "scale")),
]
