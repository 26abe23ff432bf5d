"""Mistakes candidates make in sliding-window attention.

Every entry is the plain blockwise answer BASE with one mistake edited in; a mistake that only
exists when the band is computed online over key tiles is an edit of BASE_TILED. The `stateful`
entries keep something at module level between calls, so the diagnosis replays them on every
call in order; the memory check names the two full-matrix entries from the peak it measured.
"""
from graders.engine.bugs import Bug, edited

BASE = """import numpy as np


def sliding_window_attention(q, k, v, window):
    if window < 1:
        raise ValueError("window must be at least 1")
    T, d = q.shape[-2:]
    block = 64
    out = np.empty(q.shape[:-1] + (v.shape[-1],))
    for i0 in range(0, T, block):
        i1 = min(i0 + block, T)
        j0 = max(0, i0 - window + 1)
        s = q[..., i0:i1, :] @ np.swapaxes(k[..., j0:i1, :], -1, -2) / np.sqrt(d)
        i = np.arange(i0, i1)[:, None]
        j = np.arange(j0, i1)[None, :]
        s = np.where((j <= i) & (j > i - window), s, -np.inf)
        s = s - s.max(axis=-1, keepdims=True)
        p = np.exp(s)
        out[..., i0:i1, :] = (p / p.sum(axis=-1, keepdims=True)) @ v[..., j0:i1, :]
    return out
"""

BAND = "(j <= i) & (j > i - window)"
BLOCK_BODY = """        s = q[..., i0:i1, :] @ np.swapaxes(k[..., j0:i1, :], -1, -2) / np.sqrt(d)
        i = np.arange(i0, i1)[:, None]
        j = np.arange(j0, i1)[None, :]
        s = np.where((j <= i) & (j > i - window), s, -np.inf)
        s = s - s.max(axis=-1, keepdims=True)
        p = np.exp(s)
        out[..., i0:i1, :] = (p / p.sum(axis=-1, keepdims=True)) @ v[..., j0:i1, :]
"""
NO_VISIBLE_KEY = "m_safe = np.where(m_new == -np.inf, 0.0, m_new)"
TILED_BODY = f"""        i = np.arange(i0, i1)[:, None]
        m = np.full(q.shape[:-2] + (i1 - i0, 1), -np.inf)
        l = np.zeros(q.shape[:-2] + (i1 - i0, 1))
        acc = np.zeros(q.shape[:-2] + (i1 - i0, v.shape[-1]))
        for t0 in range(j0, i1, tile):
            t1 = min(t0 + tile, i1)
            s = q[..., i0:i1, :] @ np.swapaxes(k[..., t0:t1, :], -1, -2) / np.sqrt(d)
            j = np.arange(t0, t1)[None, :]
            s = np.where({BAND}, s, -np.inf)
            m_new = np.maximum(m, s.max(axis=-1, keepdims=True))
            {NO_VISIBLE_KEY}   # no visible key yet: keep exp finite
            p = np.exp(s - m_safe)
            alpha = np.exp(m - m_safe)
            l = l * alpha + p.sum(axis=-1, keepdims=True)
            acc = acc * alpha + p @ v[..., t0:t1, :]
            m = m_new
        out[..., i0:i1, :] = acc / l
"""
# The band computed online over key tiles of 16 inside each query block (flash style): a row may
# find no visible key in a whole tile, which the running max must survive.
BASE_TILED = edited(BASE, ("    block = 64\n", "    block, tile = 64, 16\n"), (BLOCK_BODY, TILED_BODY))


BUGS = [
    Bug("window_one_too_many", "locality",
        "the band keeps window + 1 keys, i - window <= j <= i (the convention of Mistral's one-file "
        "reference); here query i sees the last `window` positions, itself included: i - window < j <= i",
        edited(BASE, ("(j > i - window)", "(j >= i - window)"), ("max(0, i0 - window + 1)", "max(0, i0 - window)"))),
    Bug("window_one_too_few", "agrees",
        "the band keeps window - 1 keys, i - window + 1 < j <= i; query i must see the last `window` "
        "positions, itself included, so window == 1 is the query alone",
        edited(BASE, ("(j > i - window)", "(j > i - window + 1)"))),
    Bug("no_future_mask", "window_covers_everything",
        "the band has no upper edge: j > i - window alone lets a query see the later positions of its "
        "block; key j must also satisfy j <= i",
        edited(BASE, (BAND, "(j > i - window)"))),
    Bug("full_score_matrix", "memory",
        "all T queries are scored against all T keys at once and the band is masked afterwards: right values, "
        "but a (T, T) score matrix, memory growing as T squared, which the window is there to avoid",
        edited(BASE, ("block = 64", "block = T"))),
    Bug("full_boolean_mask", "memory",
        "the scores are computed block by block, but the band mask is built once at full (T, T) size: even a "
        "boolean T x T array is T squared bytes; build each block's mask from its own positions",
        edited(BASE, ("    for i0 in range(0, T, block):\n",
                      "    pos = np.arange(T)\n"
                      "    band = (pos[None, :] <= pos[:, None]) & (pos[None, :] > pos[:, None] - window)\n"
                      "    for i0 in range(0, T, block):\n"),
               (f"np.where({BAND}, s, -np.inf)", "np.where(band[i0:i1, j0:i1], s, -np.inf)"))),
    Bug("no_scaling", "agrees",
        "the scores are not divided by sqrt(d)",
        edited(BASE, (" / np.sqrt(d)", ""))),
    Bug("no_max_shift", "large_scores",
        "the softmax does not subtract each row's maximum, so exp of a score near 1e3 is inf and inf / inf "
        "is NaN (exp overflows float64 past 709)",
        edited(BASE, ("        s = s - s.max(axis=-1, keepdims=True)\n", ""))),
    Bug("block_max_shift", "far_below_zero",
        "the maximum subtracted before exp is that of the whole block (every row and every head), not of each "
        "row: a row whose scores all lie far below another's underflows to 0 / 0",
        edited(BASE, ("s.max(axis=-1, keepdims=True)", "s.max()"))),
    Bug("mask_by_zero_test", "zero_rows",
        "the band is applied by multiplying the scores by the 0/1 mask and then sending every score equal to 0 "
        "to -inf; a score that is exactly 0 (a zero row of q or k) is then masked too, and a row of them is 0 / 0",
        edited(BASE, (f"        s = np.where({BAND}, s, -np.inf)\n",
                      f"        s = s * ({BAND})\n        s[s == 0] = -np.inf\n"))),
    Bug("exp_clipped_at_minus_20", "tiny_weights",
        "the shifted scores are clipped at -20 before exp: every weight below exp(-20) ~ 2e-9, the masked keys "
        "included, is raised to it, which shows wherever such weights meet large values",
        edited(BASE, ("p = np.exp(s)", "p = np.exp(np.maximum(s, -20.0))"))),
    Bug("block_misses_previous_keys", "agrees",
        "each block of queries sees only the keys inside its own block: its first queries also need the "
        "window - 1 keys before the block, from position i0 - window + 1",
        edited(BASE, ("j0 = max(0, i0 - window + 1)", "j0 = i0"))),
    # huggingface/transformers#29777 ("MistralAttention: where is the sliding window"); #32235
    Bug("window_ignored", "locality",
        "the window is never applied: every query sees all its earlier keys, which is plain causal attention; "
        "keep only the last `window` positions, i - window < j <= i",
        edited(BASE, (BAND, "j <= i"), ("j0 = max(0, i0 - window + 1)", "j0 = 0"))),
    # huggingface/transformers#39408 (window_size = (sliding_window, sliding_window)); elixir-nx/bumblebee PR #341
    Bug("symmetric_band", "agrees",
        "the band reaches both ways, |i - j| < window (a (window, window) pair of left and right sizes): each "
        "query also sees window - 1 later keys; the window only looks back, i - window < j <= i",
        edited(BASE, ("        j0 = max(0, i0 - window + 1)\n",
                      "        j0 = max(0, i0 - window + 1)\n        j1 = min(T, i1 + window - 1)\n"),
               ("k[..., j0:i1, :]", "k[..., j0:j1, :]"), ("np.arange(j0, i1)", "np.arange(j0, j1)"),
               (BAND, "np.abs(j - i) < window"), ("v[..., j0:i1, :]", "v[..., j0:j1, :]"))),
    # vllm-project/vllm#3385 ("sliding_window = (sliding_window // X) * X", window not compatible with paged attention)
    Bug("window_rounded_to_block", "locality",
        "the window is rounded down to a multiple of a block or page size (16 here, and never below one "
        "block): a window of 20 keeps 16 keys and a window of 3 keeps 16; the window is exactly the number asked for, whatever the block size",
        edited(BASE, ("    T, d = q.shape[-2:]\n", "    T, d = q.shape[-2:]\n    window = max(16, window // 16 * 16)\n"))),
    # NVIDIA/TensorRT-LLM PR #19220 (a tile whose tokens are all too old: m stays -inf, "infinity * 0 = NaN");
    # flashinfer-ai/flashinfer PR #4401
    Bug("tile_with_no_visible_key", "agrees",
        "the band is computed online over key tiles, and a row whose first tile lies entirely before its window "
        "has a running max of -inf after it: exp(-inf - -inf) is NaN; while no key is visible, subtract 0 "
        "(or skip the tile for that row)",
        edited(BASE_TILED, (NO_VISIBLE_KEY, "m_safe = m_new"))),
    Bug("output_buffer_reused", "state",
        "the output is written into a module-level buffer kept per shape, so the next call of the same shape "
        "overwrites what an earlier call returned; return a new array from every call",
        edited(BASE, ("def sliding_window_attention(", "_OUT = {}\n\n\ndef sliding_window_attention("),
               ("    out = np.empty(q.shape[:-1] + (v.shape[-1],))\n",
                "    shape = q.shape[:-1] + (v.shape[-1],)\n    out = _OUT.setdefault(shape, np.empty(shape))\n")),
        stateful=True),
    Bug("band_cached_by_shape", "state",
        "each block's band mask is memoised by the block's shape, but it also depends on the window: a later "
        "call of the same length with another window reuses the band of the first",
        edited(BASE, ("def sliding_window_attention(", "_BANDS = {}\n\n\ndef sliding_window_attention("),
               (f"        s = np.where({BAND}, s, -np.inf)\n",
                f"        band = _BANDS.setdefault((i1 - i0, i1 - j0), {BAND})\n"
                "        s = np.where(band, s, -np.inf)\n")),
        stateful=True),
    Bug("fixed_position_table_4096", "long",
        "something is sized for at most 4096 positions, such as a table of positions built once for a fixed "
        "maximum length: past it the band mask comes out too short; build what a call needs from its own T",
        edited(BASE, ("def sliding_window_attention(", "POS = np.arange(4096)\n\n\ndef sliding_window_attention("),
               ("np.arange(i0, i1)[:, None]", "POS[i0:i1, None]"), ("np.arange(j0, i1)[None, :]", "POS[None, j0:i1]"))),
    Bug("scales_q_through_reshape", "inputs_unchanged",
        "q is scaled in place through q.reshape(...), which is a view of the caller's array whenever q is "
        "contiguous: the caller's q changes (and a read-only q raises); scale a copy, or the scores",
        edited(BASE, ("    block = 64\n", "    block = 64\n    q_flat = q.reshape(-1, T, d)\n"
                      "    q_flat *= 1 / np.sqrt(d)\n    q = q_flat.reshape(q.shape)\n"),
               (" / np.sqrt(d)\n        i = ", "\n        i = "))),
    Bug("window_zero_accepted", "raises",
        "window < 1 is not refused: window = 0 leaves every query with no key at all (0 / 0) instead of "
        "raising ValueError",
        edited(BASE, ('    if window < 1:\n        raise ValueError("window must be at least 1")\n', ""))),
]

# Close to a catalogued bug, but a different mistake: none may be named as a catalogued one.
NEAR_MISSES = [
    Bug("window_two_too_many", "locality",
        "the band keeps window + 2 keys, i - window - 1 <= j <= i",
        edited(BASE, ("(j > i - window)", "(j > i - window - 2)"),
               ("max(0, i0 - window + 1)", "max(0, i0 - window - 1)")), says=('mask',)),
    Bug("block_start_off_by_one", "agrees",
        "each block starts its keys one position late, so the first query of every block but the first misses "
        "its oldest key",
        edited(BASE, ("max(0, i0 - window + 1)", "max(0, i0 - window + 2)")), says=('conduct', 'mask')),
    Bug("mask_excludes_self", "agrees",
        "the band is i - window < j < i: each query misses its own key (and the first sees nothing at all)",
        edited(BASE, ("(j <= i)", "(j < i)")), says=('mask',)),
    Bug("max_over_queries", "agrees",
        "the maximum subtracted is taken over the queries of each key column (axis -2), not over the keys of "
        "each row; that changes each row by more than a constant",
        edited(BASE, ("s.max(axis=-1, keepdims=True)", "s.max(axis=-2, keepdims=True)")),
        says=('normalised', 'needs@scale')),
    Bug("scale_by_d", "agrees",
        "the scores are divided by d, not by its square root",
        edited(BASE, ("/ np.sqrt(d)", "/ d")), says=('scale',)),
]

# Catalogued mistakes with their trigger moved (another width, another factor): no entry above is them,
# and the report must say what each is without a name.
VARIANTS = [
    Bug("window_three_too_many", "agrees",
        "the band keeps window + 3 keys, i - window - 2 <= j <= i",
        edited(BASE, (BAND, "(j <= i) & (j > i - window - 3)"), ("j0 = max(0, i0 - window + 1)",
                                                                   "j0 = max(0, i0 - window - 2)")),
        says=("mask",)),
    Bug("scale_by_fourth_root", "agrees",
        "the scores are divided by d ** 0.25 instead of sqrt(d)",
        edited(BASE, ("/ np.sqrt(d)", "/ d ** 0.25")), says=("scale",)),
]
