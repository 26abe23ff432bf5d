"""Running a grader's checks against the attempt's process, one check at a time.

Everything that decides a verdict happens here, in the judge's process: the checks, the
reference, every comparison. The attempt is reached only through `checks.Candidate`,
which sends each call to the worker (graders/worker.py). A check that hangs or crashes
the worker fails with a message that says so; the worker is restarted for the next
check. Once a check has timed out, each later check gets a tenth of the time limit (at
least a second) and all of them together two time limits, so a function that never
returns costs about three time limits, not one per check, and the checks it does not
hang in still run. A check marked slow runs last, and only once every other check passes.
"""
from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field

from graders import checks
from graders.report import CheckResult, Status
from graders.sandbox import AttemptCrashed, AttemptGone, CallTimedOut, Sandbox


@dataclass
class Judged:
    results: list[CheckResult]
    failing: list[checks.Call] = field(default_factory=list)   # calls made in failing checks
    named: list[str] = field(default_factory=list)              # bugs a check recognised itself


def grader(kata: str):
    return importlib.import_module(f"graders.test_{kata}")


def checks_of(module) -> list:
    """The @check functions of a grader, in the order they are written."""
    return [fn for name, fn in vars(module).items() if name.startswith("test_") and hasattr(fn, "check_name")]


def loaded_message(reply: dict) -> str | None:
    """None when the attempt loaded; else why not, in one line."""
    if "ok" in reply:
        return None
    raised = checks.Raised(reply.get("raised") or {"message": reply.get("error", "unknown failure")})
    if raised.type_name == "SyntaxError" and raised.where:
        return f"your file has a syntax error on line {raised.where.get('line')}: {raised.message}"
    text = f"{raised.type_name}: {raised.message}" if raised.message else raised.type_name
    return f"your file failed to load: {text}{raised.location()}"


def run(module, ref, box: Sandbox, candidate: checks.Candidate, check_seconds: float) -> Judged:
    """Run every check of `module` (a grader) on `candidate`, with `ref` the reference module;
    never raises for the attempt's faults."""
    judged = Judged([])
    cap: float | None = None  # once a check timed out: when the rest of the grading must end
    tests = checks_of(module)
    quick = [t for t in tests if not getattr(t, "slow", None)]
    results: dict[str, CheckResult] = {}
    for test in quick + [t for t in tests if getattr(t, "slow", None)]:
        if getattr(test, "slow", None) and not all(r.passed for r in results.values()):
            results[test.__name__] = CheckResult(test.check_name, Status.SKIPPED, id=test.__name__, message=(
                f"it runs once every other check passes ({test.slow})"))
            continue
        limit = test.timeout or check_seconds
        if cap is not None:
            limit = min(limit, max(1.0, check_seconds / 10))
            if time.monotonic() >= cap:
                results[test.__name__] = CheckResult(test.check_name, Status.SKIPPED, id=test.__name__, message=(
                    "an earlier check did not finish, and the time left for the rest ran out"))
                continue
        if box.gone is not None or box.chan is None:
            problem = _restart(box, candidate, check_seconds)
            if problem:
                results[test.__name__] = CheckResult(test.check_name, Status.FAILED, problem, id=test.__name__)
                continue
        deadline = time.monotonic() + limit
        checks.LOG.deadline = deadline if cap is None else min(deadline, cap)
        results[test.__name__] = _one(test, candidate, ref, limit, judged)
        if isinstance(box.gone, CallTimedOut) and cap is None:
            cap = time.monotonic() + 2 * check_seconds
    checks.LOG.deadline = float("inf")
    judged.results = [results[t.__name__] for t in tests]  # in the order the grader lists them
    return judged


def _restart(box: Sandbox, candidate: checks.Candidate, check_seconds: float) -> str | None:
    """A fresh worker for the next check; the reason when it cannot load the attempt again."""
    from graders.harness import load_seconds

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


def _one(test, candidate: checks.Candidate, ref, limit: float, judged: Judged) -> CheckResult:
    """Run one check and say how it went."""
    name, ident = test.check_name, test.__name__
    try:
        test(candidate, ref)
    except checks.NotImplementedYet as exc:
        return CheckResult(name, Status.NOT_IMPLEMENTED, exc.message, id=ident, function=exc.function)
    except checks.CheckFailed as exc:
        judged.failing.extend(exc.calls)
        if exc.bug:
            judged.named.append(exc.bug)
        last = exc.calls[-1].function if exc.calls else None
        return CheckResult(name, Status.FAILED, exc.message, exc.repro, ident, last, exc.picture)
    except CallTimedOut:
        where = f" on {checks.last_call()}" if checks.LOG.calls else ""
        return CheckResult(name, Status.FAILED, f"did not finish within {limit:g} s{where}: an endless loop, or "
                           f"far too slow", id=ident, function=_function())
    except AttemptCrashed as exc:
        where = f"{checks.last_call()} " if checks.LOG.calls else "the attempt "
        return CheckResult(name, Status.FAILED, f"{where}{exc.message}", id=ident, function=_function())
    except Exception as exc:  # the check could not use what the attempt returned
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        after = f" after {checks.last_call()}" if checks.LOG.calls else ""
        return CheckResult(name, Status.FAILED, f"the grader could not use the result{after}: "
                           f"{type(exc).__name__}: {text}", id=ident, function=_function())
    return CheckResult(name, Status.PASSED, id=ident)


def _function() -> str | None:
    return checks.LOG.calls[-1].function if checks.LOG.calls else None


def collapse(results: list[CheckResult]) -> list[CheckResult]:
    """An untouched stub is one "not implemented yet" line, not one per check; a function
    still missing among others is one line per function."""
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
    merged = [CheckResult(f"`{f}` implemented", Status.NOT_IMPLEMENTED,
                          f"not implemented yet: `{f}` still raises NotImplementedError "
                          f"({sum(r.function == f for r in missing)} checks need it)", function=f)
              for f in functions]
    return rest + merged
