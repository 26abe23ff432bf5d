"""Sliding-window (local) causal attention in memory linear in the sequence length."""
import numpy as np


def sliding_window_attention(q, k, v, window):
    """Causal attention in which every position sees only the last `window` positions.

    Task
        Write the attention of a sliding-window layer (Mistral, and the local layers
        of several later open-weights models): query i attends to key j only when
        i - window < j <= i, that is to itself and the window - 1 positions before it.
        Within that band it is ordinary scaled dot-product attention,
        softmax(q k^T / sqrt(d)) v. The point of the window is cost: work and memory
        grow linearly with the sequence length T, not with T squared, and your code
        must keep it that way. NumPy only.

    Shapes ("..." is any number of leading axes, e.g. (batch, heads), the same for
    q, k and v)
        q, k, v   (..., T, d)   float64 or float32
        window    int >= 1, the number of positions each query sees, itself included
        returns   (..., T, d)   row i: the weighted average of v[..., j, :] over the
                                keys j with max(0, i - window + 1) <= j <= i

    Conventions
        - Key j is visible to query i exactly when i - window < j <= i: the last
          `window` positions, the query's own included. This is the convention of the
          Hugging Face transformers sliding-window mask; Mistral's original one-file
          reference keeps one key more. Early queries, i < window - 1, see the keys
          0..i only.
        - Scores are q k^T / sqrt(d), d = q.shape[-1]; the softmax runs over the
          visible keys of each query, so every row's weights sum to 1.
        - window >= T is ordinary causal attention; window == 1 returns v (each
          position sees only itself).
        - Scores may be as large as 1e3 in magnitude, or all far below 0 in a row:
          the result must stay finite and exact.
        - Memory: never build an array of shape (T, T), of any dtype: no full scores,
          no full weights, not even a full boolean mask. At T = 8192, d = 16,
          window = 16, float64, the peak memory that tracemalloc sees during the call,
          above what was in use when it began, must stay below T * T bytes (64 MiB, one
          boolean T x T mask). Gathering each query's keys and values into
          (T, window, d) arrays uses about 36 MiB there and is allowed.
        - ValueError when window < 1.
        - Do not modify q, k or v.

    What the grader checks
        the output shape; agreement with the reference on several seeds and shapes
        (T = 1, odd lengths, lengths of a few hundred, leading axes, windows of 1, 2,
        less than, equal to and larger than T), in float64 and float32; window >= T
        against causal attention; window == 1 against v; locality (changing the keys,
        values and queries of positions a query cannot see leaves its output as it
        was); scores near 1e3, scores exactly 0, rows whose scores are all far below
        0, and rows whose scores spread over 30 (weights as small as exp(-30) must
        come out exact); the ValueError; the tracemalloc peak above; that q, k and v
        are left unchanged. Your function is called many times in a row, on inputs
        that may be views, Fortran-ordered or read-only, and at lengths past 4096
        where that is cheap; results of earlier calls are checked again after later
        ones.

    Time budget: 40 minutes.
    """
    raise NotImplementedError("sliding_window_attention: not implemented yet")
