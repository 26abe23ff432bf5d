"""LayerNorm: centre each feature vector, scale it to unit variance, then a learned scale and shift."""
import numpy as np


def layer_norm(x, gamma, beta, eps=1e-5):
    """Normalise the last axis of `x` to mean 0 and variance 1, then apply `gamma` and `beta`.

    Task
        Write the normalisation of the original 2017 transformer block, still asked in
        interviews and still inside most encoders: for each feature vector, subtract its
        mean, divide by its standard deviation, then apply a learned scale and a learned
        shift, one value of each per feature. NumPy only.

    Shapes
        x        (..., d), float64 or float32: any number of leading axes, including
                 none (a single vector (d,)), e.g. the residual stream (B, T, d_model)
        gamma    (d,): the learned scale, one value per feature
        beta     (d,): the learned shift, one value per feature
        eps      a small non-negative float, 1e-5 by default; 0 is allowed
        returns  the same shape as x
        useful intermediates: the mean and the variance of each vector, (..., 1) with
        keepdims so that they broadcast back over the features

    Conventions
        - layer_norm(x, gamma, beta, eps) = (x - mean) / sqrt(var + eps) * gamma + beta,
          where mean and var are taken over the last axis of each vector only, never
          over the batch or the sequence.
        - var is the biased variance, the mean squared deviation from the mean: it
          divides by d, not by d - 1, as PyTorch's layer_norm does.
        - eps goes inside the square root. It keeps a constant vector (zero variance)
          finite: such a vector comes out as beta.
        - The answer must hold to float64 accuracy for vectors with a large common
          offset and a small spread: 1e6 plus noise of size 1 is normalised exactly as
          the noise alone would be.
        - With eps = 0, adding a constant to a vector or multiplying it by a positive
          number changes nothing.
        - Do not modify x, gamma or beta, and return a new array each call: the caller
          keeps earlier results.

    What the grader checks
        the output shape (1-D x, and 2, 3 and 4 axes); agreement with the reference on
        several shapes, seeds and dtypes (d = 1, odd d, float32 and float64); with
        gamma 1, beta 0 and eps 0, each vector comes out with mean 0 and variance 1;
        vectors with offset 1e6 and spread 1 (float64); with eps = 0, shifting or
        positively scaling a vector changes nothing; eps inside the square root
        (checked with eps = 1 on small x); a constant vector (zeros included) gives
        beta; each vector is normalised on its own; gamma and beta act per feature;
        inputs that are views, Fortran-ordered or read-only; large sizes (thousands of
        vectors, thousands of features); a result stays as it was when the function is
        called again (it is called many times); x, gamma and beta left unchanged.

    Time budget: 15 minutes.
    """
    raise NotImplementedError("layer_norm: not implemented yet")
