"""Mistakes candidates make in blockwise (online-softmax) attention: each is BASE, a
correct key-block loop, with one mistake edited in."""
from graders.bugs import Bug, edited


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


BUGS = [
    Bug("no_rescale", "test_agrees",
        "the running sum and output are not rescaled by exp(m_old - m_new) when the max grows, so "
        "earlier blocks are weighted against a stale max",
        edited(BASE, (RESCALED, "l = l + p.sum(axis=-1, keepdims=True)\n        acc = acc + p @ v[..., k0:k1, :]"))),
    Bug("sum_not_rescaled", "test_agrees",
        "the output accumulator is rescaled when the max grows but the running sum l is not",
        edited(BASE, ("l = l * alpha + p.sum(axis=-1, keepdims=True)", "l = l + p.sum(axis=-1, keepdims=True)"))),
    Bug("last_partial_block_dropped", "test_block_sizes",
        "the loop stops before the last, shorter block: range(0, T - block_size + 1, block_size) drops the "
        "keys left over when block_size does not divide T",
        edited(BASE, ("range(0, t_k, block_size)", "range(0, t_k - block_size + 1, block_size)"))),
    Bug("full_score_matrix", "test_memory",
        "the whole (T_q, T_k) score matrix is built: right values, but memory grows as T squared, which "
        "is exactly what FlashAttention avoids",
        edited(BASE, (LOOP, "    for k0, k1 in [(0, t_k)]:   # one block of every key\n"))),
    Bug("full_boolean_mask", "test_memory",
        "the blocks are right but the causal mask is built once at full (T_q, T_k) size: even a boolean "
        "T x T array is T squared bytes; build each block's mask from its positions",
        edited(BASE, (LOOP, "    future = np.arange(t_k)[None, :] > pos[:, None]\n" + LOOP),
               (FUTURE, "future[:, k0:k1]"))),
    Bug("top_left_alignment", "test_bottom_right",
        "with fewer queries than keys the queries are the LAST positions: query i sits at T_k - T_q + i, "
        "not at i",
        edited(BASE, ("pos = t_k - t_q + np.arange(t_q)", "pos = np.arange(t_q)"))),
    Bug("no_scaling", "test_agrees",
        "the scores are not divided by sqrt(d)",
        edited(BASE, ("scale = 1.0 / np.sqrt(d)", "scale = 1.0"))),
    Bug("max_never_updated", "test_large_scores",
        "the running max is taken from the first block only; a later block with larger scores then "
        "overflows exp",
        edited(BASE, ("m_new = np.maximum(m, s.max(axis=-1, keepdims=True))",
                      "m_new = s.max(axis=-1, keepdims=True) if k0 == 0 else m"))),
    Bug("per_block_softmax_summed", "test_agrees",
        "each block is normalised on its own and the block outputs are added: blocks must share one "
        "softmax, through the running max and sum",
        edited(BASE, ("acc = acc * alpha + p @ v[..., k0:k1, :]",
                      "acc = acc + (p / p.sum(axis=-1, keepdims=True)) @ v[..., k0:k1, :]"),
               ("return acc / l", "return acc"))),
    Bug("mask_blocks_diagonal", "test_agrees",
        "the mask uses >= and also blocks each query's own position, so the first query sees nothing "
        "(0 / 0 = NaN)",
        edited(BASE, (FUTURE, "np.arange(k0, k1)[None, :] >= pos[:, None]"))),
    Bug("block_local_mask", "test_agrees",
        "the causal mask compares the key's index within its block with the query's position; "
        "compare absolute positions (k0 + j)",
        edited(BASE, (FUTURE, "np.arange(k1 - k0)[None, :] > pos[:, None]"))),
    Bug("early_exit_off_by_one", "test_agrees",
        "the loop stops at a block whose first key IS the last query's position; that key is still "
        "visible (stop when k0 > T_k - 1, not >=)",
        edited(BASE, ("        k1 = min(k0 + block_size, t_k)\n",
                      "        if causal and k0 >= pos[-1]:\n            break\n"
                      "        k1 = min(k0 + block_size, t_k)\n"))),
    Bug("negative_block_size_accepted", "test_value_errors",
        "block_size < 1 is not rejected: range() refuses a step of 0 but silently loops zero times for a "
        "negative one",
        edited(BASE, ('    if block_size < 1:\n        raise ValueError("block_size must be at least 1")\n', ""))),
    Bug("causal_t_q_gt_t_k_accepted", "test_value_errors",
        "a causal call with more queries than keys is not rejected: the first queries have no key "
        "to see and come out as 0 / 0",
        edited(BASE, ('    if causal and t_q > t_k:\n        raise ValueError("causal attention needs t_q <= t_k")\n',
                      ""))),
    Bug("scales_q_in_place", "test_inputs_unchanged",
        "`q *= scale` writes into the caller's array; scale a copy or the scores instead",
        edited(BASE, ("    pos = t_k - t_q", "    q *= scale\n    scale = 1.0\n    pos = t_k - t_q"))),
]
