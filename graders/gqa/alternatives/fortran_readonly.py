import numpy as np


def gqa(x, W_q, W_k, W_v, W_o, n_heads, n_kv_heads):
    # keys and values gathered per query head by index; float32 stays float32; y comes back
    # Fortran-ordered and the weights read-only
    if W_q.shape[1] % n_heads or n_heads % n_kv_heads:
        raise ValueError(f"{n_heads} query heads over {W_q.shape[1]} columns and {n_kv_heads} KV heads "
                         f"do not divide evenly")
    B, T, _ = x.shape
    dt = np.result_type(x.dtype, np.float32)
    d = W_q.shape[1] // n_heads
    kv_of = np.arange(n_heads) * n_kv_heads // n_heads         # the KV head of each query head
    q = np.moveaxis((x @ W_q).astype(dt).reshape(B, T, n_heads, d), 2, 1)
    k = np.moveaxis((x @ W_k).astype(dt).reshape(B, T, n_kv_heads, d), 2, 1)[:, kv_of]
    v = np.moveaxis((x @ W_v).astype(dt).reshape(B, T, n_kv_heads, d), 2, 1)[:, kv_of]
    s = np.matmul(q, np.moveaxis(k, -1, -2)) / dt.type(np.sqrt(d))
    s = np.where(np.tri(T, dtype=bool), s, dt.type(-np.inf))
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    y = np.moveaxis(p @ v, 1, 2).reshape(B, T, n_heads * d) @ W_o.astype(dt)
    p.setflags(write=False)
    return np.asfortranarray(y), p


def kv_cache_bytes(n_layers, n_kv_heads, d_head, n_tokens, bytes_per_value=2):
    # a NumPy integer, in 64 bits
    sizes = np.array([2, n_layers, n_kv_heads, d_head, bytes_per_value, n_tokens], dtype=np.int64)
    return np.prod(sizes)
