"""The grading child: `python -m graders.runner KATA ATTEMPT RESULTS`.

Runs each check of graders/test_KATA.py on the attempt, in order, writing one JSON line
per event to RESULTS: `start` (the checks), then per check `begin` and `check` (its
result), then `diagnosis` (when a known bug matches) and `done`. The parent reads the
file even when this process dies part-way, so whatever finished is kept.

The checks are plain functions (see graders.checks.check), so they run here without
pytest: that keeps `kata check` quick to answer. The same files run under pytest through
graders/conftest.py, with the same fixtures (`impl`, `ref`) and time limits.
"""
from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEMORY_LIMIT_MB = int(os.environ.get("KATA_MEMORY_LIMIT_MB", "6144"))
CHECK_SECONDS = float(os.environ.get("KATA_CHECK_SECONDS", "10"))


def limit_memory(megabytes: int) -> None:
    """Cap the address space so a runaway allocation fails one check, not the machine."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return
    limit = megabytes << 20
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


class CheckTimeout(BaseException):
    """Raised by the alarm inside a check that ran out of time (BaseException: the
    attempt's own `except Exception` cannot swallow it)."""


def _on_alarm(signum, frame):
    raise CheckTimeout()


class Results:
    def __init__(self, path: str):
        self.path = path

    def emit(self, event: dict) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(event) + "\n")


def outcome(exc: BaseException, checks, limit: float) -> tuple[str, str, str | None]:
    """(status, message, repro) for a check that raised `exc`."""
    if isinstance(exc, checks.NotImplementedYet):
        return "not_implemented", exc.message, None
    if isinstance(exc, checks.CheckFailed):
        return "failed", exc.message, exc.repro
    if isinstance(exc, CheckTimeout):
        last = checks.LOG.calls[-1] if checks.LOG.calls else None
        where = f" on {last.source}" if last else ""
        return "failed", f"did not finish within {limit:g} s{where}: an endless loop, or far too slow", None
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    last = checks.LOG.calls[-1].source if checks.LOG.calls else None
    after = f" after {last}" if last else ""
    return "failed", f"the grader could not use the result{after}: {type(exc).__name__}: {text}", None


def run(kata: str, attempt: str, results: Results) -> bool:
    from graders import attempt as attempt_files
    from graders import checks

    grader = importlib.import_module(f"graders.test_{kata}")
    tests = [fn for name, fn in vars(grader).items() if name.startswith("test_") and hasattr(fn, "check_name")]
    results.emit({"event": "start", "checks": [{"id": t.__name__, "name": t.check_name} for t in tests]})

    ref = attempt_files.load(attempt_files.reference_path(kata), f"reference_{kata}")
    signal.signal(signal.SIGALRM, _on_alarm)
    impl = load_error = None
    failing, named, timed_out, passed = [], [], None, True
    for test in tests:
        limit = test.timeout or CHECK_SECONDS
        record = {"event": "check", "id": test.__name__, "name": test.check_name}
        if timed_out:
            results.emit({**record, "status": "skipped", "passed": False, "repro": None,
                          "message": f"not run: the attempt did not finish in check '{timed_out}'"})
            passed = False
            continue
        results.emit({"event": "begin", "id": test.__name__, "time": time.time(), "timeout": limit})
        signal.setitimer(signal.ITIMER_REAL, limit)
        try:
            if impl is None and load_error is None:
                try:
                    impl = checks.Attempt(attempt_files.load_graded(attempt, kata), attempt)
                except checks.CheckFailed as exc:
                    load_error = exc
            if load_error is not None:
                raise load_error
            test(impl, ref)
            status, message, repro = "passed", "", None
        except (Exception, CheckTimeout) as exc:
            status, message, repro = outcome(exc, checks, limit)
            if isinstance(exc, checks.CheckFailed) and not isinstance(exc, checks.NotImplementedYet):
                failing.extend(exc.calls)
                if exc.bug:
                    named.append(exc.bug)
            if isinstance(exc, CheckTimeout):
                timed_out = test.check_name
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        passed = passed and status == "passed"
        results.emit({**record, "status": status, "passed": status == "passed", "message": message, "repro": repro})

    if failing or named:
        from graders.diagnose import diagnose

        found = diagnose(kata, failing, checks.HISTORY, named)
        if found:
            results.emit({"event": "diagnosis", **found})
    return passed


def main(argv: list[str]) -> int:
    kata, attempt, results_path = argv
    limit_memory(MEMORY_LIMIT_MB)
    warnings.simplefilter("ignore")
    results = Results(results_path)
    # What the attempt prints, from Python or from C, goes to a file, not into the report's way.
    with tempfile.TemporaryFile(mode="w+b") as captured:
        sys.stdout.flush()
        saved = os.dup(1)
        os.dup2(captured.fileno(), 1)
        try:
            passed = run(kata, attempt, results)
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            captured.seek(0)
            printed = captured.read().decode("utf-8", "replace")
        results.emit({"event": "done", "stdout": printed[-4000:]})
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
