import numpy as np


def rms_norm(x, weight, eps=1e-6):
    # normalised in place in a Fortran-ordered copy that keeps float32 as float32;
    # the result is handed back read-only
    out = np.array(x, dtype=np.result_type(x, weight, np.float32), order="F")
    mean_square = np.einsum("...i,...i->...", out, out)[..., None] / out.shape[-1]
    out /= np.sqrt(mean_square + eps)
    out *= weight
    out.flags.writeable = False
    return out
