import numpy as np


def gqa(x, W_q, W_k, W_v, W_o, n_heads, n_kv_heads):
    # group the query heads under their KV head instead of repeating keys and values
    B, T, _ = x.shape
    if W_q.shape[1] % n_heads:
        raise ValueError("n_heads must divide W_q.shape[1]")
    if n_heads % n_kv_heads:
        raise ValueError("n_kv_heads must divide n_heads")
    d = W_q.shape[1] // n_heads
    G, r = n_kv_heads, n_heads // n_kv_heads
    q = np.einsum("btm,mgrd->bgrtd", x, W_q.reshape(-1, G, r, d))
    k = np.einsum("btm,mgd->bgtd", x, W_k.reshape(-1, G, d))
    v = np.einsum("btm,mgd->bgtd", x, W_v.reshape(-1, G, d))
    s = np.einsum("bgrtd,bgsd->bgrts", q, k) * (1.0 / np.sqrt(d)).astype(x.dtype)
    s[..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] = -np.inf
    s = np.exp(s - s.max(-1, keepdims=True))
    p = s / s.sum(-1, keepdims=True)
    ctx = np.einsum("bgrts,bgsd->btgrd", p, v).reshape(B, T, n_heads * d)
    return ctx @ W_o, p.reshape(B, n_heads, T, T)


def kv_cache_bytes(n_layers, n_kv_heads, d_head, n_tokens, bytes_per_value=2):
    return int(np.prod([2, n_layers, n_kv_heads, d_head, bytes_per_value, n_tokens], dtype=np.int64))
