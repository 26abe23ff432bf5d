"""A relation is said only when it holds on two failing cases: the smallest one (the repro's)
and a second one of other, larger sizes. What holds by accident on a small case (with two keys
any softmax row is the reference's at another temperature; with d = 1 every row of a norm is
the weight, up to its sign) does not hold on a larger one, and is not said.

A factor is named after one of the case's numbers ("1/sqrt(d_head)") only when the same name
fits on both cases and no other name does: on sizes chosen apart from each other, a
coincidence does not repeat.
"""
from __future__ import annotations

from dataclasses import replace

from graders.engine.array_relations import permutation_pattern
from graders.engine.compared import Compared
from graders.engine.relations import findings
from graders.engine.said import family
from graders.engine.scales import precision
from graders.engine.wording import Finding, constant_names

# relations that carry a number (a factor, an offset): the same relation on another case may
# carry another number, named or not
VALUED = {"factor", "negated", "tempered", "ratio", "opposite_sign", "offset", "difference", "constant", "floor",
          "ceiling"}
NOT_CONFIRMED = {"count"}     # how many entries agree says nothing a case's message does not
GENERIC_MASKS = {"none", "differs", "no_future"}   # masks that differ, said without how
SAME_NUMBER = 1e-6


def every(c: Compared) -> list[Finding]:
    """Every relation between the attempt's answer and the reference's on one case."""
    found = findings(c.got, c.want, every=True, **c.relation_args())
    return sorted(found + precision(c.got, c.want, c.want32, c.eps, c.what, c.names), key=lambda f: f.rank)


def confirmed(first: Compared, second: Compared) -> list[Finding]:
    """The relations of `first` (worded as on it) that hold on `second` too, most specific
    first, those that say only where the answers differ left out when another says what.
    A number is named only after a name that fits it on both cases, and fits no other way."""
    one, two = every(first), every(second)
    keep, labels, varying, better = [], set(), set(), {}
    for f in one:
        k = key(f)
        if k is None:
            continue
        match = [g for g in two if key(g) == k]
        if not match:
            continue
        if f.kind == "mask" and f.detail[0] in GENERIC_MASKS:  # the other case may show what the mask is
            better[k] = next((g for g in match if g.detail[0] not in GENERIC_MASKS), None)
        if f.kind == "sizes":  # the lengths named after what fits both cases ("t_new", "t_past + t_new")
            for at in (2, 3):
                common = _exact_names(f.detail[at], first) & set().union(*(_exact_names(g.detail[at], second)
                                                                          for g in match))
                labels |= common if len(common) == 1 else set()
        if f.kind in VALUED:
            names = _common_names(f, match, first, second)
            if names is None:
                if not any(abs(value(g) - value(f)) <= SAME_NUMBER * max(1.0, abs(value(f))) for g in match):
                    varying.add(k)
            elif len(names) == 1:
                labels |= names
        keep.append(k)
    if not keep:
        return []
    restricted = {n: v for n, v in first.constants.items() if n in labels}
    worded = findings(first.got, first.want, every=True, **dict(first.relation_args(), constants=restricted))
    worded += precision(first.got, first.want, first.want32, first.eps, first.what, first.names)
    out = []
    for f in worded:
        k = key(f)
        if k in keep and k not in {key(o) for o in out}:
            if k in varying and _of_numbers(f):
                continue  # two numbers always have a ratio and a difference: only one that repeats says something
            out.append(_varying(f) if k in varying else better.get(k) or f)
    return _what_before_where(out)


def key(f: Finding) -> tuple | None:
    """What a relation is, whatever the case's sizes: its output, its kind and its structure
    (an axis, a permutation's shape), not the number it carries."""
    if f.kind in NOT_CONFIRMED:
        return None
    d = f.detail
    if f.kind in VALUED:
        structure = ()
    elif f.kind == "permutation":
        k, perm = d
        structure = (k, permutation_pattern(list(perm)) or tuple(perm))   # an order named alike at every length
    elif f.kind == "mask":
        structure = ()               # a mask that differs on both cases, told by the case that shows it best
    elif f.kind == "sizes":
        structure = d[:2]            # the same axis, the answer's the first or the last of the reference's
    elif f.kind == "rolled":
        structure = d[:1]            # rolled along the same axis, by a number that may differ
    elif f.kind == "indices":
        structure = d                # the same positions agree on both cases, or nothing is said
    elif family(f.kind) == "where":
        structure = d[:1]            # the same axis: the first k, the last k, a half, a triangle
    else:
        structure = d
    return (f.part, f.kind, structure)


def value(f: Finding) -> float:
    """The number a valued relation carries (a factor, an offset, a temperature)."""
    if f.kind in ("negated", "opposite_sign"):
        return -1.0
    try:
        return float(f.detail[0])
    except (IndexError, TypeError, ValueError):
        return float("nan")


def _common_names(f: Finding, match: list[Finding], first: Compared, second: Compared) -> set[str] | None:
    """The names that fit the number on both cases; None when none does."""
    mine = constant_names(value(f), first.constants, first.rtol)
    common = set()
    for g in match:
        common |= mine & constant_names(value(g), second.constants, second.rtol)
    return common or None


def _exact_names(n: int, c: Compared) -> set[str]:
    """The names of the case's numbers equal to the length `n`."""
    return {name for name, v in c.constants.items() if isinstance(v, (int, float)) and v == n
            and not name.startswith("sqrt")}


def _of_numbers(f: Finding) -> bool:
    """A relation between two single numbers (a ratio, a difference, a factor of a scalar)."""
    return f.kind in ("ratio", "difference") or (f.kind == "factor" and f.detail[1:2] == ("scalar",))


VARYING = (" (by another amount on other sizes)", " (with another factor on other sizes)")


def varying(text: str) -> bool:
    """The sentence of a relation whose number changes from case to case, and that no name fits."""
    return text.endswith(VARYING) or any(f"{v} [" in text for v in VARYING)


def _varying(f: Finding) -> Finding:
    """A relation whose number is not the same on the second case, and no name fits both."""
    return replace(f, text=f.text + (VARYING[0] if f.kind in ("offset", "difference") else VARYING[1]))


def _what_before_where(found: list[Finding]) -> list[Finding]:
    """Relations that say what the answer is, then (only for an output none of them is about)
    those that say where it differs."""
    what = {f.part for f in found if family(f.kind) not in ("where", "parts")}
    kept = [f for f in found if family(f.kind) != "where" or f.part not in what]
    return sorted(kept, key=lambda f: f.rank)
