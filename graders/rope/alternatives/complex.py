import numpy as np


def rope(x, positions=None, base=10000.0):
    # the half-split pairs as complex numbers: first half real, second half imaginary
    T, d = x.shape[-2], x.shape[-1]
    if d % 2 != 0:
        raise ValueError("odd d")
    h = d // 2
    pos = np.arange(T) if positions is None else np.asarray(positions)
    theta = np.outer(pos, 1.0 / base ** (np.arange(0, d, 2) / d))   # (T, h)
    z = (x[..., :h] + 1j * x[..., h:]) * np.exp(1j * theta)
    return np.concatenate([z.real, z.imag], axis=-1)
