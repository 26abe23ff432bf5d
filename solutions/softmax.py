"""Numerically stable softmax."""
import numpy as np


def softmax(z, axis=-1):
    """Softmax of `z` along `axis`, correct for any finite logits, however large.

    Task
        Turn scores into probabilities: exp(z) divided by the sum of exp(z) along
        `axis`. This is the function every attention layer calls. Write it yourself
        with NumPy (no SciPy), so that it gives the right answer for every input
        described below.

    Shapes
        z        any shape, float64 or float32 (e.g. attention scores (B, H, T, T))
        axis     the axis to normalise over, negative or not; -1 by default
        returns  the same shape as z; every slice along `axis` sums to 1

    Conventions
        - Logits may reach a magnitude of 1e4, in float64 and in float32: the result
          must still be finite (no inf, no NaN) and agree with the exact softmax.
        - A -inf entry (a masked score) gives exactly 0, as long as its slice has at
          least one finite entry.
        - Do not modify `z`: return a new array.

    What the grader checks
        the output shape; agreement with the reference on several shapes and seeds
        (size-1 axes, odd sizes, every axis, negative or not), in float64 and float32;
        every slice sums to 1; finite, correct results for logits of magnitude 1e4 in
        both dtypes, for slices of exact zeros and for slices whose entries are all far
        below zero (around -800 and -1e4); probabilities as small as exp(-60) agree in
        float64; -inf entries give exactly 0; adding a constant to a slice changes
        nothing; z is left unchanged. Your function is called many times in a row (each
        result must stay as it was returned), on inputs that may be views,
        Fortran-ordered or read-only, and on slices and arrays longer than 4096.

    Time budget: 10 minutes.
    """
    # subtract the max of each slice so the largest exponent is exp(0) and cannot overflow
    shifted = z - np.max(z, axis=axis, keepdims=True)    # same shape as z, max 0 per slice
    e = np.exp(shifted)                                   # in [0, 1]; -inf -> exactly 0
    return e / np.sum(e, axis=axis, keepdims=True)        # each slice along axis sums to 1
