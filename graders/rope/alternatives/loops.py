import math

import numpy as np


def rope(x, positions=None, base=10000.0):
    # one pair at a time, one row at a time, with the math module
    d = x.shape[-1]
    T = x.shape[-2]
    if d % 2 == 1:
        raise ValueError(f"d must be even, got {d}")
    if positions is None:
        positions = list(range(T))
    half = d // 2
    flat = np.asarray(x, dtype=np.float64).reshape(-1, T, d)
    out = np.zeros_like(flat)
    for b in range(flat.shape[0]):
        for t in range(T):
            p = int(positions[t])
            for i in range(half):
                angle = p * math.pow(base, -2 * i / d)
                c, s = math.cos(angle), math.sin(angle)
                a, bb = flat[b, t, i], flat[b, t, i + half]
                out[b, t, i] = a * c - bb * s
                out[b, t, i + half] = bb * c + a * s
    return out.reshape(x.shape)
