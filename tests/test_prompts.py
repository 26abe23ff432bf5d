"""Each stub asks what an interviewer would ask, and no more.

A stub's docstring states the task, the shapes, the conventions that define the answer and
what is checked; how to avoid the kata's traps belongs in its hints, where asking for one is
recorded. Each catalogue entry lists `traps`: short lower-case phrases, each spelling out
the fix of one of the kata's known bugs, which its stub must never contain.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
with open(ROOT / "katas" / "catalogue.toml", "rb") as f:
    ENTRIES = {entry["name"]: entry for entry in tomllib.load(f)["kata"]}
NAMES = list(ENTRIES)


def stub_docstrings(name: str) -> dict[str, str]:
    """The docstrings of katas/NAME.py: the module's and every function's, by where they sit."""
    tree = ast.parse((ROOT / "katas" / f"{name}.py").read_text(encoding="utf-8"))
    docs = {"module": ast.get_docstring(tree) or ""}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            docs[node.name] = ast.get_docstring(node) or ""
    return docs


@pytest.mark.parametrize("kata", NAMES)
def test_every_kata_has_hints_and_traps(kata):
    entry = ENTRIES[kata]
    hints, traps = entry.get("hints", []), entry.get("traps", [])
    assert hints and all(isinstance(h, str) and h.strip() for h in hints), f"{kata}: no hints"
    assert traps, f"{kata}: no trap phrases beside its hints"
    for trap in traps:
        assert isinstance(trap, str) and trap.strip() == trap and trap, f"{kata}: trap {trap!r}"
        assert trap == trap.lower(), f"{kata}: trap phrases are lower-case, not {trap!r}"


@pytest.mark.parametrize("kata", NAMES)
def test_stub_does_not_give_the_traps_away(kata):
    docs = stub_docstrings(kata)
    found = [(where, trap) for where, doc in docs.items()
             for trap in ENTRIES[kata].get("traps", []) if trap.lower() in doc.lower()]
    assert not found, (f"katas/{kata}.py tells the candidate how to avoid a trap "
                       f"(move it to the hints): {found}")


@pytest.mark.parametrize("kata", NAMES)
def test_time_budget_matches_the_catalogue(kata):
    budgets = [int(m) for doc in stub_docstrings(kata).values()
               for m in re.findall(r"Time budget: (\d+) minutes", doc)]
    assert budgets, f"katas/{kata}.py states no 'Time budget: N minutes'"
    for minutes in budgets:
        assert minutes == ENTRIES[kata]["minutes"], \
            f"katas/{kata}.py says {minutes} minutes, the catalogue {ENTRIES[kata]['minutes']}"
