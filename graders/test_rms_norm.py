"""Grader for rms_norm(x, weight, eps=1e-6): RMSNorm over the last axis, then a per-feature scale."""
import numpy as np

from graders.checks import (CheckFailed, check, expect_close, expect_finite, expect_inputs_unchanged,
                            expect_shape)

SHAPES = [
    {"lead": (), "d": 5, "seed": 0},
    {"lead": (4,), "d": 6, "seed": 1},
    {"lead": (2, 3), "d": 7, "seed": 2},
    {"lead": (2, 1, 3), "d": 4, "seed": 3},
    {"lead": (3,), "d": 1, "seed": 4},
    {"lead": (1,), "d": 8, "seed": 5},
]
DTYPES = [dict(c, dtype=d) for c in SHAPES for d in ("float64", "float32")]
TOL = {"float64": (1e-6, 1e-9), "float32": (1e-4, 1e-5)}


def _weight(new, d, dtype="float64"):
    """A learned scale with a distinct value per feature (some below 1, one negative)."""
    w = np.linspace(0.5, 2.0, d) + 0.1 * new.rng.standard_normal(d)
    if d >= 3:
        w[1] = -0.75
    return new.array("weight", w.astype(dtype), dtype=dtype)


def _row(arr, idx):
    """A short rendering of one row for a message."""
    return np.array2string(np.asarray(arr[idx], dtype=np.float64), precision=4, separator=", ",
                           suppress_small=True, threshold=8, edgeitems=3)


@check("returns an array of x's shape", SHAPES)
def test_shape(impl, new, lead, d):
    x = new.normal("x", (*lead, d))
    weight = _weight(new, d)
    expect_shape(impl.rms_norm(x, weight), (*lead, d), "rms_norm(x, weight)")


@check("agrees with the reference", DTYPES)
def test_agrees(impl, new, ref, lead, d, dtype):
    x = new.normal("x", (*lead, d), scale=2.0, dtype=dtype)
    weight = _weight(new, d, dtype)
    expected = ref.rms_norm(x.astype(np.float64), weight.astype(np.float64))
    expect_close(impl.rms_norm(x, weight), expected, "rms_norm(x, weight)", dtype)


@check("each row has RMS 1 when weight is all ones (up to what eps takes off)", [
    {"lead": (5,), "d": 6, "scale": 1.0, "seed": 0},
    {"lead": (2, 3), "d": 7, "scale": 0.05, "seed": 1},
    {"lead": (), "d": 9, "scale": 30.0, "seed": 2},
    {"lead": (4,), "d": 3, "scale": 1.0, "seed": 3, "dtype": "float32"},
], minimum={"d": 2})
def test_unit_rms(impl, new, lead, d, scale, dtype="float64"):
    x = new.normal("x", (*lead, d), scale=scale, dtype=dtype)
    ones = new.let("ones", np.ones(d, dtype=dtype), f"np.ones({d}{', dtype=np.float32' if dtype == 'float32' else ''})")
    ms = np.mean(x.astype(np.float64) ** 2, axis=-1)
    out = expect_finite(expect_shape(impl.rms_norm(x, ones), x.shape, "rms_norm(x, ones)"), "rms_norm(x, ones)")
    rms = np.sqrt(np.mean(np.asarray(out, dtype=np.float64) ** 2, axis=-1))
    # eps shrinks the RMS to sqrt(ms / (ms + eps)), at least 1 - eps / (2 ms)
    allowed = 1e-6 / (2 * ms) + TOL[dtype][0]
    bad = np.abs(rms - 1.0) > allowed
    if np.any(bad):
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        where = f"row {list(idx)}" if idx else "the output"
        r = float(rms[idx])
        if np.isclose(r, 1 / np.sqrt(d), rtol=1e-3):
            why = f": 1/sqrt(d) for d={d}, so x was divided by its L2 norm, not its root MEAN square"
        elif np.isclose(r, np.sqrt(d), rtol=1e-3):
            why = f": sqrt(d) for d={d}, so the divisor is sqrt(d) times too small (a norm divided by d?)"
        else:
            why = ": x / sqrt(mean(x**2) + eps) has root mean square 1 along the last axis"
        raise CheckFailed(f"{where} of rms_norm(x, ones({d})) has RMS {r:.6g}, not 1{why}")


@check("with eps = 0, rescaling x by a positive number changes nothing", [
    {"lead": (3,), "d": 5, "factor": 7.5, "seed": 0},
    {"lead": (2, 2), "d": 4, "factor": 1e-3, "seed": 1},
    {"lead": (), "d": 6, "factor": 1e6, "seed": 2},
])
def test_scale_invariance(impl, new, lead, d, factor):
    x = new.normal("x", (*lead, d))
    scaled = new.let("scaled", x * factor, f"x * {factor!r}")
    weight = _weight(new, d)
    a = expect_finite(expect_shape(impl.rms_norm(x, weight, eps=0.0), x.shape, "rms_norm(x, weight, eps=0.0)"),
                      "rms_norm(x, weight, eps=0.0)")
    b = expect_finite(expect_shape(impl.rms_norm(scaled, weight, eps=0.0), x.shape,
                                   f"rms_norm(x * {factor!r}, weight, eps=0.0)"),
                      f"rms_norm(x * {factor!r}, weight, eps=0.0)")
    try:
        expect_close(b, a, "", np.float64)
    except CheckFailed as failure:
        detail = failure.message.split("differs from the reference ", 1)[-1]
        raise CheckFailed(f"rms_norm(x * {factor!r}, weight, eps=0.0) differs from rms_norm(x, weight, eps=0.0) "
                          f"{detail}: dividing by the RMS must cancel any positive scale") from None


@check("each row is normalised on its own (the mean is over the last axis only)", [
    {"lead": (4,), "d": 5, "seed": 0},
    {"lead": (2, 3), "d": 4, "seed": 1},
    {"lead": (3, 2), "d": 6, "seed": 2},
])
def test_rows_independent(impl, new, lead, d):
    x = new.normal("x", (*lead, d))
    first = (0,) * len(lead)
    bump = np.ones(lead)
    bump[first] = 100.0
    bump = new.array("bump", bump)                  # 100 for the first row, 1 elsewhere
    bumped = new.let("bumped", x * bump[..., None], "x * bump[..., None]")
    weight = _weight(new, d)
    a = np.asarray(expect_shape(impl.rms_norm(x, weight), x.shape, "rms_norm(x, weight)"), dtype=np.float64)
    b = np.asarray(expect_shape(impl.rms_norm(bumped, weight), x.shape, "rms_norm(bumped, weight)"),
                   dtype=np.float64)
    others = np.ones(lead, dtype=bool)
    others[first] = False
    changed = others & ~np.all(np.isclose(a, b, rtol=1e-6, atol=1e-9), axis=-1)
    if np.any(changed):
        row = [int(i) for i in np.argwhere(changed)[0]]
        raise CheckFailed(
            f"multiplying row {list(first)} of x by 100 changed row {row} of rms_norm(x, weight) from "
            f"{_row(a, tuple(row))} to {_row(b, tuple(row))}: the mean of squares must be taken over the last "
            f"axis only (the features of each vector, d={d}), with keepdims=True")


@check("does not subtract the mean: a constant row comes out as the weight", [
    {"d": 4, "seed": 0},
    {"d": 7, "seed": 1},
    {"d": 5, "seed": 2, "dtype": "float32"},
], minimum={"d": 2})
def test_no_centering(impl, new, ref, d, dtype="float64"):
    levels = [3.0, 0.5, -2.0]
    x = new.let("x", np.array([[c] * d for c in levels], dtype=dtype),
                f"np.array([[c] * {d} for c in {levels}]{', dtype=np.float32' if dtype == 'float32' else ''})")
    weight = _weight(new, d, dtype)
    expected = ref.rms_norm(x.astype(np.float64), weight.astype(np.float64))    # +-weight, to within eps
    out = np.asarray(expect_shape(impl.rms_norm(x, weight), x.shape, "rms_norm(x, weight)"), dtype=np.float64)
    rtol, atol = TOL[dtype]
    for r, c in enumerate(levels):
        if not np.allclose(out[r], expected[r], rtol=rtol, atol=atol, equal_nan=True):
            got = np.abs(out[r])
            if np.all(got < 1e-3):
                why = (": subtracting the mean leaves nothing of a constant row; RMSNorm never centres x "
                       "(that is LayerNorm)")
            elif not np.all(np.isfinite(got)) or np.max(got) > 100 * np.max(np.abs(expected[r])):
                why = (": the spread around the mean (np.var, np.std) is 0 for a constant row, so only eps is "
                       "left to divide by; RMSNorm divides by sqrt(mean(x**2) + eps)")
            else:
                why = ""
            raise CheckFailed(
                f"the constant row x[{r}] = {_row(x, r)} gives {_row(out, r)}, expected "
                f"{'' if c > 0 else '-'}weight = {_row(expected, r)} (off by up to "
                f"{float(np.nanmax(np.abs(out[r] - expected[r]))):.3g}){why}")


@check("weight scales each feature by its own value", [
    {"lead": (6,), "d": 5, "seed": 0},
    {"lead": (2, 3), "d": 8, "seed": 1},
    {"lead": (), "d": 3, "seed": 2},
    {"lead": (5,), "d": 4, "seed": 3, "dtype": "float32"},
], minimum={"d": 2})
def test_weight_per_feature(impl, new, lead, d, dtype="float64"):
    x = new.normal("x", (*lead, d), dtype=dtype)
    weight = _weight(new, d, dtype)
    x64 = x.astype(np.float64)
    unit = x64 / np.sqrt(np.mean(x64 ** 2, axis=-1, keepdims=True) + 1e-6)   # the normalised x, weight 1
    out = np.asarray(expect_shape(impl.rms_norm(x, weight), x.shape, "rms_norm(x, weight)"), dtype=np.float64)
    rtol, atol = TOL[dtype]
    w = weight.astype(np.float64)
    for j in range(d):
        col, base = out[..., j].ravel(), unit[..., j].ravel()
        if not np.allclose(col, base * w[j], rtol=rtol, atol=atol, equal_nan=True):
            denom = float(base @ base)
            seen = float(col @ base) / denom if denom > 0 and np.all(np.isfinite(col)) else float("nan")
            fits = np.allclose(col, base * seen, rtol=rtol, atol=atol)
            how = f"scaled by {seen:.6g}" if fits else f"not a fixed multiple of the normalised x (about {seen:.4g}x)"
            raise CheckFailed(
                f"feature {j} of rms_norm(x, weight) is {how}; expected weight[{j}] = {w[j]:.6g} times "
                f"x / rms(x): normalise first, then multiply feature j by weight[j]")


@check("tiny and huge inputs (1e-20 to 1e15, and a row of zeros) give finite values that agree", [
    {"lead": (3,), "d": 6, "scale": 1e-20, "seed": 0},
    {"lead": (2,), "d": 5, "scale": 1e-10, "seed": 1},
    {"lead": (2, 2), "d": 4, "scale": 1e8, "seed": 2},
    {"lead": (3,), "d": 7, "scale": 1e15, "seed": 3},
])
def test_extremes(impl, new, ref, lead, d, scale):
    raw = new.normal("raw", (*lead, d), scale=scale)
    zeros = np.zeros((*lead[:-1], 1, d))
    x = new.let("x", np.concatenate([zeros, raw], axis=-2),
                f"np.concatenate([np.zeros({zeros.shape}), raw], axis=-2)  # row 0 is all zeros")
    weight = _weight(new, d)
    expected = ref.rms_norm(x, weight)
    out = expect_finite(expect_shape(impl.rms_norm(x, weight), x.shape, "rms_norm(x, weight)"),
                        f"rms_norm(x, weight) with x of magnitude {scale:g} and a row of zeros")
    expect_close(out, expected, f"rms_norm(x, weight) with x of magnitude {scale:g}", np.float64)


@check("eps goes inside the square root (checked with eps = 1 on small x)", [
    {"lead": (4,), "d": 5, "eps": 1.0, "seed": 0},
    {"lead": (2, 2), "d": 3, "eps": 0.25, "seed": 1},
    {"lead": (), "d": 6, "eps": 1.0, "seed": 2, "dtype": "float32"},
], minimum={"d": 2})
def test_eps_inside(impl, new, ref, lead, d, eps, dtype="float64"):
    x = new.normal("x", (*lead, d), scale=0.3, dtype=dtype)
    weight = _weight(new, d, dtype)
    x64, w64 = x.astype(np.float64), weight.astype(np.float64)
    expected = ref.rms_norm(x64, w64, eps=eps)
    out = impl.rms_norm(x, weight, eps=eps)
    try:
        expect_close(out, expected, f"rms_norm(x, weight, eps={eps})", dtype)
    except CheckFailed as failure:
        ms = np.mean(x64 ** 2, axis=-1, keepdims=True)
        outside = x64 / (np.sqrt(ms) + eps) * w64
        arr = np.asarray(out)
        if failure.kind == "close" and arr.shape == x.shape and np.allclose(arr, outside, *TOL[dtype]):
            raise CheckFailed(f"{failure.message}: that is x / (sqrt(mean(x**2)) + eps); eps belongs inside the "
                              f"root, x / sqrt(mean(x**2) + eps)", kind="close") from None
        raise


@check("leaves x and weight unchanged", [
    {"lead": (3,), "d": 5},
    {"lead": (), "d": 4, "dtype": "float32"},
    {"lead": (2, 2), "d": 3},
])
def test_inputs_unchanged(impl, new, lead, d, dtype="float64"):
    x = new.normal("x", (*lead, d), dtype=dtype)
    weight = _weight(new, d, dtype)
    impl.rms_norm(x, weight)
    impl.rms_norm(x, weight, eps=0.0)
    expect_inputs_unchanged()
