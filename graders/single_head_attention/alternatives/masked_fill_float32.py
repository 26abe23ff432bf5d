import numpy as np


def single_head_attention(x, W_q, W_k, W_v, causal=True):
    # masked_fill style with a large negative number, kept in the input's dtype throughout
    dt = x.dtype
    T = len(x)
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    scores = (q @ np.swapaxes(k, 0, 1)) * dt.type(1.0 / np.sqrt(k.shape[-1]))
    if causal:
        keep = np.arange(T)[None, :] <= np.arange(T)[:, None]
        scores = scores.copy()
        scores[~keep] = dt.type(-1e9)
    scores -= scores.max(-1)[:, None]
    np.exp(scores, out=scores)
    scores /= scores.sum(-1)[:, None]
    return scores @ v, scores
