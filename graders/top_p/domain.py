"""The input domain of top_p_probs(logits, temperature=1.0, top_p=1.0) and
sample_top_p(logits, temperature=1.0, top_p=1.0, rng=None).

V tokens, up to two leading axes (sizes m, 2); temperature from 0 to 3, 1e-6 included;
top_p from 1e-6 to 1. Value families: `ties` (whole-number logits: many equal
probabilities), `offsets` (each row shifted by a different large amount), `huge` (logits of
1e3). float32 meets neither large logits nor temperatures below 0.05: a float32 number
near 1e4 / 1e-6 keeps no digits for the differences that decide the answer.
A sample is compared with the reference only where the contract fixes it: at temperature
0, and at a top_p so small that one token is kept.
The engine's whole-array families too: `zero` and `constant` (every logit equal: ties across
the whole row, the lower indices first), `neg_inf_run` (every row begins with a run of -inf).
No `tiny`: logits of 1e-30 tie in their probabilities but not in their own order. Pairs varied
together on the plain case: each family with temperature, top_p and the dtype; temperature
with top_p; each typed every way the contract allows (temperature=0 and top_p=1 as ints, as
np.float32). The modes: one vector (V,), whose sample is an integer scalar, and a batch; at
temperature 0 and above it. The size of a real model: a vocabulary of 131,072, with every
family. sample_top_p with rng left out draws differently in two new processes (4,096 rows).
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
    with_row_offsets,
    with_ties,
)


def _logits(new, case: dict) -> np.ndarray:
    lead = (case["m"], 2)[:case["lead"]]
    family = case["values"]
    z = floats(new, "logits", (*lead, case["V"]), case, scale=1e3 if family == "huge" else 3.0)
    if family == "ties":
        z = with_ties(new, "logits", z, case)
    elif family == "offsets":
        z = with_row_offsets(new, "logits", z, case, axis=-1)
    return z


def draw_probs(new, case: dict) -> dict:
    values = {"logits": _logits(new, case)}
    values.update({name: case[name] for name in ("temperature", "top_p") if name in case})
    return values


def draw_sample(new, case: dict) -> dict:
    values = draw_probs(new, case)
    seed = 7 + case.get("seed", 0) % 5
    values["rng"] = new.let("rng", np.random.default_rng(seed), f"np.random.default_rng({seed})")
    return values


def _valid(case: dict) -> bool:
    if case.get("temperature", 1.0) < 0 or not 0 < case.get("top_p", 1.0) <= 1:
        return False
    return case["dtype"] == "float64" or (case["values"] not in ("offsets", "huge")
                                          and case.get("temperature", 1.0) >= 0.05)


def _determined(case: dict) -> bool:
    """A sample the contract fixes: greedy at temperature 0, or a nucleus of one token."""
    return case.get("temperature", 1.0) == 0 or case.get("top_p", 1.0) <= 1e-6


INVALID = (Invalid("a negative temperature", lambda c: dict(c, temperature=-0.5)),
           Invalid("top_p must lie in (0, 1]", lambda c: dict(c, top_p=0.0)),
           Invalid("top_p must lie in (0, 1]", lambda c: dict(c, top_p=1.5)),
           Invalid("top_p must lie in (0, 1], and NaN does not", lambda c: dict(c, top_p=float("nan"))),
           Invalid("top_p must lie in (0, 1], at temperature 0 too", lambda c: dict(c, temperature=0.0, top_p=2.0)))
SIZES = {"V": Dim(big=40_000, base=(5, 6, 7)), "m": Dim(base=(2, 3), trivial=0)}
SCALARS = {"temperature": (0.0, 1e-6, 0.5, 3.0), "top_p": (1e-6, 0.3, 0.9, 1.0)}
PAIRS = (("values", "temperature"), ("values", "top_p"), ("values", "dtype"), ("temperature", "top_p"),
         ("temperature", "numbers"), ("top_p", "numbers"))
MODES = (Mode("one vector (V,)", lambda c: dict(c, lead=0)), Mode("a batch", lambda c: dict(c, lead=2)),
         Mode("temperature 0", lambda c: dict(c, temperature=0.0)))
CITES = {"V": REAL_SIZES + "; top_p handles a vocabulary of 131,072", "m": SIZES_OF_ONE,
         "temperature": "temperature == 0 gives a one-hot on the argmax; temperature < 0 raises ValueError. "
                        + ANY_NUMBER,
         "top_p": "a top_p outside (0, 1] (NaN included) raises ValueError. " + ANY_NUMBER}

DOMAIN = Domain(
    Explore("top_p_probs", draw_probs, dims=SIZES, lead=2,
            families=("ties", "offsets", "huge", "zero", "constant", "neg_inf_run"),
            extreme=("offsets", "huge"), scalars=SCALARS, valid=_valid, invalid=INVALID,
            big=({"V": 40_000, "lead": 0, "top_p": 0.9}, {"V": 3, "m": 16_385, "lead": 1, "top_p": 0.5}),
            fixed={"temperature": 0.8, "top_p": 0.9},
            pairs=PAIRS, real=({"V": 131_072, "lead": 0},), modes=MODES, cites=CITES,
            grows=(Grows("V", "token", lambda n: {"V": n, "lead": 0}, (64, 128, 256)),)),
    Explore("sample_top_p", draw_sample, dims=SIZES, lead=2,
            families=("ties", "offsets", "zero", "constant", "neg_inf_run"),
            scalars=SCALARS, valid=_valid, invalid=INVALID, determined=_determined,
            big=({"V": 40_000, "lead": 0, "temperature": 0.0},),
            fixed={"temperature": 0.0, "top_p": 0.9},
            pairs=PAIRS, real=({"V": 131_072, "lead": 0},), modes=MODES, cites=CITES,
            # 4,096 rows of a few tokens, each drawn at temperature 1 from the whole distribution
            random={"m": 4096, "lead": 1, "values": "normal", "temperature": 1.0, "top_p": 1.0},
            grows=(Grows("V", "token", lambda n: {"V": n, "lead": 0}, (64, 128, 256)),)),
)
