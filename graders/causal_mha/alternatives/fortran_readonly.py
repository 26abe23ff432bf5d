import numpy as np


def causal_mha(x, W_q, W_k, W_v, W_o, n_heads):
    # one fused projection; results in the input's float dtype, y Fortran-ordered and the
    # weights read-only, as a caller that keeps them for later inspection might want
    B, T, d_model = x.shape
    if n_heads < 1 or d_model % n_heads:
        raise ValueError(f"d_model={d_model} is not a multiple of n_heads={n_heads}")
    d_head = d_model // n_heads
    dt = np.result_type(x.dtype, np.float32)
    W = np.stack([W_q, W_k, W_v]).reshape(3, d_model, n_heads, d_head)
    q, k, v = np.einsum("btm,smhe->sbhte", x, W).astype(dt)
    s = q @ np.swapaxes(k, -1, -2) * dt.type(d_head ** -0.5)
    s[..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] = -np.inf
    s -= s.max(axis=-1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=-1, keepdims=True)
    ctx = np.swapaxes(s @ v, 1, 2).reshape(B, T, d_model)
    y = np.asfortranarray((ctx @ W_o).astype(dt))
    s.setflags(write=False)
    return y, s
