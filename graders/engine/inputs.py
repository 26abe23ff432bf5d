"""The inputs of a case: seeded arrays that remember the Python that rebuilds them, and layouts.

    x = Inputs(seed=3)
    z = x.normal("z", (2, 5), scale=3.0)        # the repro says: z = rng.standard_normal((2, 5)) * 3.0
    z, = x.relayout("fortran", z)                # ... and then: z = np.asfortranarray(z)
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


class Inputs:
    """Seeded inputs that remember how to rebuild themselves in a repro."""

    def __init__(self, seed: int = 0):
        self.seed = seed
        self._rng = None                # made on first use: many cases draw nothing
        self.lines: list[str] = []
        self.names: dict[int, str] = {}
        self._keep: list[Any] = []  # keep registered objects alive so ids stay unique

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
        value = np.array(values, dtype=dtype)
        return self._register(name, value, f"{name} = {literal(value)}")

    def let(self, name: str, value: Any, expr: str):
        """An input computed from earlier ones; `expr` is the Python that computes it."""
        return self._register(name, value, f"{name} = {expr}")

    def name_of(self, value: Any) -> str | None:
        return self.names.get(id(value))

    def relayout(self, layout: str, *arrays: np.ndarray) -> list[np.ndarray]:
        """The same values in another memory layout (see LAYOUTS), under the same names: the
        repro rebuilds each array, then lays it out the same way."""
        out = []
        for a in arrays:
            name = self.name_of(a) or "a"
            value, expr = _laid_out(a, layout, name)
            line = f"{name} = {expr}" if layout != "readonly" else f"{name} = {name}.copy(); {expr}"
            out.append(self._register(name, value, line))
        return out


# The layouts callers pass: NumPy gives views, slices, Fortran-ordered and read-only arrays
# as readily as fresh C-ordered ones, and code that writes through a reshape, or assumes
# contiguity or a writeable input, works only on the latter.
LAYOUTS = ("fortran", "transposed", "strided", "readonly")
LAYOUT_CHECK = "gives the same answers for inputs in any memory layout (Fortran order, views, read-only)"


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


def layout_cases(cases: list[dict]) -> list[dict]:
    """Each case once per layout in LAYOUTS."""
    return [dict(c, layout=layout) for layout in LAYOUTS for c in cases]


def with_dtypes(cases: list[dict], dtypes: tuple[str, ...] = ("float64", "float32")) -> list[dict]:
    """Each case once per dtype (the contract grades float64 and float32 alike)."""
    return [dict(c, dtype=d) for c in cases for d in dtypes]

