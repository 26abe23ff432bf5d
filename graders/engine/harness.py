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

from graders.engine import sandbox
from graders.engine.limits import SettingError, check_seconds, load_seconds  # noqa: F401  (SettingError: for callers)
from graders.engine.report import CheckResult, Report, Status

ALLOWED_THIRD_PARTY = {"numpy"}
PROJECT_MODULES = {"katas", "solutions", "graders", "practice", "kata"}


# ----------------------------------------------------------------------------- static checks

def _stdlib() -> set[str]:
    return set(getattr(sys, "stdlib_module_names", ())) or set(sys.builtin_module_names)


def forbidden_imports(tree: ast.AST) -> list[str]:
    """One line per import that an attempt may not make (NumPy and the standard library only)."""
    allowed = _stdlib() | ALLOWED_THIRD_PARTY
    problems = []

    def judge(module: str, line: int) -> None:
        top = module.split(".")[0]
        if top in PROJECT_MODULES:
            problems.append(f"line {line} imports `{module}`: an attempt may not use the project's own "
                            f"modules (the reference solutions, graders or stubs)")
        elif top not in allowed:
            problems.append(f"line {line} imports `{module}`: an attempt may import only NumPy and "
                            f"the Python standard library")

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
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        code = (exc.text or "").strip()
        where = f" `{code}`" if code else ""
        return [CheckResult("the file is valid Python", Status.FAILED,
                            f"syntax error on line {exc.lineno}: {exc.msg}{where}")]
    except ValueError as exc:  # null bytes
        return [CheckResult("the file is valid Python", Status.FAILED, f"the file cannot be parsed: {exc}")]
    problems = forbidden_imports(tree)
    if problems:
        return [CheckResult("imports only NumPy and the standard library", Status.FAILED, "; ".join(problems))]
    return []


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
    try:
        box.start()
        problem = _load(box, seconds)
        if problem:
            return _done(Report(kata, [CheckResult("the file loads", Status.FAILED, problem)],
                                stdout=box.output.text(), stdout_bytes=box.output.total), started), None
        grading = Grading()
        candidate = Candidate(box, box.functions, str(path), grading)
        judged = judge.run(module, ref, box, candidate, seconds, progress)
    finally:
        box.close()
    report = Report(kata, judge.collapse(judged.results), stdout=box.output.text(), stdout_bytes=box.output.total)
    if judged.failing or judged.named:
        from graders.engine.diagnose import diagnose

        failed = {r.id for r in judged.results if r.status is Status.FAILED}
        found = diagnose(kata, judged.failing, grading.history, judged.named, getattr(module, "WORKER_SETUP", ()), failed)
        if found:
            report.diagnosis, report.bug = found["message"], found["bug"]
    report.observed = _observed(kata, ref, judged)
    return _done(report, started), grading


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
        reply = box.wait_loaded(time.monotonic() + seconds)
    except sandbox.CallTimedOut:
        return (f"the file's top-level code did not finish within {seconds:g} s: it runs before any function "
                f"is called (a loop or a long computation outside the functions?)")
    except sandbox.AttemptCrashed as exc:
        return f"the file's top-level code {exc.message}"
    return judge.loaded_message(reply)


def _done(report: Report, started: float) -> Report:
    report.seconds = time.monotonic() - started
    return report


def main(argv: list[str] | None = None) -> int:
    """`python -m graders.engine.harness KATA PATH`: print the report as JSON (for debugging)."""
    argv = sys.argv[1:] if argv is None else argv
    report = grade(argv[0], argv[1])
    print(json.dumps(report, indent=2))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
