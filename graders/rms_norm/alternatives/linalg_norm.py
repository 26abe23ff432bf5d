import numpy as np


def rms_norm(x, weight, eps=1e-6):
    # the RMS is the L2 norm over sqrt(d); square it back to put eps under the root
    d = x.shape[-1]
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    return weight * x / np.sqrt(norm ** 2 / d + eps)
