import numpy as np


def causal_mask(t_q, t_k=None):
    t_k = t_q if t_k is None else t_k
    if t_q > t_k:
        raise ValueError("more queries than keys")
    mask = np.zeros((t_q, t_k), dtype=bool)
    for i in range(t_q):
        now = t_k - t_q + i            # the absolute position of query i
        for j in range(now + 1, t_k):
            mask[i, j] = True
    return mask


def apply_causal_mask(scores):
    # walk over every (t_q, t_k) slice of the leading axes and fill it by hand
    t_q, t_k = scores.shape[-2], scores.shape[-1]
    mask = causal_mask(t_q, t_k)
    out = np.array(scores, copy=True)
    for lead in np.ndindex(*scores.shape[:-2]):
        for i in range(t_q):
            for j in range(t_k):
                if mask[i, j]:
                    out[lead + (i, j)] = -np.inf
    return out
