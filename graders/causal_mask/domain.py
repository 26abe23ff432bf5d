"""The input domain of causal_mask(t_q, t_k=None) and apply_causal_mask(scores).

causal_mask takes sizes only: t_q <= t_k, t_q == t_k, t_k left out (`omit`, on square cases
only), 1025 queries (past a table of 1024), and one query over 40,000 keys (an index type of
16 bits wraps past 32,767).
apply_causal_mask takes scores (..., t_q, t_k) with up to two leading axes (sizes m, 2).
Value families, each where the contract fixes the answer: `blocked_nan`, `blocked_inf` and
`blocked_huge` (NaN, +inf or the dtype's largest number at every blocked entry: the result
is -inf there whatever was there), `neg_inf` (-inf already present, blocked or not), `zeros`
(exact zeros at allowed entries, which stay 0), and the engine's whole-array `constant`,
`tiny` and `neg_inf_run` (each row begins with a run of -inf). Pairs varied together on the
plain case: t_q with t_k (the bottom-right alignment), each family with the leading axes, the
dtype and t_q; the sizes typed as NumPy integers. The size of a real model: a decoding step,
one query over 131,072 keys, with every family.
"""
import numpy as np

from graders.engine.domain import (
    ANY_NUMBER,
    REAL_SIZES,
    Dim,
    Domain,
    Explore,
    Grows,
    Invalid,
    Mode,
    cast,
    floats,
    with_entries,
)
from graders.engine.inputs import literal

BLOCKED_FILLS = {"blocked_nan": np.nan, "blocked_inf": np.inf, "blocked_huge": None}  # None: the dtype's max


def draw_mask(new, case: dict) -> dict:
    if case.get("omit"):
        return {"t_q": case["t_q"]}
    return {"t_q": case["t_q"], "t_k": case["t_k"]}


def _blocked_expr(t_q: int, t_k: int) -> str:
    return f"np.arange({t_k}) > np.arange({t_k - t_q}, {t_k})[:, None]"


def draw_apply(new, case: dict) -> dict:
    t_q, t_k, family = case["t_q"], case["t_k"], case["values"]
    lead = (case["m"], 2)[:case["lead"]]
    scores = floats(new, "scores", (*lead, t_q, t_k), case, scale=2.0)
    if family in BLOCKED_FILLS:
        fill = BLOCKED_FILLS[family]
        fill = float(np.finfo(np.dtype(case["dtype"])).max) if fill is None else fill
        blocked = np.arange(t_k) > np.arange(t_k - t_q, t_k)[:, None]          # (t_q, t_k)
        value, suffix = cast(np.where(blocked, fill, scores.astype(np.float64)), case)
        scores = new.let("scores", value, f"np.where({_blocked_expr(t_q, t_k)}, {literal(fill)}, "
                                          f"{new.name_of(scores)}.astype(np.float64)){suffix}")
    elif family == "neg_inf":
        scores = with_entries(new, "scores", scores, case, -np.inf)
    elif family == "zeros":
        # a zero query row (the last, which sees every key) and a zero key column (the first, seen by all)
        value = scores.copy()
        value[..., -1, :] = 0
        value[..., :, 0] = 0
        name = new.name_of(scores)
        scores = new.let("scores", value, f"{name}.copy(); {name}[..., -1, :] = 0; {name}[..., :, 0] = 0")
    return {"scores": scores}


def _valid(case: dict) -> bool:
    if case.get("omit"):
        return case["t_q"] == case["t_k"]
    return case["t_q"] <= case["t_k"]


def _more_queries(case: dict) -> dict:
    return dict({k: v for k, v in case.items() if k != "omit"}, t_q=case["t_k"] + 1)


def _no_keys(case: dict) -> dict:
    return dict({k: v for k, v in case.items() if k != "omit"}, t_k=0)


SIZES = {"t_q": Dim(base=(2, 3, 4)), "t_k": Dim(base=(5, 6, 7))}
CITES = {"t_q": "a causal call with more queries than keys (t_q > t_k) raises ValueError",
         "t_k": REAL_SIZES + "; causal_mask a decoding step (t_q = 1) over 131,072 keys",
         "m": "apply_causal_mask(scores): (..., t_q, t_k) -> same, broadcasting over any leading axes",
         "omit": "t_k=None means t_k = t_q, giving the strict upper triangle", "numbers": ANY_NUMBER}
DECODING = Mode("a decoding step (one query)", lambda c: dict(c, t_q=1))
SQUARE = Mode("as many queries as keys", lambda c: dict(c, t_q=c["t_k"]))
MORE_QUERIES = "more queries than keys (t_q > t_k): the first query would have no key to attend to"

# apply_causal_mask first: its ValueError tells apart mistakes that the mask's alone does not (the
# test of t_q > t_k turned the wrong way round returns a mask of another shape than t_q and t_k swapped)
DOMAIN = Domain(
    Explore("apply_causal_mask", draw_apply, dims={**SIZES, "m": Dim(small=(1, 3), base=(2, 3))}, lead=2,
            families=("blocked_nan", "blocked_inf", "blocked_huge", "neg_inf", "zeros", "constant", "tiny",
                      "neg_inf_run"),
            valid=_valid, invalid=(Invalid(MORE_QUERIES, _more_queries),), masks=("",),
            big=({"t_q": 1, "t_k": 40_000, "lead": 0}, {"t_q": 2, "t_k": 33_000, "lead": 0, "values": "blocked_nan"},
                 {"t_q": 2, "t_k": 2, "lead": 1, "m": 16_385}, {"t_q": 4, "t_k": 4, "lead": 2}),
            pairs=(("t_q", "t_k"), ("values", "lead"), ("values", "dtype"), ("t_q", "values")),
            real=({"t_q": 1, "t_k": 131_072, "lead": 0},), modes=(DECODING, SQUARE), cites=CITES,
            grows=(Grows("T", "position", lambda n: {"t_q": n, "t_k": n, "lead": 0}),)),
    # `omit` (t_k left out) is valid on square cases only: a plain case has t_q < t_k, so it is
    # explored on the square cases of `big` and on the random mixes that draw t_q == t_k
    Explore("causal_mask", draw_mask, dims=SIZES, valid=_valid, float32=False, scalars={"omit": (True,)}, masks=("",),
            invalid=(Invalid(MORE_QUERIES, _more_queries),
                     Invalid("t_k = 0 keys: a query would have no key to attend to", _no_keys)),
            big=({"t_q": 1, "t_k": 40_000}, {"t_q": 1025, "t_k": 1025, "omit": True},
                 {"t_q": 1, "t_k": 1, "omit": True}, {"t_q": 6, "t_k": 6, "omit": True},
                 {"t_q": 5, "t_k": 5}, {"t_q": 7, "t_k": 7}),
            pairs=(("t_q", "t_k"), ("t_q", "numbers"), ("t_k", "numbers")),
            real=({"t_q": 1, "t_k": 131_072},), modes=(DECODING, SQUARE), cites=CITES,
            grows=(Grows("T", "position", lambda n: {"t_q": n, "t_k": n}),)),
)
