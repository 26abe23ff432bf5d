import numpy as np


def flash_attention(q, k, v, block_size=128, causal=True):
    # every query row at once, one key block at a time
    if block_size < 1:
        raise ValueError("block_size must be >= 1")
    t_q, d = q.shape[-2:]
    t_k = k.shape[-2]
    if causal and t_q > t_k:
        raise ValueError("more queries than keys in a causal call")
    pos = np.arange(t_q) + (t_k - t_q)
    m = np.full(q.shape[:-1] + (1,), -np.inf)
    l = np.zeros(q.shape[:-1] + (1,))
    acc = np.zeros(q.shape[:-1] + (v.shape[-1],))
    for start in range(0, t_k, block_size):
        stop = min(start + block_size, t_k)
        if causal and start > pos[-1]:
            break  # this block and every later one lie in the future of every query
        s = np.einsum("...qd,...kd->...qk", q, k[..., start:stop, :]) / np.sqrt(d)
        if causal:
            s = np.where(np.arange(start, stop) > pos[:, None], -np.inf, s)
        new_m = np.maximum(m, s.max(-1, keepdims=True))
        p = np.exp(s - new_m)
        fade = np.exp(m - new_m)
        l = fade * l + p.sum(-1, keepdims=True)
        acc = fade * acc + np.einsum("...qk,...kd->...qd", p, v[..., start:stop, :])
        m = new_m
    return acc / l
