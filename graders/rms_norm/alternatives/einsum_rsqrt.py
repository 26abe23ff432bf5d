import numpy as np


def rms_norm(x, weight, eps=1e-6):
    # sum of squares with einsum, then multiply by the reciprocal square root
    d = x.shape[-1]
    sq = np.einsum("...i,...i->...", x, x)[..., None]
    inv = 1.0 / np.sqrt(sq / d + eps)
    return np.multiply(x * inv, weight)
