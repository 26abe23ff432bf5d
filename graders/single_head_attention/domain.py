"""The input domain of single_head_attention(x, W_q, W_k, W_v, causal=True).

Sizes T, d_model and d_k (d_k differs from d_model in plain cases, so that a scale or a
shape taken from the wrong one shows); causal or not. Value families: `huge` (scores of
1e3 and more), `row_scales` (rows of x of very different lengths, so the rows of scores lie
far apart), `zeros` (rows of x that are all zeros: scores of exactly 0), and the engine's
whole-array `zero`, `constant` and `tiny` (x of 1e-30: every row's weights uniform). Pairs
varied together on the plain case: each family with causal and with the dtype, causal with T.
At the contract's d_model of 16,384 (d_model or d_k, every family), the work stays small and
no rule of the contract is broken by an answer quadratic in it; T past 1024 is the grader's
own check.
"""
import numpy as np

from graders.engine.domain import REAL_SIZES, SIZES_OF_ONE, Dim, Domain, Explore, Grows, Mode, cast, floats
from graders.engine.probes import largest_projected_score

ROW_SCALES = np.array([1.0, 40.0, 1e-3, 8.0, 0.2, 25.0, 1.0])


def draw(new, case: dict) -> dict:
    T, d_model, d_k, family = case["T"], case["d_model"], case["d_k"], case["values"]
    x = floats(new, "x", (T, d_model), case, scale=30.0 if family == "huge" else 1.0)
    if family == "row_scales":
        value, suffix = cast(x.astype(np.float64) * np.resize(ROW_SCALES, T)[:, None], case)
        x = new.let("x", value, f"{new.name_of(x)}.astype(np.float64) * np.resize({ROW_SCALES.tolist()}, {T})"
                                f"[:, None]{suffix}")
    elif family == "zeros":
        rows = sorted({0, T // 2})
        value = x.copy()
        value[rows] = 0
        name = new.name_of(x)
        x = new.let("x", value, f"{name}.copy(); {name}[{rows}] = 0")
    w_scale = float(1 / np.sqrt(d_model))   # entries of variance 1/d_model keep q and k as large as x
    Ws = {name: floats(new, name, (d_model, d_k), case, scale=w_scale) for name in ("W_q", "W_k", "W_v")}
    values = {"x": x, **Ws}
    if "causal" in case:
        values["causal"] = case["causal"]
    return values


def constants(values: dict) -> dict:
    """Numbers a wrong factor may be, named as the mistake that gives it: scores not divided at
    all are sqrt(d_k) times too large; divided by sqrt(d_model), sqrt(d_k / d_model) times."""
    d_model, d_k = values["x"].shape[1], values["W_q"].shape[1]
    return {"sqrt(d_k)": np.sqrt(d_k), "sqrt(d_k / d_model)": np.sqrt(d_k / d_model), "d_k": d_k,
            "T": values["x"].shape[0]}


DOMAIN = Domain(Explore(
    "single_head_attention", draw,
    dims={"T": Dim(base=(4, 5, 6)), "d_model": Dim(base=(3, 5, 7)), "d_k": Dim(base=(2, 3, 4))},
    families=("huge", "row_scales", "zeros", "zero", "constant", "tiny"),
    extreme=("huge", "row_scales"),
    scalars={"causal": (False, True)},
    big=({"T": 2, "d_model": 1, "d_k": 16_384}, {"T": 3, "d_model": 16_384, "d_k": 1, "causal": False}),
    pairs=(("values", "causal"), ("values", "dtype"), ("T", "causal")),
    real=({"T": 3, "d_model": 16_384, "d_k": 1},),
    modes=(Mode("causal", lambda c: dict(c, causal=True)), Mode("not causal", lambda c: dict(c, causal=False))),
    cites={"T": SIZES_OF_ONE, "d_model": REAL_SIZES, "d_k": REAL_SIZES,
           "causal": "single_head_attention(x, W_q, W_k, W_v, causal=True)"},
    outputs=("out", "the weights"), masks=("the weights",), magnitude=largest_projected_score,
    axes=[{0: "positions", 1: "features"}, {0: "query positions", 1: "key positions"}],
    constants=constants,
    grows=(Grows("T", "position", lambda n: {"T": n, "d_model": 4, "d_k": 4}),),
))
