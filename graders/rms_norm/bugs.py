"""Mistakes candidates make in RMSNorm: each is BASE, a correct answer, with one mistake edited in.

Mistakes of an answer that works through the rows 1024 at a time are edits of BASE_BLOCKS.
Entries marked stateful keep something between calls, or hand back the caller's own array, so
only the whole sequence of calls, replayed in order, shows them.
"""
from graders.engine.bugs import Bug, edited

BASE = """import numpy as np


def rms_norm(x, weight, eps=1e-6):
    rms = np.sqrt(np.mean(x ** 2, axis=-1, keepdims=True) + eps)
    return x / rms * weight
"""

MEAN_SQUARE = "np.mean(x ** 2, axis=-1, keepdims=True)"
RMS = "    rms = np.sqrt(np.mean(x ** 2, axis=-1, keepdims=True) + eps)\n"
RETURN = "    return x / rms * weight\n"

# the vectors taken 1024 at a time, as one bounds memory on a long sequence
BASE_BLOCKS = edited(BASE, (RMS + RETURN,
                            "    rows = x.reshape(-1, x.shape[-1])\n"
                            "    out = np.zeros(rows.shape)\n"
                            "    for start in range(0, len(rows), 1024):\n"
                            "        block = rows[start:start + 1024]\n"
                            "        rms = np.sqrt(np.mean(block ** 2, axis=-1, keepdims=True) + eps)\n"
                            "        out[start:start + 1024] = block / rms * weight\n"
                            "    return out.reshape(x.shape)\n"))


BUGS = [
    Bug("layer_norm", "constant_rows",
        "LayerNorm instead of RMSNorm: the mean is subtracted (and the variance used); RMSNorm divides "
        "x itself by sqrt(mean(x**2) + eps), with no centring",
        edited(BASE, ("    rms = ", "    x = x - x.mean(axis=-1, keepdims=True)\n    rms = "))),
    Bug("variance_not_mean_square", "constant_rows",
        "np.var(x) is the mean of squares AFTER subtracting the mean; RMSNorm needs np.mean(x**2), "
        "which is not centred",
        edited(BASE, (MEAN_SQUARE, "np.var(x, axis=-1, keepdims=True)"))),
    Bug("std_not_rms", "agrees",
        "np.std(x) is the spread around the mean, not the root mean square; use "
        "np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + eps)",
        edited(BASE, (f"np.sqrt({MEAN_SQUARE} + eps)", "np.std(x, axis=-1, keepdims=True) + eps"))),
    Bug("eps_outside_sqrt", "eps_inside",
        "eps is added after the square root, x / (sqrt(mean(x**2)) + eps); it belongs inside, "
        "x / sqrt(mean(x**2) + eps)",
        edited(BASE, (f"np.sqrt({MEAN_SQUARE} + eps)", f"np.sqrt({MEAN_SQUARE}) + eps"))),
    Bug("eps_ignored", "extremes",
        "eps is never used: a row of zeros gives 0 / 0 = NaN and a tiny vector is blown up to unit size; "
        "add eps inside the square root",
        edited(BASE, (" + eps)", ")"))),
    Bug("mean_over_axis_0", "rows_independent",
        "the mean of squares is taken over axis 0 (down the rows) instead of axis -1 (across the "
        "features of each vector)",
        edited(BASE, ("axis=-1", "axis=0"))),
    Bug("mean_over_everything", "rows_independent",
        "np.mean(x**2) with no axis averages over the whole array: right for a single vector, wrong "
        "as soon as x has rows; use axis=-1, keepdims=True",
        edited(BASE, (MEAN_SQUARE, "np.mean(x ** 2)"))),
    Bug("axis_1_not_last", "rows_independent",
        "axis=1 is the feature axis only for a 2-D x; with (B, T, d) it is the sequence axis, and a "
        "vector (d,) has no axis 1: use axis=-1",
        edited(BASE, ("axis=-1", "axis=1"))),
    Bug("no_keepdims", "shape",
        "the mean is taken without keepdims=True: shape (..., ) does not broadcast against (..., d), "
        "so it fails (or pairs up the wrong axes); keep the reduced axis",
        edited(BASE, ("axis=-1, keepdims=True", "axis=-1"))),
    Bug("l2_norm", "unit_rms",
        "x is divided by its L2 norm, sqrt(sum(x**2)), which is sqrt(d) times the RMS: the mean, "
        "not the sum, of the squares (or divide the norm by sqrt(d))",
        edited(BASE, ("np.mean(", "np.sum("))),
    Bug("norm_over_d", "unit_rms",
        "the L2 norm is divided by d to get the RMS: it must be divided by sqrt(d), since "
        "sqrt(mean(x**2)) = norm(x) / sqrt(d)",
        edited(BASE, (MEAN_SQUARE, "(np.linalg.norm(x, axis=-1, keepdims=True) / x.shape[-1]) ** 2"))),
    Bug("d_from_len", "unit_rms",
        "d is read as len(x) (x.shape[0]), the number of rows for a 2-D x; the features are "
        "x.shape[-1] (or let np.mean(..., axis=-1) count them)",
        edited(BASE, (MEAN_SQUARE, "np.sum(x ** 2, axis=-1, keepdims=True) / len(x)"))),
    Bug("no_sqrt", "scale_invariance",
        "the square root is missing: dividing by the mean of squares (not its root) leaves the result "
        "proportional to 1/|x|",
        edited(BASE, ("np.sqrt(", "("))),
    # rasbt/LLMs-from-scratch#871 (x * torch.rsqrt(...) read as x * sqrt); hw-native-sys/pypto-lib PR #111
    Bug("multiplies_by_rms", "unit_rms",
        "x is multiplied by the RMS instead of divided by it (rsqrt, the reciprocal, read as sqrt): "
        "x / sqrt(mean(x**2) + eps), or x * rsqrt(...) with rsqrt = 1 / sqrt",
        edited(BASE, (RETURN, "    return x * rms * weight\n"))),
    # ggml-org/llama.cpp PR #1925 ("accidentally added a second instance of RMS norm")
    Bug("normalised_twice", "weight_per_feature",
        "the RMS norm is applied twice, the second time to the already weighted result: that changes nothing "
        "only when every weight is 1; normalise once, then multiply by weight",
        edited(BASE, (RETURN, "    y = x / rms * weight\n"
                              "    return y / np.sqrt(np.mean(y ** 2, axis=-1, keepdims=True) + eps) * weight\n"))),
    Bug("weight_not_applied", "weight_per_feature",
        "the learned weight is never multiplied in: normalise, then scale feature j by weight[j]",
        edited(BASE, (" * weight", ""))),
    Bug("weight_before_normalising", "weight_per_feature",
        "x is multiplied by weight before the RMS is taken, so the normalisation undoes part of the "
        "scale; normalise x first, then multiply by weight",
        edited(BASE, (" * weight\n", "\n"), ("    rms = ", "    x = x * weight\n    rms = "))),
    Bug("one_plus_weight", "weight_per_feature",
        "the scale is (1 + weight), the convention of some model families (Gemma) that store weight "
        "minus 1; the contract multiplies by weight itself",
        edited(BASE, ("* weight", "* (1 + weight)"))),
    Bug("in_place", "inputs_unchanged",
        "`x /= ...` and `x *= weight` write into the caller's array (and fail for integer input): "
        "compute a new array",
        edited(BASE, ("    return x / rms * weight\n", "    x /= rms\n    x *= weight\n    return x\n")), stateful=True),
    # ------------------------------------------------------------------ special values
    Bug("eps_as_floor", "eps_inside",
        "eps is a floor under the RMS, x / max(sqrt(mean(x**2)), eps) (the habit of normalising by a norm "
        "clamped at eps), not a term under the root: x / sqrt(mean(x**2) + eps)",
        edited(BASE, (f"np.sqrt({MEAN_SQUARE} + eps)", f"np.maximum(np.sqrt({MEAN_SQUARE}), eps)"))),
    # jingyaogong/minimind#301 (x.pow(2) before x.float()); pytorch/pytorch PR #133085 (pow(input, 2) overflows)
    Bug("mean_square_in_float32", "explored",
        "the squares are taken in float32 whatever x's dtype: float64 input loses its precision, squares of "
        "magnitudes past about 1.8e19 overflow to inf (the output is then 0) and those below about 1e-23 "
        "underflow to 0; take the mean of squares in x's own precision (or float64)",
        edited(BASE, (MEAN_SQUARE, "np.mean(x.astype(np.float32) ** 2, axis=-1, keepdims=True)"))),
    # apple/coremltools PR #2822 ("adds eps after the rescale ... 0/0 -> NaN on all-zero rows")
    Bug("eps_after_max_rescale", "extremes",
        "each vector is first divided by its largest magnitude (to keep the squares from overflowing) and eps "
        "is added after that rescale: the effective eps becomes eps * max|x|**2, and an all-zero vector is "
        "0 / 0 = NaN; eps goes under the root of the mean square of x itself",
        edited(BASE, (RMS, "    m = np.abs(x).max(axis=-1, keepdims=True)\n"
                           "    rms = np.sqrt(np.mean((x / m) ** 2, axis=-1, keepdims=True) + eps) * m\n"))),
    # ------------------------------------------------------------------ input layouts
    Bug("writes_through_reshape", "inputs_unchanged",
        "the vectors are divided in place through x.reshape(-1, d), which is a view of a C-ordered x, so the "
        "caller's array is overwritten (a Fortran-ordered x is copied instead, which hides it); compute a new "
        "array",
        edited(BASE, (RMS + RETURN, "    rows = x.reshape(-1, x.shape[-1])\n"
                                    "    rows /= np.sqrt(np.mean(rows ** 2, axis=-1, keepdims=True) + eps)\n"
                                    "    return rows.reshape(x.shape) * weight\n"))),
    Bug("assumes_contiguous_output", "layouts",
        "the result is written through out.reshape(-1, d) where out = np.zeros_like(x): for a Fortran-ordered "
        "or transposed x that reshape is a copy, so the writes are lost and zeros come back; build the result "
        "directly",
        edited(BASE, (RETURN, "    out = np.zeros_like(x)\n"
                              "    out.reshape(-1, x.shape[-1])[:] = (x / rms * weight).reshape(-1, x.shape[-1])\n"
                              "    return out\n"))),
    # ------------------------------------------------------------------ sizes and state
    Bug("blocks_round_down", "explored",
        "the vectors are taken in blocks of 1024 and the number of blocks is rounded down, so the vectors after "
        "the last full block are never normalised; loop over range(0, n, 1024)",
        edited(BASE_BLOCKS, ("    for start in range(0, len(rows), 1024):\n",
                             "    for start in range(0, max(1, len(rows) // 1024) * 1024, 1024):\n"))),
    Bug("output_buffer_reused", "repeated_calls",
        "every call of a given shape writes into the same module-level buffer and returns it, so the next call "
        "overwrites a result the caller still holds; return a new array each call",
        edited(BASE, ("def rms_norm(", "_OUT = {}\n\n\ndef rms_norm("),
               (RETURN, "    out = _OUT.setdefault((x.shape, x.dtype), np.empty_like(x))\n"
                        "    np.multiply(x / rms, weight, out=out)\n"
                        "    return out\n")), stateful=True),
    Bug("d_from_first_call", "agrees",
        "the number of features is taken from the first call and kept (like a layer's size fixed when it is "
        "built), so a later call with another d divides the sum of squares by the wrong count",
        edited(BASE, ("def rms_norm(", "_D = None\n\n\ndef rms_norm("),
               (RMS, "    global _D\n"
                     "    if _D is None:\n"
                     "        _D = x.shape[-1]\n"
                     "    rms = np.sqrt(np.sum(x ** 2, axis=-1, keepdims=True) / _D + eps)\n")), stateful=True),
]

# Close to a catalogued bug, but a different mistake: the grader must fail each one without
# naming any entry of BUGS.
NEAR_MISSES = [
    Bug("eps_floor_under_mean_square", "eps_inside",
        "eps is a floor under the mean of squares, sqrt(max(mean(x**2), eps)), not a term added to it",
        edited(BASE, (f"np.sqrt({MEAN_SQUARE} + eps)", f"np.sqrt(np.maximum({MEAN_SQUARE}, eps))")),
        says=('precision',)),
    Bug("eps_fixed_constant", "scale_invariance",
        "eps is the constant 1e-6 whatever the caller passes; use the eps argument",
        edited(BASE, (" + eps)", " + 1e-6)")), says=('needs@eps', 'precision')),
    Bug("mean_square_over_d_minus_1", "unit_rms",
        "the sum of squares is divided by d - 1 (the habit of the unbiased variance) instead of d; with d = 2 "
        "that is the squared L2 norm",
        edited(BASE, (MEAN_SQUARE, "np.sum(x ** 2, axis=-1, keepdims=True) / (x.shape[-1] - 1)")), says=('scale',)),
    Bug("weight_added", "weight_per_feature",
        "the weight is added to the normalised x instead of multiplying it",
        edited(BASE, ("x / rms * weight", "x / rms + weight")), says=('offset', 'input')),
    Bug("buffer_reused_by_size", "repeated_calls",
        "one module-level buffer per number of entries, reshaped to each call's shape: a later call of the same "
        "size, whatever its shape, overwrites an earlier result",
        edited(BASE, ("def rms_norm(", "_OUT = {}\n\n\ndef rms_norm("),
               (RETURN, "    out = _OUT.setdefault((x.size, x.dtype), np.empty(x.size, dtype=x.dtype)).reshape(x.shape)\n"
                        "    np.multiply(x / rms, weight, out=out)\n"
                        "    return out\n")), stateful=True, says=('conduct', 'history')),
    # pytorch/pytorch PR #142848 (nn.RMSNorm(eps=None) uses torch.finfo(x.dtype).eps)
    Bug("eps_from_dtype", "eps_inside",
        "eps is np.finfo(x.dtype).eps (nn.RMSNorm's default when eps is None) whatever the caller passes; "
        "use the eps argument",
        edited(BASE, (" + eps)", " + np.finfo(x.dtype).eps)")), says=('precision', 'needs@eps')),
]

# Catalogued mistakes with their trigger moved (another constant, another buffer key): no entry above is
# them, and the report must say what each is without a name.
VARIANTS = [
    Bug("eps_fixed_at_1e_5", "eps_inside",
        "eps is the constant 1e-5 whatever the caller passes; use the eps argument",
        edited(BASE, (RMS, "    rms = np.sqrt(np.mean(x ** 2, axis=-1, keepdims=True) + 1e-5)\n")),
        says=("needs@eps", "precision")),
    Bug("weight_cached_by_d", "weight_per_feature",
        "the weight is cached by the feature size d at the first call, so a later call with the same d and another "
        "weight gets the first one",
        edited(BASE, ("def rms_norm(", "_WEIGHTS = {}\n\n\ndef rms_norm("),
               (RETURN, "    return x / rms * _WEIGHTS.setdefault(x.shape[-1], np.array(weight))\n")),
        stateful=True, says=("history",)),
]
