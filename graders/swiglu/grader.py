"""Grader for swiglu(x, W_gate, W_up, W_down): the gated SiLU feed-forward block.

Cases give the leading axes `lead`, d_model and d_ff, with d_ff != d_model: with square
weights, `x @ W.T` (weights read as (out, in)) has the right shape and hides the mistake.
Two checks use a probe that isolates the activation: x = [z, 1] with W_gate picking z and
W_up picking 1, so the block returns f(z) for its activation f and nothing else.
"""
import math

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
    {"lead": (), "d_model": 4, "d_ff": 7, "seed": 0},
    {"lead": (1,), "d_model": 1, "d_ff": 2, "seed": 1},
    {"lead": (5,), "d_model": 3, "d_ff": 8, "seed": 2},
    {"lead": (2, 3), "d_model": 6, "d_ff": 5, "seed": 3},
    {"lead": (1, 4), "d_model": 5, "d_ff": 11, "seed": 4},
    {"lead": (3, 1, 2), "d_model": 2, "d_ff": 3, "seed": 5},
]
CALL = "swiglu(x, W_gate, W_up, W_down)"
SHAPE = "returns an array of shape (..., d_model)"
AGREES = "agrees with the reference"
GATE = "only the gate x @ W_gate goes through SiLU: the output is linear in W_up"
ACTIVATION = "the activation is SiLU, z * sigmoid(z) (not sigmoid, ReLU or GELU)"
TAIL = "SiLU's far negative tail is exact (silu(-25) is about -3.5e-10, not rounded or clipped)"
HUGE = "no NaN and no overflow warning when |x @ W_gate| reaches 1e4"
LEADING = "works for any leading axes: (d_model,), (T, d_model), (B, T, d_model)"
LARGE = "4097 rows (past any buffer of 4096), each as it comes out alone"
UNCHANGED = "leaves its inputs unchanged"


def distinct(case):
    return case["d_ff"] != case["d_model"]


# ----------------------------------------------------------------------------- helpers

def block(new, lead, d_model, d_ff, dtype="float64", scale=2.0, x_name="x"):
    """x (*lead, d_model) and the three weights, scaled so that x @ W has entries of about `scale`."""
    x = new.normal(x_name, (*lead, d_model), scale=scale, dtype=dtype)
    W_gate = new.normal("W_gate", (d_model, d_ff), scale=d_model ** -0.5, dtype=dtype)
    W_up = new.normal("W_up", (d_model, d_ff), scale=d_model ** -0.5, dtype=dtype)
    W_down = new.normal("W_down", (d_ff, d_model), scale=d_ff ** -0.5, dtype=dtype)
    return x, W_gate, W_up, W_down


def f64(*arrays):
    return [np.asarray(a, dtype=np.float64) for a in arrays]


def _ref(ref, *args):
    """The reference in float64 on the same (possibly float32) values."""
    return ref.swiglu(*f64(*args))


def expect_output(out, lead, d_model, d_ff, what=CALL):
    """The output has shape (*lead, d_model)."""
    if isinstance(out, np.ndarray) and out.shape == (*lead, d_ff) and d_ff != d_model:
        raise CheckFailed(f"{what} has shape {out.shape}, the shape of the hidden layer (..., d_ff), expected "
                          f"{(*lead, d_model)}", kind="shape")
    return expect_shape(out, (*lead, d_model), what)


def _close(a, b, dtype):
    return np.allclose(np.asarray(a, dtype=np.float64), b, *tolerance(dtype))


def _sigmoid(z):
    return 0.5 * (1 + np.tanh(z / 2))


def _silu(z):
    return z * _sigmoid(z)


def _gelu(z):
    return 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3)))


def probe(new, z, dtype):
    """x = [z, 1] per row, W_gate picks z and W_up picks 1, W_down keeps the product in column 0:
    the block returns [f(z), 0] for its activation f, computed from exact inputs."""
    x = new.array("x", np.stack([z, np.ones_like(z)], axis=-1), dtype=dtype)
    W_gate = new.array("W_gate", [[1.0], [0.0]], dtype=dtype)
    W_up = new.array("W_up", [[0.0], [1.0]], dtype=dtype)
    W_down = new.array("W_down", [[1.0, 0.0]], dtype=dtype)
    return x, W_gate, W_up, W_down


SETUP = ("with x = [z, 1] per row, W_gate = [[1], [0]], W_up = [[0], [1]] and W_down = [[1, 0]], the block "
         "returns [silu(z), 0]")


# ----------------------------------------------------------------------------- the checks

@check(SHAPE, SHAPES, valid=distinct)
def shape(impl, new, lead, d_model, d_ff):
    args = block(new, lead, d_model, d_ff)
    expect_output(impl.swiglu(*args), lead, d_model, d_ff)


@check(AGREES, with_dtypes(SHAPES), valid=distinct)
def agrees(impl, new, ref, lead, d_model, d_ff, dtype):
    args = block(new, lead, d_model, d_ff, dtype)
    out = expect_output(impl.swiglu(*args), lead, d_model, d_ff)
    expect_close(out, _ref(ref, *args), CALL, dtype)


def _structures(x, W_gate, W_up, W_down, want):
    """What the usual ways of wiring the block wrongly give on these inputs, with what each is."""
    g, u = x @ W_gate, x @ W_up
    return [((_silu(u) * g) @ W_down, "(silu(x @ W_up) * (x @ W_gate)) @ W_down: the gate and up projections "
                                      "are swapped; SiLU belongs on x @ W_gate"),
            ((_silu(g) * _silu(u)) @ W_down, "(silu(x @ W_gate) * silu(x @ W_up)) @ W_down: SiLU is applied to the "
                                             "up branch too"),
            (_silu(g * u) @ W_down, "silu((x @ W_gate) * (x @ W_up)) @ W_down: SiLU is applied to the product"),
            (x + want, "x + swiglu(x): the block's input is added to its output (a residual connection the "
                       "block does not have)")]


@check(GATE, [
    {"T": 6, "d_model": 4, "d_ff": 7, "dtype": "float64", "seed": 10},
    {"T": 3, "d_model": 5, "d_ff": 3, "dtype": "float32", "seed": 11},
    {"T": 1, "d_model": 2, "d_ff": 6, "dtype": "float64", "seed": 12},
], valid=distinct)
def gate_branch(impl, new, ref, T, d_model, d_ff, dtype):
    x, W_gate, W_up, W_down = block(new, (T,), d_model, d_ff, dtype)
    # -2 is a power of two: scaling W_up by it is exact, so a linear up branch scales exactly
    W_up2 = new.let("W_up2", W_up * -2, "W_up * -2")
    out = expect_output(impl.swiglu(x, W_gate, W_up, W_down), (T,), d_model, d_ff)
    want = _ref(ref, x, W_gate, W_up, W_down)
    if not _close(out, want, dtype):
        # random weights: a result equal to one of these wirings is that wiring
        for alt, what in _structures(*f64(x, W_gate, W_up, W_down), want):
            if _close(out, alt, dtype):
                raise CheckFailed(f"{CALL} equals {what}", kind="structure")
    out2 = expect_output(impl.swiglu(x, W_gate, W_up2, W_down), (T,), d_model, d_ff,
                         "swiglu(x, W_gate, W_up2, W_down)")
    expect_close(out2, np.asarray(out, dtype=np.float64) * -2, "swiglu(x, W_gate, -2 * W_up, W_down)", dtype,
                 against=f"-2 times {CALL}", hint="x @ W_up enters the block linearly, so scaling W_up scales "
                                                  "the output")


# What the probe returns for the usual wrong activations (established: on the probe the block is
# f(z) for its activation f, and these functions differ from SiLU and from one another).
LOOKALIKES = [
    (_sigmoid, "sigmoid(z)", "a plain sigmoid; SiLU is z * sigmoid(z)"),
    (lambda z: np.maximum(z, 0), "max(z, 0)", "ReLU; SwiGLU's activation is SiLU, z * sigmoid(z)"),
    (_gelu, "gelu(z)", "the older feed-forward activation; SwiGLU's is SiLU, z * sigmoid(z)"),
    (lambda z: _silu(z) * _silu(1.0), "silu(z) * silu(1)",
     "and the up branch is 1 here: SiLU is applied to both branches; only the gate goes through it"),
]


def _expect_probe(out, z, dtype, lookalikes=()):
    """The probe's column 0 is silu(z) within the tolerance of `dtype`."""
    got = np.asarray(expect_output(out, (len(z),), 2, 1, CALL), dtype=np.float64)[:, 0]
    want = _silu(z)
    ok = np.isclose(got, want, *tolerance(dtype))
    if np.all(ok):
        return
    i = int(np.argmax(~ok))
    told = f"{SETUP}; at z = {z[i]:g} it returned {got[i]:.6g}, expected {want[i]:.6g}"
    for fn, formula, lesson in lookalikes:
        if np.allclose(got, fn(z), rtol=2e-3, atol=1e-5):
            raise CheckFailed(f"{told}: it returns {formula} for every z of this probe, {lesson}", kind="activation")
    raise CheckFailed(told, kind="activation")


@check(ACTIVATION, [{"dtype": "float64"}, {"dtype": "float32"}], shrink=False)
def activation(impl, new, dtype):
    z = np.array([-6.0, -2.5, -1.0, -0.25, 0.0, 0.5, 1.0, 3.0, 8.0])
    _expect_probe(impl.swiglu(*probe(new, z, dtype)), z, dtype, LOOKALIKES)


@check(TAIL, [{"dtype": "float64"}, {"dtype": "float32"}], shrink=False)
def negative_tail(impl, new, dtype):
    # float64 is graded to 1e-9: silu(-25) = -3.5e-10, and sigmoid clipped at -20 gives -5.2e-8;
    # float32 is graded to 1e-5: silu(-15) = -4.6e-6, and sigmoid clipped at -10 gives -6.8e-4
    z = np.array([-22.0, -25.0, -30.0] if dtype == "float64" else [-12.0, -15.0, -18.0])
    _expect_probe(impl.swiglu(*probe(new, z, dtype)), z, dtype)


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
def huge(impl, new, ref, T, d_model, d_ff, dtype):
    x0, W_gate, W_up, W_down = block(new, (T,), d_model, d_ff, dtype, scale=1.0, x_name="x0")
    # rows x0 and -x0, rescaled so that the largest |x @ W_gate| is 1e4: both signs reach the extreme
    s = float(1e4 / np.max(np.abs(x0.astype(np.float64) @ W_gate.astype(np.float64))))
    x = new.let("x", np.concatenate([x0, -x0]) * s, f"np.concatenate([x0, -x0]) * {s!r}")
    want = _ref(ref, x, W_gate, W_up, W_down)
    with impl.options(warnings=True):
        out = impl.swiglu(x, W_gate, W_up, W_down)
    call = impl.grading.calls[-1]
    what = f"{CALL} with |x @ W_gate| up to 1e4"
    out = expect_finite(expect_output(out, (2 * T,), d_model, d_ff, what), what)
    raised = [w for w in call.warnings if w["category"] == "RuntimeWarning"]
    if raised:
        w = raised[0]
        overflow = "overflow" in w["message"]
        raise CheckFailed(
            f"{call.source} emitted RuntimeWarning '{w['message']}'{_where(w)} with |x @ W_gate| up to 1e4; the "
            f"contract allows no such warning (a branch of np.where that is thrown away is still computed)",
            kind="warning",
            # right values with an overflow warning: no comparison of outputs can name this one
            bug="overflowing_sigmoid" if overflow else None)
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
def leading_axes(impl, new, lead, d_model, d_ff):
    # compared with the attempt's own answer on the same positions as one matrix, then one alone:
    # a wrong formula fails `agrees`, not this
    x, W_gate, W_up, W_down = block(new, lead, d_model, d_ff)
    what = f"{CALL} with x of shape {(*lead, d_model)}"
    out = expect_output(impl.swiglu(x, W_gate, W_up, W_down), lead, d_model, d_ff, what)
    rows = new.let("rows", x.reshape(-1, d_model), f"x.reshape(-1, {d_model})")
    flat = expect_output(impl.swiglu(rows, W_gate, W_up, W_down), (len(rows),), d_model, d_ff)
    expect_close(out.reshape(-1, d_model), flat, f"{what}, its positions in a row", against=impl.last_call())
    first = new.let("x0", rows[0], "rows[0]")
    alone = expect_output(impl.swiglu(first, W_gate, W_up, W_down), (), d_model, d_ff)
    expect_close(flat[0], alone, "position 0 of swiglu(rows, W_gate, W_up, W_down)", against=impl.last_call())


@check(LARGE, [{"rows": 4097, "d_model": 3, "d_ff": 5, "seed": 50}], shrink=False)
def large_sizes(impl, new, rows, d_model, d_ff):
    x, W_gate, W_up, W_down = block(new, (rows,), d_model, d_ff)
    what = f"{CALL} with x of shape {(rows, d_model)}"
    out = expect_output(impl.swiglu(x, W_gate, W_up, W_down), (rows,), d_model, d_ff, what)
    # the first rows and the last ones (past 4096), each compared with the same rows alone
    for lo, hi in ((0, 3), (rows - 3, rows)):
        part = new.let(f"x_{lo}", x[lo:hi], f"x[{lo}:{hi}]")
        alone = expect_output(impl.swiglu(part, W_gate, W_up, W_down), (hi - lo,), d_model, d_ff)
        expect_close(out[lo:hi], alone, f"rows {lo} to {hi - 1} of {what}",
                     against=f"{impl.last_call()} (the same rows alone)")


@check(UNCHANGED, [
    {"lead": (3,), "d_model": 4, "d_ff": 6, "dtype": "float64", "seed": 40},
    {"lead": (2, 3), "d_model": 3, "d_ff": 5, "dtype": "float32", "seed": 41},
], valid=distinct)
def inputs_unchanged(impl, new, lead, d_model, d_ff, dtype):
    impl.swiglu(*block(new, lead, d_model, d_ff, dtype))
    expect_inputs_unchanged(impl)
