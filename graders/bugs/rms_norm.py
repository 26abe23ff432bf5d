"""Mistakes candidates make in RMSNorm."""
from graders.bugs import Bug


BUGS = [
    Bug("layer_norm", "test_no_centering",
        "LayerNorm instead of RMSNorm: the mean is subtracted (and the variance used); RMSNorm divides "
        "x itself by sqrt(mean(x**2) + eps), with no centring",
        """
        def rms_norm(x, weight, eps=1e-6):
            mu = x.mean(axis=-1, keepdims=True)
            var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
            return (x - mu) / np.sqrt(var + eps) * weight
        """),
    Bug("variance_not_mean_square", "test_no_centering",
        "np.var(x) is the mean of squares AFTER subtracting the mean; RMSNorm needs np.mean(x**2), "
        "which is not centred",
        """
        def rms_norm(x, weight, eps=1e-6):
            return x / np.sqrt(np.var(x, axis=-1, keepdims=True) + eps) * weight
        """),
    Bug("std_not_rms", "test_agrees",
        "np.std(x) is the spread around the mean, not the root mean square; use "
        "np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + eps)",
        """
        def rms_norm(x, weight, eps=1e-6):
            return x / (np.std(x, axis=-1, keepdims=True) + eps) * weight
        """),
    Bug("eps_outside_sqrt", "test_eps_inside",
        "eps is added after the square root, x / (sqrt(mean(x**2)) + eps); it belongs inside, "
        "x / sqrt(mean(x**2) + eps)",
        """
        def rms_norm(x, weight, eps=1e-6):
            rms = np.sqrt(np.mean(x ** 2, axis=-1, keepdims=True))
            return x / (rms + eps) * weight
        """),
    Bug("eps_ignored", "test_extremes",
        "eps is never used: a row of zeros gives 0 / 0 = NaN and a tiny vector is blown up to unit size; "
        "add eps inside the square root",
        """
        def rms_norm(x, weight, eps=1e-6):
            return x / np.sqrt(np.mean(x ** 2, axis=-1, keepdims=True)) * weight
        """),
    Bug("mean_over_axis_0", "test_rows_independent",
        "the mean of squares is taken over axis 0 (down the rows) instead of axis -1 (across the "
        "features of each vector)",
        """
        def rms_norm(x, weight, eps=1e-6):
            ms = np.mean(x ** 2, axis=0, keepdims=True)
            return x / np.sqrt(ms + eps) * weight
        """),
    Bug("mean_over_everything", "test_rows_independent",
        "np.mean(x**2) with no axis averages over the whole array: right for a single vector, wrong "
        "as soon as x has rows; use axis=-1, keepdims=True",
        """
        def rms_norm(x, weight, eps=1e-6):
            return x / np.sqrt(np.mean(x ** 2) + eps) * weight
        """),
    Bug("axis_1_not_last", "test_rows_independent",
        "axis=1 is the feature axis only for a 2-D x; with (B, T, d) it is the sequence axis, and a "
        "vector (d,) has no axis 1: use axis=-1",
        """
        def rms_norm(x, weight, eps=1e-6):
            ms = np.mean(np.square(x), axis=1, keepdims=True)
            return x / np.sqrt(ms + eps) * weight
        """),
    Bug("no_keepdims", "test_shape",
        "the mean is taken without keepdims=True: shape (..., ) does not broadcast against (..., d), "
        "so it fails (or pairs up the wrong axes); keep the reduced axis",
        """
        def rms_norm(x, weight, eps=1e-6):
            ms = np.mean(x ** 2, axis=-1)
            return x / np.sqrt(ms + eps) * weight
        """),
    Bug("l2_norm", "test_unit_rms",
        "x is divided by its L2 norm, sqrt(sum(x**2)), which is sqrt(d) times the RMS: the mean, "
        "not the sum, of the squares (or divide the norm by sqrt(d))",
        """
        def rms_norm(x, weight, eps=1e-6):
            return x / np.sqrt(np.sum(x ** 2, axis=-1, keepdims=True) + eps) * weight
        """),
    Bug("norm_over_d", "test_unit_rms",
        "the L2 norm is divided by d to get the RMS: it must be divided by sqrt(d), since "
        "sqrt(mean(x**2)) = norm(x) / sqrt(d)",
        """
        def rms_norm(x, weight, eps=1e-6):
            d = x.shape[-1]
            rms = np.linalg.norm(x, axis=-1, keepdims=True) / d
            return x / np.sqrt(rms ** 2 + eps) * weight
        """),
    Bug("d_from_len", "test_unit_rms",
        "d is read as len(x) (x.shape[0]), the number of rows for a 2-D x; the features are "
        "x.shape[-1] (or let np.mean(..., axis=-1) count them)",
        """
        def rms_norm(x, weight, eps=1e-6):
            d = len(x)
            ms = np.sum(x * x, axis=-1, keepdims=True) / d
            return x / np.sqrt(ms + eps) * weight
        """),
    Bug("no_sqrt", "test_scale_invariance",
        "the square root is missing: dividing by the mean of squares (not its root) leaves the result "
        "proportional to 1/|x|",
        """
        def rms_norm(x, weight, eps=1e-6):
            return x / (np.mean(x ** 2, axis=-1, keepdims=True) + eps) * weight
        """),
    Bug("weight_not_applied", "test_weight_per_feature",
        "the learned weight is never multiplied in: normalise, then scale feature j by weight[j]",
        """
        def rms_norm(x, weight, eps=1e-6):
            return x / np.sqrt(np.mean(x ** 2, axis=-1, keepdims=True) + eps)
        """),
    Bug("weight_before_normalising", "test_weight_per_feature",
        "x is multiplied by weight before the RMS is taken, so the normalisation undoes part of the "
        "scale; normalise x first, then multiply by weight",
        """
        def rms_norm(x, weight, eps=1e-6):
            h = x * weight
            return h / np.sqrt(np.mean(h ** 2, axis=-1, keepdims=True) + eps)
        """),
    Bug("one_plus_weight", "test_weight_per_feature",
        "the scale is (1 + weight), the convention of some model families (Gemma) that store weight "
        "minus 1; the contract multiplies by weight itself",
        """
        def rms_norm(x, weight, eps=1e-6):
            return x / np.sqrt(np.mean(x ** 2, axis=-1, keepdims=True) + eps) * (1 + weight)
        """),
    Bug("in_place", "test_inputs_unchanged",
        "`x /= ...` and `x *= weight` write into the caller's array (and fail for integer input): "
        "compute a new array",
        """
        def rms_norm(x, weight, eps=1e-6):
            x /= np.sqrt(np.mean(x ** 2, axis=-1, keepdims=True) + eps)
            x *= weight
            return x
        """),
]
