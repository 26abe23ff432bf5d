def llama_param_counts(vocab_size, d_model, n_layers, n_heads, n_kv_heads, d_ff, tie_embeddings=False):
    # one block counted in full, then the stack and the parts outside it
    for name, value in [("vocab_size", vocab_size), ("d_model", d_model), ("n_layers", n_layers),
                        ("n_heads", n_heads), ("n_kv_heads", n_kv_heads), ("d_ff", d_ff)]:
        if value < 1:
            raise ValueError(f"{name} = {value} is not a valid size")
    if d_model % n_heads:
        raise ValueError("d_model is not a multiple of n_heads")
    if n_heads % n_kv_heads:
        raise ValueError("n_heads is not a multiple of n_kv_heads")
    q_width = d_model                          # n_heads * d_head
    kv_width = n_kv_heads * (d_model // n_heads)
    block = {
        "attention_q": d_model * q_width,
        "attention_kv": d_model * kv_width * 2,
        "attention_out": q_width * d_model,
        "feed_forward": d_model * d_ff * 3,
        "norms": d_model * 2,
    }
    out = {"embedding": vocab_size * d_model}
    out.update({name: n * n_layers for name, n in block.items()})
    out["norms"] = out["norms"] + d_model
    out["unembedding"] = vocab_size * d_model * (not tie_embeddings)
    out["total"] = sum(out.values())
    return out


def weight_gib(n_params, bits):
    if not bits >= 1:
        raise ValueError(f"bits = {bits}")
    return (n_params * bits) / (8 << 30)
