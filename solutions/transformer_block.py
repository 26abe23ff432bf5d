"""The pre-norm Llama decoder layer: RMSNorm, grouped-query attention with RoPE, SwiGLU, two residuals."""
import numpy as np


def transformer_block(x, params, n_heads, n_kv_heads, positions=None, eps=1e-6, base=10000.0):
    """One decoder layer of a current open-weights language model, from scratch in NumPy.

    Task
        Put the pieces together. A decoder layer reads the residual stream x and adds two
        things to it, one after the other: causal grouped-query attention of a normalised
        copy of x, then a SwiGLU feed-forward block of a normalised copy of the result.

            h   = x + attention(rms_norm(x, params["attn_norm"], eps))
            out = h + swiglu(rms_norm(h, params["ffn_norm"], eps),
                             params["W_gate"], params["W_up"], params["W_down"])

        Every piece follows the convention of its own kata (rms_norm, gqa, rope, swiglu).
        NumPy only, no loop over the batch.

    Shapes
        x          (B, T, d_model), float64 or float32: the residual stream
        params     a dict of arrays:
                     attn_norm, ffn_norm  (d_model,)      RMSNorm scales
                     W_q     (d_model, n_heads * d_head)
                     W_k, W_v  (d_model, n_kv_heads * d_head)
                     W_o     (n_heads * d_head, d_model)
                     W_gate, W_up  (d_model, d_ff)
                     W_down  (d_ff, d_model)
        n_heads, n_kv_heads  ints; d_head = W_q.shape[1] // n_heads, which need not equal
                   d_model // n_heads
        positions  int array (T,), the position of each row for RoPE; None means
                   np.arange(T). May be any integers (a chunk that starts at 5000, say)
        eps        RMSNorm's epsilon, 1e-6 by default; base  RoPE's base, 10000.0
        q          (B, n_heads, T, d_head);  k, v  (B, n_kv_heads, T, d_head)
        scores     (B, n_heads, T, T)
        returns    (B, T, d_model)

    Conventions
        - rms_norm(t, w) = t / sqrt(mean(t**2, axis=-1, keepdims=True) + eps) * w.
        - Attention is the gqa kata's: head h of a projection is its feature columns
          h*d_head:(h+1)*d_head; query head h uses key/value head
          h // (n_heads // n_kv_heads); scores q k^T / sqrt(d_head); causal (position i
          attends to rows 0..i, by row order, whatever the positions); the heads are put
          back side by side in head order before `@ W_o`.
        - RoPE is the rope kata's, half-split: within each head of size d_head, feature i
          is paired with feature i + d_head/2 and the pair at position p turns by the angle
          p * base ** (-2*i/d_head). RoPE turns every query head and every key head by its
          row's position before the scores are formed.
        - SwiGLU is the swiglu kata's: (silu(f @ W_gate) * (f @ W_up)) @ W_down with
          silu(z) = z * sigmoid(z).
        - ValueError when n_heads does not divide W_q.shape[1], when n_kv_heads does not
          divide n_heads, and when d_head is odd (RoPE needs pairs).
        - Do not modify x, positions or params (neither its arrays nor its keys).

    What the grader checks
        the output shape; agreement with the reference on several seeds and shapes in
        float64 and float32 (T = 1, one sequence and several, odd sizes, multi-head,
        grouped and multi-query attention, d_model different from n_heads * d_head);
        causality (changing later rows leaves earlier outputs unchanged) and prefix
        invariance; that adding a constant to every position changes nothing (float64,
        positions up to the hundred thousands; float32 below 200); that all-zero W_o and
        W_down give x back, and that each sub-layer adds its output to the stream;
        scores in the thousands; a row of zeros in x; custom positions, base and eps;
        sequences longer than 1024; the three ValueErrors. The function is called many
        times, on inputs that may be views, Fortran-ordered or read-only; it must leave
        them unchanged, and what it returns must stay as it was when later calls are
        made.

    Time budget: 45 minutes.
    """
    B, T, d_model = x.shape
    W_q, W_k, W_v, W_o = params["W_q"], params["W_k"], params["W_v"], params["W_o"]
    if n_heads < 1 or W_q.shape[1] % n_heads:
        raise ValueError(f"n_heads={n_heads} does not divide W_q.shape[1]={W_q.shape[1]}")
    if n_kv_heads < 1 or n_heads % n_kv_heads:
        raise ValueError(f"n_kv_heads={n_kv_heads} does not divide n_heads={n_heads}")
    d_head = W_q.shape[1] // n_heads
    if d_head % 2:
        raise ValueError(f"RoPE needs an even head size to form pairs, got d_head={d_head}")
    group, half = n_heads // n_kv_heads, d_head // 2
    dtype = np.result_type(x, np.float32)      # float32 stays float32; ints would become float64

    def rms_norm(t, weight):
        # eps under the root; the mean is over the features of each position only
        return t / np.sqrt(np.mean(t * t, axis=-1, keepdims=True) + eps) * weight   # (B, T, d_model)

    def split(t, heads):
        # (B, T, heads * d_head) -> (B, heads, T, d_head): heads move in front of positions
        return t.reshape(B, T, heads, d_head).transpose(0, 2, 1, 3)

    # the angle table in float64: pos * freq at position 1e5 needs more digits than float32 has
    pos = np.arange(T) if positions is None else np.asarray(positions)
    freqs = base ** (-2.0 * np.arange(half) / d_head)                   # (d_head/2,)
    angles = pos.astype(np.float64)[:, None] * freqs                    # (T, d_head/2)
    cos, sin = np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)   # (T, d_head/2), broadcast over B, heads

    def rope(t):
        t1, t2 = t[..., :half], t[..., half:]                            # (B, heads, T, d_head/2): the pairs' halves
        return np.concatenate([t1 * cos - t2 * sin, t2 * cos + t1 * sin], axis=-1)   # (B, heads, T, d_head)

    # ---- attention sub-layer: normalise a copy of the stream, attend, add the result back
    a = rms_norm(x, params["attn_norm"])                                # (B, T, d_model)
    q = rope(split(a @ W_q, n_heads))                                   # (B, n_heads, T, d_head)
    k = rope(split(a @ W_k, n_kv_heads))                                # (B, n_kv_heads, T, d_head)
    v = split(a @ W_v, n_kv_heads)                                      # (B, n_kv_heads, T, d_head), never rotated
    # np.repeat keeps each KV head next to itself: query head h reads KV head h // group
    k = np.repeat(k, group, axis=1)                                     # (B, n_heads, T, d_head)
    v = np.repeat(v, group, axis=1)                                     # (B, n_heads, T, d_head)
    scores = q @ k.transpose(0, 1, 3, 2) / d_head ** 0.5                # (B, n_heads, T, T)
    future = np.triu(np.ones((T, T), dtype=bool), k=1)                  # (T, T), True = blocked
    scores = np.where(future, -np.inf, scores)                          # (B, n_heads, T, T)
    # the diagonal is never masked, so each row max is finite and the largest exponent is exp(0)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))             # (B, n_heads, T, T)
    weights = e / e.sum(axis=-1, keepdims=True)                         # (B, n_heads, T, T)
    ctx = (weights @ v).transpose(0, 2, 1, 3).reshape(B, T, n_heads * d_head)   # heads back behind positions
    h = x + ctx @ W_o                                                   # (B, T, d_model): first residual

    # ---- feed-forward sub-layer: normalise, SwiGLU, add back
    f = rms_norm(h, params["ffn_norm"])                                 # (B, T, d_model)
    gate = f @ params["W_gate"]                                         # (B, T, d_ff)
    up = f @ params["W_up"]                                             # (B, T, d_ff)
    z = np.exp(-np.abs(gate))                                           # (B, T, d_ff), in (0, 1]: cannot overflow
    sigmoid = np.where(gate >= 0, 1 / (1 + z), z / (1 + z))             # (B, T, d_ff)
    return h + (gate * sigmoid * up) @ params["W_down"]                 # (B, T, d_model): second residual
