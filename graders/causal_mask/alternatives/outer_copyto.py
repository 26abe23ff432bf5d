import numpy as np


def causal_mask(t_q, t_k=None):
    if t_k is None:
        t_k = t_q
    if t_q > t_k:
        raise ValueError("t_q must not exceed t_k")
    # key index minus absolute query position: positive means the future
    return np.subtract.outer(np.arange(t_q), np.arange(t_k)) < t_q - t_k


def apply_causal_mask(scores):
    scores = np.asarray(scores)
    t_q, t_k = scores.shape[-2:]
    out = np.full(scores.shape, -np.inf, dtype=np.float64)
    np.copyto(out, scores, where=~causal_mask(t_q, t_k))
    return out
