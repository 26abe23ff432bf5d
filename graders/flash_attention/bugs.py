"""Mistakes candidates make in blockwise (online-softmax) attention: each is BASE, a
correct key-block loop, with one mistake edited in. Entries marked stateful keep something
between calls, so only the whole sequence of calls, in order, shows what they do.
NEAR_MISSES sit next to a catalogued bug without being it: the grader fails each one and
names no bug for it."""
from graders.engine.bugs import Bug, edited

BASE = """import numpy as np


def flash_attention(q, k, v, block_size=128, causal=True):
    if block_size < 1:
        raise ValueError("block_size must be at least 1")
    t_q, d = q.shape[-2:]
    t_k = k.shape[-2]
    if causal and t_q > t_k:
        raise ValueError("causal attention needs t_q <= t_k")
    scale = 1.0 / np.sqrt(d)
    pos = t_k - t_q + np.arange(t_q)
    m = np.full(q.shape[:-1] + (1,), -np.inf)
    l = np.zeros(q.shape[:-1] + (1,))
    acc = np.zeros(q.shape[:-1] + (v.shape[-1],))
    for k0 in range(0, t_k, block_size):
        k1 = min(k0 + block_size, t_k)
        s = q @ np.swapaxes(k[..., k0:k1, :], -1, -2) * scale
        if causal:
            s = np.where(np.arange(k0, k1)[None, :] > pos[:, None], -np.inf, s)
        m_new = np.maximum(m, s.max(axis=-1, keepdims=True))
        p = np.exp(s - m_new)
        alpha = np.exp(m - m_new)
        l = l * alpha + p.sum(axis=-1, keepdims=True)
        acc = acc * alpha + p @ v[..., k0:k1, :]
        m = m_new
    return acc / l
"""


LOOP = "    for k0 in range(0, t_k, block_size):\n        k1 = min(k0 + block_size, t_k)\n"
RESCALED = "l = l * alpha + p.sum(axis=-1, keepdims=True)\n        acc = acc * alpha + p @ v[..., k0:k1, :]"
FUTURE = "np.arange(k0, k1)[None, :] > pos[:, None]"
MASKING = f"        if causal:\n            s = np.where({FUTURE}, -np.inf, s)\n"
RUNNING_MAX = "    m = np.full(q.shape[:-1] + (1,), -np.inf)\n"
P = "p = np.exp(s - m_new)"
RETURN = "    return acc / l\n"


def with_state(name, value, *changes):
    """BASE with a module-level variable `name`, first set to `value`, and the edits `changes`."""
    return edited(BASE, ("def flash_attention(", f"{name} = {value}\n\n\ndef flash_attention("),
                  ("    if block_size < 1:", f"    global {name}\n    if block_size < 1:"), *changes)


BUGS = [
    Bug("no_rescale", "agrees",
        "the running sum and output are not rescaled by exp(m_old - m_new) when the max grows, so "
        "earlier blocks are weighted against a stale max",
        edited(BASE, (RESCALED, "l = l + p.sum(axis=-1, keepdims=True)\n        acc = acc + p @ v[..., k0:k1, :]"))),
    Bug("sum_not_rescaled", "agrees",
        "the output accumulator is rescaled when the max grows but the running sum l is not",
        edited(BASE, ("l = l * alpha + p.sum(axis=-1, keepdims=True)", "l = l + p.sum(axis=-1, keepdims=True)"))),
    Bug("last_partial_block_dropped", "block_sizes",
        "the loop stops before the last, shorter block: range(0, T - block_size + 1, block_size) drops the "
        "keys left over when block_size does not divide T",
        edited(BASE, ("range(0, t_k, block_size)", "range(0, t_k - block_size + 1, block_size)"))),
    Bug("full_score_matrix", "memory",
        "a whole (T_q, T_k) array of floats is built (the scores, the weights or an additive mask): right "
        "values, but memory grows as T squared, which is exactly what FlashAttention avoids",
        edited(BASE, (LOOP, "    for k0, k1 in [(0, t_k)]:   # one block of every key\n"))),
    Bug("full_boolean_mask", "memory",
        "the blocks are right but the causal mask is built once at full (T_q, T_k) size: even a boolean "
        "T x T array is T squared bytes; build each block's mask from its positions",
        edited(BASE, (LOOP, "    future = np.arange(t_k)[None, :] > pos[:, None]\n" + LOOP),
               (FUTURE, "future[:, k0:k1]"))),
    Bug("top_left_alignment", "bottom_right",
        "with fewer queries than keys the queries are the LAST positions: query i sits at T_k - T_q + i, "
        "not at i",
        edited(BASE, ("pos = t_k - t_q + np.arange(t_q)", "pos = np.arange(t_q)"))),
    Bug("no_scaling", "agrees",
        "the scores are not divided by sqrt(d)",
        edited(BASE, ("scale = 1.0 / np.sqrt(d)", "scale = 1.0"))),
    Bug("max_never_updated", "large_scores",
        "the running max is taken from the first block only; a later block with larger scores then "
        "overflows exp",
        edited(BASE, ("m_new = np.maximum(m, s.max(axis=-1, keepdims=True))",
                      "m_new = s.max(axis=-1, keepdims=True) if k0 == 0 else m"))),
    Bug("per_block_softmax_summed", "agrees",
        "each block is normalised on its own and the block outputs are added: blocks must share one "
        "softmax, through the running max and sum",
        edited(BASE, ("acc = acc * alpha + p @ v[..., k0:k1, :]",
                      "acc = acc + (p / p.sum(axis=-1, keepdims=True)) @ v[..., k0:k1, :]"),
               ("return acc / l", "return acc"))),
    Bug("mask_blocks_diagonal", "agrees",
        "the mask uses >= and also blocks each query's own position, so the first query sees nothing "
        "(0 / 0 = NaN)",
        edited(BASE, (FUTURE, "np.arange(k0, k1)[None, :] >= pos[:, None]"))),
    Bug("block_local_mask", "agrees",
        "the causal mask compares the key's index within its block with the query's position; "
        "compare absolute positions (k0 + j)",
        edited(BASE, (FUTURE, "np.arange(k1 - k0)[None, :] > pos[:, None]"))),
    Bug("early_exit_off_by_one", "agrees",
        "the loop stops at a block whose first key IS the last query's position; that key is still "
        "visible (stop when k0 > T_k - 1, not >=)",
        edited(BASE, ("        k1 = min(k0 + block_size, t_k)\n",
                      "        if causal and k0 >= pos[-1]:\n            break\n"
                      "        k1 = min(k0 + block_size, t_k)\n"))),
    Bug("negative_block_size_accepted", "value_errors",
        "block_size < 1 is not rejected: range() refuses a step of 0 but silently loops zero times for a "
        "negative one",
        edited(BASE, ('    if block_size < 1:\n        raise ValueError("block_size must be at least 1")\n', ""))),
    Bug("causal_t_q_gt_t_k_accepted", "value_errors",
        "a causal call with more queries than keys is not rejected: the first queries have no key "
        "to see and come out as 0 / 0",
        edited(BASE, ('    if causal and t_q > t_k:\n        raise ValueError("causal attention needs t_q <= t_k")\n',
                      ""))),
    Bug("scales_q_in_place", "inputs_unchanged",
        "`q *= scale` writes into the caller's array; scale a copy or the scores instead",
        edited(BASE, ("    pos = t_k - t_q", "    q *= scale\n    scale = 1.0\n    pos = t_k - t_q"))),
    Bug("causal_flag_unused", "agrees",
        "the causal flag is never read and no mask is applied: every query sees every key, also when "
        "causal=True",
        edited(BASE, (MASKING, ""))),
    # flashinfer-ai/flashinfer PR #4401 ("(-inf) - (-inf) = NaN"); tracel-ai/burn#4694; NVIDIA/TensorRT-LLM PR #19220
    Bug("reverse_block_order_nan", "agrees",
        "the key blocks are visited from the last to the first (as FlashAttention-2's kernel does): with "
        "causal=True an early query's first block is then entirely in its future, its running max stays -inf "
        "and exp(-inf - -inf) is NaN; visit the blocks in order, or skip a block with no visible key",
        edited(BASE, ("for k0 in range(0, t_k, block_size):", "for k0 in reversed(range(0, t_k, block_size)):"))),
    # PaddleJitLab/CUDATutorial#69 (a reader dropped the row_l factor; a NaN-blind test "still matched")
    Bug("normalised_acc_without_l_prev", "agrees",
        "the output is kept normalised after every block (FlashAttention-1's form) but the old output is not "
        "weighted by the old running sum: O = (l_old * alpha * O + P V) / l_new, not (alpha * O + P V) / l_new",
        edited(BASE, (RESCALED + "\n        m = m_new\n    return acc / l\n",
                      "l_new = l * alpha + p.sum(axis=-1, keepdims=True)\n"
                      "        acc = (acc * alpha + p @ v[..., k0:k1, :]) / l_new\n"
                      "        l = l_new\n        m = m_new\n    return acc\n"))),
    # --- special values: a row whose every visible score is far below 0
    Bug("running_max_starts_at_zero", "far_below_zero",
        "the running max starts at 0 instead of -inf: when every score a query sees is far below 0 (about "
        "-800), exp(score - 0) underflows to 0 for all of them and the row ends as 0 / 0; start it at -inf",
        edited(BASE, (RUNNING_MAX, "    m = np.zeros(q.shape[:-1] + (1,))\n"))),
    Bug("rescale_as_ratio_of_exps", "large_scores",
        "the rescale factor is computed as exp(m_old) / exp(m_new), which overflows to inf / inf for scores "
        "near 1e4 (and underflows to 0 / 0 far below 0); exp(m_old - m_new) is the same number, always finite",
        edited(BASE, ("alpha = np.exp(m - m_new)", "alpha = np.exp(m) / np.exp(m_new)"))),
    # --- tolerance edges: a clipped exp is exact only while no weight is that small
    Bug("exp_clipped_at_minus_20", "future_value",
        "exp's argument is clipped at -20 (to avoid underflow), so every key below the running max by more "
        "than 20, masked future keys included, keeps a weight of about 2e-9 instead of its own (or 0); "
        "with a large value that weight shows; exp(-inf) is exactly 0 and needs no guard",
        edited(BASE, (P, "p = np.exp(np.maximum(s - m_new, -20.0))"))),
    # --- sizes: a mask precomputed for a maximum context
    Bug("mask_table_4096", "long_sequences",
        "the causal mask is sliced from a table precomputed at a fixed size (a maximum context, nanoGPT's "
        "block_size habit), which a longer sequence outgrows; compare positions for each block instead",
        edited(BASE, ("def flash_attention(", "FUTURE = np.triu(np.ones((4096, 4096), dtype=bool), k=1)\n\n\n"
                                            "def flash_attention("),
               (FUTURE, "FUTURE[pos[0]:pos[-1] + 1, k0:k1]"))),
    # --- input layouts: a reshape is a view only of a contiguous array
    Bug("output_written_through_reshape", "layouts",
        "the output is made with np.zeros_like(q) and filled through out.reshape(-1, T_q, d): for a q that is "
        "not C-ordered (Fortran order, say) zeros_like keeps its layout and that reshape is a copy, so the "
        "result goes into the copy and zeros come back; return the computed array",
        edited(BASE, (RETURN, "    out = np.zeros_like(q)\n"
                              "    out.reshape(-1, t_q, d)[...] = (acc / l).reshape(-1, t_q, d)\n"
                              "    return out\n"))),
    # --- state kept between calls
    Bug("output_buffer_reused", "repeated_calls",
        "the output is written into a module-level buffer that every call of the same shape reuses, so the "
        "next call overwrites an output the caller still holds; return a new array each call",
        with_state("_out", "{}", (RETURN,
                                  "    buf = _out.setdefault((acc.shape, q.dtype), np.empty(acc.shape, q.dtype))\n"
                                  "    np.divide(acc, l, out=buf)\n    return buf\n")), stateful=True),
]


# Close to a catalogued bug, but another mistake: the grader fails each and names no bug.
NEAR_MISSES = [
    Bug("running_max_starts_at_minus_1e4", "far_below_zero",
        "the running max starts at -1e4, a finite stand-in for -inf: right down to scores near -1e4, but "
        "when every visible score is lower still, exp(score + 1e4) underflows and the row is 0 / 0",
        edited(BASE, (RUNNING_MAX, "    m = np.full(q.shape[:-1] + (1,), -1e4)\n")), says=('needs@scale',)),
    Bug("offset_off_by_one", "bottom_right",
        "the queries are aligned to the bottom right but one position too late (T_k - T_q + 1 + i), so each "
        "query also sees the key after it: the offset is there, off by one",
        edited(BASE, ("pos = t_k - t_q + np.arange(t_q)", "pos = t_k - t_q + 1 + np.arange(t_q)")), says=('mask',)),
    Bug("causal_from_first_call", "agrees",
        "the causal flag of the first call is kept and every later call uses it: the flag is read, but once",
        with_state("_causal", "None", ("    t_q, d = q.shape[-2:]\n",
                                       "    if _causal is None:\n        _causal = causal\n"
                                       "    causal = _causal\n    t_q, d = q.shape[-2:]\n")), stateful=True,
        says=('history',)),
    Bug("acc_not_rescaled", "agrees",
        "the running sum l is rescaled when the max grows but the output accumulator is not",
        edited(BASE, ("acc = acc * alpha + p @ v[..., k0:k1, :]", "acc = acc + p @ v[..., k0:k1, :]")),
        says=('needs@block_size', 'scale')),
    Bug("exp_clipped_at_minus_30", "future_value",
        "exp's argument is clipped at -30, which leaves every key 30 below the running max (masked ones "
        "included) a weight of about 1e-13 instead of 0",
        edited(BASE, (P, "p = np.exp(np.maximum(s - m_new, -30.0))")), says=('clip', 'mask')),
]

# Catalogued mistakes with their trigger moved (another offset, another stand-in for -inf): no entry
# above is them, and the report must say what each is without a name.
VARIANTS = [
    Bug("offset_two_ahead", "bottom_right",
        "the queries are aligned to the bottom right two positions too late: each query also sees the next two keys",
        edited(BASE, (FUTURE, "np.arange(k0, k1)[None, :] > pos[:, None] + 2")), says=("mask",)),
    Bug("running_max_starts_at_minus_1e3", "far_below_zero",
        "the running max starts at -1e3, a finite stand-in for -inf: when every visible score is lower still, "
        "exp(score + 1e3) underflows to 0 and the row is 0 / 0",
        edited(BASE, (RUNNING_MAX, "    m = np.full(q.shape[:-1] + (1,), -1e3)\n")), says=("needs@scale",)),
]
VARIANTS.append(
    Bug("block_outputs_kept", "memory",
        "every block's partial output p @ v is kept in a list to the end: T_q x d for each block of keys, which "
        "grows with T as the score matrix does, though no (T_q, T_k) array is ever built",
        edited(BASE, ("    for k0 in range(0, t_k, block_size):\n",
                      "    kept = []\n    for k0 in range(0, t_k, block_size):\n"),
               ("        acc = acc * alpha + p @ v[..., k0:k1, :]\n",
                "        kept.append(p @ v[..., k0:k1, :])\n        acc = acc * alpha + kept[-1]\n")),
        says=("memory",)))
