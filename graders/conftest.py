"""Pytest wiring shared by every grader: which file is graded, and readable failures.

    pytest graders/test_softmax.py                 # grades the reference solution
    pytest graders/test_softmax.py --impl my.py    # grades my.py
"""
from __future__ import annotations

import os

import pytest

from graders import attempt as attempt_files
from graders.checks import Attempt, CheckFailed

# seconds per check: generous for Python loops over rows or heads (KATA_CHECK_SECONDS overrides)
DEFAULT_TIMEOUT = float(os.environ.get("KATA_CHECK_SECONDS", "10"))


def pytest_addoption(parser):
    parser.addoption("--impl", action="store", default=None,
                     help="the attempt to grade (default: the kata's reference solution)")


def pytest_collection_modifyitems(items):
    for item in items:
        if item.get_closest_marker("timeout") is None:
            own = getattr(getattr(item, "function", None), "timeout", None)
            item.add_marker(pytest.mark.timeout(own or DEFAULT_TIMEOUT))


@pytest.fixture(scope="module")
def _graded_module(request):
    kata = attempt_files.kata_of(request.module.__file__)
    path = request.config.getoption("--impl") or str(attempt_files.reference_path(kata))
    return attempt_files.load_graded(path, kata), path


@pytest.fixture
def impl(_graded_module):
    """The graded module, every call recorded."""
    module, path = _graded_module
    return Attempt(module, path)


@pytest.fixture(scope="module")
def ref(request):
    """The reference solution, called directly."""
    kata = attempt_files.kata_of(request.module.__file__)
    return attempt_files.load(attempt_files.reference_path(kata), f"reference_{kata}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is not None and isinstance(call.excinfo.value, CheckFailed):
        exc = call.excinfo.value
        text = exc.message
        if exc.repro:
            text += "\n\nTo reproduce:\n" + "\n".join("    " + line for line in exc.repro.splitlines())
        report.longrepr = text
