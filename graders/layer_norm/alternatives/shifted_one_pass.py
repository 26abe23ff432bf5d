import numpy as np


def layer_norm(x, gamma, beta, eps=1e-5):
    # one pass over shifted data: with K the first feature of each vector, mean((x - K)**2) -
    # mean(x - K)**2 is the variance and no longer cancels, since x - K is about the spread
    y = x - x[..., :1]
    m = y.mean(axis=-1, keepdims=True)
    var = np.maximum((y * y).mean(axis=-1, keepdims=True) - m * m, 0.0)
    return (y - m) / np.sqrt(var + eps) * gamma + beta
