import math

import numpy as np


def swiglu(x, W_gate, W_up, W_down):
    # flatten the leading axes into rows, walk the hidden units with plain Python, then restore
    d_model = x.shape[-1]
    rows = np.asarray(x, dtype=np.float64).reshape(-1, d_model)
    gate, up = rows @ W_gate, rows @ W_up
    hidden = np.empty_like(gate)
    for i in range(gate.shape[0]):
        for j in range(gate.shape[1]):
            z = float(gate[i, j])
            e = math.exp(-abs(z))
            sig = 1.0 / (1.0 + e) if z >= 0 else e / (1.0 + e)
            hidden[i, j] = z * sig * up[i, j]
    return (hidden @ W_down).reshape(x.shape)
