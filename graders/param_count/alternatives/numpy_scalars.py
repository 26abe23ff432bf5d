import numpy as np


def llama_param_counts(vocab_size, d_model, n_layers, n_heads, n_kv_heads, d_ff, tie_embeddings=False):
    # NumPy int64 arithmetic throughout: every entry comes back as a NumPy integer
    sizes = np.array([vocab_size, d_model, n_layers, n_heads, n_kv_heads, d_ff], dtype=np.int64)
    if np.any(sizes < 1):
        raise ValueError("every size must be at least 1")
    V, d, L, h, kv, ff = sizes
    if d % h != 0:
        raise ValueError("n_heads must divide d_model")
    if h % kv != 0:
        raise ValueError("n_kv_heads must divide n_heads")
    d_head = d // h
    rows = np.array([
        V * d,                         # embedding
        L * d * h * d_head,            # attention_q
        L * 2 * d * kv * d_head,       # attention_kv
        L * h * d_head * d,            # attention_out
        L * 3 * d * ff,                # feed_forward
        (2 * L + 1) * d,               # norms
        np.int64(0) if tie_embeddings else V * d,   # unembedding
    ], dtype=np.int64)
    names = ["embedding", "attention_q", "attention_kv", "attention_out", "feed_forward", "norms", "unembedding"]
    counts = dict(zip(names, rows))
    counts["total"] = rows.sum()
    return counts


def weight_gib(n_params, bits):
    if bits < 1:
        raise ValueError("bits must be at least 1")
    return np.float64(n_params) * np.float64(bits) / np.float64(8 * 2**30)
