"""The input domain of sliding_window_attention(q, k, v, window).

Sizes T and d, up to two leading axes (m, 3). `window` is given as a number or relative to T
("T-1", "T", "T+1"), so that it keeps its place at the edge of the band while T shrinks; a
plain case has window 3, less than T. Value families: `huge` (scores near 1e3 and more),
`row_scales` (queries of very different lengths, so the rows of scores lie far apart),
`zeros` (rows of q and k that are all zeros: scores of exactly 0), `far_value` (the first
key's value is 1e8, so a query past the window that gives it any weight at all shows), and
the engine's whole-array `zero`, `constant` and `tiny`. window has no upper bound: 2**31 and
10**12 too, and typed as a NumPy integer. Pairs varied together on the plain case: each
family with the window, the dtype and the leading axes; T with the window. No case at the
size of a real model here: T_q = T_k, so an attempt that builds a (T, T) array would take
seconds on each before the memory check (T = 8192) could name its mistake; the grader's own
`long` check (past 4096) and `past_int16` run there. The ValueError: window < 1, at T = 1
too, below T, at T and above it. The large case is 16,385 short sequences. No case here runs past 32,767
positions: T_q = T_k, so an attempt that builds a (T, T) array would need gigabytes there
before the memory check (T = 8192) could name its mistake; the grader's own slow check
`past_int16` makes that call after the memory check.
"""
import numpy as np

from graders.engine.domain import (
    ANY_NUMBER,
    REAL_SIZES,
    SIZES_OF_ONE,
    UNBOUNDED,
    Dim,
    Domain,
    Explore,
    Grows,
    Invalid,
    Mode,
    cast,
    floats,
)
from graders.engine.probes import largest_score, through_v

ROW_SCALES = np.array([1.0, 30.0, 1e-3, 6.0, 0.3, 18.0])
RELATIVE = {"T-1": -1, "T": 0, "T+1": 1}


def window_of(case: dict) -> int:
    """The window a case asks for: a number, or T plus an offset."""
    w = case["window"]
    return case["T"] + RELATIVE[w] if isinstance(w, str) else w


def _zero_rows(new, name: str, a: np.ndarray, start: int) -> np.ndarray:
    """`a` with positions start, start + 3, ... all zeros."""
    value = a.copy()
    value[..., start::3, :] = 0
    shown = new.name_of(a)
    return new.let(name, value, f"np.where((np.arange({a.shape[-2]}) % 3 == {start})[:, None], 0.0, {shown})"
                                f".astype({shown}.dtype)")


def draw(new, case: dict) -> dict:
    lead = (case["m"], 3)[:case["lead"]]
    T, d, family = case["T"], case["d"], case["values"]
    scale = 30.0 if family == "huge" else 1.0      # entries of 30: scores q.k / sqrt(d) near 1e3
    q = floats(new, "q", (*lead, T, d), case, scale=scale)
    k = floats(new, "k", (*lead, T, d), case, scale=scale)
    v = floats(new, "v", (*lead, T, d), case)
    if family == "row_scales":
        value, suffix = cast(q.astype(np.float64) * np.resize(ROW_SCALES, T)[:, None], case)
        q = new.let("q", value, f"{new.name_of(q)}.astype(np.float64) * np.resize({ROW_SCALES.tolist()}, {T})"
                                f"[:, None]{suffix}")
    elif family == "zeros":
        q, k = _zero_rows(new, "q", q, 0), _zero_rows(new, "k", k, min(1, T - 1))
    elif family == "far_value":  # the first key's value is 1e8: the queries past the window must not feel it
        value, suffix = cast(np.concatenate([v[..., :1, :].astype(np.float64) * 1e8, v[..., 1:, :]], axis=-2), case)
        shown = new.name_of(v)
        v = new.let("v", value, f"np.concatenate([{shown}[..., :1, :] * 1e8, {shown}[..., 1:, :]], axis=-2){suffix}")
    return {"q": q, "k": k, "v": v, "window": window_of(case)}


def _valid(case: dict) -> bool:
    return window_of(case) >= 1


DOMAIN = Domain(Explore(
    "sliding_window_attention", draw,
    dims={"T": Dim(base=(5, 6, 7)), "d": Dim(base=(2, 3)), "m": Dim(small=(1, 3), base=(2, 4), trivial=0)},
    lead=2,
    families=("huge", "row_scales", "zeros", "far_value", "zero", "constant", "tiny"),
    extreme=("huge", "row_scales"),
    scalars={"window": (1, 2, "T-1", "T", "T+1", 1000)},
    valid=_valid,
    invalid=(Invalid("window must be at least 1", lambda c: dict(c, window=0)),
             Invalid("window must be at least 1", lambda c: dict(c, window=-3))),
    # 16,385 sequences of two positions: cheap, and past where a loop over sequences in chunks of
    # 16,384 would drop some
    big=({"m": 16_385, "T": 2, "d": 1, "lead": 1, "window": 2},),
    fixed={"window": 3},
    pairs=(("values", "window"), ("values", "dtype"), ("values", "lead"), ("T", "window")),
    counts=("window",),
    modes=(Mode("a window below T", lambda c: dict(c, window=3)), Mode("a window of T", lambda c: dict(c, window="T")),
           Mode("a window past T", lambda c: dict(c, window="T+1")), Mode("a window of 1", lambda c: dict(c, window=1))),
    cites={"T": REAL_SIZES + "; the blockwise katas sequences of 8,192", "d": SIZES_OF_ONE, "m": SIZES_OF_ONE,
           "window": UNBOUNDED + "; window >= T is ordinary causal attention; window == 1 returns v. " + ANY_NUMBER},
    axes={-2: "positions", -1: "features"},
    constants=lambda c: {"sqrt(d)": np.sqrt(c["d"]), "d": c["d"], "T": c["T"], "window": window_of(c)},
    probe=through_v, magnitude=largest_score,
    grows=(Grows("T", "position", lambda n: {"T": n, "d": 4, "lead": 0, "window": 8}, (128, 256, 512), note="window = 8"),),
))
