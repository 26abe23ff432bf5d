"""Pytest wiring shared by every grader: which file is graded, and readable failures.

    pytest graders/test_softmax.py                 # grades the reference solution
    pytest graders/test_softmax.py --impl my.py    # grades my.py

The attempt runs in its own process here too (graders/sandbox.py), restarted after a
check that hangs or crashes it; the checks and the reference run in pytest's process.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from graders import checks, files, judge, sandbox
from graders.harness import check_seconds, static_checks


def pytest_addoption(parser):
    parser.addoption("--impl", action="store", default=None,
                     help="the attempt to grade (default: the kata's reference solution); a folder "
                          "grades FOLDER/KATA.py against each kata's grader")


def pytest_collection_modifyitems(items):
    for item in items:
        if item.get_closest_marker("timeout") is None:
            own = getattr(getattr(item, "function", None), "timeout", None)
            # a backstop only: the sandbox enforces each check's limit from outside
            item.add_marker(pytest.mark.timeout((own or check_seconds()) + 30))
    # as the harness does: a slow check runs after the others of its grader
    first = {}
    for i, item in enumerate(items):
        first.setdefault(item.module, i)
    items.sort(key=lambda item: (first[item.module], bool(getattr(getattr(item, "function", None), "slow", None))))


FAILED: dict[str, bool] = {}  # grader module -> whether one of its checks failed so far


@pytest.fixture(scope="module")
def _box(request):
    kata = files.kata_of(request.module.__file__)
    path = Path(request.config.getoption("--impl") or files.reference_path(kata)).resolve()
    if path.is_dir():
        path = path / f"{kata}.py"
    source = path.read_bytes()
    problem = "; ".join(c.message for c in static_checks(source, str(path)))
    box = sandbox.Sandbox(source, str(path), kata, getattr(request.module, "WORKER_SETUP", ()))
    checks.begin_grading()
    with box:
        yield box, path, problem


@pytest.fixture
def impl(_box, request):
    """The graded module, every call sent to the attempt's process and recorded."""
    box, path, problem = _box
    if problem:
        pytest.fail(problem, pytrace=False)
    slow = getattr(request.function, "slow", None)
    if slow and FAILED.get(request.module.__name__):
        pytest.skip(f"not run: it runs once every other check passes ({slow})")
    seconds = getattr(request.function, "timeout", None) or check_seconds()
    if box.gone is not None or box.chan is None:
        box.start()
        try:
            box.wait_loaded(time.monotonic() + check_seconds())
        except sandbox.AttemptGone as exc:
            pytest.fail(f"the file does not load: {exc.message}", pytrace=False)
        failure = judge.loaded_message(box.loaded)
        if failure:
            pytest.fail(failure, pytrace=False)
    checks.LOG.deadline = time.monotonic() + seconds
    return checks.Candidate(box, box.functions, str(path))


@pytest.fixture(scope="module")
def ref(request):
    """The reference solution, called directly."""
    return files.reference(files.kata_of(request.module.__file__))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_makereport(item, call):
    """A check that fails reports its own message and repro. The report is made here, so
    that pytest does not build a traceback of the grader's source only for it to be
    replaced (a tenth of a second a failure)."""
    if call.excinfo is None or call.excinfo.errisinstance(pytest.skip.Exception):
        return None
    FAILED[item.module.__name__] = True
    text = _failure_text(call.excinfo.value)
    if text is None:
        return None  # pytest's own report
    sections = [(f"Captured {key} {when}", content) for when, key, content in getattr(item, "_report_sections", ())]
    return pytest.TestReport(item.nodeid, item.location, {k: 1 for k in item.keywords}, "failed", text,
                             call.when, sections, call.duration, call.start, call.stop, item.user_properties)


def _failure_text(exc: BaseException) -> str | None:
    """What a failed check says under pytest: its message and repro, or how the attempt's
    process stopped. None for anything else."""
    if isinstance(exc, checks.CheckFailed):
        text = exc.message
        if exc.repro:
            text += "\n\nTo reproduce:\n" + "\n".join("    " + line for line in exc.repro.splitlines())
        return text
    if isinstance(exc, sandbox.AttemptGone):
        what = "did not finish in time" if isinstance(exc, sandbox.CallTimedOut) else exc.message
        return f"{checks.last_call()}: {what}"
    return None
