"""Mistakes candidates make in a causal mask and in applying it.

Every entry is BASE, a correct answer, with one mistake edited in. Mistakes that only
exist when the mask is applied through a boolean index are edits of BASE_INDEXED, the
same answer with apply_causal_mask written that way; those of a mask built from a
precomputed table of positions (the nanoGPT `block_size` habit) are edits of BASE_TABLE, whose
table is rebuilt whenever a call needs more. Entries marked stateful keep something between
calls, or hand back the caller's own array, so only the whole sequence of calls shows them.
"""
from graders.engine.bugs import Bug, edited

BASE = """import numpy as np


def causal_mask(t_q, t_k=None):
    if t_k is None:
        t_k = t_q
    if t_q > t_k:
        raise ValueError("more queries than keys")
    return np.triu(np.ones((t_q, t_k), dtype=bool), k=t_k - t_q + 1)


def apply_causal_mask(scores):
    t_q, t_k = scores.shape[-2:]
    return np.where(causal_mask(t_q, t_k), -np.inf, scores)
"""

OFFSET = "k=t_k - t_q + 1)"
CHECK = '    if t_q > t_k:\n        raise ValueError("more queries than keys")\n'
MASKED = "np.where(causal_mask(t_q, t_k), -np.inf, scores)"

BASE_INDEXED = edited(BASE, (f"    return {MASKED}\n", "    out = scores.copy()\n"
                                                     "    out[..., causal_mask(t_q, t_k)] = -np.inf\n"
                                                     "    return out\n"))


# the mask built from one module-level table of positions, grown whenever a call needs more
# positions (a square table of masks would take t_k * t_k bytes for a single query)
BASE_TABLE = edited(BASE, ("def causal_mask(t_q, t_k=None):\n", "_TABLE = np.zeros(0, dtype=np.int64)\n\n\n"
                                                             "def causal_mask(t_q, t_k=None):\n    global _TABLE\n"),
                    (f"    return np.triu(np.ones((t_q, t_k), dtype=bool), {OFFSET}\n",
                     "    if t_k > len(_TABLE):\n"
                     "        _TABLE = np.arange(t_k)\n"
                     "    return _TABLE[None, :t_k] > _TABLE[t_k - t_q:t_k, None]\n"))
GROW = "    if t_k > len(_TABLE):\n"
APPLY = f"    return {MASKED}\n"

BUGS = [
    # ------------------------------------------------------------------ causal_mask
    Bug("blocks_diagonal", "square",
        "the triangle's offset is one too small (np.triu(..., k=0) in the square case): the diagonal is "
        "blocked too, so a position cannot see itself and the first row is all -inf",
        edited(BASE, (OFFSET, "k=t_k - t_q)"))),
    Bug("true_means_allowed", "square",
        "the mask marks the ALLOWED pairs (np.tril, the lower triangle); the convention here is "
        "True = blocked, the strict upper triangle",
        edited(BASE, (f"np.triu(np.ones((t_q, t_k), dtype=bool), {OFFSET}",
                      "np.tril(np.ones((t_q, t_k), dtype=bool), k=t_k - t_q)"),
               ("-np.inf, scores)", "scores, -np.inf)"))),
    Bug("top_left_alignment", "decoding_alignment",
        "np.triu(..., k=1) without the offset t_k - t_q: with fewer queries than keys the queries are "
        "the LAST positions (decoding with a cache), so each query sees t_k - t_q more keys",
        edited(BASE, (OFFSET, "k=1)"))),
    Bug("offset_sign_flipped", "decoding_alignment",
        "the offset has the wrong sign (k = t_q - t_k + 1): it moves the boundary left, so queries lose "
        "keys they should see, and a single query (t_q = 1) sees nothing at all",
        edited(BASE, (OFFSET, "k=t_q - t_k + 1)"))),
    Bug("float_mask", "mask_dtype_and_shape",
        "np.ones((t_q, t_k)) is float64, so the mask is a float array: pass dtype=bool (a float array "
        "cannot index `scores[..., mask]`, and `~mask` fails on it)",
        edited(BASE_INDEXED, (", dtype=bool", ""))),
    # kimiyoung/transformer-xl#115 (the mask built with .byte()); huggingface/transformers PR #21384
    Bug("uint8_mask", "mask_dtype_and_shape",
        "the mask is built as uint8 (the old PyTorch ByteTensor habit), not bool: np.where still reads it, but "
        "`~mask` on uint8 is a bitwise not (254 and 255, both true), so a caller that inverts it blocks "
        "everything; pass dtype=bool",
        edited(BASE, ("np.ones((t_q, t_k), dtype=bool)", "np.ones((t_q, t_k), dtype=np.uint8)"))),
    Bug("t_k_none_unhandled", "square",
        "t_k=None is passed on as it is: when t_k is omitted, set t_k = t_q first",
        edited(BASE, ("    if t_k is None:\n        t_k = t_q\n    if t_q > t_k:",
                      "    if t_k is not None and t_q > t_k:"))),
    Bug("no_value_error", "more_queries_than_keys",
        "no check that t_q <= t_k: with more queries than keys the first query would sit before "
        "position 0 with nothing to see, so raise ValueError instead of returning a mask",
        edited(BASE, (CHECK, ""))),
    Bug("value_error_condition_flipped", "decoding_alignment",
        "the ValueError test is the wrong way round (t_q < t_k): fewer queries than keys is the "
        "ordinary decoding case; only t_q > t_k is an error",
        edited(BASE, (CHECK, '    if t_q < t_k:\n        raise ValueError("more keys than queries")\n'))),
    # ------------------------------------------------------------------ apply_causal_mask
    Bug("minus_1e9", "blocked_are_minus_inf",
        "-1e9 is not -inf: exp(-1e9 - max) is 0 only while the scores are small, and a row with "
        "every entry masked turns into a uniform row instead of failing loudly",
        edited(BASE, ("-np.inf, scores)", "-1e9, scores)"))),
    # lucidrains/memory-compressed-attention#2 (-float('-inf') in the causal mask, fixed in 49d2e74)
    Bug("plus_inf_fill", "blocked_are_minus_inf",
        "the blocked scores are set to -float('-inf'), which is +inf: a softmax of the row is then NaN (or all "
        "its weight goes to the future); the fill is -inf, float('-inf') or -np.inf, with one minus sign",
        edited(BASE, ("-np.inf, scores)", "-float('-inf'), scores)"))),
    Bug("dtype_min", "blocked_are_minus_inf",
        "np.finfo(dtype).min is the most negative finite number, not -inf: the contract asks for -inf, "
        "which gives exactly 0 after exp whatever the other scores are",
        edited(BASE, ("-np.inf, scores)", "np.finfo(scores.dtype).min, scores)"))),
    Bug("zero_instead_of_minus_inf", "softmax_of_masked",
        "blocked scores are set to 0 (scores * ~mask), but exp(0) = 1: the future keeps real weight; "
        "masking before a softmax means -inf",
        edited(BASE, (MASKED, "scores * ~causal_mask(t_q, t_k)"))),
    Bug("additive_mask_nan", "allowed_unchanged",
        "scores + mask * -inf: 0 * -inf is NaN, so every allowed entry becomes NaN; build the bias with "
        "np.where(mask, -np.inf, 0.0), or use np.where on the scores directly",
        edited(BASE, (MASKED, "scores + causal_mask(t_q, t_k) * -np.inf"))),
    Bug("in_place", "input_unchanged",
        "`out = scores` is not a copy: writing -inf into it changes the caller's scores; start from "
        "scores.copy() or use np.where, which returns a new array",
        edited(BASE_INDEXED, ("out = scores.copy()", "out = scores")), stateful=True),
    Bug("mask_from_first_axes", "agrees",
        "the mask's sizes come from scores.shape[0] and scores.shape[1], which are the leading (batch) "
        "axes once there are more than two: take them from the last two axes, scores.shape[-2:]",
        edited(BASE, ("t_q, t_k = scores.shape[-2:]", "t_q, t_k = scores.shape[0], scores.shape[1]"))),
    Bug("t_q_t_k_swapped", "agrees",
        "t_q and t_k are swapped: scores are (..., t_q, t_k), queries on the rows and keys on the columns",
        edited(BASE, ("t_q, t_k = scores.shape[-2:]", "t_k, t_q = scores.shape[-2:]"))),
    Bug("square_mask_from_last_axis", "apply_shape",
        "the mask is built square from the last axis alone, (t_k, t_k): with t_q < t_k it does not "
        "fit the scores, and with t_q = 1 it silently broadcasts them up to (t_k, t_k)",
        edited(BASE, ("    t_q, t_k = scores.shape[-2:]\n", "    T = scores.shape[-1]\n"),
               ("causal_mask(t_q, t_k), -np.inf", "causal_mask(T), -np.inf"))),
    Bug("boolean_index_without_ellipsis", "agrees",
        "`out[mask]` indexes the FIRST two axes; with leading batch or head axes write "
        "`out[..., mask]` so the mask lands on the last two",
        edited(BASE_INDEXED, ("out[..., causal_mask", "out[causal_mask"))),
    # ------------------------------------------------------------------ edge values, sizes and state
    Bug("t_k_or_t_q", "more_queries_than_keys",
        "`t_k = t_k or t_q` treats t_k = 0 like None, so causal_mask(t_q, 0) returns a square mask instead of "
        "raising; test `t_k is None`, since 0 is a size like any other",
        edited(BASE, ("    if t_k is None:\n        t_k = t_q\n", "    t_k = t_k or t_q\n"))),
    Bug("precomputed_table_1024", "explored",
        "the mask is sliced out of a table built once for 1024 positions (a fixed block_size), so any call "
        "with more than 1024 keys gets a mask of the wrong shape; build the mask for the sizes asked",
        edited(BASE_TABLE, ("_TABLE = np.zeros(0, dtype=np.int64)", "_TABLE = np.arange(1024)"), (GROW, "    if False:\n"))),
    Bug("table_from_first_call", "mask_dtype_and_shape",
        "the table the mask is sliced from is built at the first call's size and never grown, so a later call "
        "with more keys gets a mask of the wrong shape",
        edited(BASE_TABLE, (GROW, "    if len(_TABLE) == 0:\n")), stateful=True),
    Bug("output_buffer_reused", "repeated_calls",
        "apply_causal_mask writes into one module-level buffer per shape and returns it, so the next call of "
        "that shape overwrites a result the caller still holds; return a new array each call",
        edited(BASE, ("def apply_causal_mask(", "_OUT = {}\n\n\ndef apply_causal_mask("),
               (APPLY, "    out = _OUT.setdefault((scores.shape, scores.dtype), np.empty_like(scores))\n"
                       "    np.copyto(out, scores)\n"
                       "    out[..., causal_mask(t_q, t_k)] = -np.inf\n"
                       "    return out\n")), stateful=True),
    # ------------------------------------------------------------------ special values and layouts
    Bug("zero_scores_taken_as_blocked", "allowed_unchanged",
        "the future is zeroed by multiplying with the mask and every 0 then replaced by -inf, so a score that "
        "is exactly 0 (a zero query or key) is blocked too; choose the blocked entries from the mask, not from "
        "the values",
        edited(BASE, (APPLY, "    out = scores * ~causal_mask(t_q, t_k)\n"
                             "    return np.where(out == 0, -np.inf, out)\n"))),
    Bug("writes_through_reshape_of_copy", "layouts",
        "the -inf values are written through np.copy(scores).reshape(...): np.copy keeps a Fortran-ordered or "
        "transposed layout, so that reshape is a second copy and the writes are lost; use scores.copy() (C "
        "order) or np.where",
        edited(BASE, (APPLY, "    out = np.copy(scores)\n"
                             "    out.reshape(-1, t_q * t_k)[:, causal_mask(t_q, t_k).reshape(-1)] = -np.inf\n"
                             "    return out\n"))),
]

# Close to a catalogued bug, but a different mistake: the grader must fail each one without
# naming any entry of BUGS.
NEAR_MISSES = [
    Bug("decoding_offset_one_short", "decoding_alignment",
        "the offset is max(t_k - t_q, 1) instead of t_k - t_q + 1: right for the square mask, but in the decoding "
        "case each query sits one position too early (with one key more than queries it is no offset at all)",
        edited(BASE, (OFFSET, "k=max(t_k - t_q, 1))")), says=('mask',)),
    Bug("precomputed_table_2048", "explored",
        "the mask is sliced out of a table built once for 2048 positions, so calls with more than 2048 keys get "
        "a mask of the wrong shape",
        edited(BASE_TABLE, ("_TABLE = np.zeros(0, dtype=np.int64)", "_TABLE = np.arange(2048)"), (GROW, "    if False:\n")),
        says=('needs@t_k', 'conduct')),
    Bug("mask_cached_by_t_k", "decoding_alignment",
        "masks are cached by t_k alone, so a later call with the same number of keys and another number of "
        "queries gets the earlier mask",
        edited(BASE, ("def causal_mask(", "_CACHE = {}\n\n\ndef causal_mask("),
               (f"    return np.triu(np.ones((t_q, t_k), dtype=bool), {OFFSET}\n",
                f"    if t_k not in _CACHE:\n        _CACHE[t_k] = np.triu(np.ones((t_q, t_k), dtype=bool), {OFFSET}\n"
                "    return _CACHE[t_k]\n")), stateful=True, says=('history',)),
    Bug("minus_1e30", "blocked_are_minus_inf",
        "blocked scores are set to -1e30, a large finite number, not -inf",
        edited(BASE, ("-np.inf, scores)", "-1e30, scores)")), says=('mask',)),
    Bug("float32_min_for_every_dtype", "blocked_are_minus_inf",
        "blocked scores are set to np.finfo(np.float32).min whatever the scores' dtype: a finite number, not -inf",
        edited(BASE, ("-np.inf, scores)", "np.finfo(np.float32).min, scores)")), says=('mask',)),
    # torch generate_square_subsequent_mask (mask.float().masked_fill(mask == 0, float('-inf')), ...)
    Bug("additive_float_mask", "mask_dtype_and_shape",
        "causal_mask returns the additive float mask (-inf where blocked, 0 elsewhere) instead of the bool mask: "
        "np.where still reads it, but the contract's mask is True where blocked; the -inf belongs in "
        "apply_causal_mask",
        edited(BASE, (f"    return np.triu(np.ones((t_q, t_k), dtype=bool), {OFFSET}\n",
                      f"    return np.where(np.triu(np.ones((t_q, t_k), dtype=bool), {OFFSET}, -np.inf, 0.0)\n")),
        says=('type',)),
]

# Catalogued mistakes with their trigger moved (another offset, another cache key): no entry above is
# them, and the report must say what each is without a name.
VARIANTS = [
    Bug("offset_two_ahead", "decoding_alignment",
        "the offset is t_k - t_q + 2: each query also sees the key after its own position",
        edited(BASE, (OFFSET, "k=t_k - t_q + 2)")), says=("mask",)),
    Bug("mask_cached_by_t_q", "square",
        "masks are cached by t_q alone, so a later call with the same number of queries and another number of "
        "keys gets the earlier mask",
        edited(BASE, ("def causal_mask(t_q, t_k=None):\n", "_MASKS = {}\n\n\ndef causal_mask(t_q, t_k=None):\n"),
               (f"    return np.triu(np.ones((t_q, t_k), dtype=bool), {OFFSET}\n",
                f"    if t_q not in _MASKS:\n        _MASKS[t_q] = np.triu(np.ones((t_q, t_k), dtype=bool), {OFFSET}\n"
                f"    return _MASKS[t_q].copy()\n")),
        stateful=True, says=("history",)),
]
