"""Which modules an attempt may import: judged in its source, and refused while it runs.

The harness (graders.engine.harness) reads the attempt's import statements before any of
its code runs; the worker (graders.engine.worker) installs `Refuser` in front of the
import system before loading it, so that an import the source does not spell out
(`importlib.import_module("sol" + "utions")`, `__import__(name)`, a pickle naming a class)
is refused too, with the same words. NumPy's own imports are NumPy's business.

Only the standard library and NumPy may be imported here: the attempt's process uses it.
"""
from __future__ import annotations

import os
import sys

ALLOWED_THIRD_PARTY = frozenset({"numpy"})
PROJECT_MODULES = frozenset({"katas", "solutions", "graders", "practice", "kata"})
CHECK_NAME = "imports only NumPy and the standard library"


class ForbiddenImport(ImportError):
    """An import the attempt may not make; its message says why."""


def stdlib() -> frozenset:
    return frozenset(getattr(sys, "stdlib_module_names", ())) or frozenset(sys.builtin_module_names)


_STDLIB = stdlib()


def allowed(module: str) -> bool:
    top = module.partition(".")[0]
    return top not in PROJECT_MODULES and (top in _STDLIB or top in ALLOWED_THIRD_PARTY)


def _reason(module: str) -> str:
    if module.partition(".")[0] in PROJECT_MODULES:
        return "an attempt may not use the project's own modules (the reference solutions, graders or stubs)"
    return "an attempt may import only NumPy and the Python standard library"


def refusal(module: str, line: int | None) -> str:
    """The message for a refused import, as the static check words it when the line is known:
    'line 3 imports `rich`: an attempt may import only NumPy and the Python standard library'."""
    where = f"line {line} imports `{module}`" if line else f"the file imports `{module}` at run time"
    return f"{where}: {_reason(module)}"


class Refuser:
    """A sys.meta_path finder that refuses every module `allowed` does not name and the
    standard library's folders do not hold (`_sysconfigdata_*`, say), when the attempt's own
    code asks for it: an import that the standard library or NumPy makes for itself (`copy`
    tries an optional module that does not exist) is theirs, and goes on as it would outside
    the judge. `refused` keeps each refusal's message, for the judge."""

    def __init__(self, filename: str, numpy_dir: str, stdlib_path: list[str]):
        import importlib
        from importlib.machinery import PathFinder

        self.filename, self.numpy_dir, self.stdlib_path = filename, numpy_dir, list(stdlib_path)
        self.roots = tuple(p.rstrip(os.sep) + os.sep for p in [*self.stdlib_path, numpy_dir] if p)
        self.machinery = (os.path.abspath(importlib.__file__),)  # import_module's own frames
        self.refused: list[str] = []
        # taken now: the attempt may rebind sys._getframe or the import machinery's classes
        self._frame, self._find = sys._getframe, PathFinder.find_spec

    def find_spec(self, name, path=None, target=None):
        if allowed(name) or ("." not in name and self._find(name, self.stdlib_path) is not None):
            return None
        line = self._importer_line()
        if line is False:
            return None  # the standard library's or NumPy's own import: the import system decides
        message = refusal(name, line)
        if message not in self.refused:
            self.refused.append(message)
        raise ForbiddenImport(message, name=name)

    def _importer_line(self):
        """The attempt's line that asked for the import (the nearest frame outside the import
        machinery is the attempt's), None when no frame is (an import from C code), False
        when that frame is the standard library's or NumPy's."""
        frame = self._frame(2)
        while frame is not None:
            where = frame.f_code.co_filename
            if where == self.filename:
                return frame.f_lineno
            if not (where.startswith("<frozen importlib") or where in self.machinery):
                return False
            frame = frame.f_back
        return None

    def invalidate_caches(self) -> None:
        pass

    def got_past(self, name: str, module) -> bool:
        """A module in sys.modules that this finder would have refused and that was loaded from
        a file outside the standard library and NumPy (how it got there does not matter)."""
        where = getattr(module, "__file__", None)
        return not allowed(name) and isinstance(where, str) and not where.startswith(self.roots)
