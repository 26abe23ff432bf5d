import numpy as np


def causal_mask(t_q, t_k=None):
    t_k = t_q if t_k is None else t_k
    if t_k < t_q:
        raise ValueError("a causal mask needs t_q <= t_k")
    # np.tri marks j <= i + k, the allowed pairs; its complement is the future
    return ~np.tri(t_q, t_k, k=t_k - t_q, dtype=bool)


def apply_causal_mask(scores):
    # an additive bias, as frameworks do it, kept in the scores' own dtype; the blocked entries
    # are the bias itself, since NaN or +inf there plus -inf would be NaN
    bias = np.where(causal_mask(scores.shape[-2], scores.shape[-1]), -np.inf, 0.0).astype(scores.dtype)
    return np.where(np.isneginf(bias), bias, scores + bias)
