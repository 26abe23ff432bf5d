"""Mistakes candidates make in a stable softmax.

Every entry is BASE, a correct answer, with one mistake edited in. The log-sum-exp
mistake only exists in that form, so it is an edit of BASE_LOG_SUM_EXP, the same answer
written through log-sum-exp.
"""
from graders.bugs import Bug, edited


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


BUGS = [
    Bug("no_max_shift", "test_huge_logits",
        "exp of the raw logits: without subtracting the max, exp(1e4) is inf and inf / inf is NaN",
        edited(BASE, ("np.exp(z - z.max(axis=axis, keepdims=True))", "np.exp(z)"))),
    Bug("global_max", "test_huge_logits",
        "the max is taken over the whole array, not along `axis`: slices far below the global max "
        "underflow to 0 / 0",
        edited(BASE, ("z.max(axis=axis, keepdims=True)", "np.max(z)"))),
    Bug("max_over_last_axis", "test_agrees",
        "the max is taken along the last axis whatever `axis` says, so the shift differs within a slice",
        edited(BASE, ("z.max(axis=axis,", "z.max(axis=-1,"))),
    Bug("sum_over_last_axis", "test_agrees",
        "the sum is taken along the last axis whatever `axis` says",
        edited(BASE, ("e.sum(axis=axis,", "e.sum(axis=-1,"))),
    Bug("sum_without_keepdims", "test_agrees",
        "the sum is taken without keepdims=True, so it broadcasts against the wrong axis (or not at all)",
        edited(BASE, ("e.sum(axis=axis, keepdims=True)", "e.sum(axis=axis)"))),
    Bug("sum_over_everything", "test_sums_to_one",
        "the exponentials are divided by the sum of the whole array instead of the sum along `axis`",
        edited(BASE, ("e.sum(axis=axis, keepdims=True)", "e.sum()"))),
    Bug("in_place_shift", "test_input_unchanged",
        "`z -= ...` writes into the caller's array: shift a copy (z = z - max) instead",
        edited(BASE, (SHIFTED_EXP, "    z -= z.max(axis=axis, keepdims=True)\n    e = np.exp(z)\n"))),
    Bug("shift_only_past_float64_limit", "test_huge_logits",
        "the max is subtracted only when logits exceed float64's exp limit (~709); float32's exp "
        "already overflows at 89, so always subtract it",
        edited(BASE, (SHIFTED_EXP, "    if np.max(z) > 700:\n        z = z - z.max(axis=axis, keepdims=True)\n"
                                   "    e = np.exp(z)\n"))),
    Bug("mean_shift", "test_minus_inf",
        "the mean is subtracted instead of the max: it does not stop overflow, and with a -inf entry "
        "the mean is -inf, so every entry becomes NaN",
        edited(BASE, ("z.max(", "z.mean("))),
    Bug("min_shift", "test_huge_logits",
        "the min is subtracted instead of the max, which makes every exponent larger, not smaller",
        edited(BASE, ("z.max(", "z.min("))),
    Bug("log_sum_exp_unshifted", "test_huge_logits",
        "log-sum-exp computed without the max shift: log(sum(exp(z))) overflows exactly like the plain form",
        edited(BASE_LOG_SUM_EXP, ("    m = z.max(axis=axis, keepdims=True)\n", ""),
               ("m + np.log(np.sum(np.exp(z - m)", "np.log(np.sum(np.exp(z)"))),
]
