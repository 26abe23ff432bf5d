"""The house rules of the code itself: no module imports itself round a circle, and the
command line imports the project's modules by their names."""
from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PARTS = ("kata.py", "practice", "graders", "katas", "solutions")


def project_modules() -> dict[str, Path]:
    """Every module of the project by its dotted name (a package by its own name)."""
    files = []
    for part in PARTS:
        path = REPO / part
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    modules = {}
    for f in files:
        parts = list(f.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = f
    return modules


def imported(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules `name` imports, anywhere in it (in functions too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    wanted = []
    for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
        if isinstance(node, ast.Import):
            wanted += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            wanted += [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                       for a in node.names]
    found = set()
    for module in wanted:
        while module and module not in modules:  # `from practice.x import f`: practice.x
            module = module.rpartition(".")[0]
        if module and module != name:
            found.add(module)
    return found


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of the graph, as a path that ends where it starts; None if none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_no_module_imports_itself_round_a_circle():
    modules = project_modules()
    assert {"kata", "practice.grading", "graders.engine.report", "graders.softmax.grader",
            "katas.softmax", "solutions.softmax"} <= set(modules)
    graph = {name: imported(name, path, modules) for name, path in modules.items()}
    assert "practice.startup" in graph["kata"] and "practice.cli" in graph["practice.commands.check"]
    found = cycle(graph)
    assert found is None, "import cycle: " + " -> ".join(found)


def test_the_cycle_finder_finds_one():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None


def test_the_command_line_imports_the_projects_modules_by_their_names():
    """`from practice import history as past` to free a command's name: name the command's
    function instead (`def history_command`)."""
    renamed = []
    for path in [REPO / "kata.py", *sorted((REPO / "practice").rglob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_bytes())):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for a in node.names:
                whole = f"{getattr(node, 'module', None) or ''}.{a.name}".strip(".")
                if whole.split(".")[0] in PARTS[1:] and a.asname and a.asname != a.name.rpartition(".")[2]:
                    renamed.append(f"{path.name}: {whole} as {a.asname}")
    assert renamed == []


def private_imports(source: str) -> list[str]:
    """`module import name` for each underscore name imported from one of the project's modules."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in PARTS[1:] + ("kata",):
            found += [f"{node.module} import {a.name}" for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__")]
    return found


def test_no_module_imports_another_modules_private_name():
    """`from graders.engine.wording import _Words` reaches into another module: what modules
    share is public (no underscore), and each module's underscore names are its own."""
    private = [f"{name}: from {found}" for name, path in project_modules().items()
               for found in private_imports(path.read_text(encoding="utf-8"))]
    assert private == []


def test_the_private_import_finder_finds_one():
    source = "from graders.engine.wording import _Words, Words\nfrom practice import render\nfrom os import _exit\n"
    assert private_imports(source) == ["graders.engine.wording import _Words"]


@pytest.mark.parametrize("tool", [["ruff", "check", "."], ["vulture"]], ids=["ruff", "vulture"])
def test_the_tools_find_nothing(tool):
    """ruff (unused and undefined names, imports in order) and vulture (dead code) pass on the
    tree, with pyproject.toml's settings; both come with the `dev` extra (pip install -e '.[dev]')."""
    if importlib.util.find_spec(tool[0]) is None:
        pytest.fail(f"{tool[0]} is not installed: pip install -e '.[dev]' installs what the tests need")
    run = subprocess.run([sys.executable, "-m", *tool], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr


def unmapped(readme: str, modules: dict[str, Path]) -> list[str]:
    """The modules the README's module map does not name: a module is named by its file in
    backticks (`explain.py`, `practice/store/salvage.py`), or, in a package of one module per
    thing (practice/commands/), by the package's pattern (`practice/commands/NAME.py`)."""
    named = set(re.findall(r"`([\w/]+\.py)`", readme))
    out = []
    for path in modules.values():
        rel = path.relative_to(REPO)
        if path.name == "__init__.py" or rel.parts[0] in ("katas", "solutions") or \
                (rel.parts[0] == "graders" and rel.parts[1] != "engine"):
            continue  # a kata's own files are in the README's table of files per kata
        if path.name in named or str(rel) in named or f"{rel.parent}/NAME.py" in named:
            continue
        out.append(str(rel))
    return out


def test_the_readme_maps_every_module():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    missing = unmapped(readme, project_modules())
    assert missing == [], f"modules the README's module map does not name: {missing}"


def test_the_module_map_finder_finds_one():
    modules = {"graders.engine.a": REPO / "graders/engine/a.py", "practice.commands.x": REPO / "practice/commands/x.py",
               "practice.b": REPO / "practice/b.py", "graders.softmax.grader": REPO / "graders/softmax/grader.py"}
    assert unmapped("`a.py` and `practice/commands/NAME.py`", modules) == ["practice/b.py"]
