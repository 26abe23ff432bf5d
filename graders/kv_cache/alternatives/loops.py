import math

import numpy as np


def attend_with_cache(x, W_q, W_k, W_v, W_o, n_heads, cache=None):
    # plain loops over sequences, heads and new positions; one softmax per query row
    B, t_new, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError("d_model must be a multiple of n_heads")
    if t_new < 1:
        raise ValueError("x must hold at least one new position")
    dh = d_model // n_heads
    q_all, k_all, v_all = x @ W_q, x @ W_k, x @ W_v
    t_past = 0
    if cache is not None:
        kc, vc = (np.asarray(a) for a in cache)
        if kc.ndim != 4 or kc.shape != vc.shape or kc.shape[0] != B or kc.shape[1] != n_heads or kc.shape[3] != dh:
            raise ValueError(f"cache of shapes {kc.shape} and {vc.shape} does not fit x {x.shape}")
        t_past = kc.shape[2]
    K = np.zeros((B, n_heads, t_past + t_new, dh))
    V = np.zeros((B, n_heads, t_past + t_new, dh))
    ctx = np.zeros((B, t_new, d_model))
    for b in range(B):
        for h in range(n_heads):
            cols = slice(h * dh, (h + 1) * dh)
            if t_past:
                K[b, h, :t_past], V[b, h, :t_past] = kc[b, h], vc[b, h]
            K[b, h, t_past:], V[b, h, t_past:] = k_all[b, :, cols], v_all[b, :, cols]
            for i in range(t_new):
                seen = t_past + i + 1
                s = [float(q_all[b, i, cols] @ K[b, h, j]) / math.sqrt(dh) for j in range(seen)]
                top = max(s)
                e = [math.exp(z - top) for z in s]
                total = sum(e)
                ctx[b, i, cols] = sum(e[j] / total * V[b, h, j] for j in range(seen))
    return ctx @ W_o, (K, V)
