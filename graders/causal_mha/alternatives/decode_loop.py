import numpy as np


def causal_mha(x, W_q, W_k, W_v, W_o, n_heads):
    # generation order: one query position at a time against the keys seen so far (a KV cache)
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError("d_model must be a multiple of n_heads")
    dh = d_model // n_heads
    q = np.swapaxes((x @ W_q).reshape(B, T, n_heads, dh), 1, 2)
    k = np.swapaxes((x @ W_k).reshape(B, T, n_heads, dh), 1, 2)
    v = np.swapaxes((x @ W_v).reshape(B, T, n_heads, dh), 1, 2)
    weights = np.zeros((B, n_heads, T, T), dtype=x.dtype)
    ctx = np.empty((B, n_heads, T, dh), dtype=x.dtype)
    for t in range(T):
        s = np.einsum("bhd,bhkd->bhk", q[:, :, t], k[:, :, :t + 1]) / np.sqrt(dh)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        p = e / e.sum(axis=-1, keepdims=True)
        weights[:, :, t, :t + 1] = p
        ctx[:, :, t] = np.einsum("bhk,bhkd->bhd", p, v[:, :, :t + 1])
    return np.swapaxes(ctx, 1, 2).reshape(B, T, d_model) @ W_o, weights
