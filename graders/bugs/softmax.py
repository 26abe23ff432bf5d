"""Mistakes candidates make in a stable softmax."""
from graders.bugs import Bug


BUGS = [
    Bug("no_max_shift", "test_huge_logits",
        "exp of the raw logits: without subtracting the max, exp(1e4) is inf and inf / inf is NaN",
        """
        def softmax(z, axis=-1):
            e = np.exp(z)
            return e / e.sum(axis=axis, keepdims=True)
        """),
    Bug("global_max", "test_huge_logits",
        "the max is taken over the whole array, not along `axis`: slices far below the global max "
        "underflow to 0 / 0",
        """
        def softmax(z, axis=-1):
            e = np.exp(z - np.max(z))
            return e / e.sum(axis=axis, keepdims=True)
        """),
    Bug("max_over_last_axis", "test_agrees",
        "the max is taken along the last axis whatever `axis` says, so the shift differs within a slice",
        """
        def softmax(z, axis=-1):
            e = np.exp(z - z.max(axis=-1, keepdims=True))
            return e / e.sum(axis=axis, keepdims=True)
        """),
    Bug("sum_over_last_axis", "test_agrees",
        "the sum is taken along the last axis whatever `axis` says",
        """
        def softmax(z, axis=-1):
            e = np.exp(z - z.max(axis=axis, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)
        """),
    Bug("sum_without_keepdims", "test_agrees",
        "the sum is taken without keepdims=True, so it broadcasts against the wrong axis (or not at all)",
        """
        def softmax(z, axis=-1):
            e = np.exp(z - z.max(axis=axis, keepdims=True))
            return e / e.sum(axis=axis)
        """),
    Bug("sum_over_everything", "test_sums_to_one",
        "the exponentials are divided by the sum of the whole array instead of the sum along `axis`",
        """
        def softmax(z, axis=-1):
            e = np.exp(z - z.max(axis=axis, keepdims=True))
            return e / e.sum()
        """),
    Bug("in_place_shift", "test_input_unchanged",
        "`z -= ...` writes into the caller's array: shift a copy (z = z - max) instead",
        """
        def softmax(z, axis=-1):
            z -= z.max(axis=axis, keepdims=True)
            e = np.exp(z)
            return e / e.sum(axis=axis, keepdims=True)
        """),
    Bug("shift_only_past_float64_limit", "test_huge_logits",
        "the max is subtracted only when logits exceed float64's exp limit (~709); float32's exp "
        "already overflows at 89, so always subtract it",
        """
        def softmax(z, axis=-1):
            if np.max(z) > 700:
                z = z - z.max(axis=axis, keepdims=True)
            e = np.exp(z)
            return e / e.sum(axis=axis, keepdims=True)
        """),
    Bug("mean_shift", "test_minus_inf",
        "the mean is subtracted instead of the max: it does not stop overflow, and with a -inf entry "
        "the mean is -inf, so every entry becomes NaN",
        """
        def softmax(z, axis=-1):
            e = np.exp(z - z.mean(axis=axis, keepdims=True))
            return e / e.sum(axis=axis, keepdims=True)
        """),
    Bug("min_shift", "test_huge_logits",
        "the min is subtracted instead of the max, which makes every exponent larger, not smaller",
        """
        def softmax(z, axis=-1):
            e = np.exp(z - z.min(axis=axis, keepdims=True))
            return e / e.sum(axis=axis, keepdims=True)
        """),
    Bug("log_sum_exp_unshifted", "test_huge_logits",
        "log-sum-exp computed without the max shift: log(sum(exp(z))) overflows exactly like the plain form",
        """
        def softmax(z, axis=-1):
            lse = np.log(np.sum(np.exp(z), axis=axis, keepdims=True))
            return np.exp(z - lse)
        """),
]
