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
    raise NotImplementedError("transformer_block: not implemented yet")
