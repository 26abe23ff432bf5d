import numpy as np


def _routing(logits, top_k):
    e = np.exp(logits - logits.max(-1, keepdims=True))
    probs = e / e.sum(-1, keepdims=True)
    # rank of each expert in its row: how many experts beat it (higher p, or equal p and lower index)
    n = probs.shape[-1]
    beats = (probs[..., None, :] > probs[..., :, None]) | \
            ((probs[..., None, :] == probs[..., :, None]) & (np.arange(n)[None, :] < np.arange(n)[:, None]))
    mask = beats.sum(-1) < top_k                       # (N, E) True for the top_k of each row
    return probs, mask


def moe_layer(x, W_router, experts, top_k=2):
    d = x.shape[-1]
    E = len(experts)
    if not 0 < top_k <= E:
        raise ValueError("need 1 <= top_k <= n_experts")
    for g, u, w in experts:
        if (g.shape[0], u.shape[0], w.shape[1]) != (d, d, d):
            raise ValueError("expert shapes do not fit d_model")
    tok = x.reshape(-1, d)
    probs, mask = _routing(tok @ W_router, top_k)
    gates = np.where(mask, probs, 0.0)
    gates = gates / gates.sum(-1, keepdims=True)        # (N, E), zero off the picks
    # every expert on every token (fine for a handful of experts), masked afterwards
    G = np.stack([g for g, _, _ in experts])             # (E, d, d_ff)
    U = np.stack([u for _, u, _ in experts])
    D = np.stack([w for _, _, w in experts])             # (E, d_ff, d)
    a = np.einsum("nd,edf->enf", tok, G)
    h = a * (0.5 * (1 + np.tanh(a / 2))) * np.einsum("nd,edf->enf", tok, U)
    y = np.einsum("enf,efd->end", h, D)                  # (E, N, d)
    out = np.einsum("ne,end->nd", gates, y).reshape(x.shape)
    out = np.asfortranarray(out)
    out.setflags(write=False)
    return out


def load_balancing_loss(router_logits, top_k=2):
    N, E = router_logits.shape
    if not 0 < top_k <= E:
        raise ValueError("need 1 <= top_k <= n_experts")
    probs, mask = _routing(router_logits, top_k)
    return E * float(np.mean(mask, axis=0) @ np.mean(probs, axis=0))
