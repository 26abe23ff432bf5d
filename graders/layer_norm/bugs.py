"""Mistakes candidates make in LayerNorm.

Each entry is the plain answer BASE with one small edit, so it reads as exactly one mistake.
Entries marked "stateful" keep something between calls: what they do depends on the calls
made before, so replaying one failing call on its own does not show their mistake; the check
that catches them names them from what it measured.
"""
from graders.engine.bugs import Bug, edited

BASE = """import numpy as np


def layer_norm(x, gamma, beta, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    var = (xc ** 2).mean(axis=-1, keepdims=True)
    return xc / np.sqrt(var + eps) * gamma + beta
"""

RETURN = "    return xc / np.sqrt(var + eps) * gamma + beta\n"

BUGS = [
    # tolerance edges: exact algebra, and at an offset of 1e6 no digits left
    Bug("one_pass_variance", "large_offset",
        "the variance is computed in one pass as mean(x**2) - mean(x)**2: at an offset of 1e6 both terms are "
        "near 1e12 and their difference loses every digit of a variance near 1; measure the spread around "
        "the mean, mean((x - mean)**2)",
        edited(BASE, ("var = (xc ** 2).mean(axis=-1, keepdims=True)",
                      "var = (x ** 2).mean(axis=-1, keepdims=True) - mu ** 2"))),
    Bug("unbiased_variance", "unit_variance",
        "the variance divides by d - 1 (np.var with ddof=1, the default of torch.var); LayerNorm uses the "
        "biased variance, dividing by d",
        edited(BASE, ("var = (xc ** 2).mean(axis=-1, keepdims=True)",
                      "var = np.var(x, axis=-1, ddof=1, keepdims=True)"))),
    Bug("eps_outside_sqrt", "eps_inside",
        "eps is added after the square root, (x - mean) / (sqrt(var) + eps); it belongs inside, "
        "(x - mean) / sqrt(var + eps)",
        edited(BASE, ("xc / np.sqrt(var + eps)", "xc / (np.sqrt(var) + eps)"))),
    # special values: a constant vector (a row of zeros, say) has variance 0
    Bug("eps_ignored", "constant_rows",
        "eps is never used: a constant vector has variance 0 and comes out as 0 / 0 = NaN; add eps inside "
        "the square root",
        edited(BASE, ("np.sqrt(var + eps)", "np.sqrt(var)"))),
    Bug("no_sqrt", "shift_scale_invariance",
        "the centred x is divided by the variance, not by its square root (the standard deviation), so the "
        "result still scales with x",
        edited(BASE, ("np.sqrt(var + eps)", "(var + eps)"))),
    Bug("not_centred", "unit_variance",
        "the mean is never subtracted, so this is RMSNorm with a shift; LayerNorm centres each vector first",
        edited(BASE, ("xc = x - mu", "xc = x"))),
    Bug("stats_over_whole_array", "rows_independent",
        "the mean and variance are taken over the whole array (no axis): right for one vector, wrong as soon "
        "as there are several; use axis=-1, keepdims=True",
        edited(BASE, (".mean(axis=-1, keepdims=True)", ".mean()"), count=2)),
    Bug("stats_over_axis_0", "rows_independent",
        "the mean and variance are taken over axis 0 (down the batch) instead of axis -1 (across the features "
        "of each vector)",
        edited(BASE, ("axis=-1", "axis=0"), count=2)),
    # Qualcomm-AI-research/geometric-algebra-transformer PR #8; reczoo/FuxiCTR#23 (nn.LayerNorm([num_fields, embedding_dim]))
    Bug("stats_over_last_two_axes", "rows_independent",
        "the mean and variance are taken over the last two axes (T, d) together, as nn.LayerNorm([seq_len, "
        "hidden]) does: every vector of a sequence shares one mean and variance; reduce over axis=-1 only",
        edited(BASE, ("axis=-1, keepdims=True", "axis=(-2, -1), keepdims=True"), count=2)),
    # jadore801120/attention-is-all-you-need-pytorch PR #17 ("computes the mean and standard-deviation along seq_len")
    Bug("stats_over_axis_1", "rows_independent",
        "the mean and variance are taken over axis 1 (the sequence axis of (B, T, d)) instead of axis -1 (the "
        "features of each vector)",
        edited(BASE, ("axis=-1", "axis=1"), count=2)),
    # Kyubyong/transformer#40 (tf.nn.moments over every axis but the features, the BatchNorm statistics)
    Bug("batchnorm_axes", "rows_independent",
        "the mean and variance are taken over every axis except the features, as BatchNorm does: each feature "
        "is normalised across the vectors; LayerNorm normalises each vector across its features, axis=-1",
        edited(BASE, ("axis=-1, keepdims=True", "axis=tuple(range(x.ndim - 1)), keepdims=True"), count=2)),
    Bug("no_keepdims", "shape",
        "the mean and variance are reduced without keepdims=True: shape (...,) does not line up with (..., d), "
        "so it fails or pairs the wrong axes; keep the reduced axis",
        edited(BASE, ("axis=-1, keepdims=True", "axis=-1"), count=2)),
    Bug("gamma_beta_swapped", "gamma_beta",
        "gamma and beta are swapped: the normalised x is multiplied by beta and shifted by gamma; the scale is "
        "gamma, the shift beta",
        edited(BASE, ("* gamma + beta", "* beta + gamma"))),
    Bug("beta_before_gamma", "gamma_beta",
        "beta is added before gamma multiplies, (x_hat + beta) * gamma; the affine step is x_hat * gamma + beta",
        edited(BASE, ("xc / np.sqrt(var + eps) * gamma + beta", "(xc / np.sqrt(var + eps) + beta) * gamma"))),
    Bug("affine_before_normalising", "gamma_beta",
        "gamma and beta are applied to x before the normalisation, which then cancels most of them; normalise "
        "first, then scale and shift",
        edited(BASE, ("    mu = x.mean(", "    x = x * gamma + beta\n    mu = x.mean("),
               ("xc / np.sqrt(var + eps) * gamma + beta", "xc / np.sqrt(var + eps)"))),
    Bug("centres_in_place", "inputs_unchanged",
        "`x -= mean` writes the centred values into the caller's array; compute x - mean as a new array",
        edited(BASE, ("    xc = x - mu\n", "    x -= mu\n    xc = x\n"))),
    # input layouts: reshape returns a view of a contiguous x, so writing into it writes into x
    Bug("writes_through_reshape", "inputs_unchanged",
        "the rows are centred in place through x.reshape(-1, d), which is a view of a contiguous x, so the "
        "caller's array is overwritten (a Fortran-ordered x is copied instead, which hides it); compute a new array",
        edited(BASE, ("    mu = x.mean(axis=-1, keepdims=True)\n    xc = x - mu\n",
                      "    xc = x.reshape(-1, x.shape[-1])\n    xc -= xc.mean(axis=-1, keepdims=True)\n"
                      "    xc = xc.reshape(x.shape)\n"))),
    Bug("assumes_contiguous_output", "layouts",
        "the result is written through out.reshape(-1, d) where out = np.zeros_like(x): for a Fortran-ordered "
        "x that reshape is a copy, so the writes are lost and zeros come back; build the result directly",
        edited(BASE, (RETURN,
                      "    out = np.zeros_like(x)\n"
                      "    out.reshape(-1, x.shape[-1])[:] = (xc / np.sqrt(var + eps)).reshape(-1, x.shape[-1])\n"
                      "    return out * gamma + beta\n"))),
    # stateful: one output buffer kept at module level and handed back on every call
    Bug("output_buffer_reused", "repeated_calls",
        "every call returns the same module-level buffer, so the next call overwrites a result the caller "
        "still holds; return a new array each call",
        edited(BASE, ("def layer_norm(", "_out = None\n\n\ndef layer_norm("),
               ("    mu = x.mean(", "    global _out\n    mu = x.mean("),
               (RETURN, "    if _out is None or _out.shape != x.shape or _out.dtype != x.dtype:\n"
                        "        _out = np.empty_like(x)\n"
                        "    np.multiply(xc / np.sqrt(var + eps), gamma, out=_out)\n"
                        "    _out += beta\n"
                        "    return _out\n")), stateful=True),
    # sizes: the rows are processed in blocks of 1024 and the count of blocks is rounded down
    Bug("blocks_round_down", "large_sizes",
        "the vectors are processed in blocks of 1024 and the number of blocks is rounded down, so the vectors "
        "after the last full block are never normalised; round up, range(0, n, 1024)",
        edited(BASE, (RETURN,
            "    rows = (xc / np.sqrt(var + eps) * gamma + beta).reshape(-1, x.shape[-1])\n"
            "    out = np.zeros_like(rows)\n"
            "    for b in range(max(1, len(rows) // 1024)):\n"
            "        out[b * 1024:(b + 1) * 1024] = rows[b * 1024:(b + 1) * 1024]\n"
            "    return out.reshape(x.shape)\n"))),
]

# Close to a catalogued bug, but a different mistake: the grader must fail each one without
# naming any entry of BUGS.
NEAR_MISSES = [
    Bug("eps_clamps_variance", "eps_inside",
        "eps is a floor under the variance, sqrt(max(var, eps)), not a term added to it: "
        "(x - mean) / sqrt(var + eps)",
        edited(BASE, ("np.sqrt(var + eps)", "np.sqrt(np.maximum(var, eps))")), says=('precision',)),
    Bug("eps_fixed_constant", "shift_scale_invariance",
        "eps is the constant 1e-5 whatever the caller passes; use the eps argument",
        edited(BASE, ("np.sqrt(var + eps)", "np.sqrt(var + 1e-5)")), says=('precision', 'needs@eps')),
    Bug("float32_downcast", "agrees",
        "x is cast to float32 first, so a float64 input keeps only about 7 digits (and 1e6 + noise loses the "
        "noise); compute in the input's precision",
        edited(BASE, ("    mu = x.mean(", "    x = x.astype(np.float32)\n    mu = x.mean(")), says=('precision',)),
    Bug("variance_over_rows_count", "unit_variance",
        "the sum of squared deviations is divided by len(x), the number of rows, instead of d, the number of "
        "features (x.shape[-1])",
        edited(BASE, ("var = (xc ** 2).mean(axis=-1, keepdims=True)",
                      "var = (xc ** 2).sum(axis=-1, keepdims=True) / len(x)")), says=('scale',)),
    Bug("variance_around_zero", "unit_variance",
        "the variance is the mean of x**2 (the spread around 0) while the numerator is centred: the "
        "denominator must be the spread around the mean",
        edited(BASE, ("var = (xc ** 2).mean(", "var = (x ** 2).mean(")), says=('scale',)),
]

# Catalogued mistakes with their trigger moved (another floor, another count): no entry above is them,
# and the report must say what each is without a name.
VARIANTS = [
    Bug("eps_clamps_std", "eps_inside",
        "eps is a floor under the standard deviation, max(std, eps), not a term added to the variance",
        edited(BASE, (RETURN, "    return xc / np.maximum(np.sqrt(var), eps) * gamma + beta\n")),
        says=("precision", "needs@eps")),
    Bug("variance_over_d_plus_1", "agrees",
        "the sum of squared deviations is divided by d + 1 instead of d",
        edited(BASE, ("    var = (xc ** 2).mean(axis=-1, keepdims=True)\n",
                      "    var = (xc ** 2).sum(axis=-1, keepdims=True) / (x.shape[-1] + 1)\n")),
        says=("scale",)),
]
