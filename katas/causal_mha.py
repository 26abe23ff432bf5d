"""Batched causal multi-head self-attention, from scratch in NumPy."""
import numpy as np


def causal_mha(x, W_q, W_k, W_v, W_o, n_heads):
    """Causal multi-head self-attention over a batch of sequences.

    Task
        Write the attention layer of a decoder: project x to queries, keys and values,
        split the features into `n_heads` heads, let every position attend to itself and
        the positions before it (never after), merge the heads and project with W_o.
        Return the output and the attention weights. NumPy only, no loop over the batch.

    Shapes
        x        (B, T, d_model)          B sequences of T positions, float64 or float32
        W_q, W_k, W_v, W_o  (d_model, d_model)
        n_heads  int that divides d_model; d_head = d_model // n_heads
        q, k, v  (B, T, d_model) -> split into heads -> (B, n_heads, T, d_head)
        scores   (B, n_heads, T, T)       scores[b, h, i, j]: query i against key j
        weights  (B, n_heads, T, T)       each query's softmax over the keys it may see
        context  (B, n_heads, T, d_head) -> merge the heads -> (B, T, d_model)
        returns  (y, weights) with y = merged context @ W_o, shape (B, T, d_model)

    Conventions
        - q = x @ W_q, and likewise k and v. Head h uses feature columns
          h*d_head:(h+1)*d_head of each of q, k and v, and its context fills the same
          columns h*d_head:(h+1)*d_head of the merged (B, T, d_model) array that
          goes into @ W_o (the heads concatenated in order).
        - scores = q k^T / sqrt(d_head) within each head.
        - Causal: position i attends to keys 0..i. Its weights are the softmax of its
          scores over those keys: every later key gets weight exactly 0, and every row
          sums to 1.
        - Scores may reach 1e4 in magnitude: the weights must stay finite and correct.
        - Raise ValueError when n_heads does not divide d_model.
        - Do not modify any input: return new arrays.

    What the grader checks
        the shapes of y and weights; agreement with the reference over several seeds and
        shapes (T = 1, odd sizes, one and several sequences, one head and several,
        d_head = 1, a row of x that is all zeros), in float64 and float32; every row of
        the weights sums to 1; the strict upper triangle of the weights is exactly 0;
        prefix invariance (the first t positions of x alone give the same first t
        outputs and weights); scores near 1e4 without overflow or NaN; head h is exactly
        single-head attention on its own columns; each sequence of the batch is computed
        independently of the others; the ValueError; and that the inputs are left
        unchanged. Your function is called many times (results must outlast later
        calls), on inputs that may be views, Fortran-ordered or read-only, and at 1025
        positions.

    Time budget: 40 minutes.
    """
    raise NotImplementedError("causal_mha: not implemented yet")
