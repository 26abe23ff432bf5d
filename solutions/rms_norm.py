"""RMSNorm: scale each feature vector to unit root mean square, then by a learned weight."""
import numpy as np


def rms_norm(x, weight, eps=1e-6):
    """Normalise the last axis of `x` by its root mean square and apply `weight`.

    Task
        Write the normalisation that current transformers run before every attention
        and feed-forward sub-layer, and once more before the unembedding: divide each
        feature vector by its root mean square, then multiply by a learned scale, one
        per feature. NumPy only.

    Shapes
        x        (..., d), float64 or float32: any number of leading axes, including
                 none (a single vector (d,)), e.g. the residual stream (B, T, d_model)
        weight   (d,): the learned scale, one value per feature
        eps      a small positive float, 1e-6 by default; 0 is allowed
        returns  the same shape as x

    Conventions
        - Each vector v of d features (x[b, t] of a (B, T, d) x, say) is normalised on
          its own, never together with the rest of the batch or the sequence:
              out_j = v_j / sqrt((v_0**2 + v_1**2 + ... + v_{d-1}**2) / d + eps) * weight[j]
          That formula and nothing more: no bias, no other statistic.
        - With eps = 0, scaling x by any positive number changes nothing.
        - Do not modify x or weight: return a new array.

    What the grader checks
        the output shape (1-D x, and 2, 3 and 4 axes); agreement with the reference on
        several shapes, seeds and dtypes (d = 1, odd d, float32 and float64); each
        output row has RMS 1 when weight is all ones (up to what eps takes off); with
        eps = 0, rescaling x by a positive number changes nothing; each row is
        normalised on its own; a constant row comes out as weight times the sign of
        its constant; weight scales each feature by its own value; tiny and huge inputs
        (1e-20 to 1e15, float64, and a row of zeros) give finite values that agree with
        the reference; the place of eps in the formula (checked with eps = 1 and 0.25
        on small x); x and weight left unchanged. Your function is called many times in
        a row (each result must stay as it was returned), on inputs that may be views,
        Fortran-ordered or read-only, and with more than 4096 vectors and more than
        4096 features.

    Time budget: 10 minutes.
    """
    ms = np.mean(x * x, axis=-1, keepdims=True)      # (..., 1) mean of squares per vector
    # eps inside the root bounds the divisor away from 0 for an all-zero vector
    return x / np.sqrt(ms + eps) * weight           # (..., d): unit RMS, then one scale per feature
