"""The input domain of layer_norm(x, gamma, beta, eps=1e-5).

Sizes n (the first leading axis; the others have 2 and 3) and d, up to three leading axes;
eps from 0 to 1e3. Value families: `offsets` (each vector shifted by its own large amount,
+1e6, -1e6, 0, ..., around a spread of 1: the variance must be measured around the mean),
`row_scales` (vectors scaled by very different amounts, 1e-3 to 1e3), `constant` (every
other vector constant, zeros and 1e6 included: it comes out as beta).
The engine's whole-array families too: `zero`, `tiny` (x of 1e-30: eps decides the answer,
which is as small and compared relative to its scale). Pairs varied together on the plain
case: eps with each family and typed every way the contract allows (eps=0 as an int, as
np.float32); each family with the dtype, d and the leading axes. The size of a real model:
one vector of 16,384 features (a d_model), with every family, and no larger (the contract
sets no rule past it).
float32 meets no offsets (a float32 number near 1e6 keeps no digits of a spread of 1), nor does
a vector past 1,024 features (a one-pass float64 update, Welford's, keeps a spread of 1 under
an offset of 1e6 only to about 4e-9 there, above the contract's atol of 1e-9); eps = 0 meets no
constant vector (0 / 0), nor d = 1.
"""
import numpy as np

from graders.engine.domain import (
    ANY_NUMBER,
    REAL_SIZES,
    SIZES_OF_ONE,
    Dim,
    Domain,
    Explore,
    Grows,
    cast,
    floats,
    with_row_offsets,
)

ROW_SCALES = np.array([1.0, 1e3, 1e-3, 30.0, 0.05, 300.0, 1.0])
LEVELS = np.array([0.0, 3.0, 1e6, -2.5])


def _per_row(new, x: np.ndarray, lead: tuple, case: dict) -> np.ndarray:
    """x with each vector scaled by its own amount (row_scales), or every other one constant."""
    rows = int(np.prod(lead, dtype=np.int64))
    if case["values"] == "row_scales":
        scales = np.resize(ROW_SCALES, rows).reshape(*lead, 1)
        value, suffix = cast(x.astype(np.float64) * scales, case)
        return new.let("x", value, f"{new.name_of(x)}.astype(np.float64) * np.resize({ROW_SCALES.tolist()}, "
                                   f"{rows}).reshape({(*lead, 1)}){suffix}")
    # constant: vector 2i is LEVELS[i % 4] throughout (the only one, when there are no leading axes)
    constant = (np.arange(rows) % 2 == 0).reshape(*lead, 1)
    levels = np.repeat(np.resize(LEVELS, (rows + 1) // 2), 2)[:rows].reshape(*lead, 1)
    value, suffix = cast(np.where(constant, levels, x.astype(np.float64)), case)
    return new.let("x", value, f"np.where((np.arange({rows}) % 2 == 0).reshape({(*lead, 1)}), "
                               f"np.repeat(np.resize({LEVELS.tolist()}, {(rows + 1) // 2}), 2)[:{rows}]"
                               f".reshape({(*lead, 1)}), {new.name_of(x)}.astype(np.float64)){suffix}")


def draw(new, case: dict) -> dict:
    lead = (case["n"], 2, 3)[:case["lead"]]
    d, family = case["d"], case["values"]
    x = floats(new, "x", (*lead, d), case, scale=1.0 if family == "offsets" else 2.0)
    if family == "offsets":
        x = with_row_offsets(new, "x", x, case, axis=-1, size=1e6)
    elif family in ("row_scales", "constant"):
        x = _per_row(new, x, lead, case)
    values = {"x": x, "gamma": floats(new, "gamma", (d,), case), "beta": floats(new, "beta", (d,), case)}
    if "eps" in case:
        values["eps"] = case["eps"]
    return values


def _valid(case: dict) -> bool:
    if case.get("eps", 1e-5) == 0 and (case["d"] < 2 or case["values"] in ("constant", "zero")):
        return False
    if case["values"] == "offsets" and case["d"] > 1024:
        return False  # past a thousand features a one-pass float64 update keeps a spread of 1 under an
        # offset of 1e6 only to about 4e-9, above the contract's atol of 1e-9
    return case["dtype"] == "float64" or case["values"] != "offsets"


DOMAIN = Domain(Explore(
    "layer_norm", draw,
    dims={"n": Dim(base=(2, 3), trivial=0), "d": Dim(base=(4, 5, 6), big=16_384)},
    lead=3,
    families=("offsets", "row_scales", "constant", "zero", "tiny"),
    scalars={"eps": (0.0, 1e-5, 0.5, 1e3)},
    valid=_valid,
    # rows past 16,384 (blocks of rows that drop a remainder), and one vector of a real model's 16,384 features
    big=({"n": 16_385, "lead": 1, "d": 2}, {"lead": 0, "d": 16_384}),
    pairs=(("eps", "values"), ("eps", "numbers"), ("values", "dtype"), ("d", "values"), ("values", "lead")),
    real=({"d": 16_384, "lead": 0},),
    cites={"d": REAL_SIZES, "n": SIZES_OF_ONE,
           "eps": "With eps = 0, adding a constant to a row or scaling it by a positive number changes nothing. "
                  + ANY_NUMBER},
    grows=(Grows("N", "row", lambda n: {"n": n, "d": 8, "lead": 1}),),
))
