"""Mistakes candidates make in RMSNorm: each is BASE, a correct answer, with one mistake edited in."""
from graders.bugs import Bug, edited


BASE = """import numpy as np


def rms_norm(x, weight, eps=1e-6):
    rms = np.sqrt(np.mean(x ** 2, axis=-1, keepdims=True) + eps)
    return x / rms * weight
"""

MEAN_SQUARE = "np.mean(x ** 2, axis=-1, keepdims=True)"


BUGS = [
    Bug("layer_norm", "test_no_centering",
        "LayerNorm instead of RMSNorm: the mean is subtracted (and the variance used); RMSNorm divides "
        "x itself by sqrt(mean(x**2) + eps), with no centring",
        edited(BASE, ("    rms = ", "    x = x - x.mean(axis=-1, keepdims=True)\n    rms = "))),
    Bug("variance_not_mean_square", "test_no_centering",
        "np.var(x) is the mean of squares AFTER subtracting the mean; RMSNorm needs np.mean(x**2), "
        "which is not centred",
        edited(BASE, (MEAN_SQUARE, "np.var(x, axis=-1, keepdims=True)"))),
    Bug("std_not_rms", "test_agrees",
        "np.std(x) is the spread around the mean, not the root mean square; use "
        "np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + eps)",
        edited(BASE, (f"np.sqrt({MEAN_SQUARE} + eps)", "np.std(x, axis=-1, keepdims=True) + eps"))),
    Bug("eps_outside_sqrt", "test_eps_inside",
        "eps is added after the square root, x / (sqrt(mean(x**2)) + eps); it belongs inside, "
        "x / sqrt(mean(x**2) + eps)",
        edited(BASE, (f"np.sqrt({MEAN_SQUARE} + eps)", f"np.sqrt({MEAN_SQUARE}) + eps"))),
    Bug("eps_ignored", "test_extremes",
        "eps is never used: a row of zeros gives 0 / 0 = NaN and a tiny vector is blown up to unit size; "
        "add eps inside the square root",
        edited(BASE, (" + eps)", ")"))),
    Bug("mean_over_axis_0", "test_rows_independent",
        "the mean of squares is taken over axis 0 (down the rows) instead of axis -1 (across the "
        "features of each vector)",
        edited(BASE, ("axis=-1", "axis=0"))),
    Bug("mean_over_everything", "test_rows_independent",
        "np.mean(x**2) with no axis averages over the whole array: right for a single vector, wrong "
        "as soon as x has rows; use axis=-1, keepdims=True",
        edited(BASE, (MEAN_SQUARE, "np.mean(x ** 2)"))),
    Bug("axis_1_not_last", "test_rows_independent",
        "axis=1 is the feature axis only for a 2-D x; with (B, T, d) it is the sequence axis, and a "
        "vector (d,) has no axis 1: use axis=-1",
        edited(BASE, ("axis=-1", "axis=1"))),
    Bug("no_keepdims", "test_shape",
        "the mean is taken without keepdims=True: shape (..., ) does not broadcast against (..., d), "
        "so it fails (or pairs up the wrong axes); keep the reduced axis",
        edited(BASE, ("axis=-1, keepdims=True", "axis=-1"))),
    Bug("l2_norm", "test_unit_rms",
        "x is divided by its L2 norm, sqrt(sum(x**2)), which is sqrt(d) times the RMS: the mean, "
        "not the sum, of the squares (or divide the norm by sqrt(d))",
        edited(BASE, ("np.mean(", "np.sum("))),
    Bug("norm_over_d", "test_unit_rms",
        "the L2 norm is divided by d to get the RMS: it must be divided by sqrt(d), since "
        "sqrt(mean(x**2)) = norm(x) / sqrt(d)",
        edited(BASE, (MEAN_SQUARE, "(np.linalg.norm(x, axis=-1, keepdims=True) / x.shape[-1]) ** 2"))),
    Bug("d_from_len", "test_unit_rms",
        "d is read as len(x) (x.shape[0]), the number of rows for a 2-D x; the features are "
        "x.shape[-1] (or let np.mean(..., axis=-1) count them)",
        edited(BASE, (MEAN_SQUARE, "np.sum(x ** 2, axis=-1, keepdims=True) / len(x)"))),
    Bug("no_sqrt", "test_scale_invariance",
        "the square root is missing: dividing by the mean of squares (not its root) leaves the result "
        "proportional to 1/|x|",
        edited(BASE, ("np.sqrt(", "("))),
    Bug("weight_not_applied", "test_weight_per_feature",
        "the learned weight is never multiplied in: normalise, then scale feature j by weight[j]",
        edited(BASE, (" * weight", ""))),
    Bug("weight_before_normalising", "test_weight_per_feature",
        "x is multiplied by weight before the RMS is taken, so the normalisation undoes part of the "
        "scale; normalise x first, then multiply by weight",
        edited(BASE, (" * weight\n", "\n"), ("    rms = ", "    x = x * weight\n    rms = "))),
    Bug("one_plus_weight", "test_weight_per_feature",
        "the scale is (1 + weight), the convention of some model families (Gemma) that store weight "
        "minus 1; the contract multiplies by weight itself",
        edited(BASE, ("* weight", "* (1 + weight)"))),
    Bug("in_place", "test_inputs_unchanged",
        "`x /= ...` and `x *= weight` write into the caller's array (and fail for integer input): "
        "compute a new array",
        edited(BASE, ("    return x / rms * weight\n", "    x /= rms\n    x *= weight\n    return x\n"))),
]
