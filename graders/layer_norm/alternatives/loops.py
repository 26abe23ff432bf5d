import math

import numpy as np


def layer_norm(x, gamma, beta, eps=1e-5):
    # one vector at a time in plain Python: fsum for the mean, then the squared deviations
    arr = np.asarray(x, dtype=np.float64)
    d = arr.shape[-1]
    rows = arr.reshape(-1, d)
    out = np.empty(rows.shape)
    for r, row in enumerate(rows.tolist()):
        mean = math.fsum(row) / d
        var = math.fsum((v - mean) ** 2 for v in row) / d
        inv = 1.0 / math.sqrt(var + eps)
        for j, v in enumerate(row):
            out[r, j] = (v - mean) * inv * float(gamma[j]) + float(beta[j])
    return out.reshape(arr.shape)
