import numpy as np


def rotate_half(x):
    h = x.shape[-1] // 2
    return np.concatenate((-x[..., h:], x[..., :h]), axis=-1)


def rope(x, positions=None, base=10000.0):
    # the transformers-library formulation: full-width cos/sin tables; the angles are formed in
    # float64 (a float32 position * frequency is off by 1e-3 rad at position 1e5), then the
    # tables are cast to x's dtype, so float32 in gives float32 out
    seq_len, dim = x.shape[-2:]
    if dim % 2:
        raise ValueError("rope: d must be even")
    t = np.arange(seq_len, dtype=np.float64) if positions is None else np.asarray(positions, dtype=np.float64)
    inv_freq = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float64) / dim))
    freqs = np.einsum("t,f->tf", t, inv_freq)
    emb = np.concatenate((freqs, freqs), axis=-1)          # (T, d)
    cos, sin = np.cos(emb).astype(x.dtype), np.sin(emb).astype(x.dtype)
    return x * cos + rotate_half(x) * sin
