"""The one door to the graders: `grade(kata, path) -> report` (graders.harness does the work).

The harness runs the attempt in a child process, never raises for problems in the
attempt, and always returns every key of its report (see graders/harness.py). This module imports it only when a grading is asked for, so that `kata list`,
`kata status` and the rest stay instant. Tests replace `grade` with a stand-in.
"""
from __future__ import annotations

import os
from pathlib import Path


class GradingUnavailable(Exception):
    """The harness is missing or failed; the message is for the user."""


class BadSetting(ValueError):
    """An environment setting grading cannot use (KATA_CHECK_SECONDS): a usage error."""


def grade(kata: str, path: str | Path) -> dict:
    try:
        from graders.harness import grade as harness_grade
    except ImportError as e:
        raise GradingUnavailable(
            f"the grading harness (graders/harness.py) cannot be loaded: {e}"
        ) from e
    try:
        report = harness_grade(kata, path)
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


def counts(report: dict) -> tuple[int, int]:
    """(checks passed, checks run)."""
    checks = report.get("checks") or []
    return sum(1 for c in checks if c.get("passed")), len(checks)


def failing(report: dict) -> list[str]:
    return [c["name"] for c in report.get("checks") or [] if not c.get("passed")
            and c.get("status") != "skipped"]
