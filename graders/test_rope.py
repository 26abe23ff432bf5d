"""Grader for rope(x, positions=None, base=10000.0): rotary embeddings, half-split pairing."""
import numpy as np

from graders.checks import (CheckFailed, check, expect_close, expect_inputs_unchanged, expect_raises,
                            expect_shape)

# Float32 inputs are graded at positions below a few hundred: there float32 angles are
# still accurate to the contract's tolerance, so a float32-preserving answer is fair game.
# Long-context positions are graded in float64, where the angle table needs every digit.
SHAPES = [
    {"lead": (), "T": 1, "d_half": 1, "seed": 0},
    {"lead": (), "T": 5, "d_half": 3, "seed": 1},
    {"lead": (), "T": 8, "d_half": 4, "seed": 2},
    {"lead": (1,), "T": 7, "d_half": 5, "seed": 3},
    {"lead": (2, 3), "T": 6, "d_half": 4, "seed": 4},
    {"lead": (3,), "T": 1, "d_half": 8, "seed": 5},
]
DTYPES = [dict(c, dtype=d) for c in SHAPES for d in ("float64", "float32")]
AGREES = "agrees with the reference"
PAIRING = "pairs feature i with feature i + d/2 (half-split), not with feature i + 1 (interleaved)"


def _interleaved(x, positions, base):
    """What an attempt that pairs neighbours (x_2i, x_2i+1) returns, to name that mistake."""
    d = x.shape[-1]
    pos = np.asarray(positions, dtype=np.float64)
    angles = pos[:, None] * base ** (-2.0 * np.arange(d // 2) / d)[None, :]
    c, s = np.cos(angles), np.sin(angles)
    even, odd = x[..., 0::2].astype(np.float64), x[..., 1::2].astype(np.float64)
    out = np.empty(x.shape)
    out[..., 0::2] = even * c - odd * s
    out[..., 1::2] = odd * c + even * s
    return out


def expect_rope_close(out, x, positions, base, expected, what, dtype):
    """expect_close, saying so plainly when the attempt used the interleaved pairing."""
    try:
        return expect_close(out, expected, what, dtype)
    except CheckFailed as failure:
        arr = np.asarray(out)
        if failure.kind == "close" and x.shape[-1] > 2 and arr.shape == x.shape:
            pos = np.arange(x.shape[-2]) if positions is None else positions
            interleaved = _interleaved(x, pos, base)
            rtol, atol = (1e-4, 1e-5) if np.dtype(dtype) == np.float32 else (1e-6, 1e-9)
            if np.allclose(arr.astype(np.float64), interleaved, rtol=rtol, atol=atol):
                raise CheckFailed(
                    f"{what} is the interleaved RoPE: it pairs neighbours (x[2i], x[2i+1]); the contract "
                    f"pairs x[i] with x[i + d/2] (half-split, as in the Llama code)", kind="close") from None
            gap = np.max(np.abs(arr.astype(np.float64) - expected))
            if np.dtype(dtype) == np.float64 and gap < 1e-4 * max(1.0, float(np.max(np.abs(expected)))):
                raise CheckFailed(f"{failure.message} (an error of the size float32 arithmetic makes: is the angle "
                                  f"table computed in float32?)", kind=failure.kind) from None
        raise failure


def expect_same(out, want, what, against, dtype):
    """expect_close against something other than the reference, named in the message."""
    try:
        return expect_close(out, want, what, dtype)
    except CheckFailed as failure:
        raise CheckFailed(failure.message.replace("differs from the reference", f"differs from {against}", 1),
                          kind=failure.kind) from None


def _positions(new, T, top):
    """T distinct-looking, unsorted int positions in [0, top] with at least one repeat."""
    p = new.rng.integers(0, top + 1, size=T)
    if T >= 3:
        p[-1] = p[0]       # a repeated position
        p[1] = top         # the largest position, out of order
    return new.array("positions", p.astype(np.int64))


@check("returns an array of x's shape", SHAPES)
def test_shape(impl, new, lead, T, d_half):
    shape = (*lead, T, 2 * d_half)
    x = new.normal("x", shape)
    expect_shape(impl.rope(x), shape, "rope(x)")


@check(AGREES, DTYPES)
def test_agrees(impl, new, ref, lead, T, d_half, dtype):
    x = new.normal("x", (*lead, T, 2 * d_half), dtype=dtype)
    x64 = x.astype(np.float64)
    expected = ref.rope(x64)
    expect_rope_close(impl.rope(x), x64, None, 10000.0, expected, "rope(x)", dtype)


@check(PAIRING, [{"d_half": 4, "pos": 1}, {"d_half": 3, "pos": 2}, {"d_half": 2, "pos": 1}],
       minimum={"d_half": 2})
def test_pairing(impl, new, ref, d_half, pos):
    d = 2 * d_half
    # row j is the unit vector e_j; rotating it may only move weight into its partner j + d/2
    x = new.let("x", np.eye(d), f"np.eye({d})")
    positions = new.let("positions", np.full(d, pos), f"np.full({d}, {pos})")
    expected, interleaved = ref.rope(x, positions), _interleaved(x, positions, 10000.0)
    out = expect_shape(impl.rope(x, positions), (d, d), "rope(x, positions)")
    out = np.asarray(out, dtype=np.float64)
    if np.allclose(out, interleaved, rtol=1e-6, atol=1e-9):
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
    expect_rope_close(out, np.eye(d), positions, 10000.0, expected, "rope(x, positions)", np.float64)


@check("position 0 is the identity", [
    {"lead": (), "T": 4, "d_half": 3, "seed": 0},
    {"lead": (2,), "T": 3, "d_half": 2, "seed": 1, "dtype": "float32"},
])
def test_position_zero(impl, new, lead, T, d_half, dtype="float64"):
    x = new.normal("x", (*lead, T, 2 * d_half), dtype=dtype)
    original = x.copy()
    zeros = new.let("zeros", np.zeros(T, dtype=np.int64), f"np.zeros({T}, dtype=np.int64)")
    first = expect_shape(impl.rope(x), x.shape, "rope(x)")
    every = expect_shape(impl.rope(x, zeros), x.shape, "rope(x, zeros)")
    expect_same(first[..., 0, :], original[..., 0, :], "row 0 of rope(x), at position 0,", "x's row 0", dtype)
    expect_same(every, original, "rope(x, zeros), every row at position 0,", "x", dtype)


@check("every pair (x_i, x_{i+d/2}) keeps its length", [
    {"lead": (), "T": 5, "d_half": 4, "seed": 0},
    {"lead": (2,), "T": 3, "d_half": 3, "seed": 1},
    {"lead": (), "T": 6, "d_half": 2, "seed": 2, "dtype": "float32"},
])
def test_pair_norms(impl, new, lead, T, d_half, dtype="float64"):
    x = new.normal("x", (*lead, T, 2 * d_half), dtype=dtype)
    positions = _positions(new, T, 60)
    x64 = x.astype(np.float64)
    out = expect_shape(impl.rope(x, positions), x.shape, "rope(x, positions)")
    out = np.asarray(out, dtype=np.float64)
    before = np.hypot(x64[..., :d_half], x64[..., d_half:])
    after = np.hypot(out[..., :d_half], out[..., d_half:])
    rtol, atol = (1e-4, 1e-5) if dtype == "float32" else (1e-6, 1e-9)
    bad = ~np.isclose(after, before, rtol=rtol, atol=atol)
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
def test_relative(impl, new, T, d_half, shift):
    d = 2 * d_half
    q = new.normal("q", (T, d))
    k = new.normal("k", (T, d))
    positions = _positions(new, T, 40)
    shifted = new.let("shifted", positions + shift, f"positions + {shift}")
    s0 = expect_shape(impl.rope(q, positions), (T, d), "rope(q, positions)") @ \
        expect_shape(impl.rope(k, positions), (T, d), "rope(k, positions)").T
    s1 = expect_shape(impl.rope(q, shifted), (T, d), "rope(q, shifted)") @ \
        expect_shape(impl.rope(k, shifted), (T, d), "rope(k, shifted)").T
    bad = ~np.isclose(s1, s0, rtol=1e-6, atol=1e-8)
    if np.any(bad):
        m, n = (int(i) for i in np.argwhere(bad)[0])
        raise CheckFailed(
            f"the score of query {m} (position {int(positions[m])}) with key {n} (position {int(positions[n])}) "
            f"is {float(s0[m, n]):.9g}, but {float(s1[m, n]):.9g} when both positions move by {shift}: "
            f"it must depend only on the gap m - n = {int(positions[m] - positions[n])}")


@check("custom positions: unsorted, repeated, large", [
    {"lead": (), "T": 6, "d_half": 4, "top": 50, "seed": 0},
    {"lead": (2,), "T": 5, "d_half": 3, "top": 4095, "seed": 1},
    {"lead": (), "T": 4, "d_half": 8, "top": 100000, "seed": 2},
    {"lead": (), "T": 1, "d_half": 4, "top": 4095, "seed": 3},
    {"lead": (3,), "T": 7, "d_half": 2, "top": 90, "seed": 4, "dtype": "float32"},
])
def test_custom_positions(impl, new, ref, lead, T, d_half, top, dtype="float64"):
    x = new.normal("x", (*lead, T, 2 * d_half), dtype=dtype)
    if T == 1:
        positions = new.array("positions", np.array([top], dtype=np.int64))
    else:
        positions = _positions(new, T, top)
    x64 = x.astype(np.float64)
    expected, default = ref.rope(x64, positions), ref.rope(x64)
    arange = new.let("arange", np.arange(T), f"np.arange({T})")
    out = impl.rope(x, positions)
    out_arange = impl.rope(x, arange)
    expect_rope_close(out, x64, positions, 10000.0, expected, "rope(x, positions)", dtype)
    expect_close(out_arange, default, "rope(x, np.arange(T)), the default positions given explicitly,", dtype)


@check("leading batch and head axes: (B, H, T, d) and plain (T, d)", [
    {"B": 2, "H": 3, "T": 5, "d_half": 4, "seed": 0},
    {"B": 3, "H": 2, "T": 4, "d_half": 2, "seed": 1},
    {"B": 1, "H": 4, "T": 6, "d_half": 3, "seed": 2, "dtype": "float32"},
])
def test_leading_axes(impl, new, ref, B, H, T, d_half, dtype="float64"):
    d = 2 * d_half
    x = new.normal("x", (B, H, T, d), dtype=dtype)
    x64 = x.astype(np.float64)
    expected = ref.rope(x64)
    # every (batch, head) slice is rotated as the plain (T, d) array it is
    b, h = B - 1, H - 1
    plain = new.let("x_slice", x[b, h].copy(), f"x[{b}, {h}].copy()")
    out = expect_shape(impl.rope(x), (B, H, T, d), "rope(x)")
    expect_rope_close(out, x64, None, 10000.0, expected, "rope(x) with x of shape (B, H, T, d)", dtype)
    out_plain = expect_shape(impl.rope(plain), (T, d), f"rope(x[{b}, {h}])")
    expect_same(out[b, h], out_plain, f"rope(x)[{b}, {h}]", f"rope(x[{b}, {h}]) of the plain (T, d) slice", dtype)


@check("a base other than 10000", [
    {"T": 6, "d_half": 4, "base": 500.0, "seed": 0},
    {"T": 5, "d_half": 3, "base": 1000000.0, "seed": 1},
    {"T": 4, "d_half": 2, "base": 10.0, "seed": 2, "dtype": "float32"},
])
def test_base(impl, new, ref, T, d_half, base, dtype="float64"):
    x = new.normal("x", (T, 2 * d_half), dtype=dtype)
    positions = _positions(new, T, 30)
    x64 = x.astype(np.float64)
    expected = ref.rope(x64, positions, base=base)
    expect_rope_close(impl.rope(x, positions, base=base), x64, positions, base, expected,
                      f"rope(x, positions, base={base})", dtype)


@check("raises ValueError for an odd d", [{"T": 3, "d": 5}, {"T": 1, "d": 1}, {"T": 4, "d": 7}],
       valid=lambda c: c["d"] % 2 == 1)
def test_odd_d(impl, new, T, d):
    x = new.normal("x", (T, d))
    expect_raises(ValueError, impl.rope, x, why=f"d={d} is odd: the features cannot be split into pairs")


@check("leaves x and positions unchanged", [
    {"lead": (), "T": 5, "d_half": 3},
    {"lead": (2,), "T": 4, "d_half": 2, "dtype": "float32"},
])
def test_inputs_unchanged(impl, new, lead, T, d_half, dtype="float64"):
    x = new.normal("x", (*lead, T, 2 * d_half), dtype=dtype)
    positions = _positions(new, T, 20)
    impl.rope(x, positions)
    impl.rope(x)
    expect_inputs_unchanged()
