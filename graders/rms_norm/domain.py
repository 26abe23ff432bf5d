"""The input domain of rms_norm(x, weight, eps=1e-6).

x is (..., d) with up to two leading axes (sizes m, 3), weight (d,) of standard normal
entries (every feature its own scale, some negative); eps 0, 1 and the default. Value
families: `scales` (rows of very different scales in one call: 1e-20 to 1e15 in float64,
1e-3 to 1e4 in float32, whose squares leave float32's normal range sooner) and `zeros`
(a row of zeros, where only eps > 0 defines the answer), and the engine's whole-array
`zero`, `constant` and `tiny` (x of 1e-30: eps decides the answer, which is as small and
compared relative to its scale). Pairs varied together on the plain case: eps with each family
and typed every way the contract allows (eps=0 as an int, as np.float32); each family with
the dtype, d and the leading axes. Past cheap boundaries: 16,385 rows (rows taken in chunks
that drop the remainder show); the size of a real model: one vector of 16,384 features (a
d_model), with every family, and no larger (the contract sets no rule past it).
"""
import numpy as np

from graders.engine.domain import ANY_NUMBER, REAL_SIZES, SIZES_OF_ONE, Dim, Domain, Explore, Grows, cast, floats

SCALES = {"float64": [1.0, 1e-20, 1e15, 1e-3, 40.0, 1e8, 0.2],
          "float32": [1.0, 1e-3, 1e4, 0.05, 40.0, 300.0, 0.2]}


def _x(new, case: dict) -> np.ndarray:
    lead = (case["m"], 3)[:case["lead"]]
    d, family = case["d"], case["values"]
    x = floats(new, "x", (*lead, d), case, scale=2.0)
    name = new.name_of(x)
    if family == "scales" and lead:
        scales = SCALES[case["dtype"]]
        n = int(np.prod(lead))
        value, suffix = cast(x.astype(np.float64) * np.resize(scales, n).reshape(*lead, 1), case)
        x = new.let("x", value, f"{name}.astype(np.float64) * np.resize({scales}, {n}).reshape({(*lead, 1)}){suffix}")
    elif family == "zeros":
        first = (0,) * len(lead)                     # the first row (the whole of a single vector)
        value = x.copy()
        value[first] = 0
        x = new.let("x", value, f"{name}.copy(); {name}[{first}] = 0")
    return x


def draw(new, case: dict) -> dict:
    values = {"x": _x(new, case), "weight": floats(new, "weight", (case["d"],), case)}
    if "eps" in case:
        values["eps"] = case["eps"]
    return values


def _valid(case: dict) -> bool:
    # 0 / sqrt(0) is not an answer
    return case["values"] not in ("zeros", "zero") or case.get("eps", 1e-6) > 0


DOMAIN = Domain(Explore(
    "rms_norm", draw,
    dims={"d": Dim(base=(3, 5, 6, 7)), "m": Dim(small=(1, 3), base=(2, 4), trivial=0)},
    lead=2,
    families=("scales", "zeros", "zero", "constant", "tiny"),
    scalars={"eps": (0.0, 1.0)},
    valid=_valid,
    big=({"m": 16_385, "d": 2, "lead": 1}, {"d": 16_384, "lead": 0}),
    pairs=(("eps", "values"), ("eps", "numbers"), ("values", "dtype"), ("d", "values"), ("values", "lead")),
    real=({"d": 16_384, "lead": 0},),
    cites={"d": REAL_SIZES, "m": SIZES_OF_ONE,
           "eps": "With eps = 0, scaling x by a positive number changes nothing, for factors from 1e-30 to 1e30 "
                  "on float64 input. " + ANY_NUMBER},
    grows=(Grows("N", "row", lambda n: {"m": n, "d": 8, "lead": 1}),),
))
