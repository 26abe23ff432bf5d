import numpy as np


def single_head_attention(x, W_q, W_k, W_v, causal=True):
    # an additive -inf bias and a softmax done in place on a Fortran-ordered score matrix,
    # in the input's precision; both results come back read-only
    T, d_k = x.shape[0], W_q.shape[1]
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    scores = np.asfortranarray(q @ k.T)
    scores /= np.sqrt(d_k)
    if causal:
        scores += np.triu(np.full((T, T), -np.inf, dtype=scores.dtype), k=1)
    scores -= scores.max(axis=1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=1, keepdims=True)
    out = np.asfortranarray(scores @ v)
    out.flags.writeable = False
    scores.flags.writeable = False
    return out, scores
