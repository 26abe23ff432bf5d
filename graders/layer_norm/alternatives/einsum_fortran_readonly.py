import numpy as np


def layer_norm(x, gamma, beta, eps=1e-5):
    # sums with einsum; the result comes back Fortran-ordered and read-only
    d = x.shape[-1]
    mean = np.einsum("...i->...", x)[..., None] / d
    c = x - mean
    var = np.einsum("...i,...i->...", c, c)[..., None] / d
    out = np.asfortranarray(np.multiply(c / np.sqrt(var + eps), gamma) + beta)
    out.flags.writeable = False
    return out
