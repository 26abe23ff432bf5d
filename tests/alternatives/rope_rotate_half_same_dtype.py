import numpy as np


def rotate_half(x):
    h = x.shape[-1] // 2
    return np.concatenate((-x[..., h:], x[..., :h]), axis=-1)


def rope(x, positions=None, base=10000.0):
    # the transformers-library formulation: full-width cos/sin tables, everything in x's dtype
    seq_len, dim = x.shape[-2:]
    if dim % 2:
        raise ValueError("rope: d must be even")
    dt = x.dtype
    t = np.arange(seq_len, dtype=dt) if positions is None else np.asarray(positions).astype(dt)
    inv_freq = (1.0 / (base ** (np.arange(0, dim, 2).astype(dt) / dim))).astype(dt)
    freqs = np.einsum("t,f->tf", t, inv_freq)
    emb = np.concatenate((freqs, freqs), axis=-1)          # (T, d)
    return x * np.cos(emb) + rotate_half(x) * np.sin(emb)
