import math

import numpy as np


def causal_mha(x, W_q, W_k, W_v, W_o, n_heads):
    # one sequence and one head at a time; W_o applied per head to its own rows and summed
    B, T, d_model = x.shape
    if d_model % n_heads:
        raise ValueError(f"n_heads={n_heads} must divide d_model={d_model}")
    d_head = d_model // n_heads
    y = np.zeros((B, T, d_model))
    weights = np.zeros((B, n_heads, T, T))
    for b in range(B):
        for h in range(n_heads):
            cols = slice(h * d_head, (h + 1) * d_head)
            q = x[b] @ W_q[:, cols]
            k = x[b] @ W_k[:, cols]
            v = x[b] @ W_v[:, cols]
            for i in range(T):
                s = [float(q[i] @ k[j]) / math.sqrt(d_head) for j in range(i + 1)]
                top = max(s)
                e = [math.exp(v_ - top) for v_ in s]
                total = sum(e)
                weights[b, h, i, :i + 1] = [v_ / total for v_ in e]
            y[b] += (weights[b, h] @ v) @ W_o[cols]
    return y, weights
