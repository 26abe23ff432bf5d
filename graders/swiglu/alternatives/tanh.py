import numpy as np


def swiglu(x, W_gate, W_up, W_down):
    # sigmoid(z) = (1 + tanh(z / 2)) / 2: tanh saturates at +-1 and never overflows
    gate = np.einsum("...d,df->...f", x, W_gate)
    up = np.einsum("...d,df->...f", x, W_up)
    hidden = 0.5 * gate * (1.0 + np.tanh(0.5 * gate)) * up
    return np.einsum("...f,fd->...d", hidden, W_down)
