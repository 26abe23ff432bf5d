import numpy as np


def swiglu(x, W_gate, W_up, W_down):
    # keeps x's dtype throughout and hands back a Fortran-ordered, read-only array
    g = np.matmul(x, W_gate)
    half = np.asarray(0.5, dtype=g.dtype)
    sig = half + half * np.tanh(half * g)          # sigmoid(g) = (1 + tanh(g / 2)) / 2, never overflows
    out = np.asfortranarray((g * sig * np.matmul(x, W_up)) @ W_down)
    out.setflags(write=False)
    return out
