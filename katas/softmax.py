"""Numerically stable softmax."""
import numpy as np


def softmax(z, axis=-1):
    """Softmax of `z` along `axis`, stable for any finite logits.

    Task
        Turn scores into probabilities: exp(z) divided by the sum of exp(z) along
        `axis`. This is the function every attention layer calls, and interviewers ask
        for the stable form: write it yourself with NumPy, no SciPy.

    Shapes
        z        any shape, float64 or float32 (e.g. attention scores (B, H, T, T))
        axis     the axis to normalise over; -1 by default
        returns  the same shape as z; every slice along `axis` sums to 1

    Conventions
        - Subtract the maximum along `axis` before calling exp. Mathematically it changes
          nothing (the constant cancels between numerator and denominator); numerically
          it makes the largest exponent exp(0) = 1, so nothing overflows.
          exp(710) is already inf in float64, and exp(89) in float32.
        - A -inf entry (a masked score) gives exactly 0, as long as its slice has at
          least one finite entry.
        - Do not modify `z`: return a new array.

    What the grader checks
        the output shape; agreement with the reference on several shapes and seeds
        (including size-1 axes, odd sizes and every axis, negative or not); every slice
        sums to 1; no NaN or inf for logits of magnitude 1e4, in float64 and float32;
        -inf entries give exactly 0; adding a constant to a slice changes nothing; z is
        left unchanged.

    Time budget: 10 minutes.
    """
    raise NotImplementedError("softmax: not implemented yet")
