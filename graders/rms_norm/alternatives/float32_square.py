import numpy as np


def rms_norm(x, weight, eps=1e-6):
    # np.square and a keepdims mean in x's own dtype, weight applied first to the divisor's reciprocal
    ms = np.square(x).mean(-1, keepdims=True)
    r = np.reciprocal(np.sqrt(ms + np.asarray(eps, dtype=x.dtype)))
    return (x * r * weight).astype(x.dtype)
