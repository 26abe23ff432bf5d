"""The inputs of a case: seeded arrays that remember the Python that rebuilds them, and layouts.

    x = Inputs(seed=3)
    z = x.normal("z", (2, 5), scale=3.0)        # the repro says: z = rng.standard_normal((2, 5)) * 3.0
"""
from __future__ import annotations

from typing import Any

import numpy as np


def literal(value: Any) -> str:
    """Python source that rebuilds a small value."""
    if isinstance(value, np.ndarray):
        body = np.array2string(value, separator=", ", threshold=10**6, floatmode="unique")
        body = body.replace("\n", "")
        dtype = "" if value.dtype in (np.float64, np.int64, np.bool_) else f", dtype=np.{value.dtype}"
        return f"np.array({body}{dtype})"
    if isinstance(value, np.generic):
        return f"np.{value.dtype}({value.item()!r})"
    if isinstance(value, float) and not np.isfinite(value):
        return {True: "float('inf')", False: "float('-inf')"}[value > 0] if not np.isnan(value) else "float('nan')"
    if isinstance(value, np.random.Generator):
        return "np.random.default_rng(0)"
    return repr(value)


class _Lazy:
    """A repro line `name = ...` whose right side is written only if a repro is shown."""

    def __init__(self, name: str, write):
        self.name, self.write = name, write

    def __str__(self) -> str:
        return f"{self.name} = {self.write()}"


class _Literal:
    """A repro line `name = np.array([...])`, written out only if a repro is shown: most cases
    pass, and printing an array costs more than the call it feeds."""

    def __init__(self, name: str, value: np.ndarray):
        self.name, self.value = name, value

    def __str__(self) -> str:
        return f"{self.name} = {literal(self.value)}"


class Inputs:
    """Seeded inputs that remember how to rebuild themselves in a repro."""

    def __init__(self, seed: int = 0):
        self.seed = seed
        self._rng = None                # made on first use: many cases draw nothing
        self.lines: list[str] = []
        self.names: dict[int, str] = {}
        self._keep: list[Any] = []  # keep registered objects alive so ids stay unique
        self.suffix = ""            # added to every name registered: the inputs of call 2 are z2, W2, ...

    @property
    def rng(self) -> np.random.Generator:
        """The case's generator; the repro makes the same one, once, before its first draw."""
        if self._rng is None:
            self._rng = np.random.default_rng(self.seed)
            self.lines.append(f"rng = np.random.default_rng({self.seed})")
        return self._rng

    def _register(self, name: str, value: Any, line: str) -> Any:
        self.lines.append(line)
        self.names[id(value)] = name
        self._keep.append(value)
        return value

    def normal(self, name: str, shape: tuple, scale: float = 1.0, dtype: Any = np.float64):
        """Standard normal entries times `scale`, drawn from this case's generator."""
        name += self.suffix
        shape = tuple(int(s) for s in shape)
        value = self.rng.standard_normal(shape) * scale
        expr = f"rng.standard_normal({shape})" + (f" * {scale!r}" if scale != 1 else "")
        dtype = np.dtype(dtype)
        if dtype != np.float64:
            value = value.astype(dtype)
            expr = f"({expr}).astype(np.{dtype})"
        return self._register(name, value, f"{name} = {expr}")

    def array(self, name: str, values: Any, dtype: Any = None):
        """A literal array, written out in full in the repro."""
        name += self.suffix
        value = np.array(values, dtype=dtype)
        return self._register(name, value, _Literal(name, value.copy()))

    def let(self, name: str, value: Any, expr):
        """An input computed from earlier ones; `expr` is the Python that computes it (naming
        them as `name_of` does), or what writes it, called only if a repro is shown."""
        name += self.suffix
        return self._register(name, value, _Lazy(name, expr) if callable(expr) else f"{name} = {expr}")

    def name_of(self, value: Any) -> str | None:
        return self.names.get(id(value))



# The layouts callers pass: NumPy gives views, slices, Fortran-ordered and read-only arrays
# as readily as fresh C-ordered ones, and code that writes through a reshape, or assumes
# contiguity or a writeable input, works only on the latter.
LAYOUTS = ("fortran", "transposed", "strided", "readonly")
LAYOUT_CHECK = ("gives the same answers for inputs in any memory layout (Fortran order, views, broadcast, "
                "read-only, one array passed as two arguments)")


def _laid_out(a: np.ndarray, layout: str, name: str) -> tuple[np.ndarray, str]:
    """(array equal to `a` in `layout`, the Python that makes it from `name`)."""
    if layout == "fortran":
        return np.asfortranarray(a), f"np.asfortranarray({name})"
    if layout == "transposed":  # a view of the transpose of a contiguous array
        if a.ndim < 2:
            return np.ascontiguousarray(a[::-1])[::-1], f"np.ascontiguousarray({name}[::-1])[::-1]"
        return (np.swapaxes(np.ascontiguousarray(np.swapaxes(a, -1, -2)), -1, -2),
                f"np.swapaxes(np.ascontiguousarray(np.swapaxes({name}, -1, -2)), -1, -2)")
    if layout == "strided":  # every other entry of a wider array
        return np.repeat(a, 2, axis=-1)[..., ::2], f"np.repeat({name}, 2, axis=-1)[..., ::2]"
    if layout == "readonly":
        b = a.copy()
        b.setflags(write=False)
        return b, f"{name}.setflags(write=False)"
    raise ValueError(f"unknown layout {layout!r}")


def laid_out(value: Any, layout: str, depth: int = 0) -> Any:
    """`value` with every array in it (in tuples, lists and dicts too) laid out as `layout`;
    None when it holds no array of one dimension or more."""
    if isinstance(value, np.ndarray):
        return _laid_out(value, layout, "a")[0] if value.ndim else None
    if depth < 2 and isinstance(value, (tuple, list, dict)):
        items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
        parts = [(k, laid_out(v, layout, depth + 1)) for k, v in items]
        if all(p is None for _, p in parts):
            return None
        parts = [(k, v if p is None else p) for (k, v), (_, p) in zip(items, parts)]
        return dict(parts) if isinstance(value, dict) else type(value)(p for _, p in parts)
    return None


def laid_out_expr(value: Any, layout: str, name: str, depth: int = 0) -> str:
    """The Python expression that lays out `name` (holding `value`) as laid_out() does."""
    if isinstance(value, np.ndarray):
        if layout == "readonly":
            return f"np.lib.stride_tricks.as_strided({name}, writeable=False)"
        if layout == "transposed" and depth:  # arrays of either kind may sit in one container
            return (f"({_laid_out(np.zeros((1, 1)), layout, name)[1]} if {name}.ndim > 1 else "
                    f"{_laid_out(np.zeros(1), layout, name)[1]})")
        return _laid_out(value, layout, name)[1]
    var = f"v{depth}"
    items = list(value.values()) if isinstance(value, dict) else list(value)
    sample = next((v for v in items if laid_out(v, layout, depth + 1) is not None), None)
    inner = laid_out_expr(sample, layout, var, depth + 1)
    if not all(type(v) is type(sample) for v in items):
        kind = "np.ndarray" if isinstance(sample, np.ndarray) else type(sample).__name__
        inner = f"({inner} if isinstance({var}, {kind}) else {var})"
    if isinstance(value, dict):
        return f"{{k: {inner} for k, {var} in {name}.items()}}"
    body = f"{inner} for {var} in {name}"
    return f"[{body}]" if isinstance(value, list) else f"tuple({body})"


def with_dtypes(cases: list[dict], dtypes: tuple[str, ...] = ("float64", "float32")) -> list[dict]:
    """Each case once per dtype (the contract grades float64 and float32 alike)."""
    return [dict(c, dtype=d) for c in cases for d in dtypes]

