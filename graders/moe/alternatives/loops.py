import math

import numpy as np


def _top(probs, k):
    # sort by (-probability, index): equal probabilities keep the lower index first
    return sorted(range(len(probs)), key=lambda e: (-probs[e], e))[:k]


def _probs(logits):
    m = max(logits)
    ex = [math.exp(v - m) for v in logits]
    s = sum(ex)
    return [v / s for v in ex]


def _validate(top_k, n):
    if not (1 <= top_k <= n):
        raise ValueError(f"top_k={top_k} must lie in 1..{n}")


def moe_layer(x, W_router, experts, top_k=2):
    d = x.shape[-1]
    _validate(top_k, len(experts))
    for i, (g, u, dn) in enumerate(experts):
        if g.shape[0] != d or u.shape[0] != d or dn.shape[1] != d:
            raise ValueError(f"expert {i} has the wrong shapes for d_model={d}")
    flat = np.reshape(x, (-1, d)).astype(np.float64)
    out = np.zeros_like(flat)
    for t, tok in enumerate(flat):
        p = _probs(list(tok @ W_router))
        chosen = _top(p, top_k)
        total = sum(p[e] for e in chosen)
        for e in chosen:
            g, u, dn = (np.asarray(w, dtype=np.float64) for w in experts[e])
            a = tok @ g
            silu = np.array([z / (1 + math.exp(-z)) if z >= 0 else z * math.exp(z) / (1 + math.exp(z)) for z in a])
            out[t] += p[e] / total * ((silu * (tok @ u)) @ dn)
    return out.reshape(x.shape)


def load_balancing_loss(router_logits, top_k=2):
    n_tokens, n = router_logits.shape
    _validate(top_k, n)
    count = [0] * n
    mean_p = [0.0] * n
    for row in router_logits.astype(np.float64):
        p = _probs(list(row))
        for e in _top(p, top_k):
            count[e] += 1
        for e in range(n):
            mean_p[e] += p[e] / n_tokens
    # a NumPy floating scalar, not a Python float
    return np.float64(n) * np.sum(np.array(count) / n_tokens * np.array(mean_p))
