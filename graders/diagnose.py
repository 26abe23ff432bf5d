"""Naming the likely mistake: which known bug behaves like the attempt where it failed.

A bug matches when, on every call made in the failing checks, it gives what the attempt
gave (the same values within the contract's tolerance, or the same kind of exception).
Among the bugs that match, the one that also agrees with the attempt on the most of the
other recorded calls wins; a tie names both.
"""
from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np

from graders import bugs as bug_catalogue
from graders.checks import Call, tolerance


def _dtype_of(call: Call) -> np.dtype:
    for a in list(call.args) + list(call.kwargs.values()):
        if isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating):
            return a.dtype
    return np.dtype(np.float64)


def _same(a: Any, b: Any, dtype: np.dtype) -> bool:
    if isinstance(a, BaseException) or isinstance(b, BaseException):
        return isinstance(a, BaseException) and isinstance(b, BaseException) and type(a) is type(b)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y, dtype) for x, y in zip(a, b))
    try:
        x, y = np.asarray(a), np.asarray(b)
    except Exception:
        return False
    if x.dtype == object or y.dtype == object or x.shape != y.shape:
        return False
    if x.dtype == np.bool_ or y.dtype == np.bool_:
        return bool(np.array_equal(x, y))
    rtol, atol = tolerance(dtype, extreme=True)
    try:
        return bool(np.allclose(x.astype(np.float64), y.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True))
    except (TypeError, ValueError):
        return False


def _replay(bug, call: Call) -> Any:
    fn = getattr(bug.module, call.function, None)
    if fn is None:
        return NotImplementedError()
    args, kwargs = copy.deepcopy((call.args, call.kwargs))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            return exc


def agrees(bug, call: Call) -> bool:
    if not call.recorded:
        return False
    return _same(_replay(bug, call), call.outcome, _dtype_of(call))


def diagnose(kata: str, failing: list[Call], history: list[Call]) -> dict | None:
    """{'bug': name, 'message': lesson} for the known bug behind the failures, if any."""
    failing = [c for c in failing if c.recorded]
    if not failing:
        return None
    scored = []
    for bug in bug_catalogue.load(kata):
        try:
            if not all(agrees(bug, c) for c in failing):
                continue
            score = sum(agrees(bug, c) for c in history if c.recorded)
        except Exception:
            continue
        scored.append((score, bug))
    if not scored:
        return None
    best = max(s for s, _ in scored)
    winners = [b for s, b in scored if s == best]
    message = winners[0].likely if len(winners) == 1 else " or ".join(b.likely for b in winners[:2])
    return {"bug": winners[0].name, "bugs": [b.name for b in winners], "message": message}
