"""The input domain of flash_attention(q, k, v, block_size=128, causal=True).

Sizes t_q, t_k and d, up to two leading axes; block_size from 1 to past T; causal or not
(causal needs t_q <= t_k). Value families: `huge` (scores of 1e3 and more), `shifted_scores`
(every score near 70 with a spread of about 1: a float32 rounding shows), `row_scales`
(queries of very different lengths, so the rows of scores lie far apart), `zeros` (a query
and a key of zeros: scores of exactly 0), and the engine's whole-array `zero`, `constant` and
`tiny` (q of 1e-30: every visible key weighs alike). block_size has no upper bound: 2**31 and
10**12 too, and typed as a NumPy integer. Pairs varied together on the plain case: each
family with causal, with block_size and with the dtype; block_size with causal; t_q with
causal. The modes the signature allows: causal and not, a block size that divides T, one
that does not, one past T, a decoding step (one query); the ValueErrors are asked for in
each, and the memory rule is measured, past the grader's own check (causal, block 64, and
the defaults), for 512 queries over 8192 keys not causal, with a block size of 100 that
divides neither, and both. The size of a real model: 3 queries over 8,200 keys, with every
family.
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
    Memory,
    Mode,
    cast,
    floats,
    with_common_score,
)
from graders.engine.probes import largest_score, through_v

ROW_SCALES = np.array([1.0, 30.0, 1e-3, 6.0, 0.3, 18.0])


def draw(new, case: dict) -> dict:
    lead = tuple(range(2, 2 + case["lead"]))
    t_q, t_k, d, family = case["t_q"], case["t_k"], case["d"], case["values"]
    scale = 30.0 if family == "huge" else 1.0   # q.k / sqrt(d) near 1e3
    q = floats(new, "q", (*lead, t_q, d), case, scale=scale)
    k = floats(new, "k", (*lead, t_k, d), case, scale=scale)
    v = floats(new, "v", (*lead, t_k, d), case)
    if family == "row_scales":
        value, suffix = cast(q.astype(np.float64) * np.resize(ROW_SCALES, t_q)[:, None], case)
        q = new.let("q", value, f"{new.name_of(q)}.astype(np.float64) * np.resize({ROW_SCALES.tolist()}, {t_q})"
                                f"[:, None]{suffix}")
    elif family == "shifted_scores":  # every score near 70, a spread of about 1
        size = float(np.sqrt(70 * np.sqrt(d)))
        q, k = with_common_score(new, "q", q, case, size), with_common_score(new, "k", k, case, size)
    elif family == "zeros":
        q = new.let("q", _zero_first(q), f"np.concatenate([0 * {new.name_of(q)}[..., :1, :], "
                                         f"{new.name_of(q)}[..., 1:, :]], axis=-2)")
        k = new.let("k", _zero_first(k), f"np.concatenate([0 * {new.name_of(k)}[..., :1, :], "
                                         f"{new.name_of(k)}[..., 1:, :]], axis=-2)")
    values = {"q": q, "k": k, "v": v}
    values.update({name: case[name] for name in ("block_size", "causal") if name in case})
    return values


def _zero_first(a: np.ndarray) -> np.ndarray:
    out = a.copy()
    out[..., :1, :] = 0
    return out


def _valid(case: dict) -> bool:
    return (not case.get("causal", True) or case["t_q"] <= case["t_k"]) and case.get("block_size", 1) >= 1


MODES = (Mode("causal", lambda c: dict(c, causal=True)),
         Mode("not causal", lambda c: dict(c, causal=False)),
         Mode("a block size that divides T_k", lambda c: dict(c, block_size=c["t_k"])),
         Mode("a block size that does not divide T_k", lambda c: dict(c, block_size=c["t_k"] - 1 if c["t_k"] > 2 else 2)),
         Mode("a block size past T", lambda c: dict(c, block_size=10**12)),
         Mode("a decoding step (one query)", lambda c: dict(c, t_q=1)))
# the contract measures the rule causal at T = 8192 with block 64 (the grader's own check, which also makes 1024
# queries over 8192 keys with the defaults); here the same rule in the other modes, 512 queries over 8192 keys
# (blockwise answers hold 0.2 to 2.5 MiB there, a budget of 4 MiB; a (512, 8192) boolean mask is 4 MiB)
MEMORY = Memory({"t_q": 512, "t_k": 8192, "d": 16, "lead": 0, "values": "normal", "dtype": "float64"},
                lambda c: (c["t_q"], c["t_k"]),
                (Mode("not causal", lambda c: dict(c, causal=False, block_size=64)),
                 Mode("block 100, which divides neither", lambda c: dict(c, causal=True, block_size=100)),
                 Mode("not causal, block 100", lambda c: dict(c, causal=False, block_size=100))))
# The contract: "It must never build a full (T_q, T_k) array of any dtype".

DOMAIN = Domain(Explore(
    "flash_attention", draw,
    dims={"t_q": Dim(base=(3, 4, 5)), "t_k": Dim(base=(5, 6, 7)), "d": Dim(base=(2, 3))},
    lead=2,
    families=("huge", "row_scales", "zeros", "shifted_scores", "zero", "constant", "tiny"),
    extreme=("huge", "row_scales"),
    scalars={"block_size": (1, 2, 3, 5, 64, 1000), "causal": (False, True)},
    valid=_valid,
    invalid=(Invalid("causal with more queries than keys: the first query would see no key",
                     lambda c: dict(c, t_q=c["t_k"] + 1, causal=True)),
             Invalid("block_size must be at least 1", lambda c: dict(c, block_size=0)),
             Invalid("block_size must be at least 1", lambda c: dict(c, block_size=-2))),
    big=({"t_q": 1, "t_k": 40_000, "d": 2, "lead": 0, "block_size": 128},
         {"t_q": 3, "t_k": 32_770, "d": 1, "lead": 0, "block_size": 64},  # the diagonal across 32,768
         {"t_q": 3, "t_k": 33_000, "d": 1, "lead": 0, "block_size": 1000, "causal": False}),
    fixed={"block_size": 2},
    pairs=(("values", "causal"), ("values", "block_size"), ("values", "dtype"), ("block_size", "causal"),
           ("t_q", "causal")),
    counts=("block_size",),
    real=({"t_q": 3, "t_k": 8_200, "d": 2, "lead": 0, "block_size": 128},),
    modes=MODES, memory=MEMORY,
    cites={"t_q": "causal uses the same bottom-right alignment as causal_mask when T_q != T_k",
           "t_k": REAL_SIZES + "; the blockwise katas sequences of 8,192", "d": SIZES_OF_ONE,
           "block_size": UNBOUNDED + "; block_size need not divide T", "causal": ANY_NUMBER},
    axes={-2: "query positions", -1: "features"},
    constants=lambda c: {"sqrt(d)": np.sqrt(c["d"]), "d": c["d"], "T_k": c["t_k"], "T_q": c["t_q"],
                         "block_size": c.get("block_size", 128)},
    probe=through_v, magnitude=largest_score,
    grows=(Grows("T", "position", lambda n: {"t_q": n, "t_k": n, "d": 4, "lead": 0, "block_size": n // 4,
                                                "causal": True}, note="block_size = T / 4"),),
))
