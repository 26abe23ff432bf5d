"""Grader for rms_norm(x, weight, eps=1e-6): RMSNorm over the last axis, then a per-feature scale.

Cases give the leading axes `lead` and the number of features d, so a shrunk failing case is
always a valid call. The weight differs from feature to feature (one entry negative), so a
scale applied to the wrong axis or in the wrong place changes values instead of hiding.
"""
import numpy as np

from graders.engine.vocabulary import (
    CheckFailed,
    check,
    expect_close,
    expect_finite,
    expect_inputs_unchanged,
    expect_shape,
    tolerance,
    with_dtypes,
)

SHAPES = [
    {"lead": (), "d": 5, "seed": 0},
    {"lead": (4,), "d": 6, "seed": 1},
    {"lead": (2, 3), "d": 7, "seed": 2},
    {"lead": (2, 1, 3), "d": 4, "seed": 3},
    {"lead": (3,), "d": 1, "seed": 4},
    {"lead": (1,), "d": 8, "seed": 5},
]


# ----------------------------------------------------------------------------- helpers

def _weight(new, d, dtype="float64", name="weight"):
    """A learned scale with a distinct value per feature (some below 1, one negative), drawn from
    the case's generator and written in the repro as the expression that draws it (a literal of
    thousands of features would cost more to write than the check)."""
    w = np.linspace(0.5, 2.0, d) + 0.1 * new.rng.standard_normal(d)
    expr = f"np.linspace(0.5, 2.0, {d}) + 0.1 * rng.standard_normal({d})"
    if d >= 3:
        w[1] = -0.75
        expr += f"; {name}[1] = -0.75"
    if dtype != "float64":
        expr += f"; {name} = {name}.astype(np.{dtype})"
    return new.let(name, w.astype(dtype), expr)


def _call(impl, x, weight, eps=None):
    """The attempt's output, its shape checked, and how the call was written."""
    out = impl.rms_norm(x, weight) if eps is None else impl.rms_norm(x, weight, eps=eps)
    source = impl.last_call()
    return expect_shape(out, x.shape, source), source


def _ref(ref, x, weight, eps=1e-6):
    """The reference in float64 on the same (possibly float32) values."""
    return ref.rms_norm(np.asarray(x, dtype=np.float64), np.asarray(weight, dtype=np.float64), eps=eps)


def _row(arr, idx):
    """A short rendering of one row for a message."""
    return np.array2string(np.asarray(arr[idx], dtype=np.float64), precision=4, separator=", ",
                           suppress_small=True, threshold=8, edgeitems=3)


def _f32(dtype):
    return ", dtype=np.float32" if dtype == "float32" else ""


# ----------------------------------------------------------------------------- the checks

@check("returns an array of x's shape", SHAPES)
def shape(impl, new, lead, d):
    x = new.normal("x", (*lead, d))
    _call(impl, x, _weight(new, d))


@check("agrees with the reference", with_dtypes(SHAPES))
def agrees(impl, new, ref, lead, d, dtype):
    x = new.normal("x", (*lead, d), scale=2.0, dtype=dtype)
    weight = _weight(new, d, dtype)
    out, source = _call(impl, x, weight)
    expect_close(out, _ref(ref, x, weight), source, dtype)


@check("each row has RMS 1 when weight is all ones (up to what eps takes off)", [
    {"lead": (5,), "d": 6, "scale": 1.0, "seed": 0},
    {"lead": (2, 3), "d": 7, "scale": 0.05, "seed": 1},
    {"lead": (), "d": 9, "scale": 30.0, "seed": 2},
    {"lead": (4,), "d": 3, "scale": 1.0, "seed": 3, "dtype": "float32"},
], minimum={"d": 2})
def unit_rms(impl, new, lead, d, scale, dtype="float64"):
    x = new.normal("x", (*lead, d), scale=scale, dtype=dtype)
    ones = new.let("ones", np.ones(d, dtype=dtype), f"np.ones({d}{_f32(dtype)})")
    ms = np.mean(x.astype(np.float64) ** 2, axis=-1)
    out, source = _call(impl, x, ones)
    expect_finite(out, source)
    rms = np.sqrt(np.mean(np.asarray(out, dtype=np.float64) ** 2, axis=-1))
    # eps shrinks the RMS to sqrt(ms / (ms + eps)), at least 1 - eps / (2 ms)
    allowed = 1e-6 / (2 * ms) + tolerance(dtype)[0]
    bad = np.abs(rms - 1.0) > allowed
    if np.any(bad):
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        where = f"row {list(idx)}" if idx else "the output"
        raise CheckFailed(f"{where} of {source} has RMS {float(rms[idx]):.6g} over its d={d} features, not 1 "
                          f"(the RMS of x there is {float(np.sqrt(ms[idx])):.6g})")


@check("with eps = 0, rescaling x by a positive number changes nothing", [
    {"lead": (3,), "d": 5, "factor": 7.5, "seed": 0},
    {"lead": (2, 2), "d": 4, "factor": 1e-3, "seed": 1},
    {"lead": (), "d": 6, "factor": 1e6, "seed": 2},
])
def scale_invariance(impl, new, lead, d, factor):
    x = new.normal("x", (*lead, d))
    scaled = new.let("scaled", x * factor, f"x * {factor!r}")
    weight = _weight(new, d)
    a, source = _call(impl, x, weight, eps=0.0)
    b, source_scaled = _call(impl, scaled, weight, eps=0.0)
    expect_finite(a, source)
    expect_finite(b, source_scaled)
    expect_close(b, a, f"{source_scaled} (scaled = x * {factor:g})", against=source)


@check("each row is normalised on its own (the mean is over the last axis only)", [
    {"lead": (4,), "d": 5, "seed": 0},
    {"lead": (2, 3), "d": 4, "seed": 1},
    {"lead": (3, 2), "d": 6, "seed": 2},
])
def rows_independent(impl, new, lead, d):
    x = new.normal("x", (*lead, d))
    first = (0,) * len(lead)
    bump = np.ones(lead)
    bump[first] = 100.0
    bump = new.array("bump", bump)                  # 100 for the first row, 1 elsewhere
    bumped = new.let("bumped", x * bump[..., None], "x * bump[..., None]")
    weight = _weight(new, d)
    a, source = _call(impl, x, weight)
    b, source_bumped = _call(impl, bumped, weight)
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    others = np.ones(lead, dtype=bool)
    others[first] = False
    changed = others & ~np.all(np.isclose(a, b, rtol=1e-6, atol=1e-9), axis=-1)
    if np.any(changed):
        row = [int(i) for i in np.argwhere(changed)[0]]
        raise CheckFailed(
            f"multiplying row {list(first)} of x by 100 changed row {row} of the output from {_row(a, tuple(row))} "
            f"({source}) to {_row(b, tuple(row))} ({source_bumped}): each vector of d={d} features is normalised "
            f"on its own")


@check("a constant vector comes out as weight times the sign of its constant", [
    {"d": 4, "seed": 0},
    {"d": 7, "seed": 1},
    {"d": 5, "seed": 2, "dtype": "float32"},
], minimum={"d": 2})
def constant_rows(impl, new, ref, d, dtype="float64"):
    levels = [3.0, 0.5, -2.0]
    x = new.let("x", np.array([[c] * d for c in levels], dtype=dtype),
                f"np.array([[c] * {d} for c in {levels}]{_f32(dtype)})")
    weight = _weight(new, d, dtype)
    expected = _ref(ref, x, weight)                          # +-weight, to within eps
    out, source = _call(impl, x, weight)
    out = np.asarray(out, dtype=np.float64)
    for r, c in enumerate(levels):
        if not np.allclose(out[r], expected[r], *tolerance(dtype), equal_nan=True):
            raise CheckFailed(
                f"the constant row x[{r}] = {_row(x, r)} gives {_row(out, r)} in {source}, expected "
                f"{'' if c > 0 else '-'}weight = {_row(expected, r)} (off by up to "
                f"{float(np.nanmax(np.abs(out[r] - expected[r]))):.3g})")


@check("weight scales each feature by its own value", [
    {"lead": (6,), "d": 5, "seed": 0},
    {"lead": (2, 3), "d": 8, "seed": 1},
    {"lead": (), "d": 3, "seed": 2},
    {"lead": (5,), "d": 4, "seed": 3, "dtype": "float32"},
], minimum={"d": 2})
def weight_per_feature(impl, new, lead, d, dtype="float64"):
    x = new.normal("x", (*lead, d), dtype=dtype)
    weight = _weight(new, d, dtype)
    x64 = x.astype(np.float64)
    unit = x64 / np.sqrt(np.mean(x64 ** 2, axis=-1, keepdims=True) + 1e-6)   # the normalised x, weight 1
    out, source = _call(impl, x, weight)
    out = np.asarray(out, dtype=np.float64)
    rtol, atol = tolerance(dtype)
    w = weight.astype(np.float64)
    for j in range(d):
        col, base = out[..., j].ravel(), unit[..., j].ravel()
        if not np.allclose(col, base * w[j], rtol=rtol, atol=atol, equal_nan=True):
            denom = float(base @ base)
            seen = float(col @ base) / denom if denom > 0 and np.all(np.isfinite(col)) else float("nan")
            fits = np.allclose(col, base * seen, rtol=rtol, atol=atol)
            how = f"scaled by {seen:.6g}" if fits else f"not a fixed multiple of the normalised x (about {seen:.4g}x)"
            raise CheckFailed(f"feature {j} of {source} is {how}; expected weight[{j}] = {w[j]:.6g} times "
                              f"x / rms(x)")


@check("tiny and huge inputs (1e-20 to 1e15, and a row of zeros) give finite values that agree", [
    {"lead": (3,), "d": 6, "scale": 1e-20, "seed": 0},
    {"lead": (2,), "d": 5, "scale": 1e-10, "seed": 1},
    {"lead": (2, 2), "d": 4, "scale": 1e8, "seed": 2},
    {"lead": (3,), "d": 7, "scale": 1e15, "seed": 3},
])
def extremes(impl, new, ref, lead, d, scale):
    raw = new.normal("raw", (*lead, d), scale=scale)
    zeros = np.zeros((*lead[:-1], 1, d))
    x = new.let("x", np.concatenate([zeros, raw], axis=-2),
                f"np.concatenate([np.zeros({zeros.shape}), raw], axis=-2)  # row 0 is all zeros")
    weight = _weight(new, d)
    out, source = _call(impl, x, weight)
    what = f"{source}, with x of magnitude {scale:g} and a row of zeros,"
    expect_finite(out, what)
    expect_close(out, _ref(ref, x, weight), what)


@check("eps goes inside the square root (checked with eps = 1 and 0.25 on small x)", [
    {"lead": (4,), "d": 5, "eps": 1.0, "seed": 0},
    {"lead": (2, 2), "d": 3, "eps": 0.25, "seed": 1},
    {"lead": (), "d": 6, "eps": 1.0, "seed": 2, "dtype": "float32"},
], minimum={"d": 2})
def eps_inside(impl, new, ref, lead, d, eps, dtype="float64"):
    x = new.normal("x", (*lead, d), scale=0.3, dtype=dtype)
    weight = _weight(new, d, dtype)
    out, source = _call(impl, x, weight, eps=eps)
    x64, w64 = x.astype(np.float64), weight.astype(np.float64)
    # eps outside the root gives another answer here (eps is not small next to the RMS), so a
    # match tells that formula apart from the right one
    outside = x64 / (np.sqrt(np.mean(x64 ** 2, axis=-1, keepdims=True)) + eps) * w64
    hint = ("that is x / (sqrt(mean(x**2)) + eps) * weight, with eps outside the root"
            if np.allclose(np.asarray(out, dtype=np.float64), outside, *tolerance(dtype)) else None)
    expect_close(out, _ref(ref, x, weight, eps=eps), source, dtype, hint=hint)


@check("leaves x and weight unchanged", [
    {"lead": (3,), "d": 5},
    {"lead": (), "d": 4, "dtype": "float32"},
    {"lead": (2, 2), "d": 3},
])
def inputs_unchanged(impl, new, lead, d, dtype="float64"):
    x = new.normal("x", (*lead, d), dtype=dtype)
    weight = _weight(new, d, dtype)
    impl.rms_norm(x, weight)
    impl.rms_norm(x, weight, eps=0.0)
    expect_inputs_unchanged(impl)
