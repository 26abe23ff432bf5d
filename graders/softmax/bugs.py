"""Mistakes candidates make in a stable softmax.

Every entry is BASE, a correct answer, with one mistake edited in. Mistakes that only
exist in another form are edits of a second correct answer: BASE_LOG_SUM_EXP (through
log-sum-exp) and BASE_BLOCKS (rows taken 1024 at a time). Entries marked stateful keep
something between calls, so only the whole sequence of calls, replayed in order, shows them.
"""
from graders.engine.bugs import Bug, edited

BASE = """import numpy as np


def softmax(z, axis=-1):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
"""

SHIFTED_EXP = "    e = np.exp(z - z.max(axis=axis, keepdims=True))\n"

BASE_LOG_SUM_EXP = edited(BASE, (
    SHIFTED_EXP + "    return e / e.sum(axis=axis, keepdims=True)\n",
    "    m = z.max(axis=axis, keepdims=True)\n"
    "    lse = m + np.log(np.sum(np.exp(z - m), axis=axis, keepdims=True))\n"
    "    return np.exp(z - lse)\n"))

# the slices moved to the last axis and normalised 1024 rows at a time, as one bounds memory
BASE_BLOCKS = """import numpy as np


def softmax(z, axis=-1):
    moved = np.moveaxis(z, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    out = np.zeros(rows.shape)
    for start in range(0, len(rows), 1024):
        block = rows[start:start + 1024]
        e = np.exp(block - block.max(axis=-1, keepdims=True))
        out[start:start + 1024] = e / e.sum(axis=-1, keepdims=True)
    return np.moveaxis(out.reshape(moved.shape), -1, axis)
"""

RETURN = "    return e / e.sum(axis=axis, keepdims=True)\n"


BUGS = [
    Bug("no_max_shift", "huge_logits",
        "exp of the raw logits: without subtracting the max, exp(1e4) is inf and inf / inf is NaN",
        edited(BASE, ("np.exp(z - z.max(axis=axis, keepdims=True))", "np.exp(z)"))),
    Bug("global_max", "huge_logits",
        "the max is taken over the whole array, not along `axis`: slices far below the global max "
        "underflow to 0 / 0",
        edited(BASE, ("z.max(axis=axis, keepdims=True)", "np.max(z)"))),
    Bug("max_over_last_axis", "agrees",
        "the max is taken along the last axis whatever `axis` says, so the shift differs within a slice",
        edited(BASE, ("z.max(axis=axis,", "z.max(axis=-1,"))),
    Bug("sum_over_last_axis", "agrees",
        "the sum is taken along the last axis whatever `axis` says",
        edited(BASE, ("e.sum(axis=axis,", "e.sum(axis=-1,"))),
    Bug("sum_without_keepdims", "agrees",
        "the sum is taken without keepdims=True, so it broadcasts against the wrong axis (or not at all)",
        edited(BASE, ("e.sum(axis=axis, keepdims=True)", "e.sum(axis=axis)"))),
    Bug("sum_over_everything", "sums_to_one",
        "the exponentials are divided by the sum of the whole array instead of the sum along `axis`",
        edited(BASE, ("e.sum(axis=axis, keepdims=True)", "e.sum()"))),
    Bug("in_place_shift", "input_unchanged",
        "`z -= ...` writes into the caller's array: shift a copy (z = z - max) instead",
        edited(BASE, (SHIFTED_EXP, "    z -= z.max(axis=axis, keepdims=True)\n    e = np.exp(z)\n"))),
    Bug("shift_only_past_float64_limit", "huge_logits",
        "the max is subtracted only when logits exceed float64's exp limit (~709); float32's exp "
        "already overflows at 89, so always subtract it",
        edited(BASE, (SHIFTED_EXP, "    if np.max(z) > 700:\n        z = z - z.max(axis=axis, keepdims=True)\n"
                                   "    e = np.exp(z)\n"))),
    Bug("mean_shift", "minus_inf",
        "the mean is subtracted instead of the max: it does not stop overflow, and with a -inf entry "
        "the mean is -inf, so every entry becomes NaN",
        edited(BASE, ("z.max(", "z.mean("))),
    Bug("min_shift", "huge_logits",
        "the min is subtracted instead of the max, which makes every exponent larger, not smaller",
        edited(BASE, ("z.max(", "z.min("))),
    Bug("log_sum_exp_unshifted", "huge_logits",
        "log-sum-exp computed without the max shift: log(sum(exp(z))) overflows exactly like the plain form",
        edited(BASE_LOG_SUM_EXP, ("    m = z.max(axis=axis, keepdims=True)\n", ""),
               ("m + np.log(np.sum(np.exp(z - m)", "np.log(np.sum(np.exp(z)"))),
    # real mistakes: stackoverflow.com/q/34968722 (the "suggested solution" sums with axis=0)
    Bug("sum_over_first_axis", "sums_to_one",
        "the sum is taken along axis 0 whatever `axis` says (np.sum(np.exp(x), axis=0), right for one vector): "
        "for a batch of rows it normalises the columns; sum along `axis`",
        edited(BASE, ("e.sum(axis=axis,", "e.sum(axis=0,"))),
    # shusei-e.github.io, softmax without overflow (np.max(x, axis=1)[:, np.newaxis] needed)
    Bug("max_without_keepdims", "agrees",
        "the max is taken without keepdims=True, so it broadcasts against the wrong axis: each slice is shifted "
        "by another slice's max (or the shapes do not broadcast)",
        edited(BASE, ("z.max(axis=axis, keepdims=True)", "z.max(axis=axis)"))),
    # openillumi.com stable_softmax(x, axis=1); github.com/Mak-GIBA/e_qualifications (axis=1 of a 2-D batch)
    Bug("axis_hardcoded_1", "agrees",
        "the max and the sum are taken along axis 1 (the 2-D tutorial's rows) whatever `axis` says: right for a "
        "2-D batch, wrong for any other number of axes; reduce along `axis`",
        edited(BASE, ("z.max(axis=axis,", "z.max(axis=1,"), ("e.sum(axis=axis,", "e.sum(axis=1,"))),
    # errorhandle.ai (np.clip(x, -500, 500) before exp); ai.ppradosh.com (np.clip(z, -250, 250))
    Bug("inputs_clipped_no_shift", "huge_logits",
        "the logits are clipped to [-500, 500] and exponentiated without subtracting the max: logits beyond the "
        "clip all become equal and share the weight, and a slice entirely below -745 underflows to 0 / 0; "
        "subtract each slice's max instead",
        edited(BASE, ("np.exp(z - z.max(axis=axis, keepdims=True))", "np.exp(np.clip(z, -500, 500))"))),
    # special values: slices whose every entry is far below zero
    Bug("shift_clamped_at_zero", "far_below_zero",
        "the shift is max(slice max, 0): slices with a positive max are fine, but a slice whose entries are all "
        "far below zero (around -800) is not shifted, every exp underflows to 0 and 0 / 0 is NaN; shift by the "
        "slice's own max, whatever its sign",
        edited(BASE, ("z.max(axis=axis, keepdims=True)", "np.maximum(z.max(axis=axis, keepdims=True), 0)"))),
    Bug("denominator_unshifted", "agrees",
        "only the numerator is shifted, exp(z - max) / sum(exp(z)): the result is the softmax times exp(-max); "
        "the same shift must go into both, so that it cancels",
        edited(BASE, (RETURN, "    return e / np.exp(z).sum(axis=axis, keepdims=True)\n"))),
    # tolerance edges: a clipped exponent is right to 1e-8, not to float64's 1e-9
    Bug("clipped_exponent", "tiny_probabilities",
        "the shifted logits are clipped at -20 before exp, so every probability below exp(-20) = 2e-9 is "
        "rounded up to it (and -inf gets 2e-9 instead of 0); exp of a very negative number is already 0 or "
        "tiny, with no clipping",
        edited(BASE, ("np.exp(z - z.max(axis=axis, keepdims=True))",
                      "np.exp(np.maximum(z - z.max(axis=axis, keepdims=True), -20.0))"))),
    # input layouts: the result written through a reshape that is a copy for Fortran-ordered input
    Bug("writes_through_reshaped_output", "layouts",
        "the result is written through out.reshape(-1) where out = np.zeros_like(e): for Fortran-ordered or "
        "transposed input that reshape is a copy, so the writes are lost and zeros come back; return the "
        "quotient itself",
        edited(BASE, (RETURN, "    out = np.zeros_like(e)\n"
                              "    out.reshape(-1)[:] = (e / e.sum(axis=axis, keepdims=True)).reshape(-1)\n"
                              "    return out\n"))),
    # sizes: the number of blocks of 1024 rows rounded down
    Bug("blocks_round_down", "explored",
        "the rows are taken in blocks of 1024 and the number of blocks is rounded down, so the rows after the "
        "last full block are never filled in; loop over range(0, n, 1024)",
        edited(BASE_BLOCKS, ("    for start in range(0, len(rows), 1024):\n",
                             "    for start in range(0, max(1, len(rows) // 1024) * 1024, 1024):\n"))),
    # state across calls
    Bug("output_buffer_reused", "repeated_calls",
        "every call of a given shape writes into the same module-level buffer and returns it, so the next call "
        "overwrites a result the caller still holds; return a new array each call",
        edited(BASE, ("def softmax(", "_OUT = {}\n\n\ndef softmax("),
               (RETURN, "    key = (e.shape, e.dtype)\n"
                        "    if key not in _OUT:\n"
                        "        _OUT[key] = np.empty_like(e)\n"
                        "    return np.divide(e, e.sum(axis=axis, keepdims=True), out=_OUT[key])\n")),
        stateful=True),
    Bug("result_cached_by_shape", "agrees",
        "results are cached by the input's shape and axis, so a second input of the same shape gets the first "
        "one's softmax; a cache must be keyed by the values too, or left out",
        edited(BASE, ("def softmax(", "_CACHE = {}\n\n\ndef softmax("),
               ("    e = np.exp(", "    key = (z.shape, z.dtype, axis)\n"
                                   "    if key in _CACHE:\n"
                                   "        return _CACHE[key]\n"
                                   "    e = np.exp("),
               (RETURN, "    _CACHE[key] = e / e.sum(axis=axis, keepdims=True)\n"
                        "    return _CACHE[key]\n")),
        stateful=True),
]

# Close to a catalogued bug, but a different mistake: the grader must fail each one without
# naming any entry of BUGS.
NEAR_MISSES = [
    Bug("clipped_exponent_at_minus_30", "minus_inf",
        "the shifted logits are clipped at -30 before exp: probabilities below exp(-30) = 9e-14 are rounded up "
        "to it, which float64's tolerance does not see, but a -inf entry gets 9e-14 instead of exactly 0",
        edited(BASE, ("np.exp(z - z.max(axis=axis, keepdims=True))",
                      "np.exp(np.maximum(z - z.max(axis=axis, keepdims=True), -30.0))")), says=('clip', 'mask')),
    Bug("shift_only_if_any_positive", "far_below_zero",
        "the max is subtracted only when some logit of the whole array is positive: an array whose every entry "
        "is far below zero is not shifted, and its exps underflow to 0 / 0",
        edited(BASE, (SHIFTED_EXP, "    if np.max(z) > 0:\n        z = z - z.max(axis=axis, keepdims=True)\n"
                                   "    e = np.exp(z)\n")), says=('needs@scale',)),
    Bug("buffer_reused_by_size", "repeated_calls",
        "one module-level buffer per number of entries, reshaped to each call's shape: a later call of the same "
        "size, whatever its shape, overwrites an earlier result",
        edited(BASE, ("def softmax(", "_OUT = {}\n\n\ndef softmax("),
               (RETURN, "    if (e.size, e.dtype) not in _OUT:\n"
                        "        _OUT[e.size, e.dtype] = np.empty(e.size, dtype=e.dtype)\n"
                        "    out = _OUT[e.size, e.dtype].reshape(e.shape)\n"
                        "    return np.divide(e, e.sum(axis=axis, keepdims=True), out=out)\n")),
        stateful=True, says=('conduct', 'history')),
    Bug("max_over_first_axis", "agrees",
        "the max is taken along axis 0 whatever `axis` says, so the shift differs within a slice",
        edited(BASE, ("z.max(axis=axis,", "z.max(axis=0,")), says=('needs@axis', 'needs@shape[0]', 'needs@scale')),
    Bug("log_sum_exp_max_not_added_back", "agrees",
        "log-sum-exp is computed with the max subtracted inside the log but not added back outside it, so "
        "every probability is exp(max) times too large",
        edited(BASE_LOG_SUM_EXP, ("lse = m + np.log(", "lse = np.log(")), says=('scale',)),
    # tracel-ai/burn PR #4697 (SOFTMAX_MAX_FLOOR = -1e4, the sum floored at 1e-6)
    Bug("max_floored_at_minus_1e4", "explored",
        "the max subtracted is floored at -1e4 (and the sum at 1e-6), a \"safe softmax\": a slice whose every "
        "entry is below about -1.07e4 is not shifted enough, its exps underflow and it comes back as zeros",
        edited(BASE, ("z.max(axis=axis, keepdims=True)", "np.maximum(z.max(axis=axis, keepdims=True), -1e4)"),
               ("e.sum(axis=axis, keepdims=True)", "np.maximum(e.sum(axis=axis, keepdims=True), 1e-6)")),
        says=('needs@scale', 'needs@values')),
]

# Catalogued mistakes with their trigger moved (another threshold, another cache key): no entry above
# is them, and the report must say what each is without a name.
VARIANTS = [
    Bug("shift_only_if_max_above_80", "far_below_zero",
        "the max is subtracted only when some logit exceeds 80 (float32's overflow), so a slice whose every entry "
        "is far below zero is not shifted and its exps underflow to 0 / 0",
        edited(BASE, (SHIFTED_EXP, "    if np.max(z) > 80:\n        z = z - z.max(axis=axis, keepdims=True)\n"
                                   "    e = np.exp(z)\n")), says=("needs@scale",)),
    Bug("result_cached_by_size", "agrees",
        "results are cached by the input's number of entries and axis, so a later input of the same size gets an "
        "earlier one's softmax, reshaped",
        edited(BASE, ("def softmax(", "_CACHE = {}\n\n\ndef softmax("),
               ("    e = np.exp(", "    key = (z.size, axis)\n"
                                   "    if key in _CACHE:\n"
                                   "        return _CACHE[key].reshape(z.shape)\n"
                                   "    e = np.exp("),
               (RETURN, "    _CACHE[key] = e / e.sum(axis=axis, keepdims=True)\n"
                        "    return _CACHE[key]\n")),
        stateful=True, says=("history",)),
]
