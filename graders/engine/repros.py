"""Repros that show what the check saw, when pasted into Python: the expected value printed
beside the attempt's, NumPy's global samplers refused as the grader refuses them, and for a
failure that needs an earlier call, both calls and the same call made alone.

A repro is the few lines of graders.engine.call_text.repro_for: they rebuild the inputs and
print each call of the failing case. The functions here rewrite such a text, or write one.
"""
from __future__ import annotations

import re
from typing import Any

import numpy as np

from graders.engine.inputs import literal
from graders.engine.recorder import Call

LITERAL_CHARS = 400       # an expected value written out whole up to this length, else one entry of it
REFUSAL = re.compile(r"np\.random\.(\w+) draws from NumPy's global random state")


def with_expected(repro: str, call: Call, want: Any, got: Any) -> str:
    """`repro` with the reference's answer to `call` printed just before the line that makes it
    (a call that raises stops the lines after it)."""
    line = f"print({call.source})"
    lines = repro.split("\n")
    if line not in lines:
        return repro
    at = len(lines) - 1 - lines[::-1].index(line)
    return "\n".join(lines[:at] + expected_lines(want, got) + lines[at:])


def expected_lines(want: Any, got: Any) -> list[str]:
    """`print("expected:", ...)` for the reference's answer, written out whole when short, else
    the entry where the attempt's differs most."""
    whole = _written(want)
    if whole is not None and len(whole) <= LITERAL_CHARS:
        return [f"print('expected:', {whole})"]
    where = _worst(got, want)
    if where is None:
        return []
    path, value = where
    return [f"print('expected at {path}:', {value!r})  # the reference's answer there"]


def _written(value: Any) -> str | None:
    if isinstance(value, np.ndarray):
        # each entry takes three characters at least ("0, "): one with more cannot be short
        return literal(value) if value.size <= LITERAL_CHARS // 3 else None
    if isinstance(value, (tuple, list)):
        parts = [_written(v) for v in value]
        if any(p is None for p in parts):
            return None
        inner = ", ".join(parts)
        return f"({inner}{',' if len(parts) == 1 else ''})" if isinstance(value, tuple) else f"[{inner}]"
    if isinstance(value, dict):
        parts = {k: _written(v) for k, v in value.items()}
        return None if any(p is None for p in parts.values()) else \
            "{" + ", ".join(f"{k!r}: {p}" for k, p in parts.items()) + "}"
    if isinstance(value, (bool, int, float, np.generic)) or value is None:
        return literal(value)
    return None


def _worst(got: Any, want: Any, path: str = "") -> tuple[str, float] | None:
    """(where, the reference's value there) for the entry where `got` is farthest from `want`."""
    if isinstance(want, (tuple, list)):
        found = [(_worst(g, w, f"{path}[{i}]")) for i, (g, w) in enumerate(zip(got, want))] \
            if isinstance(got, (tuple, list)) and len(got) == len(want) else []
        found = [f for f in found if f is not None]
        return found[0] if found else None
    if isinstance(want, dict):
        for k in want:
            if isinstance(got, dict) and k in got:
                found = _worst(got[k], want[k], f"{path}[{k!r}]")
                if found is not None:
                    return found
        return None
    try:
        g, w = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if w.ndim == 0:
        return (path or "the result", float(w))
    if g.shape != w.shape:
        return None
    with np.errstate(all="ignore"):
        gap = np.where(np.isclose(g, w, equal_nan=True), 0.0, np.abs(g - w))
    gap = np.where(np.isnan(gap), np.inf, gap)
    idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(gap)), gap.shape))
    return (f"{path}[{', '.join(map(str, idx))}]", float(w[idx]))


def with_refusal(repro: str, message: str) -> str:
    """`repro` preceded by lines that make NumPy's global sampler named in `message` raise, as
    it raises in the grader's process: pasted into Python, the repro raises the same error."""
    found = REFUSAL.search(message)
    if found is None:
        return repro
    name = found.group(1)
    lines = repro.split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith("attempt = run_path(")), len(lines))
    refuse = [
        f"# the grader refuses np.random.{name}: it draws from NumPy's global random state, not from the",
        "# Generator passed as `rng`, so the same call gives other tokens after any other use of np.random",
        "def refused(*args, **kwargs):",
        f'    raise RuntimeError("np.random.{name} draws from NumPy\'s global random state, not from `rng`")',
        f"np.random.{name} = refused",
    ]
    return "\n".join(lines[:at] + refuse + lines[at:])


def history_repro(path: str, functions: list[str], lines: list[str]) -> str:
    """A repro that makes several calls, in order, written by `lines` (graders.engine.history)."""
    head = ["import numpy as np", "from runpy import run_path", f"attempt = run_path({path!r})"]
    head += [f"{f} = attempt[{f!r}]" for f in sorted(set(functions))]
    return "\n".join(head + lines)


_ASSIGNED = re.compile(r"^(\w+) = ")


def without_unused(repro: str) -> str:
    """`repro` without the lines that define a name no later line reads (an input the failing
    calls do not take), unless it draws from a generator a later line draws from: each line that
    is left is needed, and the numbers drawn stay the same."""
    lines = repro.split("\n")
    keep = [True] * len(lines)
    for i in range(len(lines) - 1, -1, -1):   # from the end: a line dropped frees the names it read
        found = _ASSIGNED.match(lines[i])
        if not found or found.group(1) in ("attempt",) or _draws(lines[i], lines[i + 1:]):
            continue
        name = re.compile(rf"\b{re.escape(found.group(1))}\b")
        if not any(keep[j] and name.search(lines[j]) for j in range(i + 1, len(lines))):
            keep[i] = False
    return "\n".join(line for line, k in zip(lines, keep) if k)


def _draws(line: str, later: list[str]) -> bool:
    """`line` draws from a generator that a later line draws from too: without it, the later draws
    would give other numbers."""
    used = set(re.findall(r"\b(\w+)\.(?:standard_normal|normal|random|integers|uniform|choice|permutation)\(",
                          line))
    return any(re.search(rf"\b{re.escape(g)}\.", other) for g in used for other in later)
