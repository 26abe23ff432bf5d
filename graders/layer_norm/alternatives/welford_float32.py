import numpy as np


def layer_norm(x, gamma, beta, eps=1e-5):
    # Welford's one-pass update over the features, vectorised over the vectors, in x's own dtype
    dt = x.dtype
    mean = np.zeros(x.shape[:-1], dtype=dt)
    m2 = np.zeros(x.shape[:-1], dtype=dt)
    for j in range(x.shape[-1]):
        v = x[..., j]
        delta = v - mean
        mean = mean + delta / dt.type(j + 1)
        m2 = m2 + delta * (v - mean)
    var = m2 / dt.type(x.shape[-1])
    inv = dt.type(1) / np.sqrt(var + dt.type(eps))
    return ((x - mean[..., None]) * inv[..., None] * gamma + beta).astype(dt)
