"""The contract's palettes: the values the explorer gives each factor of a case, and the
covering array of the pairs a domain does not declare.

A *factor* is one entry of a case: a named size, a scalar parameter, `values` (the value
family), `dtype`, `lead` (leading axes), `axis`, and `numbers` (how the call's scalar
arguments are typed). Each factor's palette comes from the contract:

- sizes: their minimum, 1 and 2, an odd one; a parameter with no upper bound (a count,
  `block_size`, `window`: Explore.counts) also 2**31 and 10**12;
- scalars: the values the domain declares at the ends of their ranges;
- numbers: scalar arguments as Python numbers, as NumPy numbers (np.int64, np.float64), a
  float with a whole value as an int (`eps=0`, `temperature=1`), a float as np.float32: "where
  a float is named, an int means the same value; where an int is named, any Python or NumPy
  integer" (NUMBERS);
- values: "normal", the domain's families, and the engine's own whole-array ones it takes
  (ENGINE_FAMILIES): the data all zero, all one constant, tiny (times 1e-30), and slices
  that begin with a run of -inf.

`numbered` and `whole_array` turn the arguments `draw` made into the case's `numbers` and
engine family, each change written into the repro. `covering(...)` gives rows that put every
pair of values of every pair of undeclared factors in at least one valid case.
"""
from __future__ import annotations

import itertools
import random
from typing import Callable

import numpy as np

from graders.engine.inputs import Inputs, literal

NUMBERS = ("python", "numpy", "int", "float32")
UNBOUNDED = (2**31, 10**12)       # what a parameter with no upper bound takes too
TINY = 1e-30                      # the scale of the `tiny` family (the contract's 1e-30 for rms_norm)
ENGINE_FAMILIES = ("zero", "constant", "tiny", "neg_inf_run")
COVERING_VALUES = 3               # values of a factor's palette the covering array pairs
COVERING_ROWS = 24                # rows of a covering array at most


# ----------------------------------------------------------------------------- numbers

def numbered(new: Inputs, values: dict, numbers: str) -> dict:
    """The call's arguments with each top-level Python number typed as `numbers` says: NumPy
    numbers, a whole float as an int, a float as np.float32 (bools stay as they are)."""
    if numbers in (None, "python"):
        return values
    out = {}
    for name, v in values.items():
        kind = type(v)
        made = v
        if numbers == "numpy" and kind is int and -2**63 <= v < 2**63:
            made = np.int64(v)
        elif numbers == "numpy" and kind is float:
            made = np.float64(v)
        elif numbers == "int" and kind is float and np.isfinite(v) and v == int(v):
            made = int(v)
        elif numbers == "float32" and kind is float:
            made = np.float32(v)
        out[name] = made if made is v else new.let(name, made, literal(made))
    return out


# ----------------------------------------------------------------------------- engine families

def whole_array(new: Inputs, values: dict, family: str, data: str | None, axis: int = -1) -> dict:
    """The arguments with the data argument (`data`, else the first float array) made all zero,
    all one constant, tiny, or with every slice along `axis` beginning with a run of -inf."""
    if family not in ENGINE_FAMILIES:
        return values
    name = data if data in values else next(
        (k for k, v in values.items() if isinstance(v, np.ndarray) and v.dtype.kind == "f" and v.size), None)
    if name is None:
        return values
    a = values[name]
    shown = new.name_of(a) or name
    if family == "zero":
        made, expr = np.zeros_like(a), f"np.zeros_like({shown})"
    elif family == "constant":
        made, expr = np.full_like(a, 0.75), f"np.full_like({shown}, 0.75)"
    elif family == "tiny":
        made, expr = a * TINY, f"{shown} * {TINY!r}"
    else:
        made, expr = _neg_inf_run(a, axis), ""
        n = a.shape[axis] if a.ndim else 0
        run = min(2, n - 1)
        expr = (f"np.where(np.arange({n}).reshape({_along(a.ndim, axis, n)}) < {run}, -np.inf, {shown})"
                f"{'' if a.dtype == np.float64 else f'.astype(np.{a.dtype})'}")
    return {**values, name: new.let(name, made.astype(a.dtype, copy=False), expr)}


def _along(ndim: int, axis: int, n: int) -> tuple:
    shape = [1] * ndim
    shape[axis % ndim] = n
    return tuple(shape)


def _neg_inf_run(a: np.ndarray, axis: int) -> np.ndarray:
    """`a` with the first min(2, n - 1) entries of every slice along `axis` set to -inf."""
    if not a.ndim:
        return a.copy()
    n = a.shape[axis]
    run = min(2, n - 1)
    where = np.arange(n).reshape(_along(a.ndim, axis, n)) < run
    return np.where(where, -np.inf, a).astype(a.dtype)


# ----------------------------------------------------------------------------- palettes

def palettes(ex) -> dict[str, tuple]:
    """Each factor of `ex` (graders.engine.domain.Explore) and its palette, from the contract."""
    out: dict[str, tuple] = {}
    for name, dim in ex.dims.items():
        odd = [v for v in dim.small if v % 2 and v > 2]
        values = [dim.minimum, 1, 2] + odd[-1:]
        if name in ex.counts:
            values += list(UNBOUNDED)
        out[name] = tuple(sorted({v for v in values if v >= dim.minimum}))
    for name, values in ex.scalars.items():
        extra = tuple(v for v in UNBOUNDED if name in ex.counts and v not in values)
        out[name] = tuple(values) + extra
    out["values"] = ("normal",) + tuple(ex.families)
    if ex.float32:
        out["dtype"] = ("float64", "float32")
    if ex.lead:
        out["lead"] = tuple(range(ex.lead + 1))
    if ex.axis is not None:
        out["axis"] = (-1, 0)
    out["numbers"] = NUMBERS
    return out


def fair(ex, case: dict) -> bool:
    """A case the domain allows, whose answer the contract fixes (a sampler's: greedy, or a
    nucleus of one token), with at most one parameter at an unbounded value (2**31, 10**12): the
    contract lets each have any value, not their products overflow every integer type."""
    return ex.allows(case) and (ex.determined is None or ex.determined(case)) and \
        sum(1 for k in ex.counts if case.get(k) in UNBOUNDED) <= 1


def pair_cases(ex, base: Callable[[int], dict]) -> list[dict]:
    """Each declared pair of factors varied together on the plain case (the rest plain): every
    value of one with every value of the other, each case the domain allows."""
    table = palettes(ex)
    out = []
    for n, (a, b) in enumerate(ex.pairs):
        for i, (va, vb) in enumerate(itertools.product(table.get(a, ()), table.get(b, ()))):
            case = dict(base(n * 97 + i), **{a: va, b: vb})
            if fair(ex, case):
                out.append(case)
    return out


def undeclared(ex) -> list[tuple[str, str]]:
    """The pairs of factors the domain does not declare to interact."""
    table = palettes(ex)
    declared = {frozenset(p) for p in ex.pairs}
    names = [k for k, v in table.items() if len(v) > 1]
    return [(a, b) for a, b in itertools.combinations(names, 2) if frozenset((a, b)) not in declared]


def covering(ex, base: Callable[[int], dict], seed: str) -> list[dict]:
    """Rows that cover every pair of values (up to COVERING_VALUES of each palette) of every
    undeclared pair of factors in a case the domain allows, at most COVERING_ROWS, chosen
    greedily from seeded candidates: the same rows at every grading."""
    table = {k: _spread(v) for k, v in palettes(ex).items() if len(v) > 1}
    pairs = undeclared(ex)
    todo = {((a, va), (b, vb)) for a, b in pairs for va in table[a] for vb in table[b]}
    rng = random.Random(seed)
    rows: list[dict] = []
    while todo and len(rows) < COVERING_ROWS:
        best, gain = None, 0
        for _ in range(30):
            (a, va), (b, vb) = rng.choice(sorted(todo, key=repr))
            row = {k: rng.choice(v) for k, v in table.items()}
            row.update({a: va, b: vb})
            case = dict(base(len(rows)), **row)
            if not fair(ex, case):
                continue
            got = sum(1 for p, q in todo if row.get(p[0]) == p[1] and row.get(q[0]) == q[1])
            if got > gain:
                best, gain = case, got
        if best is None:
            break
        rows.append(best)
        todo = {(p, q) for p, q in todo if not (best.get(p[0]) == p[1] and best.get(q[0]) == q[1])}
    return rows


def _spread(values: tuple) -> tuple:
    """Up to COVERING_VALUES of a palette: its first, its last and one between."""
    if len(values) <= COVERING_VALUES:
        return tuple(values)
    return (values[0], values[len(values) // 2], values[-1])
