import numpy as np


def swiglu(x, W_gate, W_up, W_down):
    # both branches of np.where are computed for every entry; the one that is thrown away may
    # overflow, so its warning is silenced on purpose (the kept branch never overflows)
    g = x @ W_gate
    with np.errstate(over="ignore", invalid="ignore"):
        sig = np.where(g >= 0, 1.0 / (1.0 + np.exp(-g)), np.exp(g) / (1.0 + np.exp(g)))
    return ((g * sig) * (x @ W_up)) @ W_down
