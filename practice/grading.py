"""The one door to the graders: `grade(kata, path, source) -> report` (graders.engine.harness
does the work).

`source` is the attempt's bytes as the caller read them, once: those bytes are what is
graded and what the caller records, so a file saved during a grading cannot make the
record and the verdict disagree.

The harness runs the attempt in a child process, never raises for problems in the
attempt, and always returns every key of its report (see graders/engine/harness.py). This
module imports it only when a grading is asked for, so that `kata list`, `kata status`
and the rest stay instant. Tests replace `grade` with a stand-in.
"""
from __future__ import annotations

import os


class GradingUnavailable(Exception):
    """The harness is missing or failed; the message is for the user."""


class BadSetting(ValueError):
    """An environment setting grading cannot use (KATA_CHECK_SECONDS): a usage error."""


_SERVICE = None  # the grading process of a command that grades (graders/engine/service.py)


def prepare(hints: list[str] = ()) -> None:
    """Start the grading process now, so that it imports NumPy and the graders while this
    process loads the rest: commands about to grade call this first (`hints`, their command
    line, may name the kata). Without it, grade() grades in this process. Never fails:
    grade() says what is wrong."""
    global _SERVICE
    if _SERVICE is None:
        try:
            import atexit

            from graders.engine.service import Service

            _SERVICE = Service(hints)
            atexit.register(_SERVICE.close)  # killed when this command ends, even stopped
        except Exception:
            _SERVICE = None


def grade(kata: str, path, source: bytes | None = None) -> dict:
    if source is None:
        with open(path, "rb") as f:
            source = f.read()
    if _SERVICE is not None:
        return _by_service(kata, path, source)
    try:
        from graders.engine.harness import grade as harness_grade
    except ImportError as e:
        raise GradingUnavailable(
            f"the grading harness (graders/engine/harness.py) cannot be loaded: {e}"
        ) from e
    try:
        report = harness_grade(kata, path, source=source)
    except ValueError as e:
        if type(e).__name__ == "SettingError":
            raise BadSetting(str(e)) from None
        raise GradingUnavailable(f"the grader for {kata} failed ({type(e).__name__}: {e})") from e
    except Exception as e:  # a bug in a grader, not in the user's attempt
        if os.environ.get("KATA_DEBUG"):
            raise
        raise GradingUnavailable(
            f"the grader for {kata} failed ({type(e).__name__}: {e}); "
            "set KATA_DEBUG=1 to see the traceback"
        ) from e
    return report


def _by_service(kata: str, path, source: bytes) -> dict:
    import threading

    from graders.engine.service import ServiceFailed

    # what prints the report (rich) is imported while the grading process works
    threading.Thread(target=_load_report_rendering, daemon=True).start()
    try:
        return _SERVICE.grade(kata, os.path.abspath(path), source)
    except ServiceFailed as e:
        if e.kind == "setting":
            raise BadSetting(str(e)) from None
        raise GradingUnavailable(f"the grader for {kata} failed ({e})" if e.kind == "grader" else str(e)) from None


def _load_report_rendering() -> None:
    try:
        import practice.messages  # noqa: F401
    except Exception:
        pass


def status(check: dict) -> str:
    """passed, failed, not_implemented or skipped (not run); older reports lack it."""
    return check.get("status") or ("passed" if check.get("passed") else "failed")


def counts(report: dict) -> tuple[int, int]:
    """(checks passed, checks in the report)."""
    checks = report.get("checks") or []
    return sum(1 for c in checks if c.get("passed")), len(checks)


def untouched(report: dict) -> bool:
    """True for an untouched stub: something is not implemented yet and nothing passed."""
    return bool(report.get("not_implemented")) and counts(report)[0] == 0


def failing(report: dict) -> list[str]:
    """The names of the checks that ran and failed (not those not implemented or not run)."""
    return [c.get("name", "check") for c in report.get("checks") or [] if status(c) == "failed"]


def combined(reports: list[dict]) -> dict:
    """Several reports (the questions of a mock interview) as one JSON-ready object with
    the contract's keys: `kata` names them all, `passed` is true when every one passed,
    `checks` holds every check with its kata's name in front; each report is kept whole
    under `reports`."""
    return {"kata": ",".join(r["kata"] for r in reports),
            "passed": all(r.get("passed") for r in reports),
            "not_implemented": all(r.get("not_implemented") for r in reports),
            "checks": [dict(c, name=f"{r['kata']}: {c.get('name', 'check')}", kata=r["kata"])
                       for r in reports for c in r.get("checks") or []],
            "reports": reports}
