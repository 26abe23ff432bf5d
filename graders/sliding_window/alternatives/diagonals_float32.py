import numpy as np


def sliding_window_attention(q, k, v, window):
    # walks the band one diagonal at a time (key i - o for offset o = 0 .. window - 1) with a
    # running max and sum, as online softmax does, in the inputs' own dtype; memory O(T d).
    # Returns a Fortran-ordered array.
    if window < 1:
        raise ValueError("window < 1")
    T, d = q.shape[-2:]
    dt = np.result_type(q, k, v)
    qs = q * dt.type(1 / np.sqrt(d))
    m = np.einsum("...td,...td->...t", qs, k)[..., None]            # offset 0: every query sees itself
    l = np.ones_like(m)
    acc = np.array(v, dtype=dt, copy=True)
    for o in range(1, min(window, T)):
        s = np.einsum("...td,...td->...t", qs[..., o:, :], k[..., :T - o, :])[..., None]   # (..., T - o, 1)
        m_old = m[..., o:, :]
        m_new = np.maximum(m_old, s)
        scale, p = np.exp(m_old - m_new), np.exp(s - m_new)
        l[..., o:, :] = l[..., o:, :] * scale + p
        acc[..., o:, :] = acc[..., o:, :] * scale + p * v[..., :T - o, :]
        m[..., o:, :] = m_new
    return np.asfortranarray(acc / l)
