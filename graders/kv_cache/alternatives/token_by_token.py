import numpy as np


def _one_token(q, k, v):
    """q (B, H, d), k and v (B, H, t, d): one query row against every key it may see."""
    s = np.einsum("bhd,bhtd->bht", q, k) / np.sqrt(q.shape[-1])
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    return np.einsum("bht,bhtd->bhd", w / w.sum(axis=-1, keepdims=True), v)


def attend_with_cache(x, W_q, W_k, W_v, W_o, n_heads, cache=None):
    # decodes the new positions one at a time, growing the cache as it goes, so no mask is needed;
    # returns a Fortran-ordered y and read-only cache arrays
    B, t_new, d_model = x.shape
    if n_heads < 1 or d_model % n_heads != 0 or t_new == 0:
        raise ValueError("need n_heads dividing d_model and at least one new position")
    d = d_model // n_heads
    heads = lambda t: np.moveaxis(t.reshape(B, t_new, n_heads, d), 1, 2)
    q, k_new, v_new = heads(x @ W_q), heads(x @ W_k), heads(x @ W_v)
    k = np.empty((B, n_heads, 0, d)) if cache is None else cache[0]
    v = np.empty((B, n_heads, 0, d)) if cache is None else cache[1]
    if k.shape[:2] != (B, n_heads) or k.shape[2:] != v.shape[2:] or v.shape[:2] != (B, n_heads) or \
            k.ndim != 4 or k.shape[3] != d:
        raise ValueError(f"the cache {k.shape}, {v.shape} does not fit {B} sequences of {n_heads} heads of {d}")
    ctx = np.empty((B, n_heads, t_new, d))
    for i in range(t_new):
        k = np.concatenate([k, k_new[:, :, i:i + 1]], axis=2)
        v = np.concatenate([v, v_new[:, :, i:i + 1]], axis=2)
        ctx[:, :, i] = _one_token(q[:, :, i], k, v)
    y = np.asfortranarray(np.moveaxis(ctx, 1, 2).reshape(B, t_new, d_model) @ W_o)
    for a in (k, v):
        a.flags.writeable = False
    return y, (k, v)
