"""The one door to the graders: `grade(kata, path, source) -> Report` (graders.engine.harness
does the work; graders/engine/report.py is the report's type).

`source` is the attempt's bytes as the caller read them, once: those bytes are what is
graded and what the caller records, so a file saved during a grading cannot make the
record and the verdict disagree.

The harness runs the attempt in a child process and never raises for problems in the
attempt. What the grading process sends back is the report's JSON, read here with
`Report.from_dict`, so the rest of practice/ sees one type whoever graded. This module
imports the harness only when a grading is asked for, so that `kata list`, `kata status`
and the rest stay instant. Tests replace `grade` with a stand-in.
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
            _read_no_further(_SERVICE.proc)
        except Exception:
            _SERVICE = None


def _read_no_further(proc) -> None:
    """Read what the grading process says message by message, never ahead of the message
    asked for: between two messages, the client waits until its pipe has something to read,
    so a message already read ahead into the reader's buffer (a check's progress and the
    report sent at once) would never be waited out. With a buffer of one byte, a read of n
    bytes takes exactly n from the pipe."""
    import io

    proc.stdout = io.BufferedReader(proc.stdout.detach(), buffer_size=1)


def grade(kata: str, path, source: bytes | None = None, progress=None) -> Report:
    """The report of grading `source` (else the file at `path`) against `kata`'s grader.
    `progress`, when given, is called with each CheckResult as its check ends."""
    if source is None:
        with open(path, "rb") as f:
            source = f.read()
    if _SERVICE is not None:
        return _by_service(kata, path, source, progress)
    try:
        from graders.engine.harness import grade_report
    except ImportError as e:
        raise GradingUnavailable(
            f"the grading harness (graders/engine/harness.py) cannot be loaded: {e}"
        ) from e
    try:
        return grade_report(kata, path, source=source, progress=progress)
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


def _by_service(kata: str, path, source: bytes, progress=None) -> Report:
    from graders.engine.report import CheckResult, Report
    from graders.engine.service import ServiceFailed

    each = progress and (lambda check: progress(CheckResult.from_dict(check)))
    try:
        return Report.from_dict(_SERVICE.grade(kata, os.path.abspath(path), source, each))
    except ServiceFailed as e:
        if e.kind == "setting":
            raise BadSetting(str(e)) from None
        raise GradingUnavailable(f"the grader for {kata} failed ({e})" if e.kind == "grader" else str(e)) from None
