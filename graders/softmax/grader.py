"""Grader for softmax(z, axis=-1): the properties a stable softmax must have.

Cases give the shape and the axis, so a shrunk failing case is always a valid call. The
inputs that matter most are written out: slices far below zero, exact zeros, -inf, and
entries 20 to 60 below their slice's largest, where a clipped exponent shows.
"""
import numpy as np

from graders.engine.vocabulary import (
    CheckFailed,
    check,
    expect_close,
    expect_finite,
    expect_inputs_unchanged,
    expect_rows_sum_to_one,
    expect_shape,
    with_dtypes,
)

SHAPES = [
    {"shape": (5,), "axis": -1, "seed": 0},
    {"shape": (3, 7), "axis": -1, "seed": 1},
    {"shape": (3, 7), "axis": 0, "seed": 2},
    {"shape": (2, 1, 5), "axis": 1, "seed": 3},
    {"shape": (2, 3, 4), "axis": -2, "seed": 4},
    {"shape": (1, 1), "axis": 0, "seed": 5},
]


# ----------------------------------------------------------------------------- helpers

def _call(impl, z, axis=None):
    """The attempt's result, its shape checked, and how the call was written."""
    out = impl.softmax(z) if axis is None else impl.softmax(z, axis=axis)
    source = impl.last_call()
    return expect_shape(out, z.shape, source), source


def _ref(ref, z, axis=-1):
    """The reference in float64 on the same (possibly float32) values."""
    return ref.softmax(np.asarray(z, dtype=np.float64), axis=axis)


def _written(new, name, rows, dtype):
    """A literal (n, k) array of logits, in `dtype`, that the repro spells out."""
    return new.array(name, np.array(rows, dtype=np.float64).astype(dtype), dtype=dtype)


# ----------------------------------------------------------------------------- the checks

@check("returns an array of the input's shape", SHAPES)
def shape(impl, new, shape, axis):
    z = new.normal("z", shape)
    _call(impl, z, axis)


@check("agrees with the reference", with_dtypes(SHAPES))
def agrees(impl, new, ref, shape, axis, dtype):
    z = new.normal("z", shape, scale=3.0, dtype=dtype)
    out, source = _call(impl, z, axis)
    expect_close(out, _ref(ref, z, axis), source, dtype)


@check("every slice along the axis sums to 1", SHAPES)
def sums_to_one(impl, new, shape, axis):
    z = new.normal("z", shape, scale=3.0)
    out, source = _call(impl, z, axis)
    # the slices along `axis` become the rows of the moved array
    expect_rows_sum_to_one(np.moveaxis(out, axis, -1), f"the slices along axis {axis} of {source}")


@check("stays finite and correct for huge logits (1e4; float32 past exp's limit of 89)", [
    {"shape": (4, 6), "scale": 1e4, "dtype": "float64", "seed": 0},
    {"shape": (4, 6), "scale": 1e4, "dtype": "float32", "seed": 1},
    {"shape": (3, 5), "scale": 100.0, "dtype": "float32", "seed": 2},
    {"shape": (3, 5), "scale": -1e4, "dtype": "float64", "seed": 3},
])
def huge_logits(impl, new, ref, shape, scale, dtype):
    z = new.normal("z", shape, scale=scale, dtype=dtype)
    out, source = _call(impl, z)
    top = float(np.max(np.abs(z)))
    expect_finite(out, f"{source}, with logits up to {top:.3g} in magnitude,")
    expect_close(out, _ref(ref, z), f"{source}, with logits up to {top:.3g} in magnitude,", dtype, extreme=True)


# a row of exact zeros, rows entirely far below zero, and a row with ordinary logits
SPECIAL_ROWS = [[0.0, 0.0, 0.0, 0.0, 0.0],
                [-800.0, -801.5, -799.0, -802.0, -800.25],
                [-1e4, -1e4 + 2.0, -1e4 - 1.0, -1e4 + 0.5, -1e4 - 3.0],
                [1.5, -0.5, 2.0, 0.25, -1.0]]
# every entry of every row far below zero
BELOW_ROWS = [[-800.0, -801.5, -799.0], [-1e4 + 1.0, -1e4, -1e4 - 2.0]]


@check("slices of exact zeros, and slices entirely far below zero (around -800 and -1e4), come out right",
       [{"dtype": "float64"}, {"dtype": "float32"}], shrink=False)
def far_below_zero(impl, new, ref, dtype):
    for name, rows in (("z", SPECIAL_ROWS), ("z_below", BELOW_ROWS)):
        z = _written(new, name, rows, dtype)
        out, source = _call(impl, z)
        expect_finite(out, source)
        expect_close(out, _ref(ref, z), source, dtype, extreme=True)


# probabilities from exp(-20) down to exp(-60) and below: above float64's tolerance of 1e-9
# where they are large
TINY_ROWS = [[0.0, -5.0, -21.0, -25.0, -35.0, -60.0],
             [3.0, 2.5, -19.0, -23.0, -40.0, -100.0]]


@check("probabilities far below the largest (exp(-20) to exp(-60), float64) are exact, not rounded up", shrink=False)
def tiny_probabilities(impl, new, ref):
    z = _written(new, "z", TINY_ROWS, "float64")
    out, source = _call(impl, z)
    expect_close(out, _ref(ref, z), source, "float64")


@check("-inf entries give exactly 0", [{"dtype": "float64"}, {"dtype": "float32"}], shrink=False)
def minus_inf(impl, new, ref, dtype):
    z = _written(new, "z", [[0.5, -np.inf, 2.0, -np.inf], [-np.inf, -np.inf, -np.inf, 7.0],
                            [1.0, 1.0, -np.inf, 1.0]], dtype)
    out, source = _call(impl, z)
    expect_finite(out, source)
    leaked = np.argwhere(np.isneginf(z) & (out != 0))
    if len(leaked):
        i, j = (int(v) for v in leaked[0])
        raise CheckFailed(f"{source}[{i}, {j}] is {float(out[i, j]):.6g} where z[{i}, {j}] is -inf: a -inf logit "
                          f"must get probability exactly 0 ({len(leaked)} such entries)")
    expect_close(out, _ref(ref, z), source, dtype)


@check("adding a constant to a slice changes nothing", [
    {"shape": (3, 6), "shift": 50.0, "seed": 0},
    {"shape": (2, 4, 5), "shift": -300.0, "seed": 1},
])
def shift_invariance(impl, new, shape, shift):
    z = new.normal("z", shape)
    z_shifted = new.let("z_shifted", z + shift, f"z + {shift}")
    a, source = _call(impl, z)
    b, source_shifted = _call(impl, z_shifted)
    expect_finite(a, source)
    expect_finite(b, source_shifted)
    expect_close(b, a, f"{source_shifted} (z_shifted = z + {shift:g})", against=source)


@check("leaves its input unchanged", [{"shape": (3, 5), "axis": -1}, {"shape": (4, 3), "axis": 0}])
def input_unchanged(impl, new, shape, axis):
    z = new.normal("z", shape, scale=2.0)
    impl.softmax(z, axis=axis)
    expect_inputs_unchanged(impl)
