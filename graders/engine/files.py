"""Where a kata's grading content is, and loading it (and a reference solution) here.

    graders/KATA/grader.py        the checks           files.grader(KATA)
    graders/KATA/bugs.py          known mistakes       files.bugs(KATA)
    graders/KATA/domain.py        its input domain     files.domain(KATA)
    graders/KATA/alternatives/    other correct answers
    solutions/KATA.py             the reference        files.reference(KATA)
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import graders

ROOT = Path(graders.ROOT)
GRADERS = ROOT / "graders"


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


def folder(kata: str) -> Path:
    """graders/KATA: the kata's grader, bugs and alternatives."""
    return GRADERS / kata


def has_grader(kata: str) -> bool:
    return kata.isidentifier() and (folder(kata) / "grader.py").is_file()


def grader(kata: str) -> ModuleType:
    """The kata's grader module (graders/KATA/grader.py)."""
    return importlib.import_module(f"graders.{kata}.grader")


def bugs(kata: str) -> ModuleType | None:
    """The kata's catalogue of known mistakes (graders/KATA/bugs.py), or None."""
    if not (folder(kata) / "bugs.py").is_file():
        return None
    return importlib.import_module(f"graders.{kata}.bugs")


def domain(kata: str):
    """The kata's declared input domain (graders/KATA/domain.py: DOMAIN), or None."""
    if not (folder(kata) / "domain.py").is_file():
        return None
    return importlib.import_module(f"graders.{kata}.domain").DOMAIN


def alternatives(kata: str) -> list[Path]:
    """Correct answers in other styles (graders/KATA/alternatives/*.py)."""
    return sorted((folder(kata) / "alternatives").glob("*.py"))


def reference_path(kata: str) -> Path:
    return ROOT / "solutions" / f"{kata}.py"


def reference(kata: str) -> ModuleType:
    """The kata's reference solution, loaded once per process."""
    name = f"reference_{kata}"
    return sys.modules.get(name) or load(reference_path(kata), name)


def kata_of(grader_file: str | Path) -> str:
    """graders/softmax/grader.py -> softmax."""
    return Path(grader_file).resolve().parent.name
