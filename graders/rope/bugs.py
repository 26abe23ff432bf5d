"""Mistakes candidates make in rotary position embeddings.

Every entry is BASE, a correct answer, with one mistake edited in. Two mistakes only exist
in another layout, so they are edits of the same answer written that way: BASE_ROTATE_HALF
(full-width cos/sin tables and rotate_half) and BASE_LOOP (one pair of features at a time).
Entries marked stateful keep something at module level between calls (a table, a buffer), or
hand back the caller's own array, so only the whole sequence of calls, replayed in order, shows them.
NEAR_MISSES are mistakes close to a catalogued one that the grader must fail without naming.
"""
from graders.engine.bugs import Bug, edited

BASE = """import numpy as np


def rope(x, positions=None, base=10000.0):
    T, d = x.shape[-2:]
    if d % 2:
        raise ValueError("d must be even")
    half = d // 2
    if positions is None:
        positions = np.arange(T)
    freqs = base ** (-2.0 * np.arange(half) / d)
    angles = np.outer(positions, freqs)
    cos, sin = np.cos(angles), np.sin(angles)
    x1, x2 = x[..., :half], x[..., half:]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
"""

ROTATE = ("    x1, x2 = x[..., :half], x[..., half:]\n"
          "    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)\n")
ANGLES = ("    angles = np.outer(positions, freqs)\n"
          "    cos, sin = np.cos(angles), np.sin(angles)\n")
RETURN = "    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)\n"
ODD_CHECK = '    if d % 2:\n        raise ValueError("d must be even")\n'
# the rotated halves written back into x, whose views x1 and x2 are
WRITE_INTO_X = ("    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)\n",
                "    x[..., :half] = x1 * cos - x2 * sin\n    x[..., half:] = x2 * cos + x1 * sin\n    return x\n")

BASE_ROTATE_HALF = edited(
    BASE,
    ("angles = np.outer(positions, freqs)", "angles = np.tile(np.outer(positions, freqs), 2)   # (T, d)"),
    (ROTATE, "    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)\n"
             "    return x * cos + rotated * sin\n"))

BASE_LOOP = edited(BASE, (
    "    freqs = base ** (-2.0 * np.arange(half) / d)\n"
    "    angles = np.outer(positions, freqs)\n"
    "    cos, sin = np.cos(angles), np.sin(angles)\n" + ROTATE,
    "    pos = np.asarray(positions, dtype=np.float64)\n"
    "    out = np.array(x, dtype=np.float64)\n"
    "    for i in range(half):\n"
    "        theta = pos * base ** (-2.0 * i / d)\n"
    "        a, b = x[..., i], x[..., i + half]\n"
    "        out[..., i] = a * np.cos(theta) - b * np.sin(theta)\n"
    "        out[..., i + half] = b * np.cos(theta) + a * np.sin(theta)\n"
    "    return out\n"))


BUGS = [
    Bug("interleaved_pairing", "pairing",
        "the interleaved pairing: features are paired with their neighbours (x[2i], x[2i+1]), as in the "
        "original RoFormer paper and complex-number code; the contract's half-split pairing rotates x[i] "
        "with x[i + d/2], as the Llama code does",
        edited(BASE, ("x1, x2 = x[..., :half], x[..., half:]", "x1, x2 = x[..., 0::2], x[..., 1::2]"),
               ("np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)",
                "np.stack([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1).reshape(x.shape)"))),
    Bug("freqs_minus_i_over_d", "agrees",
        "the frequencies are base ** (-i/d) for i in 0..d/2-1: the exponent needs 2i/d (or "
        "np.arange(0, d, 2) / d), otherwise the slowest pair turns far too fast",
        edited(BASE, ("-2.0 * np.arange(half)", "-np.arange(half)"))),
    Bug("positive_exponent", "agrees",
        "the frequencies are base ** (2i/d), a positive exponent: they must shrink with i, "
        "base ** (-2i/d) (or 1 / base ** (2i/d))",
        edited(BASE, ("-2.0 * np.arange(half)", "2.0 * np.arange(half)"))),
    Bug("freqs_off_by_one", "agrees",
        "the frequency index starts at 1 (np.arange(1, d/2 + 1)): pair 0 must turn at exactly one "
        "radian per position, base ** 0",
        edited(BASE, ("np.arange(half)", "np.arange(1, half + 1)"))),
    Bug("sign_flipped", "agrees",
        "the rotation runs backwards (by -angle): out_i = x_i cos - x_{i+d/2} sin and "
        "out_{i+d/2} = x_{i+d/2} cos + x_i sin, and rotate_half is concatenate([-x2, x1]), not [x2, -x1]",
        edited(BASE, ("x1 * cos - x2 * sin, x2 * cos + x1 * sin", "x1 * cos + x2 * sin, x2 * cos - x1 * sin"))),
    Bug("cos_and_sin_swapped", "position_zero",
        "the tables are swapped, cos = sin(angles) and sin = cos(angles): at position 0, where the angle is 0 and "
        "nothing may turn, every pair is turned by 90 degrees; cos goes with x, sin with rotate_half(x)",
        edited(BASE, ("cos, sin = np.cos(angles), np.sin(angles)", "cos, sin = np.sin(angles), np.cos(angles)"))),
    Bug("sign_slip_second_half", "pair_norms",
        "a sign slip in the second half (x_{i+d/2} cos - x_i sin with the first half as usual): that is "
        "not a rotation, so lengths and relative positions are lost",
        edited(BASE, ("x2 * cos + x1 * sin", "x2 * cos - x1 * sin"))),
    Bug("positions_ignored", "custom_positions",
        "the positions argument is ignored and np.arange(T) always used: a cached decoding step at "
        "position 4095 with T = 1 would be rotated as position 0",
        edited(BASE, ("np.outer(positions, freqs)", "np.outer(np.arange(T), freqs)"))),
    Bug("table_sized_T", "custom_positions",
        "the cos/sin table is built for positions 0..T-1 and then indexed by `positions`: positions are "
        "any ints (with a cache, far beyond T), so build the angles from the positions themselves",
        edited(BASE, ("np.outer(positions, freqs)", "np.outer(np.arange(T), freqs)[positions]"))),
    # asyml/texar-pytorch PR #83 (the sinusoid table reworked "to support negative positions")
    Bug("negative_positions_wrap", "explored",
        "the angles are read from a table of positions 0 up to the largest one asked, indexed by `positions`: "
        "a negative position counts from the table's end (-1 is silently rotated as the largest position, and "
        "one below minus the table's length raises IndexError); "
        "compute the angles from the positions themselves, np.outer(positions, freqs)",
        edited(BASE, ("np.outer(positions, freqs)",
                      "np.outer(np.arange(max(T, np.max(positions) + 1)), freqs)[positions]"))),
    Bug("positions_from_one", "position_zero",
        "the default positions start at 1 (np.arange(1, T + 1)): the first token sits at position 0, "
        "and a rotation by angle 0 leaves it unchanged",
        edited(BASE, ("np.arange(T)", "np.arange(1, T + 1)"))),
    Bug("cos_sin_repeated", "agrees",
        "the (T, d) cos/sin tables were built with np.repeat (f0 f0 f1 f1 ...), the interleaved layout; "
        "with rotate_half the two halves need the same angles, so concatenate the (T, d/2) table with itself",
        edited(BASE_ROTATE_HALF, ("np.tile(np.outer(positions, freqs), 2)",
                                  "np.repeat(np.outer(positions, freqs), 2, axis=-1)"))),
    Bug("angle_table_reshaped", "agrees",
        "the (d/2, T) angle table was reshaped to (T, d/2) instead of transposed: reshape keeps the memory "
        "order, so positions end up spread along the features (use .T, or build it as positions[:, None] * freqs)",
        edited(BASE, ("np.outer(positions, freqs)", "np.outer(freqs, positions).reshape(T, half)"))),
    Bug("T_from_first_axis", "agrees",
        "T and d are read as x.shape (or len(x)), which only holds for a plain (T, d) array: with batch "
        "and head axes the sequence is x.shape[-2] and the features x.shape[-1]",
        edited(BASE, ("T, d = x.shape[-2:]", "T, d = len(x), x.shape[-1]"))),
    Bug("base_ignored", "base",
        "the base is hard-coded as 10000 instead of using the `base` argument (models with long "
        "contexts raise it to 500000 or more)",
        edited(BASE, ("freqs = base **", "freqs = 10000.0 **"))),
    Bug("float32_angles", "custom_positions",
        "the angle table is computed in float32 (np.arange(..., dtype=np.float32)): at position 100000 a "
        "float32 angle is only good to about 0.004 radians; compute positions * freqs in float64",
        edited(BASE, ("    freqs = base ** (-2.0 * np.arange(half) / d)\n    angles = np.outer(positions, freqs)\n",
                      "    freqs = (1.0 / base ** (np.arange(0, d, 2, dtype=np.float32) / d)).astype(np.float32)\n"
                      "    angles = np.outer(np.asarray(positions).astype(np.float32), freqs)\n"))),
    Bug("in_place_views", "inputs_unchanged",
        "the first half is written back into x before the second half is computed from it: x1 is a view "
        "of x, so it already holds the new values (and the caller's array is overwritten); build a new array",
        edited(BASE, WRITE_INTO_X), stateful=True),
    Bug("in_place_write", "inputs_unchanged",
        "the result is written into x itself: the values are right, but the caller's queries or keys are "
        "overwritten; allocate the output (np.empty_like(x) or np.concatenate)",
        edited(BASE, WRITE_INTO_X, ("x[..., :half], x[..., half:]", "x[..., :half].copy(), x[..., half:].copy()")),
        stateful=True),
    Bug("assert_not_valueerror", "odd_d",
        "an assert checks that d is even: it raises AssertionError (and vanishes under python -O); "
        "raise ValueError as the contract says",
        edited(BASE, (ODD_CHECK, '    assert d % 2 == 0, "d must be even"\n'))),
    Bug("no_odd_check", "odd_d",
        "nothing checks that d is even: the loop over d // 2 pairs silently leaves the last feature "
        "unrotated; raise ValueError for an odd d",
        edited(BASE_LOOP, (ODD_CHECK, ""))),
    # state across calls: a table or a buffer kept at module level
    Bug("angle_cache_by_shape", "repeated_calls",
        "the cos/sin tables are cached by (T, d) alone: a later call of the same shape with other positions "
        "or another base gets the first call's angles; build them from each call's positions and base "
        "(or key the cache by all three)",
        edited(BASE, ("def rope(", "_cache = {}\n\n\ndef rope("),
               (ANGLES, "    if (T, d) not in _cache:\n"
                        "        angles = np.outer(positions, freqs)\n"
                        "        _cache[T, d] = np.cos(angles), np.sin(angles)\n"
                        "    cos, sin = _cache[T, d]\n")), stateful=True),
    Bug("output_buffer_reused", "repeated_calls",
        "every call of the same shape returns the same module-level buffer, so the next call overwrites a "
        "result the caller still holds (queries rotated, then keys rotated into the same array); return a "
        "new array each call",
        edited(BASE, ("def rope(", "_out = None\n\n\ndef rope("),
               (RETURN, "    global _out\n"
                        "    out = np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)\n"
                        "    if _out is None or _out.shape != out.shape or _out.dtype != out.dtype:\n"
                        "        _out = np.empty_like(out)\n"
                        "    _out[...] = out\n"
                        "    return _out\n")), stateful=True),
    # sizes: the Llama code's habit of a table precomputed for a maximum length
    Bug("table_for_4096_positions", "long_sequence",
        "the cos/sin table is built for a fixed 4096 positions and indexed by position: a sequence of 4097 "
        "tokens, or a decoding step at position 100000, falls off its end; compute the angles from the "
        "positions themselves",
        edited(BASE, ("np.outer(positions, freqs)", "np.outer(np.arange(4096), freqs)[positions]"))),
    # special values: float32 at positions in the thousands
    Bug("angles_in_x_dtype", "float32_far_positions",
        "the angles are computed in x's dtype: for float32 x, position * frequency keeps only about 7 digits, "
        "an error of about 0.01 radians at position 100000; compute the angles in float64 and cast only the "
        "result",
        edited(BASE, ("    freqs = base ** (-2.0 * np.arange(half) / d)\n    angles = np.outer(positions, freqs)\n",
                      "    freqs = (base ** (-2.0 * np.arange(half) / d)).astype(x.dtype)\n"
                      "    angles = np.outer(np.asarray(positions).astype(x.dtype), freqs)\n"))),
    # input layouts: a reshape of a Fortran-ordered array is a copy
    Bug("writes_through_flat_output", "layouts",
        "the result is written through out.reshape(-1, T, d) where out = np.zeros_like(x): for a "
        "Fortran-ordered x that reshape is a copy, so the writes are lost and zeros come back; build the "
        "result directly (np.concatenate, or a C-ordered np.empty)",
        edited(BASE, (RETURN, "    out = np.zeros_like(x)\n"
                              "    flat = out.reshape(-1, T, d)\n"
                              "    flat[..., :half] = (x1 * cos - x2 * sin).reshape(-1, T, half)\n"
                              "    flat[..., half:] = (x2 * cos + x1 * sin).reshape(-1, T, half)\n"
                              "    return out\n"))),
]

# Close to a catalogued bug, but a different mistake: the grader must fail each one without
# naming any entry of BUGS.
NEAR_MISSES = [
    Bug("table_for_8192_positions", "custom_positions",
        "the cos/sin table is built for a fixed 8192 positions and indexed by position; positions may be any "
        "ints (100000 in a long decode)",
        edited(BASE, ("np.outer(positions, freqs)", "np.outer(np.arange(8192), freqs)[positions]")),
        says=('needs@values', 'needs@top', 'conduct')),
    Bug("cache_ignores_base", "base",
        "the cos/sin tables are cached by (T, d, positions) but not by base: the same positions with another "
        "base get the first base's angles",
        edited(BASE, ("def rope(", "_cache = {}\n\n\ndef rope("),
               (ANGLES, "    key = (T, d, np.asarray(positions).tobytes())\n"
                        "    if key not in _cache:\n"
                        "        angles = np.outer(positions, freqs)\n"
                        "        _cache[key] = np.cos(angles), np.sin(angles)\n"
                        "    cos, sin = _cache[key]\n")), stateful=True, says=('history',)),
    Bug("positions_from_first", "custom_positions",
        "only the first position is used, as a start: positions[0] + arange(T) (the decoding offset of the "
        "Llama code); positions need not be consecutive",
        edited(BASE, ("        positions = np.arange(T)\n",
                      "        positions = np.arange(T)\n    positions = np.asarray(positions)[0] + np.arange(T)\n")),
        says=('held', 'needs@values')),
    Bug("exponent_linspace", "agrees",
        "the exponents are np.linspace(0, 1, d/2), i/(d/2 - 1), where they are 2i/d: the last pair turns at "
        "1/base per position instead of base ** (-(d-2)/d)",
        edited(BASE, ("-2.0 * np.arange(half) / d", "-np.linspace(0, 1, half)")), says=('held', 'needs@d_half')),
    # vllm-project/vllm#5984 (JunnYu/RoFormer_pytorch apply_rotary: pairs taken interleaved, written as halves)
    Bug("interleaved_pairs_half_output", "pairing",
        "the features are paired with their neighbours (x[2i], x[2i+1]) but the rotated pairs are written back "
        "as two halves: both which features are paired and where they land differ from the half-split pairing",
        edited(BASE, ("x1, x2 = x[..., :half], x[..., half:]", "x1, x2 = x[..., 0::2], x[..., 1::2]")),
        says=('axes', 'held')),
    # hustvl/ControlAR#18 (a table with 257 leading zero-angle rows sliced [:256]: no positional encoding)
    Bug("angle_table_offset", "agrees",
        "the angles are read from a table whose first rows are all zero (rows kept for other tokens) and "
        "sliced from its start, so every position gets angle 0 and x comes back unrotated",
        edited(BASE, ("    angles = np.outer(positions, freqs)\n",
                      "    angles = np.concatenate([np.zeros((len(positions), half)), np.outer(positions, freqs)])"
                      "[:len(positions)]\n")), says=('input',)),
]

# Catalogued mistakes with their trigger moved (another cache key, another half written in place): no
# entry above is them, and the report must say what each is without a name.
VARIANTS = [
    Bug("angles_cached_by_d", "repeated_calls",
        "the cos/sin tables are cached by d alone, so a later call with another T or other positions gets the "
        "first call's angles",
        edited(BASE, ("def rope(", "_TABLES = {}\n\n\ndef rope("),
               (ANGLES, "    if d not in _TABLES:\n        _TABLES[d] = np.cos(np.outer(positions, freqs)), "
                        "np.sin(np.outer(positions, freqs))\n    cos, sin = _TABLES[d]\n")),
        stateful=True, says=("history",)),
    Bug("first_half_written_into_x", "inputs_unchanged",
        "the first half of the result is written into x itself (x[..., :half] = ...) before the second half is "
        "computed from it",
        edited(BASE, (ROTATE, "    x1, x2 = x[..., :half], x[..., half:]\n"
                                       "    first = x1 * cos - x2 * sin\n"
                                       "    second = x2 * cos + x1 * sin\n"
                                       "    x[..., :half] = first\n"
                                       "    return np.concatenate([first, second], axis=-1)\n")),
        says=("conduct",)),
]
