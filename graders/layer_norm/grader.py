"""Grader for layer_norm(x, gamma, beta, eps=1e-5): LayerNorm over the last axis, then a per-feature affine.

Inputs are rows (..., d) drawn per case; gamma and beta differ from feature to feature, so a
swapped pair or a wrong axis changes values instead of hiding. Every result is copied as soon
as it is returned, so a later call cannot change what an earlier check compares.
"""
import numpy as np

from graders.engine.vocabulary import CheckFailed, check, expect_close, expect_inputs_unchanged, expect_shape, tolerance

SHAPES = [
    {"lead": (), "d": 5, "seed": 0},
    {"lead": (4,), "d": 6, "seed": 1},
    {"lead": (2, 3), "d": 7, "seed": 2},
    {"lead": (2, 1, 3), "d": 4, "seed": 3},
    {"lead": (3,), "d": 1, "seed": 4},
    {"lead": (1,), "d": 9, "seed": 5},
]
DTYPES = [dict(c, dtype=d) for c in SHAPES for d in ("float64", "float32")]


# ----------------------------------------------------------------------------- helpers

def _affine(new, d, dtype="float64"):
    """gamma and beta: a distinct value per feature, negative ones included."""
    return new.normal("gamma", (d,), dtype=dtype), new.normal("beta", (d,), dtype=dtype)


def _identity(new, d, dtype="float64"):
    """gamma = 1 and beta = 0, so the output is the normalised x itself."""
    suffix = ", dtype=np.float32" if dtype == "float32" else ""
    return (new.let("gamma", np.ones(d, dtype=dtype), f"np.ones({d}{suffix})"),
            new.let("beta", np.zeros(d, dtype=dtype), f"np.zeros({d}{suffix})"))


def _call(impl, x, gamma, beta, eps=None, what=None):
    """The attempt's output, shape checked, as a float64 copy (safe from later calls)."""
    out = impl.layer_norm(x, gamma, beta) if eps is None else impl.layer_norm(x, gamma, beta, eps=eps)
    what = what or "layer_norm(x, gamma, beta" + ("" if eps is None else f", eps={eps!r}") + ")"
    return np.array(expect_shape(out, x.shape, what), dtype=np.float64), what


def _ref(ref, x, gamma, beta, eps=1e-5):
    """The reference in float64 on the same (possibly float32) values."""
    return ref.layer_norm(*(np.asarray(a, dtype=np.float64) for a in (x, gamma, beta)), eps=eps)


def _close(a, b, dtype="float64"):
    return np.allclose(a, b, *tolerance(dtype), equal_nan=True)


def _sci(v):
    """1e6 rather than 1e+06."""
    return f"{v:g}".replace("e+0", "e").replace("e+", "e")


def _row(arr, idx):
    """A short rendering of one row for a message."""
    return np.array2string(np.asarray(arr[idx], dtype=np.float64), precision=4, separator=", ",
                           suppress_small=True, threshold=8, edgeitems=3)


def _manual(x, gamma, beta, eps, eps_outside=False):
    """LayerNorm written out in float64, or with eps outside the root, as the checks tell them apart."""
    x = np.asarray(x, dtype=np.float64)
    c = x - x.mean(axis=-1, keepdims=True)
    var = (c * c).mean(axis=-1, keepdims=True)
    scale = np.sqrt(var) + eps if eps_outside else np.sqrt(var + eps)
    return c / scale * gamma + beta


# ----------------------------------------------------------------------------- the checks

@check("returns an array of x's shape, for any leading axes", SHAPES)
def shape(impl, new, lead, d):
    x = new.normal("x", (*lead, d))
    _call(impl, x, *_affine(new, d))


@check("agrees with the reference", DTYPES)
def agrees(impl, new, ref, lead, d, dtype):
    x = new.normal("x", (*lead, d), scale=2.0, dtype=dtype)
    gamma, beta = _affine(new, d, dtype)
    out, what = _call(impl, x, gamma, beta)
    expect_close(out, _ref(ref, x, gamma, beta), what, dtype)


@check("with gamma 1, beta 0 and eps 0, each vector comes out with mean 0 and variance 1 (dividing by d)", [
    {"n": 5, "d": 3, "seed": 0},
    {"n": 2, "d": 8, "seed": 1},
    {"n": 3, "d": 5, "seed": 2, "dtype": "float32"},
    {"n": 4, "d": 6, "seed": 3},
], minimum={"n": 2, "d": 3}, valid=lambda c: c["n"] not in (c["d"] - 1, c["d"]))
def unit_variance(impl, new, n, d, dtype="float64"):
    # d is never 2 (so d - 1 = 1 cannot pass for a sum) and n is never d - 1 or d
    x = new.normal("x", (n, d), scale=3.0, dtype=dtype)
    out, what = _call(impl, x, *_identity(new, d, dtype), eps=0.0)
    rtol = 10 * tolerance(dtype)[0]
    mean, var = out.mean(axis=-1), out.var(axis=-1)
    for r in range(n):
        if not abs(mean[r]) <= rtol:
            x64 = x.astype(np.float64)
            rms = x64 / np.sqrt(np.mean(x64 ** 2, axis=-1, keepdims=True))
            why = (": it is x divided by its root mean square, so the mean was never subtracted (that is "
                   "RMSNorm)" if _close(out, rms, dtype) else "")
            raise CheckFailed(f"row {r} of {what} has mean {mean[r]:.6g}, not 0{why}")
        if not abs(var[r] - 1) <= rtol:
            why = (f": {d - 1}/{d} is what dividing the variance by d - 1 gives (the unbiased variance, "
                   f"ddof=1); LayerNorm divides by d, the biased variance" if np.isclose(var[r], (d - 1) / d, rtol=rtol)
                   else "")
            raise CheckFailed(f"row {r} of {what} has variance {var[r]:.6g} (the mean of its squares, over "
                              f"d={d}), not 1{why}")


@check("vectors with a large common offset (1e6, spread 1, float64) are normalised like the spread alone", [
    {"n": 4, "d": 6, "offset": 1e6, "seed": 0},
    {"n": 3, "d": 16, "offset": -1e6, "seed": 1},
    {"n": 5, "d": 5, "offset": 3e6, "seed": 2},
], minimum={"d": 3})
def large_offset(impl, new, n, d, offset):
    # compared with the attempt's own answer on the spread alone: a wrong formula fails `agrees`, not this
    z = new.normal("z", (n, d))
    x = new.let("x", z + offset, f"z + {offset!r}")
    gamma, beta = _identity(new, d)
    out, what = _call(impl, x, gamma, beta)
    alone, what_z = _call(impl, z, gamma, beta, what="layer_norm(z, gamma, beta)")
    try:
        expect_close(out, alone, f"{what} with x = z + {_sci(offset)}", against=what_z)
    except CheckFailed as failure:
        r = int(np.argmax(~np.all(np.isclose(out, alone, rtol=1e-6, atol=1e-9), axis=-1)))
        factor = float(out[r] @ alone[r] / (alone[r] @ alone[r]))
        scaled = all(np.all(np.isnan(out[i])) or _close(out[i], alone[i] * (out[i] @ alone[i])
                                                        / (alone[i] @ alone[i])) for i in range(n))
        if not scaled:
            raise
        raise CheckFailed(
            f"{failure.message}: each row is the one without the offset times a factor ({factor:.6g} for row "
            f"{r}{', NaN for some' if np.isnan(out).any() else ''}), so only the variance is wrong: "
            f"mean(x**2) - mean(x)**2 subtracts two numbers near {_sci(float(f'{offset ** 2:.0e}'))} that agree "
            f"in all but their last digits", kind=failure.kind, bug="one_pass_variance") from None


@check("with eps = 0, adding a constant to a vector or scaling it by a positive number changes nothing", [
    {"n": 3, "d": 5, "shift": 40.0, "factor": 1.0, "seed": 0},
    {"n": 2, "d": 4, "shift": 0.0, "factor": 1e-3, "seed": 1},
    {"n": 4, "d": 6, "shift": -7.5, "factor": 250.0, "seed": 2},
    {"n": 1, "d": 3, "shift": 0.0, "factor": 1e4, "seed": 3},
], minimum={"d": 2})
def shift_scale_invariance(impl, new, n, d, shift, factor):
    x = new.normal("x", (n, d))
    moved = new.let("moved", x * factor + shift * np.arange(1, n + 1)[:, None],
                    f"x * {factor!r} + {shift!r} * np.arange(1, {n + 1})[:, None]  # each row its own shift")
    gamma, beta = _affine(new, d)
    a, what_a = _call(impl, x, gamma, beta, eps=0.0)
    expect_inputs_unchanged(impl)  # else the second call would not see the first call's x
    b, what_b = _call(impl, moved, gamma, beta, eps=0.0, what="layer_norm(moved, gamma, beta, eps=0.0)")
    ok = np.isclose(b, a, rtol=1e-6, atol=1e-9)
    if not np.all(ok):
        idx = tuple(int(i) for i in np.argwhere(~ok)[0])
        raise CheckFailed(f"{what_b} differs from {what_a} at index {list(idx)}: {b[idx]:.6g} against {a[idx]:.6g}, "
                          f"with moved = x * {factor:g} + a constant per row; centring must cancel the shift "
                          f"and dividing by the standard deviation the scale")


@check("eps goes inside the square root (checked with eps = 1 on small x)", [
    {"n": 4, "d": 5, "eps": 1.0, "seed": 0},
    {"n": 2, "d": 3, "eps": 0.25, "seed": 1},
    {"n": 1, "d": 6, "eps": 1.0, "seed": 2, "dtype": "float32"},
], minimum={"d": 2})
def eps_inside(impl, new, ref, n, d, eps, dtype="float64"):
    x = new.normal("x", (n, d), scale=0.3, dtype=dtype)
    gamma, beta = _affine(new, d, dtype)
    out, what = _call(impl, x, gamma, beta, eps=eps)
    try:
        expect_close(out, _ref(ref, x, gamma, beta, eps=eps), what, dtype)
    except CheckFailed as failure:
        outside = _manual(x, gamma.astype(np.float64), beta.astype(np.float64), eps, eps_outside=True)
        if _close(out, outside, dtype):
            raise CheckFailed(f"{failure.message}: that is (x - mean) / (sqrt(var) + eps); eps belongs inside "
                              f"the root, (x - mean) / sqrt(var + eps)", kind="close") from None
        raise


@check("a constant vector (zeros included) comes out as beta", [
    {"d": 4, "seed": 0},
    {"d": 7, "seed": 1},
    {"d": 5, "seed": 2, "dtype": "float32"},
], minimum={"d": 2})
def constant_rows(impl, new, ref, d, dtype="float64"):
    levels = [0.0, 3.0, -2.5, 1e6]
    suffix = ", dtype=np.float32" if dtype == "float32" else ""
    x = new.let("x", np.array([[c] * d for c in levels], dtype=dtype),
                f"np.array([[c] * {d} for c in {levels}]{suffix})")
    gamma, beta = _affine(new, d, dtype)
    out, what = _call(impl, x, gamma, beta)
    expected = _ref(ref, x, gamma, beta)
    for r, c in enumerate(levels):
        if not _close(out[r], expected[r], dtype):
            why = (": the variance of a constant vector is 0, and 0 / 0 is NaN unless eps is added under the root"
                   if np.any(np.isnan(out[r])) else "")
            raise CheckFailed(f"the constant row x[{r}] = {_row(x, r)} gives {_row(out, r)}, expected beta = "
                              f"{_row(expected, r)}{why}")


@check("each vector is normalised on its own (mean and variance over the last axis only)", [
    {"lead": (4,), "d": 5, "seed": 0},
    {"lead": (2, 3), "d": 4, "seed": 1},
    {"lead": (3, 2), "d": 6, "seed": 2},
])
def rows_independent(impl, new, lead, d):
    x = new.normal("x", (*lead, d))
    first = (0,) * len(lead)
    bumped = x.copy()
    bumped[first] = bumped[first] * 100.0 + 50.0
    bumped = new.let("bumped", bumped, f"x.copy(); bumped[{first}] = x[{first}] * 100.0 + 50.0")
    gamma, beta = _affine(new, d)
    a, what = _call(impl, x, gamma, beta)
    expect_inputs_unchanged(impl)
    b, _ = _call(impl, bumped, gamma, beta, what="layer_norm(bumped, gamma, beta)")
    others = np.ones(lead, dtype=bool)
    others[first] = False
    changed = others & ~np.all(np.isclose(a, b, rtol=1e-6, atol=1e-9), axis=-1)
    if np.any(changed):
        row = tuple(int(i) for i in np.argwhere(changed)[0])
        raise CheckFailed(f"changing row {list(first)} of x (times 100, plus 50) changed row {list(row)} of "
                          f"{what} from {_row(a, row)} to {_row(b, row)}: the mean and variance must be taken "
                          f"over the last axis only (the d={d} features of each vector), with keepdims=True")


@check("gamma scales and beta shifts each feature by its own value, after normalising", [
    {"lead": (6,), "d": 5, "seed": 0},
    {"lead": (2, 3), "d": 8, "seed": 1},
    {"lead": (), "d": 3, "seed": 2},
    {"lead": (5,), "d": 4, "seed": 3, "dtype": "float32"},
], minimum={"d": 2})
def gamma_beta(impl, new, lead, d, dtype="float64"):
    x = new.normal("x", (*lead, d), dtype=dtype)
    gamma, beta = _affine(new, d, dtype)
    out, what = _call(impl, x, gamma, beta)
    g, b = gamma.astype(np.float64), beta.astype(np.float64)
    unit = _manual(x, 1.0, 0.0, 1e-5)                      # the normalised x
    if _close(out, unit * g + b, dtype):
        return
    known = [(unit * b + g, "gamma and beta are swapped: the output is x_hat * beta + gamma"),
             ((unit + b) * g, "beta is added before gamma multiplies: (x_hat + beta) * gamma"),
             (_manual(x.astype(np.float64) * g + b, 1.0, 0.0, 1e-5),
              "gamma and beta are applied before normalising, which then undoes them"),
             (unit, "gamma and beta are never applied")]
    why = next((f": {text}" for alt, text in known if _close(out, alt, dtype)), "")
    j = int(np.argmax(~np.isclose(out, unit * g + b, *tolerance(dtype)).reshape(-1, d).all(axis=0)))
    raise CheckFailed(f"feature {j} of {what} is not gamma[{j}] * x_hat + beta[{j}] (gamma[{j}] = {g[j]:.4g}, "
                      f"beta[{j}] = {b[j]:.4g}; x_hat the normalised x){why}")


@check("large sizes: thousands of vectors, thousands of features, each vector as it comes out alone", [
    {"lead": (4100,), "d": 3, "seed": 0},
    {"lead": (3,), "d": 5000, "seed": 1},
    {"lead": (2, 2050), "d": 2, "seed": 2},
], shrink=False)
def large_sizes(impl, new, lead, d):
    x = new.normal("x", (*lead, d), scale=2.0)
    gamma, beta = _affine(new, d)
    out, what = _call(impl, x, gamma, beta)
    out = out.reshape(-1, d)
    n = len(out)
    for name, rows in (("head", slice(0, 3)), ("tail", slice(n - 3, n))):
        piece = new.let(name, x.reshape(-1, d)[rows].copy(), f"x.reshape(-1, {d})[{rows.start}:{rows.stop}].copy()")
        alone, what_piece = _call(impl, piece, gamma, beta, what=f"layer_norm({name}, gamma, beta)")
        bad = ~np.all(np.isclose(out[rows], alone, rtol=1e-6, atol=1e-9), axis=-1)
        if np.any(bad):
            i = int(np.argmax(bad))
            raise CheckFailed(f"vector {rows.start + i} of the {n} in {what} (x of shape {x.shape}) is "
                              f"{_row(out, rows.start + i)}, but {_row(alone, i)} in {what_piece}: a vector "
                              f"must come out the same however many others are in the call")


@check("leaves x, gamma and beta unchanged", [
    {"lead": (3,), "d": 5},
    {"lead": (), "d": 4, "dtype": "float32"},
    {"lead": (2, 2), "d": 3},
])
def inputs_unchanged(impl, new, lead, d, dtype="float64"):
    x = new.normal("x", (*lead, d), dtype=dtype)
    gamma, beta = _affine(new, d, dtype)
    impl.layer_norm(x, gamma, beta)
    impl.layer_norm(x, gamma, beta, eps=0.0)
    expect_inputs_unchanged(impl)
