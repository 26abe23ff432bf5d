"""RMSNorm: scale each feature vector to unit root mean square, then by a learned weight."""
import numpy as np


def rms_norm(x, weight, eps=1e-6):
    """Normalise the last axis of `x` by its root mean square and apply `weight`.

    Task
        Write the normalisation that current transformers run before every attention
        and feed-forward sub-layer, and once more before the unembedding. LayerNorm
        subtracts the mean, divides by the standard deviation, then applies a learned
        scale and shift; RMSNorm drops the mean and the shift: divide each vector by
        its root mean square, then multiply by a learned scale, one per feature.
        NumPy only.

    Shapes
        x        (..., d), float64 or float32: any number of leading axes, including
                 none (a single vector (d,)), e.g. the residual stream (B, T, d_model)
        weight   (d,): the learned scale, one value per feature
        eps      a small positive float, 1e-6 by default; 0 is allowed
        returns  the same shape as x
        useful intermediate: the mean of squares over the last axis, (..., 1) with
        keepdims so it broadcasts back over the features

    Conventions
        - rms_norm(x, weight, eps) = x / sqrt(mean(x**2, axis=-1, keepdims=True) + eps)
          * weight: the mean is over the features of each vector only, never over
          the batch or the sequence.
        - eps goes inside the square root. It keeps a row of zeros at zero instead of
          0 / 0, and it matters when a vector is tiny (x of 1e-20: the result is about
          1e-17, not 1).
        - No mean subtraction and no bias: that would be LayerNorm.
        - With eps = 0, scaling x by any positive number changes nothing.
        - Do not modify x or weight: return a new array.

    What the grader checks
        the output shape (1-D x, and 2, 3 and 4 axes); agreement with the reference on
        several shapes, seeds and dtypes (d = 1, odd d, float32 and float64); each
        output row has RMS 1 when weight is all ones (up to what eps takes off); with
        eps = 0, rescaling x by a positive number changes nothing; each row is
        normalised on its own (the mean over the last axis only); the mean is not
        subtracted (a constant row comes out as weight); weight scales each feature by
        its own value; tiny and huge inputs (1e-20 to 1e15, float64, and a row of zeros)
        give finite values that agree with the reference; eps inside the square root
        (checked with eps = 1 on small x); x and weight left unchanged.

    Time budget: 10 minutes.
    """
    raise NotImplementedError("rms_norm: not implemented yet")
