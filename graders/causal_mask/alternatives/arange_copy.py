import numpy as np


def causal_mask(t_q, t_k=None):
    if t_k is None:
        t_k = t_q
    if t_q > t_k:
        raise ValueError(f"t_q={t_q} > t_k={t_k}")
    rows = np.arange(t_q)[:, None] + (t_k - t_q)   # absolute position of each query
    cols = np.arange(t_k)[None, :]
    return cols > rows


def apply_causal_mask(scores):
    out = scores.copy()
    out[..., causal_mask(*scores.shape[-2:])] = -np.inf
    return out
