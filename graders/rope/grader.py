"""Grader for rope(x, positions=None, base=10000.0): rotary embeddings, half-split pairing.

Cases give the leading axes `lead`, T and d_half (d = 2 * d_half), so a shrunk failing case
is always a valid call. Float32 inputs are graded at small positions in most checks, and in
a check of their own at positions up to 100000, where the stub promises float32's own
accuracy as well.
"""
import numpy as np

from graders.engine.vocabulary import (
    CheckFailed,
    check,
    expect_close,
    expect_inputs_unchanged,
    expect_raises,
    expect_shape,
    tolerance,
    with_dtypes,
)

SHAPES = [
    {"lead": (), "T": 1, "d_half": 1, "seed": 0},
    {"lead": (), "T": 5, "d_half": 3, "seed": 1},
    {"lead": (), "T": 8, "d_half": 4, "seed": 2},
    {"lead": (1,), "T": 7, "d_half": 5, "seed": 3},
    {"lead": (2, 3), "T": 6, "d_half": 4, "seed": 4},
    {"lead": (3,), "T": 1, "d_half": 8, "seed": 5},
]
AGREES = "agrees with the reference"
PAIRING = "pairs feature i with feature i + d/2 (half-split), not with feature i + 1 (interleaved)"
FAR_FLOAT32 = "float32 inputs at positions up to 100000 are as accurate as float32 allows"
LONG = "a sequence of 4097 positions (past any table of 4096)"
# checks of one regime (custom positions, float32 far out, long sequences, leading axes, another
# base) compare with the reference there: they run once the plain agreement holds, so that a
# formula error fails "agrees with the reference" alone
AFTER = ("agrees",)
INTERLEAVED = ("it equals the interleaved rotation, which pairs neighbours (x[2i], x[2i+1]); the contract pairs "
               "x[i] with x[i + d/2] (half-split, as in the Llama code)")


# ----------------------------------------------------------------------------- helpers

def _ref(ref, x, positions=None, base=10000.0):
    """The reference in float64 on the same (possibly float32) values."""
    return ref.rope(np.asarray(x, dtype=np.float64), positions, base)


def _interleaved(x, positions, base):
    """What the interleaved pairing (x_2i, x_2i+1) gives, in float64: a result equal to it names that mistake."""
    d = x.shape[-1]
    pos = np.arange(x.shape[-2]) if positions is None else np.asarray(positions)
    angles = pos.astype(np.float64)[:, None] * base ** (-2.0 * np.arange(d // 2) / d)[None, :]   # (T, d/2)
    c, s = np.cos(angles), np.sin(angles)
    even, odd = (np.asarray(x[..., k::2], dtype=np.float64) for k in (0, 1))                     # (..., T, d/2)
    out = np.empty(x.shape)
    out[..., 0::2] = even * c - odd * s
    out[..., 1::2] = odd * c + even * s
    return out


def _close(a, b, dtype):
    return np.allclose(np.asarray(a, dtype=np.float64), b, *tolerance(dtype), equal_nan=True)


def expect_rope(out, x, positions, base, expected, what, dtype):
    """expect_close against the reference; a result that is exactly the interleaved rotation of
    these (random) inputs is said to be so, since no other mistake gives it."""
    arr = expect_shape(out, x.shape, what)
    hint = None
    if x.shape[-1] > 2 and arr.dtype.kind in "fiu" and not _close(arr, expected, dtype) \
            and _close(arr, _interleaved(x, positions, base), dtype):
        hint = INTERLEAVED
    return expect_close(arr, expected, what, dtype, hint=hint)


def _positions(new, T, top, name="positions"):
    """T unsorted int positions in [0, top] with a repeat and the largest, `top`, out of order."""
    p = new.rng.integers(0, top + 1, size=T)
    if T >= 3:
        p[-1] = p[0]       # a repeated position
        p[1] = top         # the largest position, out of order
    return new.array(name, p.astype(np.int64))


# ----------------------------------------------------------------------------- the checks

@check("returns an array of x's shape", SHAPES)
def shape(impl, new, lead, T, d_half):
    shape = (*lead, T, 2 * d_half)
    x = new.normal("x", shape)
    expect_shape(impl.rope(x), shape, "rope(x)")


@check(AGREES, with_dtypes(SHAPES))
def agrees(impl, new, ref, lead, T, d_half, dtype):
    x = new.normal("x", (*lead, T, 2 * d_half), dtype=dtype)
    expect_rope(impl.rope(x), x, None, 10000.0, _ref(ref, x), "rope(x)", dtype)


@check(PAIRING, [{"d_half": 4, "pos": 1}, {"d_half": 3, "pos": 2}, {"d_half": 2, "pos": 1}],
       minimum={"d_half": 2})
def pairing(impl, new, d_half, pos):
    d = 2 * d_half
    # row j is the unit vector e_j; rotating it may only move weight into its partner j + d/2
    x = new.let("x", np.eye(d), f"np.eye({d})")
    positions = new.let("positions", np.full(d, pos), f"np.full({d}, {pos})")
    out = expect_shape(impl.rope(x, positions), (d, d), "rope(x, positions)")
    out = np.asarray(out, dtype=np.float64)
    if _close(out, _interleaved(x, positions, 10000.0), np.float64):
        raise CheckFailed(
            f"rotating e_0 (feature 0 alone) at position {pos} moved it into feature 1, its neighbour: that is "
            f"the interleaved pairing (x[2i], x[2i+1]); the contract pairs x[i] with x[i + d/2], so e_0 may "
            f"only mix with feature {d_half} (d={d})")
    for j in range(d):
        partner = (j + d_half) % d
        leaked = [k for k in range(d) if k not in (j, partner) and abs(float(out[j, k])) > 1e-6]
        if leaked:
            k = leaked[0]
            raise CheckFailed(
                f"rotating e_{j} (feature {j} alone, d={d}) at position {pos} put {float(out[j, k]):.4g} "
                f"into feature {k}; it may only mix with its partner, feature {partner} "
                f"({j} {'+' if j < d_half else '-'} d/2)")


@check("position 0 is the identity", [
    {"lead": (), "T": 4, "d_half": 3, "seed": 0},
    {"lead": (2,), "T": 3, "d_half": 2, "seed": 1, "dtype": "float32"},
])
def position_zero(impl, new, lead, T, d_half, dtype="float64"):
    x = new.normal("x", (*lead, T, 2 * d_half), dtype=dtype)
    original = x.astype(np.float64)
    zeros = new.let("zeros", np.zeros(T, dtype=np.int64), f"np.zeros({T}, dtype=np.int64)")
    first = expect_shape(impl.rope(x), x.shape, "rope(x)")
    every = expect_shape(impl.rope(x, zeros), x.shape, "rope(x, zeros)")
    expect_close(first[..., 0, :], original[..., 0, :], "row 0 of rope(x), at position 0,", dtype,
                 against="x's row 0")
    expect_close(every, original, "rope(x, zeros), every row at position 0,", dtype, against="x")


@check("every pair (x_i, x_{i+d/2}) keeps its length", [
    {"lead": (), "T": 5, "d_half": 4, "seed": 0},
    {"lead": (2,), "T": 3, "d_half": 3, "seed": 1},
    {"lead": (), "T": 6, "d_half": 2, "seed": 2, "dtype": "float32"},
])
def pair_norms(impl, new, lead, T, d_half, dtype="float64"):
    x = new.normal("x", (*lead, T, 2 * d_half), dtype=dtype)
    positions = _positions(new, T, 60)
    x64 = x.astype(np.float64)
    out = expect_shape(impl.rope(x, positions), x.shape, "rope(x, positions)")
    out = np.asarray(out, dtype=np.float64)
    before = np.hypot(x64[..., :d_half], x64[..., d_half:])
    after = np.hypot(out[..., :d_half], out[..., d_half:])
    bad = ~np.isclose(after, before, *tolerance(dtype))
    if np.any(bad):
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        i, t = idx[-1], idx[-2]
        raise CheckFailed(
            f"in row {t} (position {int(positions[t])}) of rope(x, positions), the pair (x_{i}, x_{i + d_half}) "
            f"has length {float(after[idx]):.6g}, but {float(before[idx]):.6g} before: a rotation keeps lengths")


@check("the score of a rotated query at m and key at n depends only on m - n", [
    {"T": 5, "d_half": 4, "shift": 7, "seed": 0},
    {"T": 4, "d_half": 3, "shift": 1000, "seed": 1},
    {"T": 3, "d_half": 1, "shift": 1, "seed": 2},
])
def relative(impl, new, T, d_half, shift):
    d = 2 * d_half
    q = new.normal("q", (T, d))
    k = new.normal("k", (T, d))
    positions = _positions(new, T, 40)
    shifted = new.let("shifted", positions + shift, f"positions + {shift}")
    s0 = expect_shape(impl.rope(q, positions), (T, d), "rope(q, positions)") @ \
        expect_shape(impl.rope(k, positions), (T, d), "rope(k, positions)").T
    s1 = expect_shape(impl.rope(q, shifted), (T, d), "rope(q, shifted)") @ \
        expect_shape(impl.rope(k, shifted), (T, d), "rope(k, shifted)").T
    # a score sums d products, each carrying the float64 tolerance of one entry
    bad = ~np.isclose(s1, s0, rtol=tolerance(np.float64)[0], atol=d * tolerance(np.float64)[1])
    if np.any(bad):
        m, n = (int(i) for i in np.argwhere(bad)[0])
        raise CheckFailed(
            f"the score of query {m} (position {int(positions[m])}) with key {n} (position {int(positions[n])}) "
            f"is {float(s0[m, n]):.9g}, but {float(s1[m, n]):.9g} when both positions move by {shift}: "
            f"it must depend only on the gap m - n = {int(positions[m] - positions[n])}")


def _top_kept(cases):
    """Shrinking may make a case smaller but must keep its largest position, what the case is about."""
    tops = {c["top"] for c in cases}
    return lambda case: case["top"] in tops


CUSTOM = [
    {"lead": (), "T": 6, "d_half": 4, "top": 50, "seed": 0},
    {"lead": (2,), "T": 5, "d_half": 3, "top": 4095, "seed": 1},
    {"lead": (), "T": 4, "d_half": 8, "top": 100000, "seed": 2},
    {"lead": (), "T": 1, "d_half": 4, "top": 4095, "seed": 3},
    {"lead": (3,), "T": 7, "d_half": 2, "top": 90, "seed": 4, "dtype": "float32"},
]


@check("custom positions: unsorted, repeated, large", CUSTOM, valid=_top_kept(CUSTOM), after=AFTER)
def custom_positions(impl, new, ref, lead, T, d_half, top, dtype="float64"):
    x = new.normal("x", (*lead, T, 2 * d_half), dtype=dtype)
    if T == 1:
        positions = new.array("positions", np.array([top], dtype=np.int64))
    else:
        positions = _positions(new, T, top)
    arange = new.let("arange", np.arange(T), f"np.arange({T})")
    out = impl.rope(x, positions)
    out_arange = impl.rope(x, arange)
    expect_rope(out, x, positions, 10000.0, _ref(ref, x, positions), "rope(x, positions)", dtype)
    expect_close(out_arange, _ref(ref, x), "rope(x, np.arange(T)), the default positions given explicitly,", dtype)


# head sizes of 32 and 64: several pairs then turn by tens of thousands of radians at the largest
# position, where a float32 angle is off by 1e-3 radians or more
FAR = [
    {"lead": (2,), "T": 5, "d_half": 32, "top": 100000, "seed": 0},
    {"lead": (), "T": 4, "d_half": 16, "top": 60000, "seed": 1},
]


@check(FAR_FLOAT32, FAR, minimum={"T": 2, "d_half": 16}, valid=_top_kept(FAR), after=AFTER)
def float32_far_positions(impl, new, ref, lead, T, d_half, top):
    x = new.normal("x", (*lead, T, 2 * d_half), dtype=np.float32)
    # _positions places `top` only from T = 3 on
    positions = _positions(new, T, top) if T >= 3 else new.let("positions", np.full(T, top), f"np.full({T}, {top})")
    expect_rope(impl.rope(x, positions), x, positions, 10000.0, _ref(ref, x, positions),
                f"rope(x, positions) with float32 x and positions up to {top}", np.float32)


@check(LONG, [{"T": 4097, "d_half": 2, "seed": 0}], shrink=False, after=AFTER)
def long_sequence(impl, new, ref, T, d_half):
    x = new.normal("x", (T, 2 * d_half))
    expect_rope(impl.rope(x), x, None, 10000.0, _ref(ref, x), f"rope(x) with T = {T}", np.float64)


@check("leading batch and head axes: (B, H, T, d) and plain (T, d)", [
    {"B": 2, "H": 3, "T": 5, "d_half": 4, "seed": 0},
    {"B": 3, "H": 2, "T": 4, "d_half": 2, "seed": 1},
    {"B": 1, "H": 4, "T": 6, "d_half": 3, "seed": 2, "dtype": "float32"},
], after=AFTER)
def leading_axes(impl, new, ref, B, H, T, d_half, dtype="float64"):
    d = 2 * d_half
    x = new.normal("x", (B, H, T, d), dtype=dtype)
    # every (batch, head) slice is rotated as the plain (T, d) array it is
    b, h = B - 1, H - 1
    plain = new.let("x_slice", x[b, h].copy(), f"x[{b}, {h}].copy()")
    out = expect_shape(impl.rope(x), (B, H, T, d), "rope(x)")
    expect_rope(out, x, None, 10000.0, _ref(ref, x), "rope(x) with x of shape (B, H, T, d)", dtype)
    out_plain = expect_shape(impl.rope(plain), (T, d), f"rope(x[{b}, {h}])")
    expect_close(out[b, h], out_plain, f"rope(x)[{b}, {h}]", dtype,
                 against=f"rope(x[{b}, {h}]) of the plain (T, d) slice")


@check("a base other than 10000 (after a call with the default base, on the same x and positions)", [
    {"T": 6, "d_half": 4, "base": 500.0, "seed": 0},
    {"T": 5, "d_half": 3, "base": 1000000.0, "seed": 1},
    {"T": 4, "d_half": 2, "base": 10.0, "seed": 2, "dtype": "float32"},
], after=AFTER)
def base(impl, new, ref, T, d_half, base, dtype="float64"):
    x = new.normal("x", (T, 2 * d_half), dtype=dtype)
    positions = _positions(new, T, 30)
    impl.rope(x, positions)     # the default base first, on the same x and positions: angles kept from it show
    expect_rope(impl.rope(x, positions, base=base), x, positions, base, _ref(ref, x, positions, base),
                f"rope(x, positions, base={base})", dtype)


@check("raises ValueError for an odd d", [{"T": 3, "d": 5}, {"T": 1, "d": 1}, {"T": 4, "d": 7}],
       valid=lambda c: c["d"] % 2 == 1)
def odd_d(impl, new, T, d):
    x = new.normal("x", (T, d))
    expect_raises(ValueError, impl.rope, x, why=f"d={d} is odd: the features cannot be split into pairs")


@check("leaves x and positions unchanged", [
    {"lead": (), "T": 5, "d_half": 3},
    {"lead": (2,), "T": 4, "d_half": 2, "dtype": "float32"},
])
def inputs_unchanged(impl, new, lead, T, d_half, dtype="float64"):
    x = new.normal("x", (*lead, T, 2 * d_half), dtype=dtype)
    positions = _positions(new, T, 20)
    impl.rope(x, positions)
    impl.rope(x)
    expect_inputs_unchanged(impl)
