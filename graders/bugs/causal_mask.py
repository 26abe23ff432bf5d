"""Mistakes candidates make in a causal mask and in applying it."""
import textwrap

from graders.bugs import Bug


# A correct causal_mask, for the bugs that go wrong only in apply_causal_mask.
GOOD_MASK = """
    def causal_mask(t_q, t_k=None):
        if t_k is None:
            t_k = t_q
        if t_q > t_k:
            raise ValueError("more queries than keys")
        return np.triu(np.ones((t_q, t_k), dtype=bool), k=t_k - t_q + 1)
"""

# A correct apply_causal_mask, for the bugs that go wrong only in causal_mask.
GOOD_APPLY = """
    def apply_causal_mask(scores):
        t_q, t_k = scores.shape[-2:]
        return np.where(causal_mask(t_q, t_k), -np.inf, scores)
"""


def mask_bug(body: str) -> str:
    """A wrong causal_mask with a correct apply_causal_mask that uses it."""
    return textwrap.dedent(body).strip() + "\n\n\n" + textwrap.dedent(GOOD_APPLY).strip() + "\n"


def apply_bug(body: str) -> str:
    """A correct causal_mask with a wrong apply_causal_mask."""
    return textwrap.dedent(GOOD_MASK).strip() + "\n\n\n" + textwrap.dedent(body).strip() + "\n"


BUGS = [
    # ------------------------------------------------------------------ causal_mask
    Bug("blocks_diagonal", "test_square",
        "the triangle's offset is one too small (np.triu(..., k=0) in the square case): the diagonal is "
        "blocked too, so a position cannot see itself and the first row is all -inf",
        mask_bug("""
        def causal_mask(t_q, t_k=None):
            if t_k is None:
                t_k = t_q
            if t_q > t_k:
                raise ValueError("more queries than keys")
            return np.triu(np.ones((t_q, t_k), dtype=bool), k=t_k - t_q)
        """)),
    Bug("true_means_allowed", "test_square",
        "the mask marks the ALLOWED pairs (np.tril, the lower triangle); the convention here is "
        "True = blocked, the strict upper triangle",
        """
        def causal_mask(t_q, t_k=None):
            if t_k is None:
                t_k = t_q
            if t_q > t_k:
                raise ValueError("more queries than keys")
            return np.tril(np.ones((t_q, t_k), dtype=bool), k=t_k - t_q)


        def apply_causal_mask(scores):
            t_q, t_k = scores.shape[-2:]
            return np.where(causal_mask(t_q, t_k), scores, -np.inf)
        """),
    Bug("top_left_alignment", "test_decoding_alignment",
        "np.triu(..., k=1) without the offset t_k - t_q: with fewer queries than keys the queries are "
        "the LAST positions (decoding with a cache), so each query sees t_k - t_q more keys",
        mask_bug("""
        def causal_mask(t_q, t_k=None):
            if t_k is None:
                t_k = t_q
            if t_q > t_k:
                raise ValueError("more queries than keys")
            return np.triu(np.ones((t_q, t_k), dtype=bool), k=1)
        """)),
    Bug("offset_sign_flipped", "test_decoding_alignment",
        "the offset has the wrong sign (k = t_q - t_k + 1): it moves the boundary left, so queries lose "
        "keys they should see, and a single query (t_q = 1) sees nothing at all",
        mask_bug("""
        def causal_mask(t_q, t_k=None):
            if t_k is None:
                t_k = t_q
            if t_q > t_k:
                raise ValueError("more queries than keys")
            return np.triu(np.ones((t_q, t_k), dtype=bool), k=t_q - t_k + 1)
        """)),
    Bug("float_mask", "test_mask_dtype_and_shape",
        "np.ones((t_q, t_k)) is float64, so the mask is a float array: pass dtype=bool (a float array "
        "cannot index `scores[..., mask]`, and `~mask` fails on it)",
        """
        def causal_mask(t_q, t_k=None):
            if t_k is None:
                t_k = t_q
            if t_q > t_k:
                raise ValueError("more queries than keys")
            return np.triu(np.ones((t_q, t_k)), k=t_k - t_q + 1)


        def apply_causal_mask(scores):
            t_q, t_k = scores.shape[-2:]
            out = scores.copy()
            out[..., causal_mask(t_q, t_k)] = -np.inf
            return out
        """),
    Bug("t_k_none_unhandled", "test_square",
        "t_k=None is passed on as it is: when t_k is omitted, set t_k = t_q first",
        mask_bug("""
        def causal_mask(t_q, t_k=None):
            if t_k is not None and t_q > t_k:
                raise ValueError("more queries than keys")
            return np.triu(np.ones((t_q, t_k), dtype=bool), k=t_k - t_q + 1)
        """)),
    Bug("no_value_error", "test_more_queries_than_keys",
        "no check that t_q <= t_k: with more queries than keys the first query would sit before "
        "position 0 with nothing to see, so raise ValueError instead of returning a mask",
        mask_bug("""
        def causal_mask(t_q, t_k=None):
            if t_k is None:
                t_k = t_q
            return np.triu(np.ones((t_q, t_k), dtype=bool), k=t_k - t_q + 1)
        """)),
    Bug("value_error_condition_flipped", "test_decoding_alignment",
        "the ValueError test is the wrong way round (t_q < t_k): fewer queries than keys is the "
        "ordinary decoding case; only t_q > t_k is an error",
        mask_bug("""
        def causal_mask(t_q, t_k=None):
            if t_k is None:
                t_k = t_q
            if t_q < t_k:
                raise ValueError("more keys than queries")
            return np.triu(np.ones((t_q, t_k), dtype=bool), k=t_k - t_q + 1)
        """)),
    # ------------------------------------------------------------------ apply_causal_mask
    Bug("minus_1e9", "test_blocked_are_minus_inf",
        "-1e9 is not -inf: exp(-1e9 - max) is 0 only while the scores are small, and a row with "
        "every entry masked turns into a uniform row instead of failing loudly",
        apply_bug("""
        def apply_causal_mask(scores):
            t_q, t_k = scores.shape[-2:]
            return np.where(causal_mask(t_q, t_k), -1e9, scores)
        """)),
    Bug("dtype_min", "test_blocked_are_minus_inf",
        "np.finfo(dtype).min is the most negative finite number, not -inf: the contract asks for -inf, "
        "which gives exactly 0 after exp whatever the other scores are",
        apply_bug("""
        def apply_causal_mask(scores):
            t_q, t_k = scores.shape[-2:]
            return np.where(causal_mask(t_q, t_k), np.finfo(scores.dtype).min, scores)
        """)),
    Bug("zero_instead_of_minus_inf", "test_softmax_of_masked",
        "blocked scores are set to 0 (scores * ~mask), but exp(0) = 1: the future keeps real weight; "
        "masking before a softmax means -inf",
        apply_bug("""
        def apply_causal_mask(scores):
            t_q, t_k = scores.shape[-2:]
            return scores * ~causal_mask(t_q, t_k)
        """)),
    Bug("additive_mask_nan", "test_allowed_unchanged",
        "scores + mask * -inf: 0 * -inf is NaN, so every allowed entry becomes NaN; build the bias with "
        "np.where(mask, -np.inf, 0.0), or use np.where on the scores directly",
        apply_bug("""
        def apply_causal_mask(scores):
            t_q, t_k = scores.shape[-2:]
            return scores + causal_mask(t_q, t_k) * -np.inf
        """)),
    Bug("in_place", "test_input_unchanged",
        "`out = scores` is not a copy: writing -inf into it changes the caller's scores; start from "
        "scores.copy() or use np.where, which returns a new array",
        apply_bug("""
        def apply_causal_mask(scores):
            t_q, t_k = scores.shape[-2:]
            out = scores
            out[..., causal_mask(t_q, t_k)] = -np.inf
            return out
        """)),
    Bug("mask_from_first_axes", "test_apply_agrees",
        "the mask's sizes come from scores.shape[0] and scores.shape[1], which are the leading (batch) "
        "axes once there are more than two: take them from the last two axes, scores.shape[-2:]",
        apply_bug("""
        def apply_causal_mask(scores):
            t_q, t_k = scores.shape[0], scores.shape[1]
            return np.where(causal_mask(t_q, t_k), -np.inf, scores)
        """)),
    Bug("t_q_t_k_swapped", "test_apply_agrees",
        "t_q and t_k are swapped: scores are (..., t_q, t_k), queries on the rows and keys on the columns",
        apply_bug("""
        def apply_causal_mask(scores):
            t_k, t_q = scores.shape[-2:]
            return np.where(causal_mask(t_q, t_k), -np.inf, scores)
        """)),
    Bug("square_mask_from_last_axis", "test_apply_shape",
        "the mask is built square from the last axis alone, (t_k, t_k): with t_q < t_k it does not "
        "fit the scores, and with t_q = 1 it silently broadcasts them up to (t_k, t_k)",
        apply_bug("""
        def apply_causal_mask(scores):
            T = scores.shape[-1]
            return np.where(causal_mask(T), -np.inf, scores)
        """)),
    Bug("boolean_index_without_ellipsis", "test_apply_agrees",
        "`out[mask]` indexes the FIRST two axes; with leading batch or head axes write "
        "`out[..., mask]` so the mask lands on the last two",
        apply_bug("""
        def apply_causal_mask(scores):
            t_q, t_k = scores.shape[-2:]
            out = scores.copy()
            out[causal_mask(t_q, t_k)] = -np.inf
            return out
        """)),
]
