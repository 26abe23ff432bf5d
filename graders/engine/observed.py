"""What the report says was observed: the relation finder (graders.engine.relations) run on
the smallest failing case of each failing check.

For the call that failed, the reference is called here on the same arguments, and every
relation that holds between the two answers becomes a sentence ("y equals the reference's
y times 1.41421 (sqrt(d_head))", "the weights agree with the reference; y differs"). Each
sentence was tested on that call; nothing is guessed.
"""
from __future__ import annotations

import inspect
import math

import numpy as np

from graders.engine.failures import CheckFailed
from graders.engine.recorder import Call, Raised
from graders.engine.relations import observe
from graders.engine.replay import Replayer
from graders.engine.vocabulary import tolerance

MAX_OBSERVED = 4        # sentences in a report at most
CHECKS_LOOKED_AT = 3    # failing checks whose failing call is compared


def observed(ref, domain, failures: list[tuple[str, CheckFailed]]) -> list[str]:
    """Sentences about the failing calls of the first failing checks, most specific first,
    each once."""
    for _, failure in failures[:CHECKS_LOOKED_AT]:
        call = next((c for c in reversed(failure.calls) if _comparable(c)), None)
        if call is None:
            continue
        found = [s for s in _about(ref, domain, call, failure.case or {}) if not _count_only(s)]
        if found:  # the first failing check that shows a relation speaks for the grading
            return found[:MAX_OBSERVED]
    return []


def _count_only(sentence: str) -> bool:
    """'agrees with the reference on 7 of 12 entries' says no more than the check's own message."""
    return " on " in sentence and sentence.endswith(" entries") and " of " in sentence.rsplit(" on ", 1)[-1]


def _comparable(call: Call) -> bool:
    return call.recorded and call.kept and call.returned and not isinstance(call.outcome, Raised)


def _about(ref, domain, call: Call, case: dict) -> list[str]:
    fn = getattr(ref, call.function, None)
    if fn is None:
        return []
    want, _ = Replayer(ref).outcome(call)
    if isinstance(want, BaseException):
        return []
    ex = next((e for e in (domain.functions if domain else ()) if e.function == call.function), None)
    params = list(inspect.signature(fn).parameters)
    named = {**dict(zip(params, call.args)), **call.kwargs}
    inputs = {k: v for k, v in named.items() if isinstance(v, np.ndarray) and v.dtype.kind == "f"}
    rtol, atol = tolerance(next((v.dtype for v in inputs.values()), np.float64))
    sentences = observe(call.outcome, want, inputs=inputs, constants=_constants(ex, case, named),
                        what=f"the result of {call.source}", rtol=rtol, atol=atol,
                        names=ex.outputs if ex else (), axes=ex.axes if ex else None)
    return sentences


def _constants(ex, case: dict, named: dict) -> dict:
    """Numbers of the case a wrong factor may be: the domain's own, else every whole-number size
    of the case and argument, and its square root."""
    if ex is not None and ex.constants is not None:
        try:
            return dict(ex.constants({**case, **named}))
        except (KeyError, TypeError, ValueError, ZeroDivisionError):
            pass
    out = {}
    for name, value in {**case, **named}.items():
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value > 1:
            out[name] = int(value)
            out[f"sqrt({name})"] = math.sqrt(value)
    return out
