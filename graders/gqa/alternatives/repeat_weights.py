import numpy as np


def _mha(x, W_q, W_k, W_v, W_o, n_heads):
    B, T, _ = x.shape
    d = W_q.shape[1] // n_heads
    split = lambda t: t.reshape(B, T, n_heads, d).swapaxes(1, 2)
    q, k, v = split(x @ W_q), split(x @ W_k), split(x @ W_v)
    s = q @ k.swapaxes(-1, -2) / np.sqrt(d)
    s = s + np.where(np.tril(np.ones((T, T))) > 0, 0.0, -np.inf)
    lse = np.log(np.exp(s - s.max(-1, keepdims=True)).sum(-1, keepdims=True)) + s.max(-1, keepdims=True)
    p = np.exp(s - lse)
    return (p @ v).swapaxes(1, 2).reshape(B, T, -1) @ W_o, p


def gqa(x, W_q, W_k, W_v, W_o, n_heads, n_kv_heads):
    # GQA is MHA whose key and value projections repeat each KV head's columns for its group
    if W_q.shape[1] % n_heads != 0 or n_heads % n_kv_heads != 0:
        raise ValueError(f"cannot split {W_q.shape[1]} columns into {n_heads} heads "
                         f"shared by {n_kv_heads} KV heads")
    d = W_q.shape[1] // n_heads
    heads = np.arange(n_heads) // (n_heads // n_kv_heads)
    cols = (heads[:, None] * d + np.arange(d)).ravel()       # KV columns for every query head
    return _mha(x, W_q, W_k[:, cols], W_v[:, cols], W_o, n_heads)


def kv_cache_bytes(n_layers, n_kv_heads, d_head, n_tokens, bytes_per_value=2):
    kib_per_token = 2 * n_layers * n_kv_heads * d_head * bytes_per_value / 1024
    return int(round(kib_per_token * 1024)) * n_tokens
