"""Grading an attempt: one snapshot of its bytes, static checks, the judge, one report.

    report = grade("softmax", "work/softmax.py")            # a JSON-ready dict
    report = grade("softmax", path, source=b"...")          # exactly these bytes

The bytes are read once; those bytes are parsed, checked for imports, executed (in the
attempt's own process, graders/engine/worker.py) and reported on, so a file saved while it is
graded cannot mix two versions. The checks, the reference, every comparison and the
diagnosis run here, in a process the attempt never runs in. Nothing the attempt does (a
syntax error, a forbidden import, an exception, printing, hanging, exiting, exhausting
memory, patching NumPy) makes this function raise or changes a verdict; each becomes a
failed check with a message a candidate can act on. See graders/engine/report.py for the report.
"""
from __future__ import annotations

import ast
import json
import sys
import time
from pathlib import Path

from graders.engine import imports, sandbox
from graders.engine.limits import SettingError, check_seconds, load_seconds  # noqa: F401  (SettingError: for callers)
from graders.engine.report import CheckResult, Report, Status
from graders.engine.wire import visible

VALID = "the file is valid Python"

# ----------------------------------------------------------------------------- static checks

def forbidden_imports(tree: ast.AST) -> list[str]:
    """One line per import that an attempt may not make (NumPy and the standard library only);
    the attempt's process refuses the same imports, with the same words, when they are made
    in a way the source does not spell out (graders.engine.imports)."""
    problems = []

    def judge(module: str, line: int) -> None:
        if not imports.allowed(module):
            problems.append(imports.refusal(module, line))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                judge(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                problems.append(f"line {node.lineno} uses a relative import: an attempt is a single file")
            elif node.module:
                judge(node.module, node.lineno)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            fn = node.func
            called = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
            if called in ("__import__", "import_module") and isinstance(node.args[0].value, str):
                judge(node.args[0].value, node.lineno)
    return problems


def static_checks(source: bytes, filename: str) -> list[CheckResult]:
    """Failed checks for a file that cannot be run at all; empty when it may run. `source`
    is bytes, so a byte-order mark or a coding line is read as Python reads it."""
    if b"\0" in source:
        return [CheckResult(VALID, Status.FAILED, "the file holds null bytes, so it is not Python source: a binary "
                                                  "file, or text saved as UTF-16?")]
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        if not exc.lineno or str(exc.msg).startswith("(unicode error)"):
            return [CheckResult(VALID, Status.FAILED, f"the file cannot be read as Python source (a binary file, or "
                                                      f"text not in UTF-8?): {visible(str(exc.msg))[:300]}")]
        code = visible((exc.text or "").strip())[:200]
        where = f" `{code}`" if code else ""
        return [CheckResult(VALID, Status.FAILED, f"syntax error on line {exc.lineno}: {visible(exc.msg)}{where}")]
    except (ValueError, MemoryError, RecursionError) as exc:
        return [CheckResult(VALID, Status.FAILED, f"the file cannot be parsed: {type(exc).__name__}")]
    problems = forbidden_imports(tree)
    if problems:
        return [refused(problems)]
    return []


def refused(problems: list[str]) -> CheckResult:
    """The failed check of an attempt that imports what it may not (read, or refused as it ran)."""
    return CheckResult(imports.CHECK_NAME, Status.FAILED, "; ".join(dict.fromkeys(problems)))


# ----------------------------------------------------------------------------- grading

def grade(kata: str, path: str | Path, source: bytes | None = None, progress=None) -> dict:
    """Grade the attempt at `path` (its bytes `source`, when given) against `kata`'s grader.
    Never raises for the attempt's faults; SettingError for a bad KATA_CHECK_SECONDS.
    `progress`, when given, is called with each CheckResult as its check ends."""
    return grade_report(kata, path, source, progress).to_dict()


def grade_report(kata: str, path: str | Path, source: bytes | None = None, progress=None) -> Report:
    return graded(kata, path, source, progress)[0]


def graded(kata: str, path: str | Path, source: bytes | None = None, progress=None):
    """(the report, the grading's record of calls or None when no check ran)."""
    started = time.monotonic()
    seconds = check_seconds()
    path = Path(path).resolve()
    if source is None:
        try:
            source = path.read_bytes()
        except OSError as exc:
            return _done(Report(kata, [CheckResult("the file can be read", Status.FAILED,
                                                   f"cannot read {path}: {exc.strerror or exc}")]), started), None
    failed = static_checks(source, str(path))
    if failed:
        return _done(Report(kata, failed), started), None
    sandbox.warm_up()  # the attempt's interpreter starts while the grader is imported here
    from graders.engine import judge
    from graders.engine.files import reference
    from graders.engine.recorder import Candidate, Grading

    module = judge.grader(kata)
    ref = reference(kata)
    box = sandbox.Sandbox(source, str(path), kata, getattr(module, "WORKER_SETUP", ()))
    candidate = None
    try:
        box.start()
        problem = _load(box, seconds)
        if problem or box.refused:
            checks = [refused(box.refused)] if box.refused else [CheckResult("the file loads", Status.FAILED, problem)]
            return _done(Report(kata, checks, stdout=box.output.text(), stdout_bytes=box.output.total), started), None
        grading = Grading()
        candidate = Candidate(box, box.functions, str(path), grading)
        if judge.wants_twin(module):  # before any call: a process in which the attempt was not called
            twin = box.twin(time.monotonic() + seconds)
            candidate.twin = Candidate(twin, box.functions, str(path), grading) if twin is not None else None
        judged = judge.run(module, ref, box, candidate, seconds, progress)
        cost = _efficiency(kata, ref, candidate, judged, seconds)
    finally:
        if candidate is not None:
            candidate.release_twin()
        box.close()
    if box.refused:  # an import refused while a check ran: the file is refused, as if it were read
        return _done(Report(kata, [refused(box.refused)], stdout=box.output.text(),
                            stdout_bytes=box.output.total), started), None
    report = Report(kata, judge.collapse(judged.results), stdout=box.output.text(), stdout_bytes=box.output.total,
                    efficiency=cost)
    if judged.failing or judged.named:
        from graders.engine.diagnose import diagnose

        failed = {r.id for r in judged.results if r.status is Status.FAILED}
        found = diagnose(kata, judged.failing, grading.history, judged.named, getattr(module, "WORKER_SETUP", ()), failed)
        if found:
            report.diagnosis, report.bug = found["message"], found["bug"]
    report.observed = _observed(kata, ref, judged)
    return _done(report, started), grading


def _efficiency(kata: str, ref, candidate, judged, seconds: float):
    """The attempt's cost beside the reference's, once every check that ran passed (a failing
    attempt needs its failures first); None until then."""
    from graders.engine.report import Status

    ran = [r for r in judged.results if r.status is not Status.SKIPPED]
    if not ran or any(r.status is not Status.PASSED for r in ran) or candidate.box.gone is not None:
        return None
    from graders.engine import efficiency

    return efficiency.measure(kata, ref, candidate, time.monotonic() + seconds)


def _observed(kata: str, ref, judged) -> list[str]:
    """The relations found between the attempt's answers and the reference's on the failing calls."""
    if not judged.failures:
        return []
    from graders.engine import files
    from graders.engine.observed import observed

    try:
        return observed(ref, files.domain(kata), judged.failures)
    except Exception:  # a sentence is a help, never a reason for a grading to fail
        return []


def _load(box: sandbox.Sandbox, seconds: float) -> str | None:
    """None when the attempt's top-level code ran; else why not."""
    from graders.engine import judge

    seconds = load_seconds(seconds)
    try:
        loaded = box.wait_loaded(time.monotonic() + seconds)
    except sandbox.CallTimedOut as exc:
        where = judge.stopped_at(exc) if exc.where else "a loop or a long computation outside the functions?"
        return (f"the file's top-level code did not finish within {seconds:g} s: it runs before any function "
                f"is called ({where})")
    except sandbox.AttemptCrashed as exc:
        return f"the file's top-level code {exc.message}"
    return judge.loaded_message(loaded)


def _done(report: Report, started: float) -> Report:
    """The report, timed; every check's message on one line (what the attempt named in it, a
    type's name, say, cannot start a line of its own)."""
    report.seconds = time.monotonic() - started
    for check in report.checks:
        check.message = visible(check.message)
    return report


def main(argv: list[str] | None = None) -> int:
    """`python -m graders.engine.harness KATA PATH`: print the report as JSON (for debugging)."""
    argv = sys.argv[1:] if argv is None else argv
    report = grade(argv[0], argv[1])
    print(json.dumps(report, indent=2))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
