import math


def llama_param_counts(vocab_size, d_model, n_layers, n_heads, n_kv_heads, d_ff, tie_embeddings=False):
    # every weight as a shape, counted with math.prod: the way a state dict would be summed
    sizes = (vocab_size, d_model, n_layers, n_heads, n_kv_heads, d_ff)
    if min(sizes) < 1:
        raise ValueError(f"sizes must be positive, got {sizes}")
    if d_model % n_heads or n_heads % n_kv_heads:
        raise ValueError("head counts must divide d_model and each other")
    d_head = d_model // n_heads
    per_layer = {
        "attention_q": [(d_model, n_heads * d_head)],
        "attention_kv": [(d_model, n_kv_heads * d_head), (d_model, n_kv_heads * d_head)],
        "attention_out": [(n_heads * d_head, d_model)],
        "feed_forward": [(d_model, d_ff), (d_model, d_ff), (d_ff, d_model)],
        "norms": [(d_model,), (d_model,)],
    }
    counts = {"embedding": math.prod((vocab_size, d_model))}
    for name, shapes in per_layer.items():
        counts[name] = n_layers * sum(math.prod(s) for s in shapes)
    counts["norms"] += d_model                        # the final norm
    counts["unembedding"] = 0 if tie_embeddings else math.prod((d_model, vocab_size))
    counts["total"] = sum(counts.values())
    return counts


def weight_gib(n_params, bits):
    if bits < 1:
        raise ValueError("bits must be at least 1")
    n_bytes = n_params * bits / 8
    return n_bytes / 1024 ** 3
