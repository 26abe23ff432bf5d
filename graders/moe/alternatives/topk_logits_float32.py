import numpy as np


def _check(top_k, n_experts):
    if top_k < 1 or top_k > n_experts:
        raise ValueError("top_k must be in 1..n_experts")


def _pick(logits, top_k):
    # softmax is monotonic: the top_k probabilities are the top_k logits, and equal logits are
    # equal probabilities, so a stable sort of the negated logits keeps the lower index first
    return np.argsort(-logits, axis=-1, kind="stable")[..., :top_k]


def moe_layer(x, W_router, experts, top_k=2):
    # stays in x's dtype: float32 in, float32 out
    n_experts = len(experts)
    _check(top_k, n_experts)
    d = x.shape[-1]
    if any(g.shape[0] != d or u.shape[0] != d or w.shape[-1] != d for g, u, w in experts):
        raise ValueError("every expert's W_gate and W_up need d_model rows and W_down d_model columns")
    logits = x @ W_router                                      # (..., E)
    idx = _pick(logits, top_k)                                 # (..., k)
    top = np.take_along_axis(logits, idx, axis=-1)
    # renormalised top-k probabilities are the softmax of the top-k logits
    w = np.exp(top - top.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    out = np.zeros_like(x, dtype=np.result_type(x, W_router, np.float32))
    for e, (g, u, dn) in enumerate(experts):
        weight = np.where(idx == e, w, 0).sum(axis=-1)         # (...,) 0 where e was not picked
        sel = weight != 0
        if sel.any():
            t = x[sel]
            a = t @ g
            sig = np.exp(-np.logaddexp(np.zeros((), a.dtype), -a))
            out[sel] += weight[sel][:, None] * (((a * sig) * (t @ u)) @ dn)
    return out


def load_balancing_loss(router_logits, top_k=2):
    n_tokens, n_experts = router_logits.shape
    _check(top_k, n_experts)
    z = router_logits - router_logits.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    hits = np.zeros(n_experts, dtype=router_logits.dtype)
    np.add.at(hits, _pick(router_logits, top_k).ravel(), 1)
    return (hits / n_tokens * p.mean(axis=0)).sum() * n_experts   # a float32 scalar for float32 logits
