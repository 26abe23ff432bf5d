import numpy as np


def flash_attention(q, k, v, block_size=128, causal=True):
    # keep a running log-sum-exp instead of a (max, sum) pair; float32 stays float32
    if block_size < 1:
        raise ValueError("block_size must be positive")
    *_, t_q, d = q.shape
    t_k = k.shape[-2]
    if causal and t_q > t_k:
        raise ValueError("causal attention needs t_q <= t_k")
    dtype = np.result_type(q.dtype, np.float32)
    qs = q * dtype.type(1 / np.sqrt(d))
    lse = np.full(q.shape[:-1] + (1,), -np.inf, dtype=dtype)
    out = np.zeros(q.shape[:-1] + (v.shape[-1],), dtype=dtype)
    rows = np.arange(t_q)[:, None] + (t_k - t_q)
    with np.errstate(invalid="ignore"):
        for j in range(0, t_k, block_size):
            s = qs @ np.swapaxes(k[..., j:j + block_size, :], -1, -2)
            if causal:
                s = np.where(np.arange(j, j + s.shape[-1]) > rows, -np.inf, s)
            b_max = s.max(-1, keepdims=True)
            safe = np.where(np.isfinite(b_max), b_max, 0)
            b_lse = safe + np.log(np.exp(s - safe).sum(-1, keepdims=True))
            new = np.logaddexp(lse, b_lse)
            # both weights are <= 1: the old output's share and this block's
            out = np.exp(lse - new) * out + np.exp(s - new) @ v[..., j:j + block_size, :]
            lse = new
    return out
