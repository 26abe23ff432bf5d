import numpy as np


def single_head_attention(x, W_q, W_k, W_v, causal=True):
    # einsum for every product; log-softmax through logsumexp
    T = x.shape[0]
    q = np.einsum("td,dk->tk", x, W_q) / np.sqrt(W_q.shape[1])   # scale q, not the scores
    k = np.einsum("td,dk->tk", x, W_k)
    v = np.einsum("td,dk->tk", x, W_v)
    s = np.einsum("ik,jk->ij", q, k)
    if causal:
        allowed = np.tril(np.ones((T, T), dtype=bool))
        s = np.where(allowed, s, -np.inf)
    m = s.max(axis=1, keepdims=True)
    lse = m + np.log(np.exp(s - m).sum(axis=1, keepdims=True))
    w = np.exp(s - lse)
    return np.einsum("ij,jk->ik", w, v), w
