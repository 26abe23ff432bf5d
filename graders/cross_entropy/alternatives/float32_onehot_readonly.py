import numpy as np


def cross_entropy(logits, targets, ignore_index=-100):
    # stays in the logits' dtype: the loss is a NumPy scalar of that dtype and dlogits comes
    # back Fortran-ordered and read-only; the one-hot is a comparison with arange(V)
    dt = logits.dtype
    V = logits.shape[-1]
    z = logits.reshape(-1, V)
    t = np.asarray(targets).ravel()
    live = t != ignore_index
    if np.any(live & ~((0 <= t) & (t < V))):
        raise ValueError(f"targets outside [0, {V}) that are not ignore_index={ignore_index}")
    count = np.count_nonzero(live)
    if count == 0:
        raise ValueError("nothing to average: no target differs from ignore_index")
    shifted = z - z.max(axis=1, keepdims=True)
    log_norm = np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    log_probs = shifted - log_norm
    one_hot = np.arange(V) == t[:, None]
    loss = -(log_probs * one_hot)[live].sum(dtype=dt) / dt.type(count)
    grad = (np.exp(log_probs) - one_hot) * (live[:, None] / dt.type(count)).astype(dt)
    out = np.asfortranarray(grad.reshape(logits.shape).astype(dt))
    out.flags.writeable = False
    return dt.type(loss), out
