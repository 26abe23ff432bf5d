import math

import numpy as np


def flash_attention(q, k, v, block_size=128, causal=True):
    # the textbook two-level loop: query blocks outside, key blocks inside
    if block_size < 1:
        raise ValueError("block_size must be >= 1")
    t_q, d = q.shape[-2], q.shape[-1]
    t_k = k.shape[-2]
    if causal and t_q > t_k:
        raise ValueError("causal attention with t_q > t_k")
    offset = t_k - t_q
    out = np.zeros(q.shape[:-1] + (v.shape[-1],), dtype=np.result_type(q, k, v))
    for qs in range(0, t_q, block_size):
        qe = min(qs + block_size, t_q)
        qb = q[..., qs:qe, :] / math.sqrt(d)
        m = np.full(qb.shape[:-1] + (1,), -np.inf)
        l = np.zeros(qb.shape[:-1] + (1,))
        o = np.zeros(qb.shape[:-1] + (v.shape[-1],))
        last_key = offset + qe - 1 if causal else t_k - 1
        for ks in range(0, last_key + 1, block_size):
            ke = min(ks + block_size, last_key + 1)
            s = qb @ np.swapaxes(k[..., ks:ke, :], -1, -2)
            if causal and ke - 1 > offset + qs:  # only blocks that cross the diagonal need a mask
                blocked = np.arange(ks, ke)[None, :] > (offset + np.arange(qs, qe))[:, None]
                s[..., blocked] = -np.inf
            m2 = np.maximum(m, s.max(axis=-1, keepdims=True))
            p = np.exp(s - m2)
            c = np.exp(m - m2)
            l = l * c + p.sum(axis=-1, keepdims=True)
            o = o * c + p @ v[..., ks:ke, :]
            m = m2
        out[..., qs:qe, :] = o / l
    return out
