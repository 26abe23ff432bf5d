import numpy as np


def attention_backward(q, k, v, d_out, causal=True, block=3):
    # FlashAttention's backward in NumPy: a first pass over key blocks finds each row's
    # log-sum-exp; a second recomputes P one key block at a time from it. The results come
    # back Fortran-ordered and read-only.
    t_q, d = q.shape[-2:]
    t_k = k.shape[-2]
    if causal and t_q > t_k:
        raise ValueError("causal attention needs t_q <= t_k")
    q64, k64, v64, g64 = (np.asarray(a, dtype=np.float64) for a in (q, k, v, d_out))
    scale = d ** -0.5
    pos = t_k - t_q + np.arange(t_q)                                   # each query's position

    def scores(k0, k1):
        s = np.matmul(q64, np.swapaxes(k64[..., k0:k1, :], -1, -2)) * scale
        if causal:
            s = np.where(np.arange(k0, k1)[None, :] > pos[:, None], -np.inf, s)
        return s

    m = np.full(q64.shape[:-1] + (1,), -np.inf)
    total = np.zeros(q64.shape[:-1] + (1,))
    for k0 in range(0, t_k, block):
        s = scores(k0, min(k0 + block, t_k))
        m_new = np.maximum(m, s.max(axis=-1, keepdims=True))
        total = total * np.exp(m - m_new) + np.exp(s - m_new).sum(axis=-1, keepdims=True)
        m = m_new
    lse = m + np.log(total)
    out = np.zeros(g64.shape)
    for k0 in range(0, t_k, block):
        k1 = min(k0 + block, t_k)
        out += np.exp(scores(k0, k1) - lse) @ v64[..., k0:k1, :]
    row = np.sum(g64 * out, axis=-1, keepdims=True)                    # rowsum(dP * P)
    dq, dk, dv = np.zeros(q64.shape), np.zeros(k64.shape), np.zeros(v64.shape)
    for k0 in range(0, t_k, block):
        k1 = min(k0 + block, t_k)
        p = np.exp(scores(k0, k1) - lse)
        ds = p * (g64 @ np.swapaxes(v64[..., k0:k1, :], -1, -2) - row)
        dv[..., k0:k1, :] = np.swapaxes(p, -1, -2) @ g64
        dk[..., k0:k1, :] = np.swapaxes(ds, -1, -2) @ q64 * scale
        dq += ds @ k64[..., k0:k1, :] * scale
    results = []
    for g in (dq, dk, dv):
        g = np.asfortranarray(g)
        g.flags.writeable = False
        results.append(g)
    return tuple(results)
