"""The input domain of rope(x, positions=None, base=10000.0).

x is (..., T, d) with d = 2 * d_half and up to two leading axes (sizes m, 2); base at both
ends of its range, 10 and 1e6. The value families say which positions come with x: plain
cases give unsorted, repeated positions up to 60 (`given` is what "normal" means here), and
the families are `default_positions` (left out: np.arange(T)), `negative_positions` (from
-60 to 60, as int32) and `large_positions` (around 50,000, where the contract still asks for
x's own accuracy, float32 included); and the engine's whole-array families for x: `zero`,
`constant`, `tiny` (RoPE is linear in x: the answer is as small, and compared relative to its
scale). Pairs varied together on the plain case: each family with base, the dtype, T and the
leading axes; base typed as an int and as np.float32. An odd d raises ValueError at every
size. Past cheap boundaries: 33,000 positions of d = 2, and 16,385 rows of one position; the
size of a real model: a context of 131,072 positions, with every family.
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
    Invalid,
    Mode,
    floats,
)


def _positions(new, case: dict):
    """The positions of the case's family, or None when it leaves them out."""
    T, family = case["T"], case["values"]
    if family == "default_positions":
        return None
    rng = new.rng
    if family == "negative_positions":
        p = rng.integers(-60, 61, size=T)
        p[: min(T, 2)] = [-60, -1][: min(T, 2)]             # the most negative, and -1 (a table's last row)
        return new.array("positions", p.astype(np.int32), dtype=np.int32)
    low, high = (49_900, 50_000) if family == "large_positions" else (0, 60)
    p = rng.integers(low, high + 1, size=T)
    if T >= 3:
        p[-1] = p[0]       # a repeated position
        p[1] = high        # the largest, out of order
    return new.array("positions", p.astype(np.int64))


def draw(new, case: dict) -> dict:
    lead = (case["m"], 2)[:case["lead"]]
    d = case.get("d", 2 * case["d_half"])      # `d` only for the odd sizes that must raise
    values = {"x": floats(new, "x", (*lead, case["T"], d), case)}
    positions = _positions(new, case)
    if positions is not None:
        values["positions"] = positions
    if "base" in case:
        values["base"] = case["base"]
    return values


ODD = "an odd d: the features cannot be split into pairs"

DOMAIN = Domain(Explore(
    "rope", draw,
    dims={"T": Dim(base=(3, 4, 5)), "d_half": Dim(small=(1, 2, 3, 5, 8), base=(2, 3, 4), trivial=0),
          "m": Dim(small=(1, 3), base=(2, 3), trivial=0)},
    lead=2,
    families=("default_positions", "negative_positions", "large_positions", "zero", "constant", "tiny"),
    scalars={"base": (10.0, 1e6)},
    pairs=(("values", "base"), ("values", "dtype"), ("T", "values"), ("values", "lead"), ("base", "numbers")),
    real=({"T": 131_072, "d_half": 1, "lead": 0},),
    modes=(Mode("positions given", lambda c: dict(c, values="normal")),
           Mode("positions left out", lambda c: dict(c, values="default_positions"))),
    cites={"T": REAL_SIZES, "d_half": "Odd d raises ValueError", "m": SIZES_OF_ONE,
           "base": "rope(x, positions=None, base=10000.0). " + ANY_NUMBER},
    invalid=(Invalid(ODD, lambda c: dict(c, d=2 * c["d_half"] - 1)), Invalid(ODD, lambda c: dict(c, d=2 * c["d_half"] + 1))),
    big=({"T": 33_000, "d_half": 1, "lead": 0, "values": "default_positions"},
         {"T": 1, "d_half": 1, "m": 16_385, "lead": 1}),
    grows=(Grows("T", "position", lambda n: {"T": n, "d_half": 4, "lead": 0}),),
))
