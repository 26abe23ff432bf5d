"""Grader for softmax(z, axis=-1): the properties a stable softmax must have."""
import numpy as np

from graders.checks import (check, expect_close, expect_finite, expect_inputs_unchanged,
                            expect_shape)

SHAPES = [
    {"shape": (5,), "axis": -1, "seed": 0},
    {"shape": (3, 7), "axis": -1, "seed": 1},
    {"shape": (3, 7), "axis": 0, "seed": 2},
    {"shape": (2, 1, 5), "axis": 1, "seed": 3},
    {"shape": (2, 3, 4), "axis": -2, "seed": 4},
    {"shape": (1, 1), "axis": 0, "seed": 5},
]
DTYPES = [dict(c, dtype=d) for c in SHAPES for d in ("float64", "float32")]


@check("returns an array of the input's shape", SHAPES)
def test_shape(impl, x, shape, axis):
    z = x.normal("z", shape)
    expect_shape(impl.softmax(z, axis=axis), shape, f"softmax(z, axis={axis})")


@check("agrees with the reference", DTYPES)
def test_agrees(impl, x, ref, shape, axis, dtype):
    z = x.normal("z", shape, scale=3.0, dtype=dtype)
    out = impl.softmax(z, axis=axis)
    expect_close(out, ref.softmax(z.astype(np.float64), axis=axis), f"softmax(z, axis={axis})", dtype)


@check("every slice along the axis sums to 1", SHAPES)
def test_sums_to_one(impl, x, shape, axis):
    z = x.normal("z", shape, scale=3.0)
    out = expect_shape(impl.softmax(z, axis=axis), shape, "the output")
    sums = out.sum(axis=axis)
    bad = ~np.isclose(sums, 1.0, rtol=1e-6, atol=1e-9)
    if np.any(bad):
        idx = [int(i) for i in np.argwhere(bad)[0]] if sums.ndim else []
        from graders.checks import CheckFailed
        raise CheckFailed(f"the slice of softmax(z, axis={axis}) at {idx} sums to {float(sums[tuple(idx)]):.6g}, not 1")


@check("stays finite and correct for huge logits (1e4; float32 past exp's limit of 89)", [
    {"shape": (4, 6), "scale": 1e4, "dtype": "float64", "seed": 0},
    {"shape": (4, 6), "scale": 1e4, "dtype": "float32", "seed": 1},
    {"shape": (3, 5), "scale": 100.0, "dtype": "float32", "seed": 2},
    {"shape": (3, 5), "scale": -1e4, "dtype": "float64", "seed": 3},
])
def test_huge_logits(impl, x, ref, shape, scale, dtype):
    z = x.normal("z", shape, scale=scale, dtype=dtype)
    out = expect_finite(impl.softmax(z), "softmax(z)")
    expect_close(out, ref.softmax(z.astype(np.float64)), "softmax(z)", dtype, extreme=True)


@check("-inf entries give exactly 0", [{"dtype": "float64"}, {"dtype": "float32"}], shrink=False)
def test_minus_inf(impl, x, dtype):
    z = x.array("z", [[0.5, -np.inf, 2.0, -np.inf], [-np.inf, -np.inf, -np.inf, 7.0], [1.0, 1.0, -np.inf, 1.0]],
                dtype=dtype)
    out = expect_finite(impl.softmax(z), "softmax(z)")
    leaked = out[np.isinf(z)]
    if np.any(leaked != 0):
        from graders.checks import CheckFailed
        raise CheckFailed(f"a -inf logit got probability {float(leaked[leaked != 0][0]):.6g}, expected exactly 0")
    expect_close(out, np.array([[0.182426, 0, 0.817574, 0], [0, 0, 0, 1], [1 / 3, 1 / 3, 0, 1 / 3]]),
                 "softmax(z)", dtype, rtol=1e-5, atol=1e-6)


@check("adding a constant to a slice changes nothing", [
    {"shape": (3, 6), "shift": 50.0, "seed": 0},
    {"shape": (2, 4, 5), "shift": -300.0, "seed": 1},
])
def test_shift_invariance(impl, x, shape, shift):
    z = x.normal("z", shape)
    z_shifted = x.let("z_shifted", z + shift, f"z + {shift}")
    a = expect_finite(impl.softmax(z), "softmax(z)")
    b = expect_finite(impl.softmax(z_shifted), f"softmax(z + {shift})")
    expect_close(b, a, f"softmax(z + {shift}) compared with softmax(z)")


@check("leaves its input unchanged", [{"shape": (3, 5), "axis": -1}, {"shape": (4, 3), "axis": 0}])
def test_input_unchanged(impl, x, shape, axis):
    z = x.normal("z", shape, scale=2.0)
    impl.softmax(z, axis=axis)
    expect_inputs_unchanged()
