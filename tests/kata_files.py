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
    """The checks of a kata's grader: the names of its @check-decorated functions."""
    tree = ast.parse(catalogue.get(kata).grader.read_text(encoding="utf-8"))
    return [node.name for node in tree.body
            if isinstance(node, ast.FunctionDef)
            and any(isinstance(d, ast.Call) and getattr(d.func, "id", "") == "check" for d in node.decorator_list)]
