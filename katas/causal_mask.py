"""The causal mask of a decoder, square and in the decoding case, and applying it."""
import numpy as np


def causal_mask(t_q, t_k=None):
    """Boolean mask of the pairs (query i, key j) that a decoder must not attend to.

    Task
        A decoder predicts the next token, so no position may look at a later one.
        Build the mask that says which scores to block: True where query i may NOT
        see key j. Then write `apply_causal_mask` (below), which puts -inf into the
        blocked scores before the softmax.

    Shapes
        t_q      the number of queries (rows), an int >= 1
        t_k      the number of keys (columns), an int >= t_q; None means t_k = t_q
        returns  a bool array (t_q, t_k): True marks a blocked (future) pair

    Conventions
        - True means BLOCKED, not allowed, and the result's dtype is bool.
        - With t_k omitted (self-attention over one sequence) the mask is the strict
          upper triangle: key j is blocked for query i exactly when j > i. The
          diagonal is never blocked: a position always sees itself.
        - With t_q < t_k the queries are the LAST t_q of the t_k positions, as when
          decoding with a KV cache (the cache holds the earlier keys). Query i sits at
          absolute position t_k - t_q + i and blocks every key j greater than that.
        - t_q > t_k raises ValueError: the first query would have no key to attend to.

    Examples
        causal_mask(3)          causal_mask(2, 4)       causal_mask(1, 4)
        [[F, T, T],             [[F, F, F, T],          [[F, F, F, F]]
         [F, F, T],              [F, F, F, F]]
         [F, F, F]]

    What the grader checks
        the dtype is bool and the shape (t_q, t_k), with t_k given and omitted; the
        strict upper triangle for t_k = t_q (sizes 1 and up, odd and even); the
        bottom-right alignment for t_q < t_k, t_q = 1 included; ValueError for
        t_q > t_k, t_k = 0 included. For `apply_causal_mask`, see its own docstring.
        Both functions are called many times in a row (each result must stay as it
        was returned), with more than 1024 queries and with more than 4096 keys.

    Time budget: 15 minutes.
    """
    raise NotImplementedError("causal_mask: not implemented yet")


def apply_causal_mask(scores):
    """Return a copy of `scores` with -inf at every blocked (future) entry.

    Task
        Mask attention scores before the softmax, so that the softmax gives the future
        a weight of exactly 0 and every row still sums to 1.

    Shapes
        scores   (..., t_q, t_k), float64 or float32: any number of leading axes,
                 e.g. (t_q, t_k), (B, t_q, t_k) or (B, n_heads, t_q, t_k)
        returns  a new array of the same shape as scores

    Conventions
        - The mask is causal_mask(t_q, t_k) for the last two axes of scores, the same
          for every leading index; t_q may be smaller than t_k (bottom-right
          alignment, as in causal_mask).
        - Blocked entries become exactly -inf; every other entry is the score,
          unchanged.
        - Do not modify scores: return a new array.
        - t_q > t_k raises ValueError, as in causal_mask.

    What the grader checks
        the output shape; exactly -inf at the blocked entries and the scores unchanged
        elsewhere, exact zeros included; agreement with the reference with no, one and
        two leading axes, t_q = t_k and t_q < t_k, in float64 and float32; after a
        softmax over the last axis the future gets weight exactly 0 and each row sums
        to 1; ValueError for t_q > t_k; scores left unchanged and not returned as the
        result; the same answers for scores that are views, Fortran-ordered or
        read-only.
    """
    raise NotImplementedError("apply_causal_mask: not implemented yet")
