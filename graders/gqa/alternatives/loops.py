import math

import numpy as np


def gqa(x, W_q, W_k, W_v, W_o, n_heads, n_kv_heads):
    # one query head, one batch element and one query position at a time
    if W_q.shape[1] % n_heads != 0 or n_heads % n_kv_heads != 0:
        raise ValueError("head counts do not divide evenly")
    B, T, d_model = x.shape
    d_head = W_q.shape[1] // n_heads
    per_kv = n_heads // n_kv_heads
    q_all, k_all, v_all = x @ W_q, x @ W_k, x @ W_v
    ctx = np.zeros((B, T, n_heads * d_head))
    weights = np.zeros((B, n_heads, T, T))
    for b in range(B):
        for h in range(n_heads):
            g = h // per_kv
            q = q_all[b, :, h * d_head:(h + 1) * d_head]
            k = k_all[b, :, g * d_head:(g + 1) * d_head]
            v = v_all[b, :, g * d_head:(g + 1) * d_head]
            for i in range(T):
                s = [float(q[i] @ k[j]) / math.sqrt(d_head) for j in range(i + 1)]
                top = max(s)
                e = [math.exp(v_ - top) for v_ in s]
                total = sum(e)
                for j in range(i + 1):
                    weights[b, h, i, j] = e[j] / total
                ctx[b, i, h * d_head:(h + 1) * d_head] = weights[b, h, i, :i + 1] @ v[:i + 1]
    return ctx @ W_o, weights


def kv_cache_bytes(n_layers, n_kv_heads, d_head, n_tokens, bytes_per_value=2):
    per_token_per_layer = 2 * n_kv_heads * d_head * bytes_per_value   # a key and a value per KV head
    return per_token_per_layer * n_layers * n_tokens
