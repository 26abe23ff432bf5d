"""What the catalogue promises on disk, for the project's own tests."""
from __future__ import annotations

import ast
from pathlib import Path

from practice import catalogue

ROOT = catalogue.ROOT


def kata_for_alternative(path: Path) -> str | None:
    """graders/causal_mha/alternatives/einsum.py -> causal_mha."""
    kata = path.parent.parent.name
    return kata if path.parent.name == "alternatives" and kata in catalogue.names() else None


def alternatives() -> list[Path]:
    return [p for k in catalogue.katas() for p in k.alternatives]


def alternative_id(path: Path) -> str:
    return f"{path.parent.parent.name}-{path.stem}"


def functions(path: Path) -> dict[str, ast.FunctionDef]:
    """The public top-level functions of a Python file, by name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")}


def check_ids(kata: str) -> list[str]:
    """The checks of a kata's grader (its @check functions and the explorer's), by id."""
    from graders.engine import files, judge

    return [fn.__name__ for fn in judge.checks_of(files.grader(kata))]
