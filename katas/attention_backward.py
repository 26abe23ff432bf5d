"""The backward pass of scaled dot-product attention, from scratch in NumPy."""
import numpy as np


def attention_backward(q, k, v, d_out, causal=True):
    """Gradients of attention with respect to its queries, keys and values.

    Task
        The forward pass is out = softmax(q k^T / sqrt(d) + mask) v, the softmax over
        the keys. Given d_out, the gradient of some loss with respect to out, return
        dq, dk and dv: the gradients of L = sum(out * d_out) with respect to q, k and v.
        Derive them analytically and compute them with matrix products (no finite
        differences, no autograd). You may recompute the forward pass inside.
        NumPy only.

    Shapes ("..." is any number of leading axes, e.g. (batch, heads), the same for
    all four inputs)
        q        (..., T_q, d)      float64 or float32
        k, v     (..., T_k, d)
        d_out    (..., T_q, d)      the gradient of the loss with respect to out
        causal   bool, True by default
        returns  (dq, dk, dv), shaped like q, k and v

    Conventions
        - Scores are q k^T / sqrt(d), d being the last axis of q and k.
        - causal=True uses the bottom-right alignment of the causal_mask kata: the
          queries are the LAST T_q of T_k positions, so query i sits at position
          T_k - T_q + i and sees key j only when j <= T_k - T_q + i (with T_q == T_k,
          the usual lower triangle, diagonal included). causal=False: every query
          sees every key, and T_q may be larger than T_k.
        - Masked pairs take no part at all: a key that no query with a non-zero row
          of d_out can see gets a dk and a dv of exactly 0, not merely a tiny number.
          (With d_out zero after query m, every key after position T_k - T_q + m.)
        - ValueError for a causal call with T_q > T_k (a query would see no key).
        - Do not modify any input.

    What the grader checks
        the three shapes; agreement with central finite differences of a float64
        forward pass, and with the reference (float64: rtol 1e-6, atol 1e-9; float32:
        rtol 1e-4, atol 1e-5) on several seeds and shapes: causal and not, T_q == T_k
        and T_q < T_k, sizes of 1, odd sizes, several leading axes; exact zeros for
        keys no counted query can see; scores near 1e4 without overflow or NaN (float32
        there to rtol 1e-3, atol 1e-3 times the largest magnitude of that gradient);
        long sequences; the ValueError. The function is called many times, on inputs
        that may be views, Fortran-ordered or read-only; it must leave them unchanged,
        and what it returns must stay as it was when later calls are made.

    Time budget: 40 minutes.
    """
    raise NotImplementedError("attention_backward: not implemented yet")
