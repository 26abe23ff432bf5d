import math

import numpy as np


def rms_norm(x, weight, eps=1e-6):
    # one vector at a time, in plain Python
    arr = np.asarray(x, dtype=np.float64)
    d = arr.shape[-1]
    rows = arr.reshape(-1, d)
    out = np.empty_like(rows)
    for r, row in enumerate(rows):
        ms = sum(v * v for v in row) / d
        scale = 1.0 / math.sqrt(ms + eps)
        for j in range(d):
            out[r, j] = row[j] * scale * weight[j]
    return out.reshape(arr.shape)
