import math

import numpy as np


def _rms(v, w, eps):
    return v / math.sqrt(float(np.mean(v * v)) + eps) * w


def _turn(vec, pos, base):
    # rotate one head vector: feature i with feature i + d/2
    d = vec.shape[0]
    out = np.empty(d)
    for i in range(d // 2):
        a = pos * base ** (-2.0 * i / d)
        c, s = math.cos(a), math.sin(a)
        out[i] = vec[i] * c - vec[i + d // 2] * s
        out[i + d // 2] = vec[i + d // 2] * c + vec[i] * s
    return out


def transformer_block(x, params, n_heads, n_kv_heads, positions=None, eps=1e-6, base=10000.0):
    B, T, d_model = x.shape
    width = params["W_q"].shape[1]
    if n_heads <= 0 or width % n_heads or n_kv_heads <= 0 or n_heads % n_kv_heads:
        raise ValueError(f"cannot split {width} columns into {n_heads} heads over {n_kv_heads} KV heads")
    d = width // n_heads
    if d % 2:
        raise ValueError(f"odd head size {d}")
    pos = list(range(T)) if positions is None else [int(p) for p in positions]
    group = n_heads // n_kv_heads
    p = {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}
    out = np.zeros((B, T, d_model))
    for b in range(B):
        a = np.array([_rms(x[b, t].astype(np.float64), p["attn_norm"], eps) for t in range(T)])
        q, k, v = a @ p["W_q"], a @ p["W_k"], a @ p["W_v"]
        heads = []
        for h in range(n_heads):
            g = h // group
            qs = [_turn(q[t, h * d:(h + 1) * d], pos[t], base) for t in range(T)]
            ks = [_turn(k[t, g * d:(g + 1) * d], pos[t], base) for t in range(T)]
            keys = np.array(ks)
            rows = []
            for i in range(T):
                s = keys[:i + 1] @ qs[i] / math.sqrt(d)        # query i against keys 0..i
                w = np.exp(s - s.max())
                w /= w.sum()
                rows.append(w @ v[:i + 1, g * d:(g + 1) * d])
            heads.append(np.array(rows))
        hid = x[b].astype(np.float64) + np.concatenate(heads, axis=1) @ p["W_o"]
        for t in range(T):
            f = _rms(hid[t], p["ffn_norm"], eps)
            gate, up = f @ p["W_gate"], f @ p["W_up"]
            silu = np.array([z / (1 + math.exp(-z)) if z >= 0 else z * math.exp(z) / (1 + math.exp(z)) for z in gate])
            out[b, t] = hid[t] + (silu * up) @ p["W_down"]
    return out
