"""How a call of the attempt is written as Python: its source in a failure's message
("softmax(z, axis=0)", the inputs by the names the case gave them) and the repro, a few
lines that rebuild the inputs and make the failing calls."""
from __future__ import annotations

import re

import numpy as np

from graders.engine.inputs import literal


def written_call(function: str, args: tuple, kwargs: dict, names: dict) -> str:
    return f"{function}({arguments_text(args, kwargs, names)})"


def arguments_text(args, kwargs, names: dict) -> str:
    def one(v, depth=0):
        name = names.get(id(v))
        if name:
            return name
        if isinstance(v, np.ndarray) and v.size > 64:
            return f"<array of shape {v.shape}>"
        if depth < 3 and type(v) in (tuple, list):  # a container the case did not name (a copy): by its parts
            inner = ", ".join(one(x, depth + 1) for x in v)
            return f"({inner}{',' if len(v) == 1 else ''})" if type(v) is tuple else f"[{inner}]"
        if depth < 3 and type(v) is dict:
            return "{" + ", ".join(f"{k!r}: {one(x, depth + 1)}" for k, x in v.items()) + "}"
        return literal(v)

    parts = [one(a) for a in args] + [f"{k}={one(v)}" for k, v in kwargs.items()]
    return ", ".join(parts)


def shapes(value, names: dict) -> str:
    """The arrays of a call's (args, kwargs), by name, shape and dtype: "z (2, 131072) float64"."""
    found: list[str] = []

    def walk(v, label: str, depth: int = 0) -> None:
        if len(found) >= 6:
            return
        if isinstance(v, np.ndarray):
            found.append(f"{names.get(id(v)) or label} {tuple(v.shape)} {v.dtype}")
        elif depth < 3 and isinstance(v, (tuple, list)):
            for i, x in enumerate(v):
                walk(x, names.get(id(x)) or f"{label}[{i}]", depth + 1)
        elif depth < 3 and isinstance(v, dict):
            for k, x in v.items():
                walk(x, names.get(id(x)) or f"{label}[{k!r}]", depth + 1)

    args, kwargs = value
    for i, a in enumerate(args):
        walk(a, names.get(id(a)) or f"argument {i + 1}")
    for k, a in kwargs.items():
        walk(a, names.get(id(a)) or k)
    return ", ".join(found)


def repro_for(calls: list, inputs, path: str | None,
              input_lines: list[str] | None = None) -> str:
    """A few lines of Python that rebuild the inputs and make the failing calls."""
    functions = sorted({c.function for c in calls})
    where = path or "your_file.py"
    lines = ["import numpy as np", "from runpy import run_path", f"attempt = run_path({where!r})"]
    lines += [f"{f} = attempt[{f!r}]" for f in functions]
    given = input_lines if input_lines is not None else inputs.lines if inputs is not None else []
    lines += [str(line) for line in given]  # a literal array is written out only now
    for c in calls:
        lines.append(f"print({c.source})")
    return "\n".join(lines)



_KEPT = re.compile(r"^\(out\d+ := (.*)\)$")                          # (out1 := f(x)): a result kept
_POKED = re.compile(r"^\(\[a\.__setitem__\(Ellipsis, .*? if isinstance\(a, np\.ndarray\)\], (.*)\)\[1\]$")


def kept_as(source: str) -> int | None:
    """N when a call's source keeps what it returned as `outN` in a repro, else None."""
    found = _KEPT.match(source)
    return int(source[4:source.index(" ")]) if found else None


def plain(source: str) -> str:
    """A call's source without what a repro wraps round it to keep or write into a result:
    "(out1 := softmax(z))" is "softmax(z)"."""
    for pattern in (_KEPT, _POKED):
        found = pattern.match(source)
        if found:
            return found.group(1)
    return source
