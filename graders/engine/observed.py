"""What the report says was observed: the relation finder (graders.engine.relations) run on
the smallest failing case of each failing check.

For the call that failed, the reference is called here on the same arguments, and every
relation that holds between the two answers becomes a sentence ("y equals the reference's
y times 1.41421 (sqrt(d_head))", "the weights agree with the reference; y differs"). Each
sentence was tested on that call; nothing is guessed.
"""
from __future__ import annotations

import inspect

import numpy as np

from graders.engine.call_text import plain
from graders.engine.compared import case_constants
from graders.engine.failures import CheckFailed
from graders.engine.recorder import Call, Raised
from graders.engine.relations import observe
from graders.engine.replay import Replayer
from graders.engine.vocabulary import tolerance

MAX_OBSERVED = 4        # sentences in a report at most
CHECKS_LOOKED_AT = 3    # failing checks whose failing call is compared


def observed(ref, domain, failures: list[tuple[str, CheckFailed]]) -> list[str]:
    """Sentences about the failing calls of the first failing checks, most specific first,
    each once: the relations between the attempt's answer and the reference's, else what the
    failing call did that the reference's does not (raise, return, write into an input).
    When the judge explained the failures (graders.engine.explain), its sentences."""
    explained = next((f.explained for _, f in failures if hasattr(f, "explained")), None)
    if explained is not None:
        return [s.text for s in explained]
    for _, failure in failures[:CHECKS_LOOKED_AT]:
        call = next((c for c in reversed(failure.calls) if _comparable(c)), None)
        if call is None:
            continue
        found = [s for s in _about(ref, domain, call, failure.case or {}) if not _count_only(s)]
        if found:  # the first failing check that shows a relation speaks for the grading
            return found[:MAX_OBSERVED]
    for _, failure in failures[:CHECKS_LOOKED_AT]:
        for call in reversed(failure.calls):
            sentence = conduct(ref, call)
            if sentence:
                return [sentence]
    return []


def conduct(ref, call: Call) -> str | None:
    """What a failing call did, tested against the reference on the same arguments: it raised
    where the reference returns, returned where the reference raises ValueError, wrote into an
    input, or returned memory it shares with one. None when it did none of these."""
    source = plain(call.source)
    if call.mutated:
        written = [m for m in call.mutated if not m.endswith(" (replaced)")]
        what = f"writes into its input {_names(written)}" if written else \
            f"replaces entries of a container it was given ({_names([m[:-11] for m in call.mutated])})"
        return f"{source} {what}, where the reference leaves its inputs as they were"
    if call.shares:
        return f"what {source} returns shares memory with what it was given or returned before"
    if not (call.recorded and call.kept) or getattr(ref, call.function, None) is None:
        return None
    want, _ = Replayer(ref).outcome(call)
    if isinstance(call.outcome, Raised) and not isinstance(want, BaseException):
        return (f"{source} raises {call.outcome.type_name}{call.outcome.location()}, where the reference "
                f"returns an answer")
    if call.returned and isinstance(want, ValueError):
        return f"{source} returns an answer, where the reference raises ValueError"
    if isinstance(call.outcome, Raised) and isinstance(want, ValueError) and not call.outcome.is_a(ValueError):
        return (f"{source} raises {call.outcome.type_name}{call.outcome.location()}, where the reference raises "
                f"ValueError: the contract's check is missing or comes too late")
    return None


def _names(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in dict.fromkeys(names))


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
    sentences = observe(call.outcome, want, inputs=inputs, constants=case_constants(ex, case, named),
                        what=f"the result of {call.source}", rtol=rtol, atol=atol,
                        names=ex.outputs if ex else (), axes=ex.axes if ex else None)
    return sentences
