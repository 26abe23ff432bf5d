import numpy as np


def causal_mha(x, W_q, W_k, W_v, W_o, n_heads):
    # projections straight into heads with einsum; log-sum-exp softmax; heads kept as axis 2
    B, T, d_model = x.shape
    if d_model % n_heads != 0:
        raise ValueError("n_heads does not divide d_model")
    d_head = d_model // n_heads
    Wq = W_q.reshape(d_model, n_heads, d_head)
    Wk = W_k.reshape(d_model, n_heads, d_head)
    Wv = W_v.reshape(d_model, n_heads, d_head)
    q = np.einsum("btd,dhe->bthe", x, Wq)
    k = np.einsum("btd,dhe->bthe", x, Wk)
    v = np.einsum("btd,dhe->bthe", x, Wv)
    s = np.einsum("bqhe,bkhe->bhqk", q, k) / np.sqrt(d_head)
    allowed = np.tril(np.ones((T, T), dtype=bool))
    s = np.where(allowed, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    lse = m + np.log(np.exp(s - m).sum(axis=-1, keepdims=True))
    w = np.exp(s - lse)
    ctx = np.einsum("bhqk,bkhe->bqhe", w, v)
    y = np.einsum("bqhe,hed->bqd", ctx, W_o.reshape(n_heads, d_head, d_model))
    return y, w
