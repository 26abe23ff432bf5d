"""Scaled dot-product attention for one head, causal by default."""
import numpy as np


def single_head_attention(x, W_q, W_k, W_v, causal=True):
    """Causal (or not) scaled dot-product attention for one head and one sequence.

    Task
        Project the same input three times, into queries, keys and values; compare
        every query with every key; turn each row of comparisons into weights with a
        softmax; and blend the values by those weights. Return the blended values AND
        the weights. NumPy only: write the softmax yourself.

    Shapes (d_k is the width of the projections, W_q.shape[1]; it need not equal d_model)
        x        (T, d_model)       T positions, float64 or float32
        W_q      (d_model, d_k)     W_k and W_v have the same shape
        causal   bool, True by default
        q, k, v  (T, d_k)           q = x @ W_q, k = x @ W_k, v = x @ W_v
        scores   (T, T)             q @ k.T / sqrt(d_k): row i is query i, column j is key j
        weights  (T, T)             row i: query i's softmax over the keys it may see
        out      (T, d_k)           weights @ v
        returns  the tuple (out, weights), in that order

    Conventions
        - The scale is 1 / sqrt(d_k), with d_k = W_q.shape[1], the width of q and k.
        - causal=True: position i attends to positions 0..i (itself included) and
          never to j > i. Its weights are the softmax of its scores over keys 0..i;
          every later key gets weight exactly 0, and each row sums to 1.
          causal=False: no mask, every position attends to every position.
        - Scores may reach 1e4 in magnitude, in float64 and float32: the weights must
          stay finite and correct.
        - Do not modify x or the W's: build new arrays.
        - No ValueError is asked for: the shapes are assumed to fit together.

    What the grader checks
        the shapes of out and weights (T = 1, odd T, d_k different from d_model);
        agreement with the reference on several seeds and sizes, causal and not, in
        float64 and float32; the scale is 1/sqrt(d_k); every row of the weights sums to
        1; when causal, the strict upper triangle of the weights is exactly 0 while each
        position still sees itself and its past; with causal=False every position sees
        every position; truncating x leaves the earlier outputs unchanged (causal);
        shuffling the rows of x shuffles out and the weights the same way (causal=False);
        no NaN or inf for scores near 1e4, in float64 and float32; rows of x that are
        exactly zero are attended to like any other; weights as small as exp(-60) agree
        in float64; the inputs are left unchanged. Your function is called many times in
        a row, causal and not (each result must stay as it was returned), on inputs
        that may be views, Fortran-ordered or read-only, and with T = 1025.

    Time budget: 20 minutes.
    """
    raise NotImplementedError("single_head_attention: not implemented yet")
