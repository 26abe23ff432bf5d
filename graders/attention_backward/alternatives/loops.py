import math

import numpy as np


def attention_backward(q, k, v, d_out, causal=True):
    # one (leading index, query) row at a time, the softmax Jacobian written out per row
    t_q, d = q.shape[-2:]
    t_k = k.shape[-2]
    if causal and t_q > t_k:
        raise ValueError("a causal query needs at least its own position among the keys")
    lead = q.shape[:-2]
    dq = np.zeros(q.shape)
    dk = np.zeros(k.shape)
    dv = np.zeros(v.shape)
    for idx in np.ndindex(*lead):
        Q, K, V, G = (np.asarray(a[idx], dtype=np.float64) for a in (q, k, v, d_out))
        for i in range(t_q):
            last = t_k - t_q + i if causal else t_k - 1
            keys = range(last + 1)
            s = [float(Q[i] @ K[j]) / math.sqrt(d) for j in keys]
            top = max(s)
            e = [math.exp(x - top) for x in s]
            z = sum(e)
            p = [x / z for x in e]
            dp = [float(G[i] @ V[j]) for j in keys]
            row = sum(pj * dpj for pj, dpj in zip(p, dp))
            for j in keys:
                ds = p[j] * (dp[j] - row)
                dv[idx][j] += p[j] * G[i]
                dq[idx][i] += ds * K[j] / math.sqrt(d)
                dk[idx][j] += ds * Q[i] / math.sqrt(d)
    return dq, dk, dv
