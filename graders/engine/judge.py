"""Running a grader's checks against the attempt's process, one check at a time.

Everything that decides a verdict happens here, in the judge's process: the checks, the
reference, every comparison. The attempt is reached only through `recorder.Candidate`,
which sends each call to the worker (graders/engine/worker.py). A check that hangs or crashes
the worker fails with a message that says so; the worker is restarted for the next
check. Once a check has timed out, each later check gets a tenth of the time limit (at
least a second) and all of them together two time limits, so a function that never
returns costs about three time limits, not one per check, and the checks it does not
hang in still run. A check marked slow runs last, and only once every other check passes.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from graders.engine import files, grammar
from graders.engine.failures import CheckFailed, NotApplicable, NotImplementedYet
from graders.engine.limits import load_seconds
from graders.engine.protocol import Loaded
from graders.engine.recorder import Call, Candidate, Raised
from graders.engine.report import CheckResult, Status
from graders.engine.sandbox import AttemptCrashed, AttemptGone, CallTimedOut, Sandbox


@dataclass
class Judged:
    results: list[CheckResult]
    failing: list[Call] = field(default_factory=list)   # calls made in failing checks
    named: list[str] = field(default_factory=list)              # bugs a check recognised itself
    failures: list[tuple[str, CheckFailed]] = field(default_factory=list)  # (check id, failure), in order


def grader(kata: str):
    return files.grader(kata)


def checks_of(module) -> list:
    """The checks of a grader: its own @check functions, in the order they are written, then
    the explorer's over the kata's declared domain (graders/KATA/domain.py), when it has one;
    a check of the grader's own replaces the explorer's of the same name."""
    own = [fn for fn in vars(module).values() if callable(fn) and hasattr(fn, "check_name")]
    domain = files.domain(module.__name__.split(".")[1]) if module.__name__.count(".") == 2 else None
    if domain is None:
        return own
    from graders.engine import explorer

    names = {fn.__name__ for fn in own}
    return own + [fn for name, fn in explorer.checks(domain).items() if name not in names]


def wants_twin(module) -> bool:
    """The grading makes calls in a process that has not called the attempt yet (the explorer's
    float32-first sequences): the attempt's process is asked for a twin before its first call."""
    domain = files.domain(module.__name__.split(".")[1]) if module.__name__.count(".") == 2 else None
    return domain is not None and any(ex.sequence and ex.float32 for ex in domain.functions)


def loaded_message(loaded: Loaded) -> str | None:
    """None when the attempt loaded; else why not, in one line."""
    if loaded.functions is not None:
        return None
    raised = Raised(loaded.raised if loaded.raised is not None else {"message": loaded.error or "unknown failure"})
    if raised.type_name == "SyntaxError" and raised.where:
        return f"your file has a syntax error on line {raised.where.get('line')}: {raised.message}"
    text = f"{raised.type_name}: {raised.message}" if raised.message else raised.type_name
    return f"your file failed to load: {text}{raised.location()}"


def run(module, ref, box: Sandbox, candidate: Candidate, check_seconds: float, progress=None) -> Judged:
    """Run every check of `module` (a grader) on `candidate`, with `ref` the reference module;
    never raises for the attempt's faults. `progress`, when given, is called with each
    CheckResult as soon as it is known (in the order the checks run)."""
    judged = Judged([])
    hung = ""  # the name of the check that timed out: the rest are not run
    tests = checks_of(module)
    quick = [t for t in tests if not getattr(t, "slow", None)]
    results: dict[str, CheckResult] = {}
    done = _keeping(results, progress)
    for test in quick + [t for t in tests if getattr(t, "slow", None)]:
        if hung:
            done(test.__name__, _not_after_hang(test, hung))
            continue
        if getattr(test, "slow", None) and all(r.passed for r in results.values()):
            candidate.release_twin()  # the calls that need it are made: not alive beside a measured call's child
        if getattr(test, "slow", None) and not all(r.passed for r in results.values()):
            done(test.__name__, CheckResult(test.check_name, Status.SKIPPED, id=test.__name__, message=(
                f"it runs once every other check passes ({test.slow})")))
            continue
        blocked = [results[a] for a in getattr(test, "after", ()) if a in results and not results[a].passed]
        if blocked:
            names = " and ".join(f"'{r.name}'" for r in blocked)
            done(test.__name__, CheckResult(test.check_name, Status.SKIPPED, id=test.__name__, message=(
                f"it runs once {names} {grammar.verb(len(blocked), 'passes', 'pass')}")))
            continue
        limit = test.timeout or check_seconds
        if box.gone is not None or box.chan is None:
            problem = _restart(box, candidate, check_seconds)
            if problem:
                done(test.__name__, CheckResult(test.check_name, Status.FAILED, problem, id=test.__name__))
                continue
        candidate.grading.deadline = time.monotonic() + limit
        result = _one(test, candidate, ref, limit, judged)
        candidate.grading.failed = candidate.grading.failed or result.status is Status.FAILED
        done(test.__name__, result)
        if isinstance(box.gone, CallTimedOut):
            hung = test.check_name
    candidate.grading.deadline = float("inf")
    judged.results = [results[t.__name__] for t in tests]  # in the order the grader lists them
    if any(ident in STATE_CHECKS and failure.kind in ("stale", "shared") for ident, failure in judged.failures):
        blame_state(judged, candidate, check_seconds)  # state is known to leak: say which failures it explains
    if judged.failures:
        from graders.engine.explain import explain

        kata = module.__name__.split(".")[1] if module.__name__.count(".") == 2 else None
        explained = explain(judged.failures, candidate, ref, files.domain(kata) if kata else None, check_seconds)
        for result in judged.results:
            result.repro = explained.repros.get(result.id, result.repro)
    return judged


def _not_after_hang(test, hung: str) -> CheckResult:
    return CheckResult(test.check_name, Status.SKIPPED, id=test.__name__, message=(
        f"'{hung}' did not finish, so the checks after it were not run: make that call finish first"))


STATE_CHECKS = ("repeated_calls", "lookalikes", "new_arrays")   # the explorer's checks about what calls leave behind
STATE_NOTE = ("; made alone, in a new process, the same case passes: what earlier calls left behind changes the "
              "answer (state kept between calls), not the formula")


def blame_state(judged: Judged, candidate: Candidate, check_seconds: float) -> None:
    """When state is known to leak between calls, each other failed check whose failing case
    passes when made alone, in a new process, says so: the check names the symptom, and the
    message names the cause."""
    for ident, failure in judged.failures:
        again = getattr(failure, "again", None)
        if ident in STATE_CHECKS or again is None or failure.kind in ("mutated", "raises", "memory", "missing"):
            continue
        result = next(r for r in judged.results if r.id == ident)
        candidate.grading.deadline = time.monotonic() + check_seconds
        try:
            fresh = candidate.fresh()
        except AttemptGone:
            return
        try:
            if again(fresh) is None:
                result.message += STATE_NOTE
        except (AttemptGone, CheckFailed):
            pass
        finally:
            fresh.box.close()
            candidate.grading.deadline = float("inf")


def _keeping(results: dict[str, CheckResult], progress):
    """What keeps a check's result in `results` and tells `progress` of it (if given)."""
    def done(name: str, result: CheckResult) -> None:
        results[name] = result
        if progress is not None:
            try:
                progress(result)
            except Exception:  # a progress message is a help, never a reason for a grading to fail
                pass

    return done


def _restart(box: Sandbox, candidate: Candidate, check_seconds: float) -> str | None:
    """A fresh worker for the next check; the reason when it cannot load the attempt again."""
    box.start()
    seconds = load_seconds(check_seconds)
    try:
        reply = box.wait_loaded(time.monotonic() + seconds)
    except AttemptGone as exc:
        return f"not run: the attempt's process could not be started again ({_gone_text(exc, seconds)})"
    problem = loaded_message(reply)
    if problem:
        return f"not run: {problem}"
    candidate.functions = set(box.functions)
    return None


def _gone_text(exc: AttemptGone, seconds: float) -> str:
    return f"its top-level code did not finish within {seconds:g} s" if isinstance(exc, CallTimedOut) else exc.message


def _one(test, candidate: Candidate, ref, limit: float, judged: Judged) -> CheckResult:
    """Run one check and say how it went."""
    name, ident, g = test.check_name, test.__name__, candidate.grading
    try:
        test(candidate, ref)
    except NotImplementedYet as exc:
        return CheckResult(name, Status.NOT_IMPLEMENTED, exc.message, id=ident, function=exc.function)
    except NotApplicable as exc:
        return CheckResult(name, Status.SKIPPED, f"nothing to check: {exc}", id=ident)
    except CheckFailed as exc:
        judged.failing.extend(exc.calls)
        judged.failures.append((ident, exc))
        if exc.bug:
            judged.named.append(exc.bug)
        last = exc.calls[-1].function if exc.calls else None
        return CheckResult(name, Status.FAILED, exc.message, exc.repro, ident, last, exc.picture)
    except CallTimedOut as exc:
        return CheckResult(name, Status.FAILED, timed_out(g, limit, exc), id=ident, function=_function(g))
    except AttemptCrashed as exc:
        where = f"{g.last_call()} " if g.calls else "the attempt "
        return CheckResult(name, Status.FAILED, f"{where}{exc.message}", id=ident, function=_function(g))
    except Exception as exc:  # the check could not use what the attempt returned
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        after = f" after {g.last_call()}" if g.calls else ""
        return CheckResult(name, Status.FAILED, f"the grader could not use the result{after}: "
                           f"{type(exc).__name__}: {text}", id=ident, function=_function(g))
    return CheckResult(name, Status.PASSED, id=ident)


def timed_out(g, limit: float, exc: CallTimedOut) -> str:
    """'did not finish within 10 s on softmax(z) (z (2, 131072) float64): it was running line 5 of
    your file (`while True:`) when it was stopped'."""
    on = ""
    if g.calls:
        call = g.calls[-1]
        shapes = call.shapes() if callable(call.shapes) else call.shapes
        on = f" on {call.source}" + (f" ({shapes})" if shapes else "")
    return f"did not finish within {limit:g} s{on}: {stopped_at(exc)}"


def stopped_at(exc: CallTimedOut) -> str:
    if exc.where is None:
        return "an endless loop, or far too slow"
    line, code = exc.where
    return f"it was running line {line} of your file" + (f" (`{code}`)" if code else "") + " when it was stopped"


def _function(g) -> str | None:
    return g.calls[-1].function if g.calls else None


def collapse(results: list[CheckResult]) -> list[CheckResult]:
    """An untouched stub is one "not implemented yet" line, not one per check. A function
    still missing among others keeps each check that needs it, so that the count of checks
    stays the same once it is written (practice/render.py shows them as one line per
    function)."""
    missing = [r for r in results if r.status is Status.NOT_IMPLEMENTED]
    if not missing:
        return results
    functions = list(dict.fromkeys(r.function for r in missing if r.function))
    rest = [r for r in results if r.status is not Status.NOT_IMPLEMENTED]
    if all(r.status is Status.SKIPPED for r in rest):
        listed = ", ".join(f"`{f}`" for f in functions) or "the function"
        verb = "raise" if len(functions) > 1 else "raises"
        return [CheckResult("implemented", Status.NOT_IMPLEMENTED,
                            f"not implemented yet: {listed} still {verb} NotImplementedError",
                            function=functions[0] if len(functions) == 1 else None)]
    return results
