import numpy as np


def flash_attention(q, k, v, block_size=128, causal=True):
    # leading axes flattened to one; query blocks outside, key blocks inside; float32 stays
    # float32; the output is Fortran-ordered and read-only
    if block_size < 1:
        raise ValueError(f"block_size must be at least 1, got {block_size}")
    *lead, t_q, d = q.shape
    t_k = k.shape[-2]
    if causal and t_q > t_k:
        raise ValueError(f"causal attention with {t_q} queries and only {t_k} keys")
    dt = np.result_type(q.dtype, k.dtype, v.dtype, np.float32)
    qf = q.reshape(-1, t_q, d).astype(dt) / dt.type(np.sqrt(d))
    kf, vf = k.reshape(-1, t_k, d).astype(dt), v.reshape(-1, t_k, v.shape[-1]).astype(dt)
    out = np.empty(qf.shape[:2] + (vf.shape[-1],), dtype=dt)
    shift = t_k - t_q
    for i0 in range(0, t_q, block_size):
        i1 = min(i0 + block_size, t_q)
        qb = qf[:, i0:i1]
        top = np.full((len(qf), i1 - i0, 1), -np.inf, dtype=dt)
        total = np.zeros((len(qf), i1 - i0, 1), dtype=dt)
        acc = np.zeros((len(qf), i1 - i0, vf.shape[-1]), dtype=dt)
        stop = min(t_k, shift + i1) if causal else t_k
        for j0 in range(0, stop, block_size):
            j1 = min(j0 + block_size, stop)
            s = qb @ kf[:, j0:j1].transpose(0, 2, 1)
            if causal:
                s[:, np.arange(j0, j1)[None, :] > shift + np.arange(i0, i1)[:, None]] = -np.inf
            new_top = np.maximum(top, s.max(axis=-1, keepdims=True))
            e = np.exp(s - new_top)
            fade = np.exp(top - new_top)
            total = total * fade + e.sum(axis=-1, keepdims=True)
            acc = acc * fade + e @ vf[:, j0:j1]
            top = new_top
        out[:, i0:i1] = acc / total
    out = np.asfortranarray(out.reshape(*lead, t_q, vf.shape[-1]))
    out.setflags(write=False)
    return out
