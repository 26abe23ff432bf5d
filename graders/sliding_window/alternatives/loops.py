import numpy as np


def sliding_window_attention(q, k, v, window):
    # one query position at a time (vectorised over any leading axes), float64 throughout
    if window < 1:
        raise ValueError(f"window={window}: need at least 1")
    T, d = q.shape[-2:]
    lead = q.shape[:-2]
    qf, kf, vf = (np.asarray(a, dtype=np.float64).reshape(-1, T, a.shape[-1]) for a in (q, k, v))
    out = np.zeros(qf.shape[:2] + (vf.shape[-1],))
    for i in range(T):
        lo = max(0, i - window + 1)
        s = np.einsum("nd,ntd->nt", qf[:, i], kf[:, lo:i + 1]) / np.sqrt(d)
        s -= s.max(axis=1, keepdims=True)
        p = np.exp(s)
        p /= p.sum(axis=1, keepdims=True)
        out[:, i] = np.einsum("nt,ntd->nd", p, vf[:, lo:i + 1])
    return out.reshape(lead + (T, vf.shape[-1]))
