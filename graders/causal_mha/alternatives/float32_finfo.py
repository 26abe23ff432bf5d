import numpy as np


def causal_mha(x, W_q, W_k, W_v, W_o, n_heads):
    # stays in the input's dtype; the future gets the dtype's most negative number, not -inf,
    # and the weights of masked entries are set to exactly 0 afterwards
    B, T, d_model = x.shape
    if d_model % n_heads != 0:
        raise ValueError(f"{n_heads} heads cannot split {d_model} features evenly")
    d_head = d_model // n_heads
    dt = x.dtype
    scale = dt.type(1.0 / np.sqrt(d_head))
    qkv = np.concatenate([W_q, W_k, W_v], axis=1)
    proj = (x @ qkv).reshape(B, T, 3, n_heads, d_head).transpose(2, 0, 3, 1, 4)
    q, k, v = proj[0], proj[1], proj[2]
    s = (q * scale) @ np.swapaxes(k, -1, -2)
    future = np.arange(T)[None, :] > np.arange(T)[:, None]
    s = np.where(future, np.finfo(dt).min, s)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    e[..., future] = 0
    w = e / e.sum(axis=-1, keepdims=True)
    out = np.moveaxis(w @ v, 1, 2).reshape(B, T, d_model)
    return (out @ W_o).astype(dt), w.astype(dt)
