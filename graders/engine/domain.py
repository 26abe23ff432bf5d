"""A kata's input domain, declared once next to its grader, for the explorer to range over.

    DOMAIN = Domain(Explore(
        "softmax", draw=draw,                       # a case -> the call's arguments, by name
        dims={"n": Dim(big=40_000)},                # named sizes, and one past a cheap boundary
        lead=3, axis=("axis", 1),                   # up to 3 leading axes; `axis` ranges over them
        families=("offsets", "neg_inf", "ties"),    # value families `draw` knows besides "normal"
        scalars={}, valid=..., invalid=(...),        # legal ranges, the call rule, the ValueErrors
    ))

A case is a plain dict: each named size, `lead` (how many leading axes), `axis`, `values`
(the value family), each explored scalar parameter, `dtype` and `seed`. `draw(new, case)`
turns it into arguments with `new` (graders.engine.inputs.Inputs), so the repro rebuilds
them; everything else (call styles, layouts, sequences of calls, aliasing, comparison with
the reference, shrinking within the valid domain) is the explorer's (graders.engine.explorer).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from graders.engine.inputs import Inputs, literal
from graders.engine.palettes import ENGINE_FAMILIES

# sizes explored one at a time: 1 and 2, odd primes, and sizes that are not powers of two
SMALL = (1, 2, 3, 5, 7, 6, 12)

# The contract's words a domain's limits come from (Explore.cites), shared by every kata.
REAL_SIZES = ("Array dimensions go up to those of real models (a d_model of 16,384, a context of 131,072) and, "
              "where a kata sets no rule for larger ones, no further")
ANY_NUMBER = ("Scalar parameters are Python or NumPy numbers: where a float is named, an int means the same value; "
              "where an int is named, any Python or NumPy integer")
UNBOUNDED = "A parameter with no upper bound in its kata (block_size, window, a count) may be any valid value, 10**12 included"
SIZES_OF_ONE = "agreement with the reference on several random seeds and shapes (including sizes of 1 and sizes that are not powers of two)"


@dataclass(frozen=True)
class Dim:
    """A named size: its smallest legal value, the values explored, and a large value where a
    call stays cheap (past 32,767 for an index type, past 16,384 rows)."""

    minimum: int = 1
    small: tuple[int, ...] = SMALL
    big: int | None = None
    base: tuple[int, ...] = (2, 3, 4, 5)    # what it takes in a plain case: 2 or more, so that a layout shows
    # at or below this size most answers agree (one key, one feature): that a case passes there
    # says nothing of what a failure needs; 0 for a size whose 1 is a case like any other (a batch)
    trivial: int = 1


@dataclass(frozen=True, eq=False)
class Grows:
    """A size the cost of a call grows with, for the efficiency measured once every check passes
    (graders.engine.efficiency): how the report names it ("T") and one of it ("position"), the
    sizes it is measured at (each twice the one before), and `case(n)`, the case entries at size
    n (the rest is the function's plain case; what grows with it, a block size say, grows here
    too, and `note` says so: "block_size = T / 4"). A function's first Grows is its main
    dimension (Python lines, peak memory and time); the others, the heads or the batch, are
    measured in Python lines only."""

    name: str
    unit: str
    case: Callable[[int], dict]
    sizes: tuple[int, ...] = (16, 32, 64)
    note: str = ""


@dataclass(frozen=True)
class Invalid:
    """A call the contract says must raise ValueError: `make` turns a valid case into one (or
    None when it cannot), and `why` says what is wrong with it."""

    why: str
    make: Callable[[dict], dict | None]


@dataclass(frozen=True)
class Mode:
    """A mode the signature allows (causal and not, a block size that divides T and one that
    does not, a window above T, a decoding step): `make` turns a case into that mode (or None
    when it cannot). The contract's rules hold in every mode: the ValueErrors are asked for in
    each, and a memory rule (Memory) measured in each it names."""

    name: str
    make: Callable[[dict], dict | None]


@dataclass(frozen=True)
class Memory:
    """A memory rule of the contract: at the sizes of `case` (all the others plain), in each of
    `modes`, the peak tracemalloc sees during the call stays below one byte a (query, key) pair,
    `pairs(case)` giving (T_q, T_k)."""

    case: dict
    pairs: Callable[[dict], tuple[int, int]]
    modes: tuple[Mode, ...]


@dataclass(frozen=True, eq=False)
class Explore:
    """One function of a kata and the calls of it that are valid."""

    function: str
    draw: Callable[[Inputs, dict], dict]
    dims: dict[str, Dim] = field(default_factory=dict)
    lead: int = 0                                   # leading axes explored: 0 to this many
    axis: tuple[str, int] | None = None             # (parameter, ndim without leading axes)
    families: tuple[str, ...] = ()                 # value families besides "normal"
    extreme: tuple[str, ...] = ()                   # families compared with float32's extreme tolerance
    scalars: dict[str, tuple] = field(default_factory=dict)  # parameter -> values at the ends of its range
    valid: Callable[[dict], bool] = lambda case: True
    invalid: tuple[Invalid, ...] = ()
    big: tuple[dict, ...] = ()                      # whole cases past cheap boundaries (sizes only)
    float32: bool = True
    determined: Callable[[dict], bool] | None = None  # for a sampler: the cases whose answer is fixed
    sequence: bool = True                           # explore sequences of calls
    fixed: dict[str, Any] = field(default_factory=dict)  # case entries every case has
    # for the observed relations (graders.engine.observed): the names of a tuple result's parts (a part that
    # is a tuple itself as (its name, (the names of its parts)): ("y", ("the returned cache", ("k", "v")))),
    # the names of each part's axes (a dict, or a list of dicts, one a part), and the case's
    # constants a wrong factor may be, by name ({"sqrt(d_head)": 1.41, ...})
    outputs: tuple = ()
    axes: Any = None
    constants: Callable[[dict], dict] | None = None
    # the outputs whose blocked entries are a mask, compared with the reference's (graders.engine.masks):
    # their names, "" for a single output
    masks: tuple[str, ...] = ()
    # for what a failure needs (graders.engine.contrast): the argument the data scale applies to (the
    # first float array, when not given), and `magnitude(arguments) -> (what, largest value)` to say it
    scaled: str | None = None
    magnitude: Callable[[dict], tuple[str, float]] | None = None
    # for a function that returns only a product of its attention weights: arguments that show them
    # (graders.engine.probes: through_v, through_d_out)
    probe: Callable[[dict], Any] | None = None
    # for the efficiency measured once every check passes: the sizes the cost grows with, the
    # main one first (none: a call whose cost does not grow, such as a formula on a few ints)
    grows: tuple[Grows, ...] = ()
    # the explorer as an adversary (graders.engine.palettes, graders.engine.adversary):
    # pairs of factors that interact, each varied together on the plain case (a factor: a size,
    # a scalar, "values", "dtype", "lead", "axis" or "numbers", how scalar arguments are typed);
    # the pairs not declared meet in a covering array
    pairs: tuple[tuple[str, str], ...] = ()
    # parameters with no upper bound in the contract (block_size, window, a count): 2**31 and 10**12 too
    counts: tuple[str, ...] = ()
    # cases at the contract's sizes of real models (a vocabulary of 131,072, sequences past 4,096
    # and 8,192), each explored with every value family
    real: tuple[dict, ...] = ()
    # the modes the signature allows: the ValueErrors are asked for in each
    modes: tuple[Mode, ...] = ()
    # a memory rule of the contract, measured in each of its modes
    memory: Memory | None = None
    # for a function with a random default (rng=None): the plain case's changes under which one
    # call draws many numbers, so that two new processes that draw alike show a fixed seed
    random: dict = field(default_factory=dict)
    # the contract's words for each limit of a size or a scalar (what `kata dev check` asks for)
    cites: dict[str, str] = field(default_factory=dict)

    def allows(self, case: dict) -> bool:
        """Whether `case` is a valid call: its axis within the array, every size at least its
        minimum, an engine family only where the domain takes it (tiny data in float64), and
        the kata's own rule."""
        values = case.get("values")
        if values in ENGINE_FAMILIES and (values not in self.families or (
                values == "tiny" and (case.get("dtype", "float64") != "float64" or case.get("numbers") == "float32"))):
            return False  # tiny data is float64's: a float32 number, or a scalar, would round it away
        if self.axis is not None and "axis" in case:
            ndim = self.axis[1] + case.get("lead", 0)
            if not -ndim <= case["axis"] < ndim:
                return False
        if any(case.get(k, d.minimum) < d.minimum for k, d in self.dims.items()):
            return False
        try:
            return bool(self.valid(case))
        except (KeyError, TypeError, ValueError, ZeroDivisionError):
            return False


@dataclass(frozen=True, eq=False)
class Domain:
    """Every function of a kata that the explorer ranges over."""

    functions: tuple[Explore, ...]

    def __init__(self, *functions: Explore):
        object.__setattr__(self, "functions", tuple(functions))

    def dimensions(self) -> dict[str, bool]:
        """Which of the explorer's eight dimensions this domain exercises."""
        fs = self.functions
        return {"call styles": True,
                "sizes": any(f.dims for f in fs),
                "leading axes and every axis": any(f.lead or f.axis for f in fs),
                "special values": any(f.families or f.scalars for f in fs),
                "float64 and float32": any(f.float32 for f in fs),
                "memory layouts": True,
                "sequences of calls": any(f.sequence for f in fs),
                "aliasing": True}


# ----------------------------------------------------------------------------- values

def floats(new: Inputs, name: str, shape: tuple, case: dict, scale: float = 1.0) -> np.ndarray:
    """Standard normal entries times `scale`, in the case's dtype."""
    return new.normal(name, shape, scale=scale, dtype=case.get("dtype", "float64"))


def cast(value: np.ndarray, case: dict) -> tuple[np.ndarray, str]:
    """`value` in the case's dtype, and the suffix that says so in a repro."""
    dtype = np.dtype(case.get("dtype", "float64"))
    return (value, "") if dtype == np.float64 else (value.astype(dtype), f".astype(np.{dtype})")


def with_row_offsets(new: Inputs, name: str, base: np.ndarray, case: dict, axis: int = -1,
                     size: float = 1e4) -> np.ndarray:
    """`base` plus a different large offset for each slice along `axis`: +size, -size, 0, ...
    (one global shift would cancel only when every slice had the same offset)."""
    shape = [1] * base.ndim
    shape[axis] = base.shape[axis]
    n = int(np.prod([s for i, s in enumerate(base.shape) if i != axis % base.ndim], dtype=np.int64))
    steps = np.array([size, -size, 0.0, size / 3, -size / 7][: max(n, 1)] * (n // 5 + 1))[:n]
    others = [s for i, s in enumerate(base.shape) if i != axis % base.ndim]
    offsets = np.moveaxis(steps.reshape(others + [1]), -1, axis % base.ndim)
    value, suffix = cast(base.astype(np.float64) + offsets, case)
    shown = new.name_of(base) or "base"
    return new.let(name, value, lambda: f"{shown}.astype(np.float64) + {literal(offsets)}{suffix}")


def with_entries(new: Inputs, name: str, base: np.ndarray, case: dict, fill: float, every: int = 3,
                 keep_axis: int = -1) -> np.ndarray:
    """`base` with every `every`-th entry (in C order) set to `fill`, but never the first entry
    of a slice along `keep_axis`: -inf beside finite logits, NaN where a mask will overwrite."""
    mask = (np.arange(base.size).reshape(base.shape) % every) == 1
    first = [slice(None)] * base.ndim
    first[keep_axis] = 0
    mask[tuple(first)] = False
    where = new.array(f"{name}_where", mask)
    value, suffix = cast(np.where(mask, fill, base.astype(np.float64)), case)
    return new.let(name, value, f"np.where({new.name_of(where)}, {literal(np.float64(fill))}, "
                                f"{new.name_of(base) or 'base'}.astype(np.float64)){suffix}")


def with_ties(new: Inputs, name: str, base: np.ndarray, case: dict) -> np.ndarray:
    """`base` rounded to whole numbers: many entries tie."""
    value, suffix = cast(np.round(base.astype(np.float64)), case)
    return new.let(name, value, f"np.round({new.name_of(base) or 'base'}){suffix}")


def with_common_score(new: Inputs, name: str, base: np.ndarray, case: dict, size: float) -> np.ndarray:
    """`base` (queries or keys, features last) made small, plus `size` in its first feature: every
    score of such queries and keys is near size**2 / sqrt(d), with a spread of about 1. The
    softmax ignores the common part; a float32 rounding of it does not go away."""
    value = base.astype(np.float64) * 0.3
    value[..., 0] += size
    value, suffix = cast(value, case)
    shown = new.name_of(base) or "base"
    return new.let(name, value, f"{shown}.astype(np.float64) * 0.3 + np.eye(1, {base.shape[-1]})[0] * {size!r}{suffix}")
