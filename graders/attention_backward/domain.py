"""The input domain of attention_backward(q, k, v, d_out, causal=True).

Sizes t_q, t_k and d, up to two leading axes; causal or not (causal needs t_q <= t_k, so
fewer queries than keys is the bottom-right alignment). Value families: `huge` (scores near
1e3 and more), `row_scales` (queries of very different lengths, so the rows of scores lie far
apart), `tail_zero` (d_out zero after the middle query: the keys after that query's position
get nothing), `zeros` (a query and a key of zeros: scores of exactly 0). float32 meets `huge`
with the extreme tolerance, rtol 1e-3: random scores near 1e3 leave each row one clear winner,
where float32 gradients stay that accurate (the grader's own check of scores near 1e4, split
between two keys, holds float32 to the contract's atol of 1e-3 of each gradient's largest
entry). Large cases: one query over 33,000 keys, and 33,000 queries over two keys. The
engine's whole-array families too: `zero`, `constant`, `tiny` (q of 1e-30: every visible key
weighs alike). Pairs varied together on the plain case: each family with causal, the dtype
and the leading axes; causal with t_q. The modes: causal and not, a decoding step (one
query). The size of a real model: one query over 8,200 keys, with every family.
"""
import numpy as np

from graders.engine.domain import REAL_SIZES, SIZES_OF_ONE, Dim, Domain, Explore, Grows, Invalid, Mode, cast, floats
from graders.engine.probes import through_d_out

ROW_SCALES = np.array([1.0, 30.0, 1e-3, 6.0, 0.3, 18.0])


def _zero_first(new, name: str, a: np.ndarray) -> np.ndarray:
    value = a.copy()
    value[..., :1, :] = 0
    shown = new.name_of(a)
    return new.let(name, value, f"np.concatenate([0 * {shown}[..., :1, :], {shown}[..., 1:, :]], axis=-2)")


def draw(new, case: dict) -> dict:
    lead = tuple(range(2, 2 + case["lead"]))
    t_q, t_k, d, family = case["t_q"], case["t_k"], case["d"], case["values"]
    scale = 30.0 if family == "huge" else 1.0      # entries of 30: scores q.k / sqrt(d) near 1e3
    q = floats(new, "q", (*lead, t_q, d), case, scale=scale)
    k = floats(new, "k", (*lead, t_k, d), case, scale=scale)
    v = floats(new, "v", (*lead, t_k, d), case)
    d_out = floats(new, "d_out", (*lead, t_q, d), case)
    if family == "row_scales":
        value, suffix = cast(q.astype(np.float64) * np.resize(ROW_SCALES, t_q)[:, None], case)
        q = new.let("q", value, f"{new.name_of(q)}.astype(np.float64) * np.resize({ROW_SCALES.tolist()}, {t_q})"
                                f"[:, None]{suffix}")
    elif family == "tail_zero":
        m = t_q // 2                                 # the last query whose d_out row counts
        value = np.where((np.arange(t_q) <= m)[:, None], d_out, 0.0).astype(d_out.dtype)
        d_out = new.let("d_out", value, f"np.where((np.arange({t_q}) <= {m})[:, None], {new.name_of(d_out)}, 0.0)"
                                        f".astype({new.name_of(d_out)}.dtype)")
    elif family == "zeros":
        q, k = _zero_first(new, "q", q), _zero_first(new, "k", k)
    values = {"q": q, "k": k, "v": v, "d_out": d_out}
    if "causal" in case:
        values["causal"] = case["causal"]
    return values


def _valid(case: dict) -> bool:
    return not case.get("causal", True) or case["t_q"] <= case["t_k"]


DOMAIN = Domain(Explore(
    "attention_backward", draw,
    dims={"t_q": Dim(small=(1, 2, 3, 5, 12), base=(3, 4, 5)), "t_k": Dim(small=(1, 2, 3, 6, 7, 12), base=(5, 6, 7)),
          "d": Dim(small=(1, 2, 5, 6), base=(2, 3))},
    lead=2,
    families=("huge", "row_scales", "tail_zero", "zeros", "zero", "constant", "tiny"),
    extreme=("huge", "row_scales"),
    scalars={"causal": (False, True)},
    valid=_valid,
    pairs=(("values", "causal"), ("values", "dtype"), ("values", "lead"), ("t_q", "causal")),
    real=({"t_q": 1, "t_k": 8_200, "d": 1, "lead": 0},),
    modes=(Mode("causal", lambda c: dict(c, causal=True)), Mode("not causal", lambda c: dict(c, causal=False)),
           Mode("a decoding step (one query)", lambda c: dict(c, t_q=1))),
    cites={"t_q": "ValueError when causal and T_q > T_k", "t_k": REAL_SIZES, "d": SIZES_OF_ONE,
           "causal": "the causal_mask bottom-right alignment when causal"},
    invalid=(Invalid("causal with more queries than keys: the first query would see no key",
                     lambda c: dict(c, t_q=c["t_k"] + 1, causal=True)),),
    big=({"t_q": 1, "t_k": 33_000, "d": 1, "lead": 0},
         {"t_q": 33_000, "t_k": 2, "d": 1, "lead": 0, "causal": False}),
    outputs=("dq", "dk", "dv"),
    axes=[{-2: "query positions", -1: "features"}, {-2: "key positions", -1: "features"},
          {-2: "key positions", -1: "features"}],
    constants=lambda c: {"sqrt(d)": np.sqrt(c["d"]), "d": c["d"], "T_q": c["t_q"], "T_k": c["t_k"]},
    probe=through_d_out,
    grows=(Grows("T", "position", lambda n: {"t_q": n, "t_k": n, "d": 4, "lead": 0, "causal": True}),),
))
