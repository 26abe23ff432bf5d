import numpy as np


def _rotate_half(t):
    half = t.shape[-1] // 2
    return np.concatenate([-t[..., half:], t[..., :half]], axis=-1)


def transformer_block(x, params, n_heads, n_kv_heads, positions=None, eps=1e-6, base=10000.0):
    # everything stays in x's dtype (float32 in, float32 out); only the angles use float64
    dt = x.dtype
    B, T, d_model = x.shape
    W_q = params["W_q"]
    if n_heads < 1 or W_q.shape[1] % n_heads != 0:
        raise ValueError("n_heads does not divide W_q.shape[1]")
    if n_kv_heads < 1 or n_heads % n_kv_heads != 0:
        raise ValueError("n_kv_heads does not divide n_heads")
    hd = W_q.shape[1] // n_heads
    if hd % 2 != 0:
        raise ValueError("head size must be even")
    if positions is None:
        positions = np.arange(T)
    inv_freq = 1.0 / (base ** (np.arange(0, hd, 2, dtype=np.float64) / hd))
    emb = np.asarray(positions, dtype=np.float64)[:, None] * inv_freq[None, :]
    emb = np.concatenate([emb, emb], axis=-1)                 # (T, hd), the cos/sin layout of the HF code
    cos, sin = np.cos(emb).astype(dt), np.sin(emb).astype(dt)
    eps_t, scale = dt.type(eps), dt.type(1.0 / np.sqrt(hd))

    def norm(t, w):
        return (t / np.sqrt(np.mean(np.square(t), axis=-1, keepdims=True) + eps_t)) * w

    a = norm(x, params["attn_norm"])
    q = (a @ W_q).reshape(B, T, n_heads, hd).swapaxes(1, 2)
    k = (a @ params["W_k"]).reshape(B, T, n_kv_heads, hd).swapaxes(1, 2)
    v = (a @ params["W_v"]).reshape(B, T, n_kv_heads, hd).swapaxes(1, 2)
    q = q * cos + _rotate_half(q) * sin
    k = k * cos + _rotate_half(k) * sin
    k = np.broadcast_to(k[:, :, None], (B, n_kv_heads, n_heads // n_kv_heads, T, hd)).reshape(B, n_heads, T, hd)
    v = np.broadcast_to(v[:, :, None], (B, n_kv_heads, n_heads // n_kv_heads, T, hd)).reshape(B, n_heads, T, hd)
    s = (q @ k.swapaxes(-1, -2)) * scale
    s = s + np.triu(np.full((T, T), -np.inf, dtype=dt), 1)
    lse = s.max(-1, keepdims=True)
    lse = lse + np.log(np.exp(s - lse).sum(-1, keepdims=True))
    ctx = (np.exp(s - lse) @ v).swapaxes(1, 2).reshape(B, T, -1)
    h = x + ctx @ params["W_o"]
    f = norm(h, params["ffn_norm"])
    gate = f @ params["W_gate"]
    e = np.exp(-np.abs(gate))
    silu = gate * np.where(gate >= 0, 1 / (1 + e), e / (1 + e))
    out = h + (silu * (f @ params["W_up"])) @ params["W_down"]
    assert out.dtype == dt
    return out
