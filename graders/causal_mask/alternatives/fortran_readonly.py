import numpy as np


def causal_mask(t_q, t_k=None):
    # compare every key's position with each query's absolute position; the mask comes
    # back Fortran-ordered and read-only
    if t_k is None:
        t_k = t_q
    if t_q > t_k:
        raise ValueError(f"{t_q} queries cannot be the last positions of only {t_k} keys")
    query_position = np.arange(t_k - t_q, t_k)
    mask = np.asfortranarray(np.arange(t_k)[None, :] > query_position[:, None])
    mask.flags.writeable = False
    return mask


def apply_causal_mask(scores):
    # a Fortran-ordered copy, filled through a boolean index on the last two axes, read-only
    t_q, t_k = scores.shape[-2:]
    out = np.array(scores, order="F")
    out[..., causal_mask(t_q, t_k)] = -np.inf
    out.flags.writeable = False
    return out
