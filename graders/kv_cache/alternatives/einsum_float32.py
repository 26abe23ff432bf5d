import numpy as np


def attend_with_cache(x, W_q, W_k, W_v, W_o, n_heads, cache=None):
    # einsum throughout, in the input's own dtype (float32 stays float32), additive mask
    B, T, D = x.shape
    if D % n_heads:
        raise ValueError(f"{n_heads} heads do not divide {D} features")
    if T == 0:
        raise ValueError("t_new must be at least 1")
    H, E = n_heads, D // n_heads
    dt = np.result_type(x, W_q, W_k, W_v, W_o)
    q = np.einsum("btd,dhe->bhte", x, W_q.reshape(D, H, E))
    k = np.einsum("btd,dhe->bhte", x, W_k.reshape(D, H, E))
    v = np.einsum("btd,dhe->bhte", x, W_v.reshape(D, H, E))
    if cache is not None:
        pk, pv = cache
        want = (B, H, pk.shape[2] if pk.ndim == 4 else -1, E)
        if pk.shape != want or pv.shape != want:
            raise ValueError("cache shape mismatch")
        k = np.concatenate((pk.astype(dt, copy=False), k), axis=2)
        v = np.concatenate((pv.astype(dt, copy=False), v), axis=2)
    P = k.shape[2] - T
    bias = np.where(np.arange(P + T) > P + np.arange(T)[:, None], -np.inf, 0).astype(dt)
    s = np.einsum("bhqe,bhke->bhqk", q, k) * dt.type(E ** -0.5) + bias
    s -= s.max(axis=-1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=-1, keepdims=True)
    ctx = np.einsum("bhqk,bhke->bqhe", s, v).reshape(B, T, D)
    return ctx @ W_o, (k, v)
