import numpy as np


def swiglu(x, W_gate, W_up, W_down):
    # log sigmoid(z) = -log(1 + exp(-z)) = -logaddexp(0, -z), which NumPy computes without overflow
    gate = x @ W_gate
    silu = gate * np.exp(-np.logaddexp(0, -gate))
    return (silu * (x @ W_up)) @ W_down
