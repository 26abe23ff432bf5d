"""Grading an attempt: static checks here, the grader in a child process, one report.

    report = grade("softmax", "work/softmax.py")

The report is a JSON-ready dict:
    {"kata", "passed", "not_implemented", "checks": [{"name", "passed", "status",
     "message", "repro", "id"}], "diagnosis", "bug", "stdout", "seconds"}
Nothing the attempt does (a syntax error, a forbidden import, an exception, printing,
hanging, exiting, exhausting memory) makes this function raise; each becomes a failed
check with a message a candidate can act on. This module imports neither NumPy nor
pytest, so that the command line stays quick to start; the child (graders.runner) runs
the checks without pytest for the same reason.
"""
from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALLOWED_THIRD_PARTY = {"numpy"}
PROJECT_MODULES = {"katas", "solutions", "graders", "practice", "kata"}
CHECK_SECONDS = float(os.environ.get("KATA_CHECK_SECONDS", "10"))  # per check, enforced in the child
GRACE_SECONDS = 5.0       # a check stuck in C code past its limit is killed from here
TOTAL_SECONDS = 180.0     # the whole run, as a last resort
STDOUT_LIMIT = 4000
LOAD_FAILURE = "your file"   # how graders.attempt.load_graded's messages begin


def _check(name: str, passed: bool, message: str = "", status: str | None = None, repro: str | None = None,
           id: str | None = None) -> dict:
    """One check of a report; `id` is its function in the grader (test_agrees), when it has one."""
    return {"name": name, "passed": passed, "status": status or ("passed" if passed else "failed"),
            "message": message, "repro": repro, "id": id}


def _report(kata: str, checks: list[dict], *, diagnosis: str | None = None, stdout: str = "",
            seconds: float = 0.0, bug: str | None = None) -> dict:
    statuses = {c["status"] for c in checks}
    # untouched: nothing passed or failed on its merits, something is not implemented yet
    untouched = "not_implemented" in statuses and statuses <= {"not_implemented", "skipped"}
    return {
        "kata": kata,
        "passed": bool(checks) and all(c["passed"] for c in checks),
        "not_implemented": untouched,
        "checks": checks,
        "diagnosis": diagnosis,
        "bug": bug,
        "stdout": stdout[-STDOUT_LIMIT:],
        "seconds": round(seconds, 3),
    }


# ----------------------------------------------------------------------------- static checks

def _stdlib() -> set[str]:
    names = getattr(sys, "stdlib_module_names", None)
    if names is None:  # pragma: no cover - Python < 3.10
        names = set(sys.builtin_module_names)
    return set(names)


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


def static_checks(source: str, filename: str) -> list[dict]:
    """Failed checks for a file that cannot be run at all; empty when it may run."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        code = (exc.text or "").strip()
        where = f" `{code}`" if code else ""
        return [_check("the file is valid Python", False,
                       f"syntax error on line {exc.lineno}: {exc.msg}{where}")]
    problems = forbidden_imports(tree)
    if problems:
        return [_check("imports only NumPy and the standard library", False, "; ".join(problems))]
    return []


# ----------------------------------------------------------------------------- the child

def _child_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    # One BLAS thread: graders multiply small matrices, where a second thread only adds
    # contention (a hundredfold slowdown on a busy machine) and makes timings erratic.
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    return env


def _read_events(path: Path) -> list[dict]:
    events = []
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return events
    for line in text.splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            break  # a line cut short by a killed child
    return events


def _exit_description(code: int | None) -> str:
    if code is None:
        return "was stopped"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        if name == "SIGKILL":
            return "was killed (SIGKILL: most often the machine running out of memory)"
        return f"crashed the Python interpreter ({name})"
    return f"ended the Python interpreter (exit code {code}: `sys.exit`, `os._exit` or `exit()`?)"


def _run_child(kata: str, path: Path, results: Path) -> tuple[int | None, str, str, bool]:
    """Run the grader; kill it if one check overstays its limit. Returns (code, out, err, killed)."""
    cmd = [sys.executable, "-m", "graders.runner", kata, str(path), str(results)]
    proc = subprocess.Popen(cmd, cwd=str(ROOT), env=_child_env(), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    started, killed = time.monotonic(), False
    out = err = b""
    while True:
        try:
            out, err = proc.communicate(timeout=1.0)
            break
        except subprocess.TimeoutExpired:
            events = _read_events(results)
            open_begin = None
            for e in events:
                if e.get("event") == "begin":
                    open_begin = e
                elif e.get("event") == "check":
                    open_begin = None
            limit = (open_begin or {}).get("timeout") or CHECK_SECONDS
            stuck = open_begin and time.time() - open_begin["time"] > limit + GRACE_SECONDS
            if stuck or time.monotonic() - started > TOTAL_SECONDS:
                killed = True
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    proc.kill()
                out, err = proc.communicate()
                break
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), killed


def _assemble(kata: str, events: list[dict], code: int | None, stdout: str, stderr: str, killed: bool) -> dict:
    names = {}
    for e in events:
        if e.get("event") == "start":
            names = {c["id"]: c["name"] for c in e["checks"]}
    results: dict[str, dict] = {}
    in_progress = None
    diagnosis = bug = None
    done = None
    for e in events:
        kind = e.get("event")
        if kind == "begin":
            in_progress = e["id"]
        elif kind == "check":
            results[e["id"]] = _check(e["name"], e["passed"], e["message"], e["status"], e.get("repro"), e["id"])
            in_progress = None
        elif kind == "diagnosis":
            diagnosis, bug = e["message"], e["bug"]
        elif kind == "done":
            done = e
    if done is None:
        if not names:
            tail = "\n".join(stderr.strip().splitlines()[-3:])
            if killed or code not in (0, 1):
                message = f"the attempt {_exit_description(code)} while loading"
            else:
                message = f"the grader could not start: {tail or 'no output'}"
            return _report(kata, [_check("the attempt runs", False, message)], stdout=stdout)
        if in_progress is not None:
            if killed:
                limit = next((e.get("timeout") for e in events if e.get("id") == in_progress and e.get("timeout")),
                             CHECK_SECONDS)
                message = f"did not finish within {limit:g} s (stuck inside a long NumPy call?)"
            else:
                message = f"the attempt {_exit_description(code)} during this check"
            results[in_progress] = _check(names.get(in_progress, in_progress), False, message, id=in_progress)
        for nodeid, name in names.items():
            if nodeid not in results:
                results[nodeid] = _check(name, False, "not run: the grading process had stopped", "skipped",
                                         id=nodeid)
    checks = [results[i] for i in names if i in results]
    # the runner captures what the attempt prints and hands it over in its last event
    printed = (done or {}).get("stdout", "")
    return _report(kata, _collapse(checks), diagnosis=diagnosis, bug=bug, stdout=printed)


def _collapse(checks: list[dict]) -> list[dict]:
    """An untouched function gives one 'not implemented yet' line, not one per check."""
    unloadable = [c for c in checks if c["message"].startswith(LOAD_FAILURE)]
    if unloadable and len(unloadable) == len(checks):
        # the file never loaded, so every check failed for that one reason
        return [_check("the file loads", False, unloadable[0]["message"])]
    missing = [c for c in checks if c["status"] == "not_implemented"]
    if not missing:
        return checks
    functions = []
    for c in missing:
        fn = c["message"].split("`")[1] if "`" in c["message"] else ""
        if fn and fn not in functions:
            functions.append(fn)
    rest = [c for c in checks if c["status"] != "not_implemented"]
    if not any(c["passed"] for c in rest) and all(c["status"] == "skipped" for c in rest if not c["passed"]):
        rest = []
    if not rest:
        # the stub is untouched: one line is the whole report
        listed = ", ".join(f"`{f}`" for f in functions) or "the function"
        verb = "raise" if len(functions) > 1 else "raises"
        return [_check("implemented", False, f"not implemented yet: {listed} still {verb} NotImplementedError",
                       "not_implemented")]
    merged = [_check(f"`{f}` implemented", False,
                     f"not implemented yet: `{f}` still raises NotImplementedError "
                     f"({sum(1 for c in missing if f'`{f}`' in c['message'])} checks need it)",
                     "not_implemented") for f in functions]
    return rest + merged


def grade(kata: str, path: str | Path, source: bytes | None = None) -> dict:
    """Grade the attempt at `path` against `kata`'s grader. Never raises for the attempt's faults.
    `source`: the bytes of the attempt as the caller read them (not used here yet)."""
    start = time.monotonic()
    path = Path(path).resolve()
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        report = _report(kata, [_check("the file can be read", False, f"cannot read {path}: {exc}")])
        report["seconds"] = round(time.monotonic() - start, 3)
        return report
    failed = static_checks(source, str(path))
    if failed:
        report = _report(kata, failed)
    else:
        with tempfile.TemporaryDirectory(prefix="kata-") as tmp:
            results = Path(tmp) / "results.jsonl"
            code, stdout, stderr, killed = _run_child(kata, path, results)
            report = _assemble(kata, _read_events(results), code, stdout, stderr, killed)
    report["seconds"] = round(time.monotonic() - start, 3)
    return report


def main(argv: list[str] | None = None) -> int:
    """`python -m graders.harness KATA PATH`: print the report as JSON (for debugging)."""
    argv = sys.argv[1:] if argv is None else argv
    report = grade(argv[0], argv[1])
    print(json.dumps(report, indent=2))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
