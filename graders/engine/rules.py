"""The contract's rules, held on every call a check makes, not in one check each.

An explorer's check (graders.engine.explorer) passes `rules=enforce` to `@check`
(graders.engine.runner): once a case's body has passed, every call the case made is held to

    result types   the type the contract gives the answer, exactly: any tuple (a namedtuple
                   included) where the reference returns a tuple, never a list; any dict; an
                   integer (Python or NumPy, unsigned included) where it returns an integer,
                   never a 0-d array or a bool; a Python float or a NumPy floating scalar where
                   it returns a float, never an array; a NumPy array (a subclass counts) where it
                   returns an array, of integers or booleans where its array is one;
    no input changed   no argument written into and no entry of a list or dict replaced, a
                   result passed back by reference included (graders.engine.protocol.Done);
    new arrays     no result sharing memory with an input, a result kept, or an earlier result
                   whose memory the attempt still holds (graders.engine.keeping.Recent);
    ValueErrors    a call the reference refuses (a ValueError: the contract rules it out)
                   raises ValueError, not something else, and does not return.

So a rule holds in every mode the explorer reaches (causal and not, every block size, every
window, a decoding step, every value family, sequences of calls), with no call of its own:
the rules ride on the calls already made. The reference's answers come from its cache
(graders.engine.calls.expected), keyed by the arguments' fingerprints.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from graders.engine import calls as make
from graders.engine.failures import CheckFailed, changed_inputs
from graders.engine.recorder import Call, Raised
from graders.engine.wire import kind_of

RULES = ("result types", "no input changed", "new arrays", "ValueErrors")


# ----------------------------------------------------------------------------- result types

def _integer(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _floating(v: Any) -> bool:
    return isinstance(v, (float, np.floating))


def type_problem(got: Any, want: Any, what: str = "the result", path: tuple = ()) -> str | None:
    """What is wrong with the type of `got` (the attempt's answer) where the reference answered
    `want`, in words ("part [1] of {what} is a list, where ..."); None when it is a type the
    contract allows."""
    where = what if not path else f"part {list(path)} of {what}"
    if isinstance(want, (tuple, list)):
        kind = "tuple" if isinstance(want, tuple) else "list"
        if not isinstance(got, tuple if kind == "tuple" else list):
            allowed = "a tuple (any tuple, a namedtuple included)" if kind == "tuple" else "a list"
            return f"{where} is {kind_of(got)}, where the contract asks for {allowed}"
        if len(got) != len(want):
            return None  # a length the comparison of values speaks of
        return next((p for p in (type_problem(g, w, what, path + (i,)) for i, (g, w) in enumerate(zip(got, want)))
                     if p), None)
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return f"{where} is {kind_of(got)}, where the contract asks for a dict (any dict)"
        return next((p for p in (type_problem(got[k], want[k], what, path + (k,)) for k in want if k in got) if p),
                    None)
    if _integer(want):
        if not _integer(got):
            return (f"{where} is {kind_of(got)}, where the contract asks for an integer (a Python or NumPy "
                    f"integer, not an array)")
        return None
    if _floating(want):
        if not _floating(got):
            return (f"{where} is {kind_of(got)}, where the contract asks for a Python float or a NumPy floating "
                    f"scalar (not an array)")
        return None
    if isinstance(want, np.ndarray):
        if not isinstance(got, np.ndarray):
            return f"{where} is {kind_of(got)}, where the contract asks for a NumPy array"
        if want.dtype == np.bool_ and got.dtype != np.bool_:
            return f"{where} is an array of {got.dtype}, where the contract asks for a bool array"
        if want.dtype.kind in "iu" and got.dtype.kind not in "iu":
            return f"{where} is an array of {got.dtype}, where the contract asks for an array of integers"
        return None
    if want is None and got is not None:
        return f"{where} is {kind_of(got)}, where the contract asks for None"
    return None


# ----------------------------------------------------------------------------- every call

def enforce(impl, ref, calls: list[Call]) -> None:
    """Every call of `calls` (a case's, once its body passed) keeps the contract's rules;
    CheckFailed for the first that does not, with that call as the failing one."""
    for call in calls:
        if call.mutated:
            failure = CheckFailed(f"{call.source} {changed_inputs(call.mutated)}", kind="mutated")
            failure.calls = [call]
            raise failure
        if call.shares:
            raise shared(impl, call, _names(ref, call.function))
        problem = _answer_problem(ref, call)
        if problem:
            kind, text = problem
            raise CheckFailed(text, kind=kind)


def _answer_problem(ref, call: Call) -> tuple[str, str] | None:
    """(kind, words) when what `call` gave breaks a rule the reference's answer fixes."""
    if not call.recorded or not hasattr(ref, call.function):
        return None
    if call.returned and not call.kept and call.form is None:
        return None  # nothing of the answer was kept to look at
    try:
        want = make.expected(ref, call.function, call.args, call.kwargs, call.digests)
    except Exception:  # the reference cannot take the call: no rule to hold it to
        return None
    if want is make.REFUSED:
        if call.returned:
            return "raises", (f"{call.source} returned, where the reference raises ValueError: a call the contract "
                              f"rules out must raise ValueError")
        if isinstance(call.outcome, Raised) and not call.outcome.is_a(ValueError) and not call.outcome.is_a(
                NotImplementedError):
            return "raises", (f"{call.source} raised {call.outcome.type_name}, where the reference raises ValueError: "
                              f"a call the contract rules out must raise ValueError")
        return None
    if not call.returned:
        return None
    got = call.outcome if call.kept else call.form
    problem = type_problem(got, want, f"what {call.source} returned")
    return ("type", problem) if problem else None


def shared(impl, call: Call, names: list[str]) -> CheckFailed:
    """The failure of a call whose result shares memory with an input, a result kept, or an
    earlier result whose memory the attempt still holds."""
    path, (kind, key, inner) = call.shares[0]
    part = "what it returned" if not path else f"part {path} of what it returned"
    if kind == "argument":
        name = names[key] if isinstance(key, int) and key < len(names) else str(key)
        where = f"its input {name}" + (f" (part {inner})" if inner else "")
        lesson = "a view of an input is not a new array: the caller's array would change with it"
    else:
        earlier = next((c for c in (*impl.grading.history, *impl.grading.calls) if c.id == key), None)
        where = f"what an earlier call{f', {earlier.source},' if earlier else ''} returned"
        lesson = "a buffer kept between calls: the caller's earlier result would change with it"
    failure = CheckFailed(f"{part} by {call.source} shares memory with {where}: {lesson}", kind="shared")
    failure.calls, failure.earlier = [call], call if call.check != impl.grading.check else None
    return failure


def _names(ref, function: str) -> list[str]:
    try:
        return [p.name for p in make.parameters(ref, function)]
    except (AttributeError, TypeError, ValueError):
        return []
