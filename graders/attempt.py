"""Loading an attempt (or a reference) from a file path as a fresh module."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def load(path: str | Path, module_name: str = "attempt") -> ModuleType:
    """Execute the file at `path` as a new module named `module_name`."""
    path = Path(path).resolve()
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module


def reference_path(kata: str) -> Path:
    return ROOT / "solutions" / f"{kata}.py"


def kata_of(test_file: str | Path) -> str:
    """graders/test_softmax.py -> softmax."""
    stem = Path(test_file).stem
    return stem[len("test_"):] if stem.startswith("test_") else stem


def load_graded(path: str | Path, kata: str) -> ModuleType:
    """The attempt as a module, or a one-line CheckFailed saying why it cannot load."""
    from graders.checks import CheckFailed, _attempt_frame

    try:
        return load(path, f"attempt_{kata}")
    except SyntaxError as exc:
        raise CheckFailed(f"your file has a syntax error on line {exc.lineno}: {exc.msg}", kind="load") from None
    except (Exception, SystemExit) as exc:
        where = _attempt_frame(exc, str(path))
        raise CheckFailed(f"your file failed to load: {type(exc).__name__}: {exc}{where}", kind="load") from None
