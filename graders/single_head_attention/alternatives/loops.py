import math

import numpy as np


def single_head_attention(x, W_q, W_k, W_v, causal=True):
    # one query at a time, in plain Python over the keys it may see
    T = x.shape[0]
    d_k = W_q.shape[1]
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    weights = np.zeros((T, T))
    out = np.zeros((T, d_k))
    for i in range(T):
        last = i + 1 if causal else T
        scores = [float(q[i] @ k[j]) / math.sqrt(d_k) for j in range(last)]
        top = max(scores)
        exps = [math.exp(s - top) for s in scores]
        total = sum(exps)
        for j, e in enumerate(exps):
            weights[i, j] = e / total
            out[i] += weights[i, j] * v[j]
    return out, weights
