"""Naming the likely mistake: which known bug behaves like the attempt where it failed.

A bug matches when, on every call made in the failing checks, it gives what the attempt
gave (the same values within the contract's tolerance, or the same kind of exception).
Among the bugs that match, the one that also agrees with the attempt on the most of the
other recorded calls wins; a tie names both.
"""
from __future__ import annotations

import warnings
from types import SimpleNamespace
from typing import Any

import numpy as np

from graders import bugs as bug_catalogue
from graders.attempt import load, reference_path
from graders.checks import Call, _differs, copy_args, tolerance


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
    if (x.dtype.kind in "iu") != (y.dtype.kind in "iu"):
        return False  # an integer answer (a count, a sampled index) is not the same as a float one
    if x.dtype == np.bool_ or y.dtype == np.bool_:
        # a mask's dtype is graded: a float or int 0/1 array is not the same answer as a bool one
        return x.dtype == y.dtype and bool(np.array_equal(x, y))
    rtol, atol = tolerance(dtype, extreme=True)
    try:
        return bool(np.allclose(x.astype(np.float64), y.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True))
    except (TypeError, ValueError):
        return False


def _replay(bug, call: Call, args: tuple, kwargs: dict) -> Any:
    fn = getattr(bug.module, call.function, None)
    if fn is None:
        return NotImplementedError()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            return exc


def agrees(bug, call: Call) -> bool:
    if not call.recorded:
        return False
    args, kwargs = copy_args((call.args, call.kwargs))
    outcome = _replay(bug, call, args, kwargs)
    # writing into the inputs is part of the behaviour: an in-place bug, whose return value is
    # right, must not explain every failure whose values are right, nor miss the one it causes
    wrote = not isinstance(outcome, BaseException) and any(
        _differs(old, new) for old, new in zip((*call.args, *call.kwargs.values()), (*args, *kwargs.values())))
    return wrote == bool(call.mutated) and _same(outcome, call.outcome, _dtype_of(call))


def diagnose(kata: str, failing: list[Call], history: list[Call], named: list[str] = ()) -> dict | None:
    """{'bug': name, 'message': lesson} for the known bug behind the failures, if any.

    `named` are bugs that a check recognised from what it measured (a memory peak, say);
    they are the answer when no bug's outputs explain the failures.
    """
    failing = [c for c in failing if c.recorded]
    if not failing or _reference_explains(kata, failing):
        # the attempt did what the reference does on every failing call, so its outputs
        # cannot tell one bug from another (the failure lies in something else it measured)
        return _named(kata, named)
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
        return _named(kata, named)
    best = max(s for s, _ in scored)
    winners = [b for s, b in scored if s == best]
    message = winners[0].likely if len(winners) == 1 else " or ".join(b.likely for b in winners[:2])
    return {"bug": winners[0].name, "bugs": [b.name for b in winners], "message": message}


def _reference_explains(kata: str, failing: list[Call]) -> bool:
    reference = SimpleNamespace(module=load(reference_path(kata), f"reference_for_diagnosis_{kata}"))
    try:
        return all(agrees(reference, c) for c in failing)
    except Exception:
        return False


def _named(kata: str, named) -> dict | None:
    known = {b.name: b for b in bug_catalogue.load(kata)}
    for name in named:
        if name in known:
            return {"bug": name, "bugs": [name], "message": known[name].likely}
    return None
