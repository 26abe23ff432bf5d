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


def check_names(kata: str) -> list[str]:
    """The names of the checks in a kata's grader, read from its @check decorators."""
    tree = ast.parse((ROOT / "graders" / f"test_{kata}.py").read_text(encoding="utf-8"))
    names = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call) and getattr(dec.func, "id", "") == "check":
                    names.append(ast.literal_eval(_resolve(dec.args[0], tree)))
    return names


def _resolve(node: ast.AST, tree: ast.Module) -> ast.AST:
    """A check name given as a module-level constant is looked up."""
    if isinstance(node, ast.Name):
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and any(getattr(t, "id", None) == node.id for t in stmt.targets):
                return stmt.value
    return node
