"""The words of the relation finder (graders.engine.relations): numbers, axes, constants.

A `Words` says how one comparison names things: the output and the reference, the axes
("axis 1 (heads)"), the case's constants a factor may be ("0.5 (1/sqrt(d_head))"); the
helpers below agree subjects with verbs and list indices.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from graders.engine import grammar

MAX_SENTENCES = 4
NAME_RTOL = 1e-6      # a fitted factor is named after a constant within this (or rtol, if larger)
SUM_TOL = 1e-6        # "sums to 1" within this (or rtol, if larger)
MAX_AXIS_PERMS = 120  # arrangements of axes tried at most
MAX_LISTED = 6        # indices listed in a sentence at most

# ranks: lower is more specific and comes first
R_LEAD, R_SWAPPED_PARTS, R_SHAPE, R_AXES, R_PERM, R_SHIFT, R_MASK, R_FACTOR, R_OFFSET, R_INPUT, \
    R_RENORM, R_CONSTANT, R_SUMS, R_PRECISION, R_PATTERN, R_COUNT = range(16)


@dataclass(frozen=True)
class Finding:
    """One relation that holds: `kind` and `detail` say which (for tests and callers that
    want structure), `text` says it in words, `rank` orders findings (lower first)."""

    rank: int
    kind: str
    text: str
    detail: tuple = ()
    part: str = ""       # the output it is about, when the answer has several ("the weights"), else ""


# ----------------------------------------------------------------------------- words



def bare_name(name: str) -> str:
    return name[4:] if name.startswith("the ") else name


def listing(items: list) -> str:
    items = [str(i) for i in items]
    if len(items) > MAX_LISTED:
        return ", ".join(items[:MAX_LISTED - 1]) + f", … ({len(items)} in all)"
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def num_text(x: float) -> str:
    """A number in at most 6 significant digits, unless that would read as an integer it is not."""
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    for digits in (6, 9, 12):
        s = f"{x:.{digits}g}"
        y = float(s)
        if y != int(y) or abs(x - y) <= 1e-9 * abs(x):
            return str(int(y)) if y == int(y) and abs(y) < 1e15 else s
    return repr(x)


number_text = num_text   # the public name, for the relation modules


def shape_text(shape: tuple) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def ordinal_output(i: int) -> str:
    words = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
    return f"the {words[i]} output" if i < len(words) else f"output {i}"


_SIMPLE_NAME = re.compile(r"^[\w.]+(\[\d+\])?(\*\*\d+|\*[\w.]+)?(\(.*\))?$")


def _inverse_name(name: str) -> str:
    if name.startswith("1/") and _SIMPLE_NAME.match(name[2:]):
        return name[2:]
    return f"1/{name}" if _SIMPLE_NAME.match(name) else f"1/({name})"


class Words:
    """How one comparison names things: the output, the reference, the axes, the constants."""

    def __init__(self, subject: str, ref: str, ref_value: str, axes: dict | None, ndim: int,
                 consts: list[tuple[float, str | None]], rtol: float, atol: float):
        self.subject, self.ref, self.ref_value = subject, ref, ref_value
        self.rtol, self.atol = rtol, atol
        self.consts = consts
        self.name_tol = max(NAME_RTOL, rtol)
        self.axes: dict[int, str] = {}
        for k, v in (axes or {}).items():
            try:
                k = int(k)
            except (TypeError, ValueError):
                continue
            if -ndim <= k < ndim and isinstance(v, str) and v:
                self.axes[k % ndim] = v

    def verb(self, singular: str, plural: str) -> str:
        return grammar.agrees(self.subject, singular, plural)

    def ax(self, k: int) -> str:
        return f"axis {k} ({self.axes[k]})" if k in self.axes else f"axis {k}"

    def axes_pair(self, i: int, j: int) -> str:
        def one(k):
            return f"{k} ({self.axes[k]})" if k in self.axes else str(k)
        return f"axes {one(i)} and {one(j)}"

    def last_two(self, nd: int) -> str:
        a, b = self.axes.get(nd - 2), self.axes.get(nd - 1)
        if a and b:
            return f"the last two axes ({a} and {b})"
        return "the last two axes"

    def nouns(self, k: int, entries: bool) -> tuple[str, str]:
        """(singular, plural) for the indices along axis k: "head"/"heads" from "heads"."""
        name = self.axes.get(k)
        if name:
            if name.endswith("s") and not name.endswith("ss"):
                return name[:-1], name
            return name, name
        return ("entry", "entries") if entries else ("slice", "slices")

    def names_of(self, value: float, generic: bool = True) -> tuple[float | None, list[str]]:
        """The known constant `value` is (None if none), and the names it has."""
        known, names = None, []
        for v, name in self.consts:
            if name is None and not generic:
                continue
            if abs(value - v) <= self.name_tol * abs(v):
                known = v if known is None else known
                if name and name not in names:
                    names.append(name)
        return known, names

    def constant_items(self) -> list[tuple[str, float]]:
        """The case's named numbers, (name, value), without the inverses made of them."""
        return [(name, v) for v, name in self.consts if name and not name.startswith("1/")]

    def number(self, value: float, generic: bool = True) -> str:
        """`value` in words: the constant it is, with its names, else its 6 digits."""
        known, names = self.names_of(value, generic)
        text = num_text(known if known is not None else value)
        return text + (f" ({' or '.join(names)})" if names else "")




def known_constants(constants: dict | None) -> list[tuple[float, str | None]]:
    out: list[tuple[float, str | None]] = [(2.0, None), (0.5, None), (-1.0, None)]
    for name, value in (constants or {}).items():
        try:
            v = float(value)
        except (TypeError, ValueError, OverflowError):
            continue
        if not math.isfinite(v) or v == 0 or not isinstance(name, str):
            continue
        out.append((v, name))
        out.append((1.0 / v, _inverse_name(name)))
    return out


def constant_names(value: float, constants: dict | None, rtol: float = NAME_RTOL) -> set[str]:
    """The names of `constants` whose value, or its inverse, is `value` (within `rtol`, or
    NAME_RTOL if larger): a factor or an offset those constants would name."""
    tol = max(NAME_RTOL, rtol)
    out = set()
    for name, v in (constants or {}).items():
        try:
            v = float(v)
        except (TypeError, ValueError, OverflowError):
            continue
        if not isinstance(name, str) or not math.isfinite(v) or v == 0:
            continue
        if abs(value - v) <= tol * abs(v) or abs(value - 1.0 / v) <= tol / abs(v):
            out.add(name)
    return out
