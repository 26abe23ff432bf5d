"""The input domain of softmax(z, axis=-1): any shape, any axis, logits of every kind.

`n` is the length of each slice along the axis, `m` the size of the first other axis (the
rest have 2, 3, ...: so that exchanging n and m keeps the number of entries). Value families: `huge` (logits of 1e4), `offsets` (each
slice shifted by a different large amount: +1e4, -1e4, 0, ...), `neg_inf` (-inf beside
finite logits), `ties`, `zeros`, `subnormal` (entries down where exp leaves the normal
range: 745 below the slice's largest in float64, 100 in float32); and the engine's
whole-array ones: `constant`, `tiny` (logits of 1e-30) and `neg_inf_run` (every slice begins
with a run of -inf). Pairs varied together on the plain case: each family with the axis, the
leading axes, the dtype and the slice's length; the axis typed as a NumPy integer. The size
of a real model: one slice of 131,072 logits (a vocabulary), with every family.
"""
import numpy as np

from graders.engine.domain import (
    REAL_SIZES,
    SIZES_OF_ONE,
    Dim,
    Domain,
    Explore,
    Grows,
    cast,
    floats,
    with_entries,
    with_row_offsets,
    with_ties,
)


def _shape(case: dict) -> tuple[int, tuple[int, ...]]:
    ndim = 1 + case["lead"]
    axis = case.get("axis", -1) % ndim
    others = iter([case["m"], 2, 3])
    return axis, tuple(case["n"] if i == axis else next(others) for i in range(ndim))


def draw(new, case: dict) -> dict:
    axis, shape = _shape(case)
    family = case["values"]
    z = floats(new, "z", shape, case, scale=1e4 if family == "huge" else 3.0)
    if family == "offsets":
        z = with_row_offsets(new, "z", z, case, axis=axis)
    elif family == "neg_inf":
        z = with_entries(new, "z", z, case, -np.inf, keep_axis=axis)
    elif family == "ties":
        z = with_ties(new, "z", z, case)
    elif family == "zeros":
        z = new.let("z", np.zeros_like(z), f"np.zeros_like({new.name_of(z)})")
    elif family == "subnormal":
        depth = 745.0 if np.dtype(case["dtype"]) == np.float64 else 100.0
        low = np.where(np.arange(shape[axis]).reshape([-1 if i == axis else 1 for i in range(len(shape))]) % 2 == 1,
                       -depth, 0.0)
        value, suffix = cast(z.astype(np.float64) + low, case)
        z = new.let("z", value, f"{new.name_of(z)}.astype(np.float64) + {np.array2string(low, separator=', ')}"
                                f"{suffix}")
    values = {"z": z}
    if "axis" in case:
        values["axis"] = case["axis"]
    return values


DOMAIN = Domain(Explore(
    "softmax", draw,
    dims={"n": Dim(big=40_000), "m": Dim(trivial=0)},
    lead=3, axis=("axis", 1),
    families=("huge", "offsets", "neg_inf", "ties", "zeros", "subnormal", "constant", "tiny", "neg_inf_run"),
    extreme=("huge", "offsets"),
    big=({"n": 40_000, "m": 1}, {"m": 16_385, "n": 3, "lead": 1}),
    pairs=(("values", "axis"), ("values", "lead"), ("values", "dtype"), ("n", "values"), ("axis", "numbers")),
    real=({"n": 131_072, "lead": 0},),
    cites={"n": REAL_SIZES + "; a vocabulary of 131,072", "m": SIZES_OF_ONE,
           "axis": "softmax(z, axis=-1): any shape -> same shape"},
    grows=(Grows("N", "row", lambda n: {"m": n, "n": 8, "lead": 1, "axis": -1}),),
))
