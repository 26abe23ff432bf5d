"""Running a property: its cases in turn, the first failure shrunk to the smallest case.

    @check("agrees with the reference", CASES)
    def agrees(impl, new, ref, T, d, dtype): ...

A check's body gets `impl` (the attempt, graders.engine.recorder.Candidate), `new` (a
fresh graders.engine.inputs.Inputs seeded by the case's `seed`), `ref` (the reference
module) when it asks for it, and the case's other entries as keyword arguments. When a
case fails, smaller cases (each size to its minimum, halved, or one less) are tried while
the same kind of failure persists, within a fixed number of tries: the smallest failing
case, its calls and a repro go into the report, the same on any machine.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable

from graders.engine.call_text import repro_for
from graders.engine.failures import AttemptRaised, CheckFailed, NotApplicable, NotImplementedYet
from graders.engine.inputs import Inputs
from graders.engine.recorder import intact
from graders.engine.sandbox import AttemptGone

# Cases tried while shrinking one failure: a count, not seconds, so that the smallest case
# found (and so the message) is the same on an idle and on a busy machine.
SHRINK_TRIES = 60


def _describe_case(case: dict) -> str:
    return ", ".join(v if k == "dtype" else f"{k}={v}" for k, v in case.items() if k != "seed")


def _steps(v: int, lo: int) -> list[int]:
    """Smaller values for a size: its minimum, a half, three quarters (so that a failure that
    starts past some size is found in a few halvings) and one less."""
    return [n for n in (lo, v // 2, (v // 2 + v) // 2, v - 1) if lo <= n < v]


def _smaller(case: dict, minimum: dict, frozen: tuple = ()) -> list[dict]:
    """Cases one step smaller than `case` (see _steps), size by size (not the entries in
    `frozen`, which say what the case is about)."""
    out = []
    for k, v in case.items():
        if k == "seed" or k in frozen or isinstance(v, bool):
            continue
        if isinstance(v, int):
            out += [{**case, k: n} for n in _steps(v, minimum.get(k, 1))]
        elif isinstance(v, tuple) and all(isinstance(s, int) for s in v):
            for i, s in enumerate(v):
                out += [{**case, k: v[:i] + (n,) + v[i + 1:]} for n in _steps(s, minimum.get(k, 1))]
    seen, unique = set(), []
    for c in out:
        key = repr(sorted(c.items()))
        if key not in seen:
            seen.add(key)
            unique.append(c)
    return unique


def _size(case: dict) -> int:
    total = 0
    for k, v in case.items():
        if k == "seed" or isinstance(v, bool):
            continue
        if isinstance(v, int):
            total += v
        elif isinstance(v, tuple):
            total += sum(s for s in v if isinstance(s, int))
    return total


def check(name: str, cases: list[dict] | None = None, *, shrink: bool = True,
          minimum: dict | None = None, valid: Callable[[dict], bool] | None = None,
          timeout: float | None = None, slow: str | None = None, after: tuple[str, ...] = (),
          frozen: tuple[str, ...] = (), describe: Callable[[dict], str] | None = None,
          ahead: Callable | None = None, rules: Callable | None = None):
    """Declare a property. `name` is what the candidate reads; each case runs in turn.

    The body is `body(impl, x, **case)` (or with `ref` too), where `x` is a fresh
    `Inputs` seeded by the case's `seed` (default 0). On the first failing case the
    sizes in the case are shrunk while the same kind of failure persists, and the
    failure carries the smallest case, its calls and a repro.

    `slow` marks a check that costs far more than the others (a call at T = 8192, say) and
    says why: the judge runs it once every other check passes, and reports it as not run
    yet until then, so a failing attempt is not made to wait for it. `after` names checks
    (their functions) that must pass first: a check that compares along one dimension of the
    input domain says nothing new about an attempt that already fails their plain cases.
    `frozen`: case entries the shrinker leaves alone; `describe(case)`: the words for a case.
    `ahead(impl, ref, cases)`: the (function, args, kwargs) calls the cases will make, sent to the
    attempt's process before the cases run (one call a case: fewer round trips).
    `rules(impl, ref, calls)`: held on every call a case made, once its body passed (the
    contract's rules as invariants, graders.engine.rules.enforce); a CheckFailed it raises is
    the case's failure.
    """
    cases = cases or [{}]
    minimum = minimum or {}

    def decorate(body: Callable) -> Callable:
        attempt_case = _case_runner(body, rules)

        def test(impl, ref):
            impl.grading.check = name
            passed_over = []
            planned = ahead(impl, ref, cases) if ahead is not None else _planned(body, impl, ref, cases)
            impl.send_ahead(planned)
            try:
                run_cases(impl, ref, passed_over)
            finally:
                impl.settle()  # calls sent ahead and not made: made now, in this check, in their order

        def run_cases(impl, ref, passed_over):
            for case in cases:
                try:
                    failure = attempt_case(impl, ref, case)
                except NotApplicable as why:
                    passed_over.append(why)
                    continue
                if failure is None:
                    continue
                if shrink and not isinstance(failure, NotImplementedYet) and failure.case is not None:
                    failure = _shrink(impl, ref, failure, attempt_case, _same_kind, minimum, valid, frozen)
                said = (describe or _describe_case)(failure.case) if failure.case else ""
                if said:
                    failure.message = f"{failure.message} [{said}]"
                    failure.args = (failure.message,)
                if failure.case is not None:  # the judge may make the case again, alone (judge.blame_state)
                    failure.again = lambda other, case=failure.case: attempt_case(other, ref, case)
                    failure.rerun = Rerun(lambda on, case: attempt_case(on, ref, case),
                                          lambda case: _allowed(case, minimum, valid), _same_kind, tuple(frozen),
                                          describe or _describe_case)
                raise failure
            if passed_over and len(passed_over) == len(cases):
                raise passed_over[0]

        # pytest reads the wrapper's own signature (impl, ref), so copy names by hand
        test.__name__, test.__qualname__ = body.__name__, body.__qualname__
        test.__module__, test.__doc__ = body.__module__, body.__doc__ or name
        test.check_name = name
        test.timeout = timeout  # seconds, when this check needs longer than the default
        test.slow = slow
        test.after = tuple(after)
        return test

    return decorate


class _Planned(Exception):
    """Raised by a Planner at the first call a case makes: that call, or None (not plain)."""

    def __init__(self, call: tuple | None):
        super().__init__()
        self.call = call


# What a planning candidate lets a body do before its first call; anything else ends the plan.
_PLANNING = frozenset({"grading", "functions", "options", "unrecorded", "unrepeatable", "last_call", "path"})


class Planner:
    """A stand-in for the attempt (`impl`) that runs a check's body only as far as its first
    call of the attempt, and says what that call is: the case's inputs are drawn from its
    seed, so the real run makes the same call, with equal arguments."""

    def __init__(self, impl):
        self._impl = impl

    def __getattr__(self, name: str):
        impl = self._impl
        if name in impl.functions:
            def call(*args, **kwargs):
                plain = not any(impl.grading.opts.values())  # a call watched some way goes alone
                raise _Planned((name, args, kwargs) if plain else None)
            return call
        if name in _PLANNING:
            return getattr(impl, name)
        raise _Planned(None)


def _planned(body: Callable, impl, ref, cases: list[dict]) -> list[tuple]:
    """The first call each case will make, found by running each case's body until it makes
    it (graders.engine.recorder.Candidate.send_ahead sends them all at once, and the cases take
    their answers as they make them: the attempt's process runs them while the judge compares)."""
    if len(cases) < 2:
        return []
    wants_ref = "ref" in inspect.signature(body).parameters
    planner, planned = Planner(impl), []
    for case in cases:
        params = {k: v for k, v in case.items() if k != "seed"}
        try:
            body(planner, Inputs(case.get("seed", 0)), **({"ref": ref} if wants_ref else {}), **params)
        except _Planned as found:
            if found.call is None:
                break  # past this case the calls are not plain: the rest go one by one
            planned.append(found.call)
            continue
        except Exception:  # the body needs what a planner cannot give: the rest go one by one
            break
        break  # a case that makes no call: its successors' calls would not follow in order
    return planned


@dataclass(frozen=True)
class Rerun:
    """How a failing check's case is made again, at other sizes or in another process of the
    attempt (graders.engine.explain): `attempt(impl, case)` gives the failure, or None when the
    case passes; `allows(case)` says whether the check may make that case; `same(a, b)` whether
    two failures fail the same way; `frozen`, the entries that say what the case is about;
    `describe(case)`, the words for a case."""

    attempt: Callable
    allows: Callable[[dict], bool]
    same: Callable
    frozen: tuple
    describe: Callable[[dict], str]


def _allowed(case: dict, minimum: dict, valid: Callable[[dict], bool] | None) -> bool:
    """A case the check may make: each size the check gives a minimum at least that, and the
    check's own rule (the smallest value of other sizes is the caller's to keep)."""
    for k, low in minimum.items():
        v = case.get(k)
        if isinstance(v, int) and not isinstance(v, bool) and v < low:
            return False
        if isinstance(v, tuple) and any(isinstance(s, int) and s < low for s in v):
            return False
    try:
        return valid is None or bool(valid(case))
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return False


def _case_runner(body: Callable, rules: Callable | None = None) -> Callable:
    """attempt_case(impl, ref, case): None if the case passes, else the failure with its calls,
    its case and a repro. Every recorded call joins the grading's history, passing or failing.
    `rules`: held on the case's calls once its body passed."""
    wants_ref = "ref" in inspect.signature(body).parameters

    def attempt_case(impl, ref, case):
        x = Inputs(case.get("seed", 0))
        g = impl.grading
        g.calls, g.inputs = [], x
        try:
            params = {k: v for k, v in case.items() if k != "seed"}
            body(impl, x, **({"ref": ref} if wants_ref else {}), **params)
            if rules is not None:
                rules(impl, ref, list(g.calls))
        except CheckFailed as exc:
            earlier = getattr(exc, "earlier", None)
            if earlier is not None:  # the failing call was made in another check
                lines, count = earlier.repro
                exc.repro = repro_for([earlier], None, getattr(impl, "_path", None), lines[:count])
                return exc
            exc.calls, exc.case = list(g.calls), case
            exc.repro = repro_for(g.calls, g.inputs, getattr(impl, "_path", None))
            return exc
        finally:
            for c in g.calls:  # a call whose arguments the check changed since cannot be replayed
                c.recorded = c.recorded and intact(c)
            g.history.extend(c for c in g.calls if c.recorded)
        return None

    return attempt_case


def _same_kind(a: CheckFailed, b: CheckFailed) -> bool:
    """Two failures of one check are the same kind: what the shrinker keeps while it shrinks."""
    if a.kind != b.kind:
        return False
    if isinstance(a, AttemptRaised):
        return a.original.type_name == b.original.type_name
    return True


def _shrink(impl, ref, failure, attempt_case, same_kind, minimum, valid, frozen=()):
    """The smallest case that fails the same way, found within SHRINK_TRIES cases. A call that
    hangs or crashes while shrinking ends the search (the judge restarts the attempt's
    process before the next check) and the failure found so far stands."""
    tries, improved, tried = 0, True, set()
    try:
        while improved and tries < SHRINK_TRIES:
            improved = False
            for smaller in sorted(_smaller(failure.case, minimum, frozen), key=_size):
                key = repr(sorted(smaller.items()))
                if key in tried or (valid is not None and not valid(smaller)):
                    continue
                if tries >= SHRINK_TRIES:
                    break
                tried.add(key)
                tries += 1
                again = attempt_case(impl, ref, smaller)
                if again is not None and again.case is not None and same_kind(again, failure):
                    failure, improved = again, True
                    break
    except AttemptGone:
        pass
    return failure

