import numpy as np


def cross_entropy(logits, targets, ignore_index=-100):
    # log-softmax with np.logaddexp.reduce, targets gathered with take_along_axis; the loss
    # comes back as a NumPy float64 scalar
    V = logits.shape[-1]
    z = np.reshape(logits, (-1, V))
    t = np.reshape(targets, -1)
    keep = t != ignore_index
    if ((t[keep] < 0) | (t[keep] >= V)).any():
        raise ValueError("targets must be class ids in [0, V) or ignore_index")
    if not keep.any():
        raise ValueError("every position is ignored")
    logp = z - np.logaddexp.reduce(z, axis=-1, keepdims=True)
    idx = np.where(keep, t, 0)[:, None]
    picked = np.take_along_axis(logp, idx, axis=-1)[:, 0]
    loss = -picked[keep].mean()
    grad = np.exp(logp)
    np.put_along_axis(grad, idx, np.take_along_axis(grad, idx, axis=-1) - 1, axis=-1)
    grad *= keep[:, None] / keep.sum()
    return np.float64(loss), grad.reshape(np.shape(logits))
