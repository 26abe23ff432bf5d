import numpy as np


def sliding_window_attention(q, k, v, window):
    # gathers every query's window of keys and values, (..., T, w, d), with clipped indices;
    # the slots before position 0 are masked. Returns a read-only array.
    if window < 1:
        raise ValueError("window must be a positive number of positions")
    T, d = q.shape[-2], q.shape[-1]
    w = min(window, T)
    idx = np.arange(T)[:, None] + np.arange(1 - w, 1)[None, :]      # (T, w): i - w + 1 .. i
    real = idx >= 0
    idx = np.clip(idx, 0, None)
    kw, vw = k[..., idx, :], v[..., idx, :]                          # (..., T, w, d)
    s = np.einsum("...td,...twd->...tw", q, kw) / np.sqrt(d)
    s = np.where(real, s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    out = np.einsum("...tw,...twd->...td", p / p.sum(axis=-1, keepdims=True), vw)
    out.flags.writeable = False
    return out
