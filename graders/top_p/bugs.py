"""Mistakes candidates make in temperature and nucleus (top-p) sampling.

Every entry is BASE, a correct answer, with one mistake edited in, so that each bug
differs from a right answer in exactly one place. Entries marked stateful keep something at
module level between calls (a buffer, a Generator). NEAR_MISSES are mistakes close to a
catalogued one that the grader must fail without naming.
"""
from graders.engine.bugs import Bug, edited

BASE = """import numpy as np


def top_p_probs(logits, temperature=1.0, top_p=1.0):
    if temperature < 0:
        raise ValueError("temperature must be >= 0")
    if not 0 < top_p <= 1:
        raise ValueError("top_p must be in (0, 1]")
    V = logits.shape[-1]
    if temperature == 0:
        greedy = np.zeros(logits.shape)
        np.put_along_axis(greedy, np.argmax(logits, axis=-1)[..., None], 1.0, axis=-1)
        return greedy
    z = logits / temperature
    z = z - z.max(axis=-1, keepdims=True)
    p = np.exp(z)
    p = p / p.sum(axis=-1, keepdims=True)
    order = np.argsort(-p, axis=-1, kind="stable")
    sorted_p = np.take_along_axis(p, order, axis=-1)
    cum = np.cumsum(sorted_p, axis=-1)
    keep_sorted = cum - sorted_p < top_p
    keep = np.zeros_like(keep_sorted)
    np.put_along_axis(keep, order, keep_sorted, axis=-1)
    q = np.where(keep, p, 0.0)
    return q / q.sum(axis=-1, keepdims=True)


def sample_top_p(logits, temperature=1.0, top_p=1.0, rng=None):
    if rng is None:
        rng = np.random.default_rng()
    probs = top_p_probs(logits, temperature, top_p)
    cum = np.cumsum(probs, axis=-1)
    u = rng.random(probs.shape[:-1] + (1,))
    draws = np.minimum((cum <= u).sum(axis=-1), probs.shape[-1] - 1)
    return int(draws) if draws.ndim == 0 else draws
"""

SHIFT = "    z = z - z.max(axis=-1, keepdims=True)\n"
RENORMALISE = "    return q / q.sum(axis=-1, keepdims=True)\n"
SORT = '    order = np.argsort(-p, axis=-1, kind="stable")\n'
KEEP = "    keep = np.zeros_like(keep_sorted)\n"
SOFTMAX = ("z = logits / temperature\n    z = z - z.max(axis=-1, keepdims=True)\n"
           "    p = np.exp(z)\n    p = p / p.sum(axis=-1, keepdims=True)")
GREEDY = ("    if temperature == 0:\n        greedy = np.zeros(logits.shape)\n"
          "        np.put_along_axis(greedy, np.argmax(logits, axis=-1)[..., None], 1.0, axis=-1)\n"
          "        return greedy\n")
TOP_P_CHECK = '    if not 0 < top_p <= 1:\n        raise ValueError("top_p must be in (0, 1]")\n'
RNG_DEFAULT = "    if rng is None:\n        rng = np.random.default_rng()\n"
DRAW = ("    cum = np.cumsum(probs, axis=-1)\n"
        "    u = rng.random(probs.shape[:-1] + (1,))\n"
        "    draws = np.minimum((cum <= u).sum(axis=-1), probs.shape[-1] - 1)\n")


BUGS = [
    Bug("drops_crossing_token", "crossing_token_kept",
        "only tokens whose cumulative sum stays below top_p are kept: the token that crosses top_p belongs "
        "to the nucleus too (keep while the mass BEFORE a token is < top_p), or a small top_p keeps nothing",
        edited(BASE, ("keep_sorted = cum - sorted_p < top_p", "keep_sorted = cum < top_p"))),
    Bug("drops_crossing_token_first_kept", "crossing_token_kept",
        "only tokens whose cumulative sum stays below top_p are kept, with a guard that keeps the first: the "
        "token that crosses top_p belongs to the nucleus too, so the guard hides the mistake only when the first "
        "token alone crosses it (keep while the mass BEFORE a token is < top_p)",
        edited(BASE, ("keep_sorted = cum - sorted_p < top_p",
                      "keep_sorted = cum < top_p\n    keep_sorted[..., 0] = True"))),
    Bug("no_renormalisation", "sums_to_one",
        "the tokens outside the nucleus are zeroed but the rest are not divided by their sum, so the "
        "row sums to the nucleus's mass, not 1",
        edited(BASE, ("return q / q.sum(axis=-1, keepdims=True)", "return q"))),
    Bug("temperature_after_softmax", "temperature_divides",
        "the probabilities are divided by the temperature after the softmax; the cut and the renormalising "
        "then undo it: temperature divides the logits, before the softmax",
        edited(BASE, (SOFTMAX, "z = logits - logits.max(axis=-1, keepdims=True)\n"
                               "    p = np.exp(z)\n    p = p / p.sum(axis=-1, keepdims=True)\n"
                               "    p = p / temperature"))),
    Bug("temperature_power_unnormalised", "nucleus",
        "temperature applied after the softmax as p ** (1 / T) without renormalising before the cut: "
        "the cumulative sums no longer add up to 1, so the nucleus comes out too large or too small",
        edited(BASE, (SOFTMAX, "z = logits - logits.max(axis=-1, keepdims=True)\n"
                               "    p = np.exp(z)\n    p = p / p.sum(axis=-1, keepdims=True)\n"
                               "    p = p ** (1 / temperature)"))),
    # mlc-ai/mlc-llm PR #951 ("Correct Order of Temperature and Top_P"); fishaudio/fish-speech PR #1150
    Bug("temperature_after_cut", "nucleus",
        "the nucleus is cut on the untempered distribution and the temperature applied only to the tokens kept "
        "(llama.cpp's default order): the contract divides the logits by the temperature first, then cuts, so "
        "a low temperature keeps fewer tokens",
        edited(BASE, ("z = logits / temperature", "z = logits"),
               ("q = np.where(keep, p, 0.0)",
                "q = np.where(keep, np.exp((logits - logits.max(axis=-1, keepdims=True)) / temperature), 0.0)"))),
    Bug("temperature_zero_divides", "temperature_zero_is_greedy",
        "temperature 0 goes through the division: logits / 0 is inf (or NaN), and the softmax of that is NaN; "
        "temperature 0 means take the argmax",
        edited(BASE, (GREEDY, ""))),
    Bug("greedy_splits_ties", "temperature_zero_is_greedy",
        "at temperature 0 every token equal to the max shares the mass; greedy is one token, the first "
        "argmax (np.argmax already returns the lowest index)",
        edited(BASE, ("        greedy = np.zeros(logits.shape)\n"
                      "        np.put_along_axis(greedy, np.argmax(logits, axis=-1)[..., None], 1.0, axis=-1)\n"
                      "        return greedy\n",
                      "        top = (logits == logits.max(axis=-1, keepdims=True)).astype(float)\n"
                      "        return top / top.sum(axis=-1, keepdims=True)\n"))),
    Bug("sorted_ascending", "worked_example",
        "the probabilities are sorted in increasing order, so the nucleus is built from the least likely "
        "tokens; sort by -p (most probable first)",
        edited(BASE, ('np.argsort(-p, axis=-1, kind="stable")', 'np.argsort(p, axis=-1, kind="stable")'))),
    Bug("reversed_argsort_breaks_ties", "ties_lower_index_first",
        "np.argsort(p)[..., ::-1] puts equal probabilities in reverse (or arbitrary) index order; "
        "np.argsort(-p, kind='stable') keeps the lower index first, as the contract asks",
        edited(BASE, ('np.argsort(-p, axis=-1, kind="stable")', "np.argsort(p, axis=-1)[..., ::-1]"))),
    # lucidrains/routing-transformer#1 ("thres=0.9 results in everything being returned until ... 0.1")
    Bug("threshold_one_minus_top_p", "nucleus",
        "the cut compares with 1 - top_p (the threshold of the ascending formulation, which removes the tail "
        "of mass 1 - top_p) in the descending one: top_p = 0.9 keeps a nucleus of mass about 0.1; keep while "
        "the mass before a token is < top_p",
        edited(BASE, ("keep_sorted = cum - sorted_p < top_p", "keep_sorted = cum - sorted_p < 1 - top_p"))),
    # lucidrains/routing-transformer#1 ("gathered twice (instead of gathered and scattered)"); PaLM-rlhf-pytorch#60
    Bug("result_left_in_sorted_order", "nucleus",
        "the kept probabilities are returned in sorted order (gathered, never scattered back): entry i is the "
        "i-th most probable token's, not token i's; put them back with np.put_along_axis (or index by order)",
        edited(BASE, ("q = np.where(keep, p, 0.0)", "q = np.where(keep_sorted, sorted_p, 0.0)"))),
    # neuralmagic/deepsparse PR #1291 (logits[sorted_indices[sorted_indices_to_remove]] = filter_value)
    Bug("removal_ids_pooled_across_rows", "batched",
        "the token ids to remove are gathered with a boolean index over the whole batch, which flattens the "
        "rows, and are then removed from every row: a token outside one row's nucleus is removed from all of "
        "them; map the cut back row by row (np.put_along_axis)",
        edited(BASE, ("    np.put_along_axis(keep, order, keep_sorted, axis=-1)\n",
                      "    keep[...] = True\n    keep[..., order[~keep_sorted]] = False\n"))),
    Bug("cumsum_unsorted", "nucleus",
        "the cumulative sum runs over the tokens in vocabulary order, not from the most probable down: "
        "sort first, cut, then map back to token ids",
        edited(BASE, ('    order = np.argsort(-p, axis=-1, kind="stable")\n'
                      '    sorted_p = np.take_along_axis(p, order, axis=-1)\n'
                      '    cum = np.cumsum(sorted_p, axis=-1)\n'
                      '    keep_sorted = cum - sorted_p < top_p\n'
                      '    keep = np.zeros_like(keep_sorted)\n'
                      '    np.put_along_axis(keep, order, keep_sorted, axis=-1)\n',
                      '    cum = np.cumsum(p, axis=-1)\n'
                      '    keep = cum - p < top_p\n'))),
    Bug("zero_top_p_accepted", "value_errors",
        "the check `top_p < 0 or top_p > 1` lets top_p = 0 (and NaN) through; the contract's interval is "
        "(0, 1]: write `not 0 < top_p <= 1`",
        edited(BASE, ("if not 0 < top_p <= 1:", "if top_p < 0 or top_p > 1:"))),
    Bug("nan_top_p_accepted", "value_errors",
        "`top_p <= 0 or top_p > 1` is False for NaN, so NaN slips through; `not 0 < top_p <= 1` is True "
        "for NaN and rejects it",
        edited(BASE, ("if not 0 < top_p <= 1:", "if top_p <= 0 or top_p > 1:"))),
    Bug("negative_temperature_accepted", "value_errors",
        "a negative temperature is not rejected: dividing by it reverses the ranking, so the least likely "
        "token would be picked first",
        edited(BASE, ('    if temperature < 0:\n        raise ValueError("temperature must be >= 0")\n', ""))),
    Bug("greedy_skips_validation", "value_errors",
        "the temperature-0 shortcut returns before top_p is checked; the contract rejects a bad top_p at any "
        "temperature, so validate first",
        edited(BASE, (TOP_P_CHECK + "    V = logits.shape[-1]\n" + GREEDY,
                      "    V = logits.shape[-1]\n" + GREEDY + TOP_P_CHECK))),
    Bug("temperature_multiplies", "lower_temperature_sharpens",
        "the logits are multiplied by the temperature: a low temperature then flattens the distribution "
        "instead of sharpening it; divide",
        edited(BASE, ("z = logits / temperature", "z = logits * temperature"))),
    Bug("no_max_subtraction", "huge_logits",
        "exp of logits / T without subtracting the row max: logits of 1e4, or ordinary logits at T = 0.002, "
        "overflow to inf and the softmax becomes NaN",
        edited(BASE, ("    z = z - z.max(axis=-1, keepdims=True)\n", ""))),
    Bug("cumsum_without_axis", "batched",
        "np.cumsum without axis=-1 flattens a batch into one long row, so the rows' sums run into each "
        "other (or fail to broadcast back)",
        edited(BASE, ("cum = np.cumsum(sorted_p, axis=-1)", "cum = np.cumsum(sorted_p)"))),
    Bug("logits_divided_in_place", "logits_unchanged",
        "`logits /= temperature` divides the caller's array in place; write z = logits / temperature",
        edited(BASE, ("z = logits / temperature", "logits /= temperature\n    z = logits"))),
    Bug("samples_full_softmax", "sample_inside_nucleus",
        "the sampler asks for the probabilities without passing top_p on, so it draws from the full "
        "softmax, tokens outside the nucleus included",
        edited(BASE, ("probs = top_p_probs(logits, temperature, top_p)", "probs = top_p_probs(logits, temperature)"))),
    Bug("global_random_state", "sample_uses_generator",
        "np.random.choice draws from NumPy's global random state, not from the Generator passed as `rng`: "
        "the same seed does not give the same draws; use rng.choice or rng.random",
        edited(BASE, (DRAW, "    flat = probs.reshape(-1, probs.shape[-1])\n"
                            "    draws = np.array([np.random.choice(flat.shape[-1], p=row) for row in flat])\n"
                            "    draws = draws.reshape(probs.shape[:-1])\n"))),
    Bug("fixed_seed_ignores_rng", "sample_uses_generator",
        "a Generator with a fixed seed replaces the one passed in: every caller gets the same draws; use "
        "`rng`, and make a fresh np.random.default_rng() only when it is None",
        edited(BASE, (RNG_DEFAULT, "    rng = np.random.default_rng(0)\n"))),
    Bug("returns_sorted_position", "sample_inside_nucleus",
        "the draw is made in sorted order and its position is returned, not the token id at that position "
        "(order[position])",
        edited(BASE, ("    cum = np.cumsum(probs, axis=-1)\n",
                      '    order = np.argsort(-probs, axis=-1, kind="stable")\n'
                      "    cum = np.cumsum(np.take_along_axis(probs, order, axis=-1), axis=-1)\n"))),
    Bug("uniform_over_nucleus", "sample_frequencies",
        "rng.choice over the nucleus's token ids without p=...: every kept token is equally likely, "
        "whatever its probability",
        edited(BASE, (DRAW, "    flat = probs.reshape(-1, probs.shape[-1])\n"
                            "    draws = np.array([rng.choice(np.flatnonzero(row)) for row in flat])\n"
                            "    draws = draws.reshape(probs.shape[:-1])\n"))),
    Bug("one_uniform_for_the_batch", "sample_frequencies",
        "a single uniform rng.random() is shared by every row, so all rows of a batch draw the same "
        "token; draw one uniform per row, rng.random(shape[:-1] + (1,))",
        edited(BASE, ("u = rng.random(probs.shape[:-1] + (1,))", "u = rng.random()"))),
    Bug("returns_array_of_one", "sample_type",
        "rng.choice(V, size=1, p=...) returns an array of shape (1,); for logits of shape (V,) the contract "
        "returns an integer scalar (leave size out, or take [0])",
        edited(BASE, (DRAW + "    return int(draws) if draws.ndim == 0 else draws\n",
                      "    V = probs.shape[-1]\n"
                      "    if probs.ndim == 1:\n"
                      "        return rng.choice(V, size=1, p=probs)\n"
                      "    flat = probs.reshape(-1, V)\n"
                      "    return np.array([rng.choice(V, p=row) for row in flat]).reshape(probs.shape[:-1])\n"))),
    Bug("rng_none_not_handled", "sample_rng_none",
        "rng=None is used as it is, so rng.random fails; the contract makes a fresh np.random.default_rng() "
        "when no Generator is given",
        edited(BASE, (RNG_DEFAULT, ""))),
    # state across calls
    Bug("output_buffer_reused", "repeated_calls",
        "every call of the same shape writes its probabilities into the same module-level buffer and returns it, "
        "so the next call overwrites a result the caller still holds; return a new array",
        edited(BASE, ("def top_p_probs(", "_out = None\n\n\ndef top_p_probs("),
               (RENORMALISE, "    global _out\n"
                             "    if _out is None or _out.shape != q.shape or _out.dtype != q.dtype:\n"
                             "        _out = np.empty_like(q)\n"
                             "    np.divide(q, q.sum(axis=-1, keepdims=True), out=_out)\n"
                             "    return _out\n")), stateful=True),
    Bug("rng_kept_from_first_call", "sample_same_seed",
        "the first Generator passed in is kept at module level and used for every later call, so a fresh "
        "np.random.default_rng(7) does not give the draws of the seed 7; draw with the `rng` of each call",
        edited(BASE, ("def sample_top_p(", "_first = None\n\n\ndef sample_top_p("),
               (RNG_DEFAULT, "    global _first\n"
                             "    if rng is None:\n"
                             "        rng = np.random.default_rng()\n"
                             "    elif _first is None:\n"
                             "        _first = rng\n"
                             "    else:\n"
                             "        rng = _first\n")), stateful=True),
    # sizes: a candidate set capped for speed
    Bug("candidates_capped_at_1024", "large_vocabulary",
        "only the 1024 most probable tokens are considered for the nucleus: a flat distribution over a large "
        "vocabulary needs thousands of them to reach top_p; sort the whole row",
        edited(BASE, (SORT, '    order = np.argsort(-p, axis=-1, kind="stable")[..., :1024]   # plenty of candidates\n'),
               (KEEP, "    keep = np.zeros(p.shape, dtype=bool)\n"))),
    # input layouts and aliasing
    Bug("max_subtracted_in_place", "logits_unchanged",
        "at temperature 1 the division is skipped, so z is the caller's logits and `z -= max` writes into them "
        "(and fails on a read-only array); subtract into a new array, z = z - z.max(...)",
        edited(BASE, ("z = logits / temperature\n" + SHIFT,
                      "z = logits if temperature == 1 else logits / temperature\n"
                      "    z -= z.max(axis=-1, keepdims=True)\n"))),
    Bug("writes_through_flat_view", "layouts",
        "the result is written through out.reshape(-1, V) where out = np.zeros_like(logits): for a Fortran-ordered "
        "batch that reshape is a copy, so the writes are lost and zeros come back; return the computed array",
        edited(BASE, (RENORMALISE, "    out = np.zeros_like(logits)\n"
                                   "    out.reshape(-1, V)[...] = (q / q.sum(axis=-1, keepdims=True)).reshape(-1, V)\n"
                                   "    return out\n"))),
    # special values: rows far below zero
    Bug("shift_only_when_large", "far_below_zero",
        "the max is subtracted only when a logit is large enough to overflow: logits near -800 then underflow, "
        "exp gives 0 for every token and the softmax 0 / 0 = NaN; subtract the row's max always",
        edited(BASE, (SHIFT, "    if z.max() > 700:   # exp overflows past 709\n"
                             "        z = z - z.max(axis=-1, keepdims=True)\n"))),
    # tolerance edges: a cold temperature is not temperature 0
    Bug("small_temperature_as_greedy", "small_temperature",
        "temperatures below 0.01 are treated as greedy: at T = 0.002, logits 0.002 apart still differ by a "
        "factor e in probability; only temperature 0 is the argmax",
        edited(BASE, ("    if temperature == 0:\n", "    if temperature < 0.01:   # too cold to matter\n"))),
]

# Close to a catalogued bug, but a different mistake: the grader must fail each one without
# naming any entry of BUGS.
NEAR_MISSES = [
    Bug("candidates_capped_at_4096", "large_vocabulary",
        "only the 4096 most probable tokens are considered for the nucleus, so top_p near 1 on a vocabulary "
        "of 4097 drops one",
        edited(BASE, (SORT, '    order = np.argsort(-p, axis=-1, kind="stable")[..., :4096]\n'),
               (KEEP, "    keep = np.zeros(p.shape, dtype=bool)\n")), says=('needs@V',)),
    Bug("module_generator_ignores_rng", "sample_same_seed",
        "a Generator made once at import, np.random.default_rng(0), draws every sample; `rng` is never used",
        edited(BASE, ("def sample_top_p(", "_RNG = np.random.default_rng(0)\n\n\ndef sample_top_p("),
               ("u = rng.random(", "u = _RNG.random(")), stateful=True, says=('needs@rng', 'history')),
    Bug("temperature_floored", "small_temperature",
        "the temperature is floored at 0.01 before dividing, so T = 0.002 acts as 0.01",
        edited(BASE, ("z = logits / temperature", "z = logits / max(temperature, 0.01)")),
        says=('needs@temperature', 'scale')),
    Bug("mean_subtracted", "huge_logits",
        "the row's mean is subtracted before exp instead of its max: logits of 1e4 still overflow",
        edited(BASE, ("z = z - z.max(axis=-1, keepdims=True)", "z = z - z.mean(axis=-1, keepdims=True)")),
        says=('needs@scale',)),
    # fishaudio/fish-speech PR #1326 (remove[0] = False on a (B, V) array un-removes the whole first row)
    Bug("keep_first_guard_on_row_axis", "batched",
        "the nucleus drops the token that crosses top_p, and the guard meant to keep each row's first token, "
        "keep[0] = True, sets the whole first ROW of a batch: row 0 is not filtered at all and the other rows "
        "can lose every token",
        edited(BASE, ("    keep_sorted = cum - sorted_p < top_p\n",
                      "    keep_sorted = cum < top_p\n    keep_sorted[0] = True\n")), says=('where',)),
]

# Catalogued mistakes with their trigger moved (another floor, another cap): no entry above is them, and
# the report must say what each is without a name.
VARIANTS = [
    Bug("temperature_floored_at_0_1", "small_temperature",
        "the temperature is floored at 0.1 before dividing, so T = 0.002 acts as 0.1",
        edited(BASE, ("    z = logits / temperature\n", "    z = logits / max(temperature, 0.1)\n")),
        says=("needs@temperature",)),
    Bug("candidates_capped_at_2048", "large_vocabulary",
        "only the 2048 most probable tokens are considered for the nucleus",
        edited(BASE, ("    keep_sorted = cum - sorted_p < top_p\n",
                      "    keep_sorted = (cum - sorted_p < top_p) & (np.arange(V) < 2048)\n")),
        says=("needs@V",)),
]
