"""`kata dev update`: what is derived from one source, written anew from it.

- each stub (katas/NAME.py) from its reference (solutions/NAME.py): the module's docstring,
  the NumPy import, and each public function's signature and docstring (the question) ending
  in `raise NotImplementedError`;
- the time budget in each reference's docstrings ("Time budget: N minutes.") from the
  catalogue's `minutes`;
- the README's table of katas from the catalogue (`writes`, `difficulty`, `minutes`).

`kata dev check` reports where any of them has drifted from what this would write
(practice.dev), so that a fact is changed in one place and the rest follow.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

from practice.catalogue import Entry

TABLE_HEAD = "| kata | what you write | level | minutes |\n|---|---|---|---|\n"
BUDGET = re.compile(r"Time budget: \d+ minutes\.")


def stub_of(reference: str) -> str:
    """The stub a reference's text asks for: its module docstring, the NumPy import, and each
    public function's signature and docstring, ending in `raise NotImplementedError`."""
    tree = ast.parse(reference)
    lines = reference.splitlines(keepends=True)
    out = []
    if tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant):
        first = tree.body[0]
        out.append("".join(lines[first.lineno - 1:first.end_lineno]))
    out.append("import numpy as np\n")
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            question = node.body[0]
            head = "".join(lines[node.lineno - 1:question.end_lineno])
            out.append(f"\n\n{head}    raise NotImplementedError(\"{node.name}: not implemented yet\")\n")
    return "".join(out)


def with_budget(reference: str, minutes: int) -> str:
    """The reference's text with every "Time budget: N minutes." saying the catalogue's N."""
    return BUDGET.sub(f"Time budget: {minutes} minutes.", reference)


def table(entries: list[Entry]) -> str:
    """The README's table of katas, from the catalogue's entries."""
    rows = [f"| `{e['name']}` | {e.get('writes', '')} | {e.get('difficulty', '')} | {e.get('minutes', '')} |\n"
            for e in entries]
    return TABLE_HEAD + "".join(rows)


def readme_with_table(readme: str, entries: list[Entry]) -> str:
    """The README's text with its table of katas written from the catalogue."""
    start = readme.find(TABLE_HEAD)
    if start < 0:
        return readme
    end = readme.find("\n\n", start)
    end = len(readme) if end < 0 else end + 1
    return readme[:start] + table(entries) + readme[end:]


def derived(root: Path, entries: list[Entry]) -> dict[Path, str]:
    """Every derived file of the repository at `root`, as `update` would write it."""
    out: dict[Path, str] = {}
    for e in entries:
        reference = root / "solutions" / f"{e['name']}.py"
        if not reference.is_file() or not isinstance(e.get("minutes"), int):
            continue
        text = with_budget(reference.read_text(encoding="utf-8"), e["minutes"])
        out[reference] = text
        try:
            out[root / "katas" / f"{e['name']}.py"] = stub_of(text)
        except SyntaxError:
            pass  # dev check says the reference does not parse
    readme = root / "README.md"
    if readme.is_file():
        out[readme] = readme_with_table(readme.read_text(encoding="utf-8"), entries)
    return out


def drift(root: Path, entries: list[Entry]) -> list[Path]:
    """The derived files that differ from what `update` would write."""
    return [p for p, text in derived(root, entries).items()
            if not p.is_file() or p.read_text(encoding="utf-8") != text]


def update(root: Path, entries: list[Entry]) -> list[Path]:
    """Write every derived file that has drifted; the paths written."""
    written = []
    for path, text in derived(root, entries).items():
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written
