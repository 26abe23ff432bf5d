"""The one door to the graders: `grade(kata, path, source) -> Report` (graders.engine.harness
does the work; graders/engine/report.py is the report's type).

`source` is the attempt's bytes as the caller read them, once: those bytes are what is
graded and what the caller records, so a file saved during a grading cannot make the
record and the verdict disagree.

Grading has one route: the judge, a process of its own (graders/engine/service.py), which
never raises for problems in the attempt. What it sends back is the report's JSON, read
here with `Report.from_dict`. This process never imports NumPy or a grader, so that `kata
list`, `kata status` and the rest stay instant, and even a command that grades only now
and then (`kata list` after a mock's time ran out) grades through the judge. Tests replace
`grade` with a stand-in.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: `kata check` starts the grading process as soon
    from graders.engine.report import Report  # as it has parsed, and imports delay that


class GradingUnavailable(Exception):
    """The harness is missing or failed; the message is for the user."""


class BadSetting(ValueError):
    """An environment setting grading cannot use (KATA_CHECK_SECONDS): a usage error."""


_SERVICE = None  # the judge of this command (graders/engine/service.py), started when first needed


def prepare(hints: list[str] = ()) -> None:
    """Start the judge now, so that it imports NumPy and the graders while this process loads
    the rest: commands about to grade call this first (`hints`, their command line, may name
    the kata). grade() starts it otherwise. Never fails: grade() says what is wrong."""
    global _SERVICE
    if _SERVICE is None:
        try:
            import atexit

            from graders.engine.service import Service

            _SERVICE = Service(hints)
            atexit.register(_SERVICE.close)  # it ends what it started when this command ends
        except Exception:
            _SERVICE = None


def grade(kata: str, path, source: bytes | None = None, progress=None) -> Report:
    """The report of grading `source` (else the file at `path`) against `kata`'s grader, by the
    judge in its own process. `progress`, when given, is called with each CheckResult as its
    check ends."""
    if source is None:
        with open(path, "rb") as f:
            source = f.read()
    prepare([kata])
    if _SERVICE is None:
        raise GradingUnavailable("the grading process cannot be started")
    from graders.engine.report import CheckResult, Report
    from graders.engine.service import ServiceFailed

    each = progress and (lambda check: progress(CheckResult.from_dict(check)))
    try:
        return Report.from_dict(_SERVICE.grade(kata, os.path.abspath(path), source, each))
    except ServiceFailed as e:
        if e.kind == "setting":
            raise BadSetting(str(e)) from None
        if e.kind == "grader" and os.environ.get("KATA_DEBUG"):
            raise GradingUnavailable(f"the grader for {kata} failed ({e})") from None
        raise GradingUnavailable(f"the grader for {kata} failed ({e})" if e.kind == "grader" else str(e)) from None
