import numpy as np


def softmax(z, axis=-1):
    # every step in place on one fresh Fortran-ordered copy (float32 stays float32);
    # the result is handed back read-only
    out = np.array(z, dtype=np.result_type(z, np.float32), order="F")
    out -= out.max(axis=axis, keepdims=True)
    np.exp(out, out=out)
    out /= out.sum(axis=axis, keepdims=True)
    out.flags.writeable = False
    return out
