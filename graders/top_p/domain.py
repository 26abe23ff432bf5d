"""The input domain of top_p_probs(logits, temperature=1.0, top_p=1.0) and
sample_top_p(logits, temperature=1.0, top_p=1.0, rng=None).

V tokens, up to two leading axes (sizes m, 2); temperature from 0 to 3, 1e-6 included;
top_p from 1e-6 to 1. Value families: `ties` (whole-number logits: many equal
probabilities), `offsets` (each row shifted by a different large amount), `huge` (logits of
1e3). float32 meets neither large logits nor temperatures below 0.05: a float32 number
near 1e4 / 1e-6 keeps no digits for the differences that decide the answer.
A sample is compared with the reference only where the contract fixes it: at temperature
0, and at a top_p so small that one token is kept.
"""
import numpy as np

from graders.engine.domain import Dim, Domain, Explore, Grows, Invalid, floats, with_row_offsets, with_ties


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

DOMAIN = Domain(
    Explore("top_p_probs", draw_probs, dims=SIZES, lead=2, families=("ties", "offsets", "huge"),
            extreme=("offsets", "huge"), scalars=SCALARS, valid=_valid, invalid=INVALID,
            big=({"V": 40_000, "lead": 0, "top_p": 0.9}, {"V": 3, "m": 16_385, "lead": 1, "top_p": 0.5}),
            fixed={"temperature": 0.8, "top_p": 0.9},
            grows=(Grows("V", "token", lambda n: {"V": n, "lead": 0}, (64, 128, 256)),)),
    Explore("sample_top_p", draw_sample, dims=SIZES, lead=2, families=("ties", "offsets"),
            scalars=SCALARS, valid=_valid, invalid=INVALID, determined=_determined,
            big=({"V": 40_000, "lead": 0, "temperature": 0.0},),
            fixed={"temperature": 0.0, "top_p": 0.9},
            grows=(Grows("V", "token", lambda n: {"V": n, "lead": 0}, (64, 128, 256)),)),
)
