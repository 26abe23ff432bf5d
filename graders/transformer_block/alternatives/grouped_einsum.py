import numpy as np


def transformer_block(x, params, n_heads, n_kv_heads, positions=None, eps=1e-6, base=10000.0):
    # query heads grouped under their KV head, (B, n_kv, group, T, d): no repeated keys or values
    B, T, _ = x.shape
    if n_heads < 1 or n_kv_heads < 1 or params["W_q"].shape[1] % n_heads or n_heads % n_kv_heads:
        raise ValueError("n_heads must divide W_q.shape[1] and n_kv_heads must divide n_heads")
    d = params["W_q"].shape[1] // n_heads
    if d % 2:
        raise ValueError("RoPE needs an even head size")
    g = n_heads // n_kv_heads
    pos = np.arange(T) if positions is None else np.asarray(positions)
    theta = np.einsum("t,f->tf", pos.astype(np.float64), np.power(float(base), -np.arange(0, d, 2) / d))
    cs, sn = np.cos(theta), np.sin(theta)

    def norm(t, w):
        return t * (np.einsum("btd,btd->bt", t, t)[..., None] / t.shape[-1] + eps) ** -0.5 * w

    def rot(t):
        lo, hi = np.split(t, 2, axis=-1)
        return np.concatenate([lo * cs - hi * sn, hi * cs + lo * sn], axis=-1)

    a = norm(x, params["attn_norm"])
    q = rot(np.einsum("btm,mkgd->bkgtd", a, params["W_q"].reshape(-1, n_kv_heads, g, d)))
    k = rot(np.einsum("btm,mkd->bktd", a, params["W_k"].reshape(-1, n_kv_heads, d)))
    v = np.einsum("btm,mkd->bktd", a, params["W_v"].reshape(-1, n_kv_heads, d))
    s = np.einsum("bkgid,bkjd->bkgij", q, k) / np.sqrt(d)
    s[..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] = -np.inf
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    ctx = np.einsum("bkgij,bkjd->bikgd", p, v).reshape(B, T, n_heads * d)
    h = x + ctx @ params["W_o"]
    f = norm(h, params["ffn_norm"])
    gate = f @ params["W_gate"]
    sig = np.exp(-np.logaddexp(0, -gate))
    out = np.asfortranarray(h + (gate * sig * (f @ params["W_up"])) @ params["W_down"])
    out.setflags(write=False)   # a Fortran-ordered, read-only result
    return out
