import numpy as np


def attention_backward(q, k, v, d_out, causal=True):
    # einsum throughout, in the inputs' own dtype (float32 stays float32), and the row term
    # taken as rowsum(d_out * out), as FlashAttention's backward does
    t_q, d = q.shape[-2], q.shape[-1]
    t_k = k.shape[-2]
    if causal and t_q > t_k:
        raise ValueError(f"causal attention with t_q={t_q} > t_k={t_k}")
    dtype = np.result_type(q, k, v, d_out)
    scale = dtype.type(1 / np.sqrt(d))
    s = np.einsum("...id,...jd->...ij", q, k) * scale
    if causal:
        allowed = np.tril(np.ones((t_q, t_k), dtype=bool), k=t_k - t_q)
        s = np.where(allowed, s, dtype.type(-np.inf))
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    out = np.einsum("...ij,...jd->...id", p, v)
    row = np.einsum("...id,...id->...i", d_out, out)[..., None]
    ds = p * (np.einsum("...id,...jd->...ij", d_out, v) - row)
    dq = np.einsum("...ij,...jd->...id", ds, k) * scale
    dk = np.einsum("...ij,...id->...jd", ds, q) * scale
    dv = np.einsum("...ij,...id->...jd", p, d_out)
    return dq, dk, dv
