"""Cases near a failing one, in the space of the check's own cases (a dict of sizes, a dtype,
flags, a value family, a seed): a second case of other, larger sizes, where a relation seen on
the smallest case is confirmed, and the neighbours that change one dimension at a time.

Sizes are the whole numbers of a case (`T`, `n_heads`) and the entries of a tuple of them
(`shape`); `seed`, `axis` and the entries the check says the case is about stay as they are.
Every case made here is one the check may make (graders.engine.runner.Rerun.allows).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

# sizes a second case takes: three or more (with two keys any softmax row is the reference's
# at another temperature), and apart from each other, so that no two quantities coincide
PALETTE = (3, 4, 5, 7, 6, 8, 9, 11)
SECOND_TRIES = 3           # second cases tried at most
KEPT = ("seed", "axis", "lead", "fn", "why", "layout")


@dataclass(frozen=True)
class Size:
    """One size of a case: `key` ("T"), and `index` when it is an entry of a tuple ("shape")."""

    key: str
    index: int | None
    value: int

    @property
    def name(self) -> str:
        return self.key if self.index is None else f"{self.key}[{self.index}]"


def case_sizes(case: dict, frozen: tuple = ()) -> list[Size]:
    """The sizes of `case` a neighbour or a second case may change."""
    out = []
    for k, v in case.items():
        if k in KEPT or k in frozen or isinstance(v, bool):
            continue
        if isinstance(v, int):
            out.append(Size(k, None, v))
        elif isinstance(v, tuple) and v and all(isinstance(s, int) and not isinstance(s, bool) for s in v):
            out += [Size(k, i, s) for i, s in enumerate(v)]
    return out


def with_size(case: dict, size: Size, value: int) -> dict:
    """`case` with one size changed."""
    if size.index is None:
        return {**case, size.key: value}
    old = case[size.key]
    return {**case, size.key: old[:size.index] + (value,) + old[size.index + 1:]}


def second_cases(case: dict, allows, frozen: tuple = (), keep: tuple = (), tries: int = SECOND_TRIES) -> list[dict]:
    """Up to `tries` cases like `case` with its sizes (but those in `keep`, which the failure
    needs) changed to larger values apart from each other, and another seed: each one the
    check may make."""
    free = [s for s in case_sizes(case, frozen) if s.name not in keep and s.key not in keep]
    if not free and "seed" not in case:
        return []
    out, seen = [], set()
    for shift in range(len(PALETTE)):
        if len(out) >= tries:
            break
        made = dict(case, seed=int(case.get("seed", 0)) + 7 + shift)
        used = {s.value for s in case_sizes(case, frozen) if s not in free}
        for i, s in enumerate(free):
            made = with_size(made, s, _apart(PALETTE[(i + shift) % len(PALETTE)], s.value, used))
            used.add(_at(made, s))
        marker = repr(sorted((k, v) for k, v in made.items()))
        if marker not in seen and _allowed(allows, made):
            seen.add(marker)
            out.append(made)
    return out


def _apart(start: int, old: int, used: set) -> int:
    """A value from `start` up that is none of `used` and not `old` (a size the case had)."""
    v = start
    while v in used or v == old:
        v += 1
    return v


def _at(case: dict, size: Size) -> int:
    v = case[size.key]
    return v if size.index is None else v[size.index]


def _allowed(allows, case: dict) -> bool:
    try:
        return bool(allows(case))
    except Exception:
        return False


def shown(value: Any) -> str:
    """A case's value in words: a dtype as it is, a tuple as (2, 3), anything else as repr."""
    if isinstance(value, tuple):
        return "(" + ", ".join(str(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return str(value) if isinstance(value, (int, float, str)) else repr(value)


def varied_calls(args: tuple, kwargs: dict, tries: int = SECOND_TRIES) -> list[tuple[tuple, dict]]:
    """The same call with other values, for a failing case with no size to change (inputs written
    out in the check): its float arrays moved by a few percent (zeros and infinities kept), and
    its whole numbers (the sizes of a count) doubled, one more, and tripled."""
    out = []
    for i, change in enumerate((lambda n: 2 * n, lambda n: n + 1, lambda n: 3 * n)[:tries]):
        rng = np.random.default_rng(11 + i)
        made = (tuple(_varied(a, rng, change) for a in args), {k: _varied(v, rng, change) for k, v in kwargs.items()})
        out.append(made)
    return out


def _varied(value: Any, rng, change) -> Any:
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        with np.errstate(all="ignore"):
            moved = value * (1 + 0.05 * rng.standard_normal(value.shape))
        return np.where(np.isfinite(value) & (value != 0), moved, value).astype(value.dtype)
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and value >= 1:
        return type(value)(change(int(value)))
    if isinstance(value, (tuple, list)):
        return type(value)(_varied(v, rng, change) for v in value)
    if isinstance(value, dict):
        return {k: _varied(v, rng, change) for k, v in value.items()}
    return value
