"""What the catalogue promises on disk, for the project's own tests."""
from __future__ import annotations

import ast
from pathlib import Path

from practice import catalogue

ROOT = catalogue.ROOT
ALTERNATIVES = ROOT / "tests" / "alternatives"


def kata_for_alternative(path: Path) -> str | None:
    """tests/alternatives/causal_mha_einsum.py -> causal_mha (the longest kata name that prefixes it)."""
    matches = [n for n in catalogue.names() if path.stem.startswith(n + "_")]
    return max(matches, key=len) if matches else None


def alternatives() -> list[Path]:
    return sorted(ALTERNATIVES.glob("*.py"))


def functions(path: Path) -> dict[str, ast.FunctionDef]:
    """The public top-level functions of a Python file, by name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")}


def check_ids(kata: str) -> list[str]:
    """The checks of a kata's grader: the names of its @check-decorated test functions."""
    tree = ast.parse((ROOT / "graders" / f"test_{kata}.py").read_text(encoding="utf-8"))
    return [node.name for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
            and any(isinstance(d, ast.Call) and getattr(d.func, "id", "") == "check" for d in node.decorator_list)]
