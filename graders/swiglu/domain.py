"""The input domain of swiglu(x, W_gate, W_up, W_down).

Sizes n (the first leading axis; the others have 2 and 3), d_model and d_ff, whose base
values differ (with square weights, weights read as (out, in) have the right shapes), up
to three leading axes. Value families: `huge` (W_gate scaled so that |x @ W_gate| reaches
1e4, of both signs), `row_scales` (the positions of x scaled by very different amounts,
1e-3 to 1e3), `zeros` (a position of x that is all zeros and every other column of W_gate
zero: gates of exactly 0). float32 meets neither `huge` nor `row_scales`: there an output
entry is a sum of terms up to 1e6 times larger than itself, which float32 does not keep to
the contract's tolerance (the kata's own `huge` check grades float32 with a scaled atol).
The engine's whole-array families too: `zero`, `constant`, `tiny` (x of 1e-30: the answer is
as small, and compared relative to its scale). Pairs varied together on the plain case: each
family with the dtype, d_ff and the leading axes. The size of a real model: a d_model of
16,384 for one position, with every family.
"""
import numpy as np

from graders.engine.domain import REAL_SIZES, SIZES_OF_ONE, Dim, Domain, Explore, Grows, cast, floats

ROW_SCALES = np.array([1.0, 1e3, 1e-3, 30.0, 0.05, 300.0, 1.0])


def _rows(new, x: np.ndarray, lead: tuple, case: dict) -> np.ndarray:
    """x with each position (row) scaled by its own amount."""
    rows = int(np.prod(lead, dtype=np.int64))
    scales = np.resize(ROW_SCALES, rows).reshape(*lead, 1)
    value, suffix = cast(x.astype(np.float64) * scales, case)
    return new.let("x", value, f"{new.name_of(x)}.astype(np.float64) * np.resize({ROW_SCALES.tolist()}, {rows})"
                               f".reshape({(*lead, 1)}){suffix}")


def _zeros(new, x: np.ndarray, W_gate: np.ndarray, lead: tuple, case: dict):
    """The first position of x all zeros, and the even columns of W_gate."""
    rows = np.ones((*lead, 1))
    rows.reshape(-1)[0] = 0.0 if lead else 1.0
    cols = (np.arange(W_gate.shape[1]) % 2 == 1).astype(np.float64)
    value, suffix = cast(x.astype(np.float64) * rows, case)
    x = new.let("x", value, f"{new.name_of(x)}.astype(np.float64) * np.array({rows.reshape(-1).tolist()})"
                            f".reshape({rows.shape}){suffix}")
    value, suffix = cast(W_gate.astype(np.float64) * cols, case)
    W_gate = new.let("W_gate", value, f"{new.name_of(W_gate)}.astype(np.float64) * {cols.tolist()}{suffix}")
    return x, W_gate


def draw(new, case: dict) -> dict:
    lead = (case["n"], 2, 3)[:case["lead"]]
    d_model, d_ff, family = case["d_model"], case["d_ff"], case["values"]
    x = floats(new, "x", (*lead, d_model), case, scale=2.0)
    if family == "row_scales" and lead:
        x = _rows(new, x, lead, case)
    # x @ W_gate has entries of about 2 (of about 1e4 for `huge`): x is 2 * N(0, 1), W has scale d_model**-0.5
    gate_scale = 2e3 * d_model ** -0.5 if family == "huge" else d_model ** -0.5
    W_gate = floats(new, "W_gate", (d_model, d_ff), case, scale=gate_scale)
    W_up = floats(new, "W_up", (d_model, d_ff), case, scale=d_model ** -0.5)
    W_down = floats(new, "W_down", (d_ff, d_model), case, scale=d_ff ** -0.5)
    if family == "zeros":
        x, W_gate = _zeros(new, x, W_gate, lead, case)
    return {"x": x, "W_gate": W_gate, "W_up": W_up, "W_down": W_down}


def _valid(case: dict) -> bool:
    return case["dtype"] == "float64" or case["values"] not in ("huge", "row_scales")


DOMAIN = Domain(Explore(
    "swiglu", draw,
    dims={"n": Dim(base=(2, 3), trivial=0), "d_model": Dim(base=(3, 4, 5)), "d_ff": Dim(base=(5, 6, 7), big=40_000)},
    lead=3,
    families=("huge", "row_scales", "zeros", "zero", "constant", "tiny"),
    valid=_valid,
    pairs=(("values", "dtype"), ("d_ff", "values"), ("values", "lead")),
    real=({"n": 1, "lead": 1, "d_model": 16_384, "d_ff": 3},),
    cites={"n": SIZES_OF_ONE, "d_model": REAL_SIZES, "d_ff": REAL_SIZES},
    # rows past 16,384 with a small d_model; a hidden layer past 32,767 for one position
    big=({"n": 16_385, "lead": 1, "d_model": 2, "d_ff": 3},
         {"n": 1, "lead": 1, "d_model": 1, "d_ff": 40_000}),
    grows=(Grows("N", "row", lambda n: {"n": n, "d_model": 4, "d_ff": 8, "lead": 1}),),
))
