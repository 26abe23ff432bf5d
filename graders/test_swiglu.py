"""Grader for swiglu(x, W_gate, W_up, W_down): the gated SiLU feed-forward block."""
import math

import numpy as np

from graders.checks import (LOG, AttemptRaised, CheckFailed, call_options, check, expect_close, expect_finite,
                            expect_inputs_unchanged, expect_shape)

# d_ff always differs from d_model: with square weights, `x @ W.T` (weights read as (out, in))
# has the right shape and hides the mistake.
SHAPES = [
    {"lead": (), "d_model": 4, "d_ff": 7, "seed": 0},
    {"lead": (1,), "d_model": 1, "d_ff": 2, "seed": 1},
    {"lead": (5,), "d_model": 3, "d_ff": 8, "seed": 2},
    {"lead": (2, 3), "d_model": 6, "d_ff": 5, "seed": 3},
    {"lead": (1, 4), "d_model": 5, "d_ff": 11, "seed": 4},
    {"lead": (3, 1, 2), "d_model": 2, "d_ff": 3, "seed": 5},
]
DTYPES = [dict(c, dtype=d) for c in SHAPES for d in ("float64", "float32")]
CALL = "swiglu(x, W_gate, W_up, W_down)"
SHAPE = "returns an array of shape (..., d_model)"
AGREES = "agrees with the reference"
GATE = "only the gate x @ W_gate goes through SiLU: the output is linear in W_up"
ACTIVATION = "the activation is SiLU, z * sigmoid(z) (not sigmoid, ReLU or GELU)"
HUGE = "no NaN and no overflow warning when |x @ W_gate| reaches 1e4"
LEADING = "works for any leading axes: (d_model,), (T, d_model), (B, T, d_model)"
UNCHANGED = "leaves its inputs unchanged"


def distinct(case):
    return case["d_ff"] != case["d_model"]


def block(new, lead, d_model, d_ff, dtype="float64", scale=2.0, x_name="x"):
    """x (*lead, d_model) and the three weights, scaled so that x @ W has entries of about `scale`."""
    x = new.normal(x_name, (*lead, d_model), scale=scale, dtype=dtype)
    W_gate = new.normal("W_gate", (d_model, d_ff), scale=d_model ** -0.5, dtype=dtype)
    W_up = new.normal("W_up", (d_model, d_ff), scale=d_model ** -0.5, dtype=dtype)
    W_down = new.normal("W_down", (d_ff, d_model), scale=d_ff ** -0.5, dtype=dtype)
    return x, W_gate, W_up, W_down


def f64(*arrays):
    return [np.asarray(a, dtype=np.float64) for a in arrays]


def run(impl, x, W_gate, W_up, W_down):
    """The attempt's output; a shape error from a transposed weight gets a line that says so."""
    try:
        return impl.swiglu(x, W_gate, W_up, W_down)
    except AttemptRaised as exc:
        text = str(exc.original)
        if exc.original.is_a(ValueError) and any(
                s in text for s in ("mismatch", "not aligned", "does not match", "broadcast")):
            raise AttemptRaised(
                f"{exc.message}; the weights are stored (in, out): W_gate and W_up are (d_model, d_ff) = "
                f"{tuple(W_gate.shape)} and W_down is (d_ff, d_model) = {tuple(W_down.shape)}, so "
                f"x @ W_gate needs no transpose", exc.original) from None
        raise


def expect_output(out, lead, d_model, d_ff, what=CALL):
    """The output has shape (*lead, d_model); (…, d_ff) means W_down was never applied."""
    arr = np.asarray(out) if isinstance(out, np.ndarray) else out
    if isinstance(arr, np.ndarray) and arr.shape == (*lead, d_ff) and d_ff != d_model:
        raise CheckFailed(f"{what} has shape {arr.shape}, expected {(*lead, d_model)}: (..., d_ff) is the "
                          f"hidden layer, project it back to d_model with @ W_down", kind="shape")
    return expect_shape(out, (*lead, d_model), what)


@check(SHAPE, SHAPES, valid=distinct)
def test_shape(impl, new, lead, d_model, d_ff):
    args = block(new, lead, d_model, d_ff)
    expect_output(run(impl, *args), lead, d_model, d_ff)


@check(AGREES, DTYPES, valid=distinct)
def test_agrees(impl, new, ref, lead, d_model, d_ff, dtype):
    args = block(new, lead, d_model, d_ff, dtype)
    want = ref.swiglu(*f64(*args))
    out = expect_output(run(impl, *args), lead, d_model, d_ff)
    expect_close(out, want, CALL, dtype)


@check(GATE, [
    {"T": 6, "d_model": 4, "d_ff": 7, "dtype": "float64", "seed": 10},
    {"T": 3, "d_model": 5, "d_ff": 3, "dtype": "float32", "seed": 11},
    {"T": 1, "d_model": 2, "d_ff": 6, "dtype": "float64", "seed": 12},
], valid=distinct)
def test_gate_branch(impl, new, ref, T, d_model, d_ff, dtype):
    x, W_gate, W_up, W_down = block(new, (T,), d_model, d_ff, dtype)
    # -2 is a power of two: scaling W_up by it is exact, so a linear up branch scales exactly
    W_up2 = new.let("W_up2", W_up * -2, "W_up * -2")
    out = expect_output(run(impl, x, W_gate, W_up, W_down), (T,), d_model, d_ff)
    swapped = ref.swiglu(*f64(x, W_up, W_gate, W_down))
    want = ref.swiglu(*f64(x, W_gate, W_up, W_down))
    rtol, atol = (1e-4, 1e-5) if np.dtype(dtype) == np.float32 else (1e-6, 1e-9)

    def near(a, b):
        return np.allclose(np.asarray(a, dtype=np.float64), b, rtol=rtol, atol=atol)

    if near(out, swapped) and not near(out, want):
        raise CheckFailed(f"{CALL} equals (silu(x @ W_up) * (x @ W_gate)) @ W_down: the gate and up projections "
                          f"are swapped; SiLU belongs on x @ W_gate, and x @ W_up is the linear branch")
    out2 = expect_output(run(impl, x, W_gate, W_up2, W_down), (T,), d_model, d_ff, "swiglu(x, W_gate, W_up2, W_down)")
    try:
        expect_close(out2, np.asarray(out, dtype=np.float64) * -2, "swiglu(x, W_gate, -2 * W_up, W_down)", dtype)
    except CheckFailed as failure:
        raise CheckFailed(f"{failure.message.replace('differs from the reference', 'is not -2 times ' + CALL, 1)}: "
                          f"x @ W_up must enter linearly (silu(gate) * up), so scaling W_up scales the output; "
                          f"is SiLU applied to the up branch too, or to the product?", kind="linear") from None


def _sigmoid(z):
    return 0.5 * (1 + np.tanh(z / 2))


def _gelu(z):
    return 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3)))


# What the probe below returns for the usual wrong activations, and the lesson for each.
LOOKALIKES = [
    (lambda z: _sigmoid(z) * z, "sigmoid(gate) * up: a plain sigmoid; SiLU is z * sigmoid(z), not sigmoid(z)"),
    (lambda z: np.maximum(z, 0) * z, "relu(gate) * up: ReLU; SwiGLU's activation is SiLU, z * sigmoid(z)"),
    (lambda z: _gelu(z) * z, "gelu(gate) * up: GELU, the older feed-forward activation; SwiGLU's is SiLU, "
                             "z * sigmoid(z)"),
    (lambda z: (z * _sigmoid(z)) ** 2, "silu(gate) * silu(up): SiLU is applied to both branches; only the gate "
                                       "goes through it"),
    (lambda z: z * z * _sigmoid(z * z), "silu(gate * up): SiLU is applied after the product; it acts on the "
                                        "gate alone, before multiplying by up"),
]


@check(ACTIVATION, [{"dtype": "float64"}, {"dtype": "float32"}], shrink=False)
def test_activation(impl, new, dtype):
    # d_model = 1 and both projections equal to [[1, 1]]: gate = up = x, and W_down averages the
    # two (identical) hidden channels, so the block returns silu(x) * x and nothing else
    z = np.array([-6.0, -2.5, -1.0, -0.25, 0.5, 1.0, 3.0, 8.0])
    x = new.array("x", z[:, None], dtype=dtype)
    W_gate = new.array("W_gate", [[1.0, 1.0]], dtype=dtype)
    W_up = new.array("W_up", [[1.0, 1.0]], dtype=dtype)
    W_down = new.array("W_down", [[0.5], [0.5]], dtype=dtype)
    out = expect_output(run(impl, x, W_gate, W_up, W_down), (len(z),), 1, 2)
    got = out[:, 0].astype(np.float64)
    want = z * z * _sigmoid(z)
    rtol, atol = (1e-4, 1e-5) if np.dtype(dtype) == np.float32 else (1e-6, 1e-9)
    ok = np.isclose(got, want, rtol=rtol, atol=atol)
    if np.all(ok):
        return
    i = int(np.argmax(~ok))
    setup = ("with d_model = 1, W_gate = W_up = [[1, 1]] and W_down = [[0.5], [0.5]] the block must return "
             "silu(x) * x")
    told = f"{setup}; at x = {z[i]:g} it returned {got[i]:.6g}, expected {want[i]:.6g}"
    for fn, lesson in LOOKALIKES:
        if np.allclose(got, fn(z), rtol=2e-3, atol=1e-5):
            raise CheckFailed(f"{told}: that is {lesson}")
    raise CheckFailed(told)


def _where(w: dict) -> str:
    """' (line 7 of your file: `e = np.exp(-z)`)' for a warning raised in the attempt's file."""
    if not w.get("line"):
        return ""
    return f" (line {w['line']} of your file" + (f": `{w['code']}`" if w.get("code") else "") + ")"


@check(HUGE, [
    {"T": 3, "d_model": 4, "d_ff": 9, "dtype": "float64", "seed": 20},
    {"T": 3, "d_model": 4, "d_ff": 9, "dtype": "float32", "seed": 21},
    {"T": 2, "d_model": 3, "d_ff": 2, "dtype": "float32", "seed": 22},
], valid=distinct)
def test_huge(impl, new, ref, T, d_model, d_ff, dtype):
    x0, W_gate, W_up, W_down = block(new, (T,), d_model, d_ff, dtype, scale=1.0, x_name="x0")
    # rows x0 and -x0, rescaled so that the largest |x @ W_gate| is 1e4: both signs reach the extreme
    s = float(1e4 / np.max(np.abs(x0.astype(np.float64) @ W_gate.astype(np.float64))))
    x = new.let("x", np.concatenate([x0, -x0]) * s, f"np.concatenate([x0, -x0]) * {s!r}")
    want = ref.swiglu(*f64(x, W_gate, W_up, W_down))
    with call_options(warnings=True):
        out = run(impl, x, W_gate, W_up, W_down)
    caught = LOG.calls[-1].warnings
    what = f"{CALL} with |x @ W_gate| up to 1e4"
    out = expect_finite(expect_output(out, (2 * T,), d_model, d_ff, what), what)
    raised = [w for w in caught if w["category"] == "RuntimeWarning"]
    if raised:
        w = raised[0]
        raise CheckFailed(
            f"{LOG.calls[-1].source} emitted RuntimeWarning '{w['message']}'{_where(w)} "
            f"with |x @ W_gate| up to 1e4; the contract allows no overflow warning: 1 / (1 + exp(-z)) overflows "
            f"for z near -1e4, exp(-|z|) never does (and an np.where branch that is thrown away is still "
            f"computed: avoid it or wrap it in np.errstate)", kind="warning",
            # right values with a warning: no comparison of outputs can name this one
            bug="overflowing_sigmoid")
    # a float32 sum of terms near 1e8 is itself only good to a few parts in 1e7 of the largest term
    scale = float(np.max(np.abs(want)))
    expect_close(out, want, what, dtype, extreme=True,
                 atol=(1e-4 if np.dtype(dtype) == np.float32 else 1e-12) * scale)


@check(LEADING, [
    {"lead": (2, 3), "d_model": 4, "d_ff": 6, "seed": 32},
    {"lead": (), "d_model": 5, "d_ff": 3, "seed": 30},
    {"lead": (4,), "d_model": 3, "d_ff": 7, "seed": 31},
    {"lead": (1, 1), "d_model": 2, "d_ff": 5, "seed": 33},
    {"lead": (2, 1, 3), "d_model": 3, "d_ff": 4, "seed": 34},
], valid=distinct)
def test_leading_axes(impl, new, ref, lead, d_model, d_ff):
    args = block(new, lead, d_model, d_ff)
    want = ref.swiglu(*args)
    what = f"{CALL} with x of shape {(*lead, d_model)}"
    expect_close(expect_output(run(impl, *args), lead, d_model, d_ff, what), want, what)


@check(UNCHANGED, [
    {"lead": (3,), "d_model": 4, "d_ff": 6, "dtype": "float64", "seed": 40},
    {"lead": (2, 3), "d_model": 3, "d_ff": 5, "dtype": "float32", "seed": 41},
], valid=distinct)
def test_inputs_unchanged(impl, new, lead, d_model, d_ff, dtype):
    run(impl, *block(new, lead, d_model, d_ff, dtype))
    expect_inputs_unchanged()
