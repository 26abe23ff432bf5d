"""Where a kata's grading files are, and loading trusted modules (a reference solution) here."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def load(path: str | Path, module_name: str) -> ModuleType:
    """Execute the trusted file at `path` as a new module named `module_name`."""
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


def reference(kata: str) -> ModuleType:
    """The kata's reference solution, loaded once per process."""
    name = f"reference_{kata}"
    return sys.modules.get(name) or load(reference_path(kata), name)


def kata_of(test_file: str | Path) -> str:
    """graders/test_softmax.py -> softmax."""
    stem = Path(test_file).stem
    return stem[len("test_"):] if stem.startswith("test_") else stem
