import numpy as np


def rope(x, positions=None, base=10000.0):
    # writes each half into a Fortran-ordered array of x's dtype and hands it back read-only
    T, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError("rope: d must be even")
    h = d // 2
    pos = np.arange(T) if positions is None else positions
    theta = np.multiply.outer(np.asarray(pos, dtype=np.float64), base ** (-np.arange(h) * 2.0 / d))
    c, s = np.cos(theta), np.sin(theta)
    out = np.empty(x.shape, dtype=x.dtype, order="F")
    out[..., :h] = x[..., :h] * c - x[..., h:] * s
    out[..., h:] = x[..., h:] * c + x[..., :h] * s
    out.flags.writeable = False
    return out
