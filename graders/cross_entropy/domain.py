"""The input domain of cross_entropy(logits, targets, ignore_index=-100).

Sizes n (the first leading axis; the others have 2 and 3) and V, up to three leading axes.
Targets are int64 or int32 (`target_dtype`); every `ignored`-th position from the second on
gets ignore_index (none when 0), which is -100 by default, -1, 0 (inside [0, V): targets of
that class are ignored too) or 255 (above a small V). Value families: `huge` (logits of 1e4:
a target's probability far below 1e-300), `offsets` (each position shifted by its own large
amount, +1e4, -1e4, 0, ...), and the engine's whole-array `zero`, `constant` and `tiny`.
float32 meets neither `huge` nor `offsets`: a float32 logit near 1e4 is itself only known to
about 1e-3, and so is softmax - 1 at a confident target. Pairs varied together on the plain
case: each family with ignore_index, V and the leading axes; ignore_index with what is ignored,
the targets' dtype and typed as a NumPy integer. The modes: one position (logits (V,)), an
ignore_index inside [0, V), every position counted; the ValueErrors are asked for in each.
The size of a real model: a vocabulary of 131,072, with every family.
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
)

STRAY = {"V": lambda V: V, "-1": lambda V: -1, "-100": lambda V: -100}


def _targets(new, lead: tuple, case: dict) -> np.ndarray:
    """Targets in [0, V), V - 1 first, then ignore_index at the ignored positions (all of them for
    `all_ignored`) and a stray target at position 0 (for `stray`)."""
    V, ii, dtype = case["V"], case.get("ignore_index", -100), case.get("target_dtype", "int64")
    size, every = int(np.prod(lead, dtype=np.int64)), case.get("ignored", 0)
    # position 0 takes the last class, V - 1 (past 32,767 for a large V), the others a random one
    first = (np.arange(size) == 0).reshape(lead)
    drawn = np.asarray(new.rng.integers(0, V, size=lead))
    t = new.let("targets", np.where(first, V - 1, drawn).astype(dtype),
                f"np.where((np.arange({size}) == 0).reshape({lead}), {V - 1}, rng.integers(0, {V}, size={lead}))"
                f".astype(np.{dtype})")
    if case.get("all_ignored"):
        t = new.let("targets", np.full(lead, ii, dtype=dtype), f"np.full({lead}, {ii}, dtype=np.{dtype})")
    elif every:
        mask = (np.arange(size) % every == 1).reshape(lead)
        t = new.let("targets", np.where(mask, ii, t).astype(dtype),
                    f"np.where((np.arange({size}) % {every} == 1).reshape({lead}), {ii}, {new.name_of(t)})"
                    f".astype(np.{dtype})")
    if "stray" in case:
        bad = STRAY[case["stray"]](V)
        t = new.let("targets", np.where(first, bad, t).astype(dtype),
                    f"np.where((np.arange({size}) == 0).reshape({lead}), {bad}, {new.name_of(t)}).astype(np.{dtype})")
    return t


def draw(new, case: dict) -> dict:
    lead = (case["n"], 2, 3)[:case["lead"]]
    family = case["values"]
    logits = floats(new, "logits", (*lead, case["V"]), case, scale=1e4 if family == "huge" else 2.0)
    if family == "offsets":
        logits = with_row_offsets(new, "logits", logits, case, axis=-1, size=1e4)
    values = {"logits": logits, "targets": _targets(new, lead, case)}
    if "ignore_index" in case:
        values["ignore_index"] = case["ignore_index"]
    return values


def _valid(case: dict) -> bool:
    if case["V"] == 1 and case.get("ignore_index", -100) == 0:
        return False  # every target is class 0: nothing is counted
    return case["dtype"] == "float64" or case["values"] not in ("huge", "offsets")


def _single(case: dict, **changes) -> dict | None:
    return dict(case, lead=0, **changes) if case["n"] == 1 else None


def _empty(case: dict) -> dict:
    return dict(case, n=0, lead=max(1, case["lead"]))


INVALID = (
    Invalid("the target V is outside [0, V) and is not ignore_index", lambda c: dict(c, stray="V")),
    Invalid("the target -1 is outside [0, V) and ignore_index is -100", lambda c: dict(c, stray="-1")),
    Invalid("the target -100 is outside [0, V) and ignore_index is 0", lambda c: dict(c, stray="-100", ignore_index=0)),
    Invalid("no position is counted: every target is ignore_index", lambda c: dict(c, all_ignored=True)),
    Invalid("no position is counted: every target is ignore_index=0", lambda c: dict(c, all_ignored=True,
                                                                                       ignore_index=0)),
    Invalid("no position is counted: the batch is empty", _empty),
    # one position, logits (V,) and a 0-d target: a path for a single vector must check it too
    Invalid("the target V is outside [0, V) and is not ignore_index", lambda c: _single(c, stray="V")),
    Invalid("no position is counted: the one target is ignore_index", lambda c: _single(c, all_ignored=True)),
)

DOMAIN = Domain(Explore(
    "cross_entropy", draw,
    dims={"n": Dim(base=(2, 3), trivial=0), "V": Dim(base=(4, 5, 6), big=40_000)},
    lead=3,
    families=("huge", "offsets", "zero", "constant", "tiny"),
    scalars={"ignore_index": (-100, -1, 0, 255), "ignored": (0, 2), "target_dtype": ("int32", "int64")},
    valid=_valid,
    invalid=INVALID,
    pairs=(("values", "ignore_index"), ("values", "lead"), ("V", "values"), ("ignore_index", "ignored"),
           ("ignore_index", "target_dtype"), ("ignore_index", "numbers")),
    real=({"n": 1, "lead": 1, "V": 131_072},),
    modes=(Mode("one position (logits (V,))", lambda c: dict(c, n=1, lead=0)),
           Mode("an ignore_index inside [0, V)", lambda c: dict(c, ignore_index=0)),
           Mode("every position counted", lambda c: dict(c, ignored=0))),
    cites={"n": SIZES_OF_ONE, "V": REAL_SIZES + "; a vocabulary of 131,072",
           "ignore_index": "An ignore_index inside [0, V) ignores that class, as in PyTorch. " + ANY_NUMBER,
           "ignored": "the mean over the positions whose target is not ignore_index",
           "target_dtype": "targets int (...)"},
    # rows past 16,384 with V = 2, all counted; a vocabulary past 32,767 for two positions
    big=({"n": 16_385, "lead": 1, "V": 2, "ignored": 0}, {"n": 2, "lead": 1, "V": 40_000}),
    fixed={"ignored": 3},
    outputs=("the loss", "the gradient"),
    grows=(Grows("N", "row", lambda n: {"n": n, "V": 8, "lead": 1}),),
))
