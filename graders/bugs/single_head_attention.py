"""Mistakes candidates make in single-head scaled dot-product attention."""
from graders.bugs import Bug


BUGS = [
    # ------------------------------------------------------------------ the scale
    Bug("no_scaling", "test_scale",
        "the scores are not divided by sqrt(d_k): they grow with the width of q and k and the softmax "
        "saturates towards one-hot rows",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            T = x.shape[0]
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = q @ k.T
            if causal:
                scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores)
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            return w @ v, w
        """),
    Bug("sqrt_d_model", "test_scale",
        "the scores are divided by sqrt(d_model) (x.shape[1]); the dot products run over d_k = W_q.shape[1] "
        "features, so divide by sqrt(d_k)",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            T, d_model = x.shape
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = q @ k.T / np.sqrt(d_model)
            if causal:
                scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores)
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            return w @ v, w
        """),
    Bug("divides_by_d_k", "test_scale",
        "the scores are divided by d_k instead of sqrt(d_k): the variance of a dot product is d_k, so its "
        "standard deviation, the thing to divide by, is sqrt(d_k)",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            T = x.shape[0]
            d_k = W_q.shape[1]
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = q @ k.T / d_k
            if causal:
                scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores)
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            return w @ v, w
        """),
    # ------------------------------------------------------------------ the softmax
    Bug("softmax_over_queries", "test_rows_sum_to_one",
        "the softmax runs over axis 0, so each column (key) sums to 1; it must run over the last axis, "
        "across the keys each query compares against",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            T = x.shape[0]
            d_k = W_q.shape[1]
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = q @ k.T / np.sqrt(d_k)
            if causal:
                scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores)
            e = np.exp(scores - scores.max(axis=0, keepdims=True))
            w = e / e.sum(axis=0, keepdims=True)
            return w @ v, w
        """),
    Bug("sum_without_keepdims", "test_rows_sum_to_one",
        "the row sums are taken without keepdims=True: a (T,) vector broadcasts along the rows, so column j "
        "is divided by the sum of row j",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            T = x.shape[0]
            d_k = W_q.shape[1]
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = q @ k.T / np.sqrt(d_k)
            if causal:
                scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores)
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1)
            return w @ v, w
        """),
    Bug("max_without_keepdims", "test_agrees",
        "the row max is subtracted without keepdims=True: a (T,) vector broadcasts along the rows, so column j "
        "is shifted by the max of row j, which is not a constant per row and changes the weights",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            T = x.shape[0]
            d_k = W_q.shape[1]
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = q @ k.T / np.sqrt(d_k)
            if causal:
                scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores)
            e = np.exp(scores - scores.max(axis=-1))
            w = e / e.sum(axis=-1, keepdims=True)
            return w @ v, w
        """),
    Bug("no_max_shift", "test_huge_scores",
        "exp of the raw scores: without subtracting each row's max, exp(1e4) is inf (and exp(-1e4) is 0), "
        "giving inf / inf or 0 / 0 = NaN",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            T = x.shape[0]
            d_k = W_q.shape[1]
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = q @ k.T / np.sqrt(d_k)
            if causal:
                scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores)
            e = np.exp(scores)
            w = e / e.sum(axis=-1, keepdims=True)
            return w @ v, w
        """),
    Bug("global_max_shift", "test_huge_scores",
        "the max of the whole score matrix is subtracted instead of each row's: a row far below the global "
        "max underflows to all zeros, and 0 / 0 is NaN",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            T = x.shape[0]
            d_k = W_q.shape[1]
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = q @ k.T / np.sqrt(d_k)
            if causal:
                scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores)
            e = np.exp(scores - np.max(scores))
            w = e / e.sum(axis=-1, keepdims=True)
            return w @ v, w
        """),
    Bug("shift_only_past_float64_limit", "test_huge_scores",
        "the max is subtracted only when scores pass float64's exp limit (~709); float32's exp already "
        "overflows at 89, so always subtract it",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            T = x.shape[0]
            d_k = W_q.shape[1]
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = q @ k.T / d_k ** 0.5
            if causal:
                scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores)
            if np.abs(scores[np.isfinite(scores)]).max() > 700:
                scores = scores - scores.max(axis=-1, keepdims=True)
            e = np.exp(scores)
            w = e / e.sum(axis=-1, keepdims=True)
            return w @ v, w
        """),
    # ------------------------------------------------------------------ the mask
    Bug("sum_over_everything", "test_rows_sum_to_one",
        "the exponentials are divided by the sum of the whole matrix (e.sum() with no axis) instead of "
        "each row's sum",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            T = x.shape[0]
            d_k = W_q.shape[1]
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = q @ k.T / np.sqrt(d_k)
            if causal:
                scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores)
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w = e / e.sum()
            return w @ v, w
        """),
    Bug("mask_after_softmax", "test_rows_sum_to_one",
        "the future is zeroed after the softmax without renormalising, so each row sums to less than 1; "
        "set the future scores to -inf before the softmax instead",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            T = x.shape[0]
            d_k = W_q.shape[1]
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = q @ k.T / np.sqrt(d_k)
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            if causal:
                w = w * np.tril(np.ones((T, T)))
            return w @ v, w
        """),
    Bug("mask_blocks_diagonal", "test_sees_past",
        "the mask is np.triu(..., k=0), which also blocks the diagonal: position 0 is left with nothing to "
        "attend to (a row of NaN); the future is only j > i, np.triu(..., k=1)",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            T = x.shape[0]
            d_k = W_q.shape[1]
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = q @ k.T / np.sqrt(d_k)
            if causal:
                scores = np.where(np.triu(np.ones((T, T), dtype=bool)), -np.inf, scores)
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            return w @ v, w
        """),
    Bug("mask_inverted", "test_causal",
        "the lower triangle (np.tril) is masked instead of the upper one: True must mark the future, "
        "j > i, which is np.triu(..., k=1)",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            T = x.shape[0]
            d_k = W_q.shape[1]
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = q @ k.T / np.sqrt(d_k)
            if causal:
                scores = np.where(np.tril(np.ones((T, T), dtype=bool), k=-1), -np.inf, scores)
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            return w @ v, w
        """),
    Bug("mask_off_by_one", "test_causal",
        "the allowed pairs are np.tril(..., k=1), which also lets each position see the next one; the "
        "allowed pairs are j <= i, np.tril(..., k=0) (or block np.triu(..., k=1))",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            T = x.shape[0]
            d_k = W_q.shape[1]
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = q @ k.T / np.sqrt(d_k)
            if causal:
                allowed = np.tril(np.ones((T, T), dtype=bool), k=1)
                scores = np.where(allowed, scores, -np.inf)
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            return w @ v, w
        """),
    Bug("mask_by_multiplying", "test_causal",
        "the scores are multiplied by a 0/1 lower triangle, which makes the future scores 0, not -inf, and "
        "exp(0) is not 0: use np.where(mask, -np.inf, scores)",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            T = x.shape[0]
            d_k = W_q.shape[1]
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = q @ k.T / np.sqrt(d_k)
            if causal:
                scores = scores * np.tril(np.ones((T, T)))
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            return w @ v, w
        """),
    Bug("mask_fill_minus_1e4", "test_huge_scores",
        "the future is filled with -10000 rather than -inf: when a row's real scores are below -1e4 the "
        "'masked' future wins the softmax; use -inf",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            T = x.shape[0]
            d_k = W_q.shape[1]
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = q @ k.T / np.sqrt(d_k)
            if causal:
                scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -10000.0, scores)
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            return w @ v, w
        """),
    Bug("causal_never_applied", "test_causal",
        "the `causal` flag is never used, so the mask is never applied and every position sees the future",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            d_k = W_q.shape[1]
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = q @ k.T / np.sqrt(d_k)
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            return w @ v, w
        """),
    Bug("causal_always_applied", "test_not_causal",
        "the mask is applied whatever `causal` says: wrap it in `if causal:` so causal=False sees every position",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            T = x.shape[0]
            d_k = W_q.shape[1]
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = q @ k.T / np.sqrt(d_k)
            scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores)
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            return w @ v, w
        """),
    Bug("mask_sized_by_d_model", "test_shapes",
        "the mask is built from x.shape[1] (d_model) instead of x.shape[0] (T): the score matrix is (T, T)",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            n = x.shape[1]
            d_k = W_q.shape[1]
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = q @ k.T / np.sqrt(d_k)
            if causal:
                scores = np.where(np.triu(np.ones((n, n), dtype=bool), k=1), -np.inf, scores)
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            return w @ v, w
        """),
    # ------------------------------------------------------------------ the products
    Bug("scores_transposed", "test_agrees",
        "the scores are k @ q.T, the transpose of q @ k.T: row i must hold query i against every key",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            T = x.shape[0]
            d_k = W_q.shape[1]
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = k @ q.T / np.sqrt(d_k)
            if causal:
                scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores)
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            return w @ v, w
        """),
    Bug("weights_transposed_in_output", "test_prefix",
        "out is weights.T @ v: row i of out then mixes the values by column i of the weights, which "
        "reaches into the future; out = weights @ v",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            T = x.shape[0]
            d_k = W_q.shape[1]
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = q @ k.T / np.sqrt(d_k)
            if causal:
                scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores)
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            return w.T @ v, w
        """),
    Bug("returns_swapped", "test_shapes",
        "the results come back as (weights, out); the contract is (out, weights)",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            T = x.shape[0]
            d_k = W_q.shape[1]
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = q @ k.T / np.sqrt(d_k)
            if causal:
                scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores)
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            return w, w @ v
        """),
    # ------------------------------------------------------------------ the inputs
    Bug("scales_W_q_in_place", "test_inputs_unchanged",
        "`W_q /= np.sqrt(d_k)` folds the scale into the caller's weight matrix, in place: scale q (or the "
        "scores) instead, or use W_q = W_q / np.sqrt(d_k)",
        """
        def single_head_attention(x, W_q, W_k, W_v, causal=True):
            T = x.shape[0]
            d_k = W_q.shape[1]
            W_q /= np.sqrt(d_k)
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            scores = q @ k.T
            if causal:
                scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores)
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            return w @ v, w
        """),
]
