"""The input domain of causal_mha(x, W_q, W_k, W_v, W_o, n_heads).

Sizes B, T, n_heads and d_head (d_model = n_heads * d_head; `extra` adds columns so that
n_heads no longer divides d_model, for the ValueError). Value families: `huge` (scores
of 1e3 and more), `row_scales` (positions of x scaled by very different amounts, so the
rows of scores lie far apart), `zeros` (a position of x that is all zeros), and the engine's
whole-array `zero`, `constant` and `tiny`. Pairs varied together on the plain case: each
family with n_heads, B, T and the dtype; n_heads typed as a NumPy integer.
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
    cast,
    floats,
)

ROW_SCALES = np.array([1.0, 40.0, 1e-3, 8.0, 0.2, 25.0, 1.0])


def draw(new, case: dict) -> dict:
    B, T, H, d_head = case["B"], case["T"], case["n_heads"], case["d_head"]
    d_model = H * d_head + case.get("extra", 0)
    family = case["values"]
    x = floats(new, "x", (B, T, d_model), case, scale=25.0 if family == "huge" else 1.0)
    if family == "row_scales":
        scales = np.resize(ROW_SCALES, T)[None, :, None]
        value, suffix = cast(x.astype(np.float64) * scales, case)
        x = new.let("x", value, f"{new.name_of(x)}.astype(np.float64) * np.resize({ROW_SCALES.tolist()}, {T})"
                                f"[None, :, None]{suffix}")
    elif family == "zeros" and T > 1:
        value = x.copy()
        value[:, 1] = 0
        x = new.let("x", value, f"np.concatenate([{new.name_of(x)}[:, :1], 0 * {new.name_of(x)}[:, 1:2], "
                                f"{new.name_of(x)}[:, 2:]], axis=1)")
    w_scale = 1.0 if family == "huge" else 0.5
    Ws = {name: floats(new, name, (d_model, d_model), case, scale=w_scale) for name in ("W_q", "W_k", "W_v", "W_o")}
    return {"x": x, **Ws, "n_heads": H}


def _indivisible(case: dict) -> dict | None:
    return dict(case, extra=1) if case["n_heads"] > 1 else dict(case, n_heads=2, d_head=1, extra=1)


def constants(case: dict) -> dict:
    """Numbers a wrong factor may be, named as the mistake that gives it: scores not divided at
    all are sqrt(d_head) times too large; divided by sqrt(d_model), sqrt(d_head / d_model) times."""
    H, d_head = case["n_heads"], case["d_head"]
    d_model = H * d_head + case.get("extra", 0)
    return {"sqrt(d_head)": np.sqrt(d_head), "sqrt(d_head / d_model)": np.sqrt(d_head / d_model),
            "n_heads": H, "d_head": d_head, "T": case["T"]}


AXES = [{0: "batch", 1: "positions", 2: "features"},
        {0: "batch", 1: "heads", 2: "query positions", 3: "key positions"}]

DOMAIN = Domain(Explore(
    "causal_mha", draw,
    dims={"B": Dim(base=(2, 3), trivial=0), "T": Dim(base=(3, 4, 5, 6)), "n_heads": Dim(base=(2, 3, 4), trivial=0),
          "d_head": Dim(base=(2, 3))},
    families=("huge", "row_scales", "zeros", "zero", "constant", "tiny"),
    extreme=("huge", "row_scales"),
    invalid=(Invalid("n_heads does not divide d_model", _indivisible),),
    big=({"B": 16_385, "T": 2, "n_heads": 1, "d_head": 2},),   # sequences past 16,384 in one batch
    pairs=(("values", "n_heads"), ("values", "T"), ("values", "dtype"), ("B", "values"), ("n_heads", "numbers")),
    cites={"B": SIZES_OF_ONE, "T": SIZES_OF_ONE, "n_heads": ANY_NUMBER, "d_head": REAL_SIZES},
    outputs=("y", "the weights"), axes=AXES, constants=constants, masks=("the weights",),
    grows=(Grows("T", "position", lambda n: {"T": n, "B": 1, "n_heads": 2, "d_head": 4}),
           Grows("n_heads", "head", lambda n: {"T": 16, "B": 1, "n_heads": n, "d_head": 4}, (2, 4, 8)),
           Grows("B", "sequence", lambda n: {"T": 16, "B": n, "n_heads": 2, "d_head": 4}, (2, 4, 8))),
))
