"""Pytest plugin for the grading child: one JSON line per event in a results file.

Events, in order: `start` (the checks collected), then for each check `begin` and
`check` (its result), then `diagnosis` (when a known bug matches) and `done`. The parent
reads the file even when the child dies part-way, so whatever finished is kept.
"""
from __future__ import annotations

import json
import re
import time

import pytest

from graders import checks
from graders.attempt import kata_of

_STATE: dict = {}


def pytest_addoption(parser):
    parser.addoption("--results", action="store", default=None, help="write JSON lines here")


def _emit(event: dict) -> None:
    with open(_STATE["path"], "a", encoding="utf-8") as f:
        f.write(json.dumps(event) + "\n")


def _name(item) -> str:
    fn = getattr(item, "function", None)
    return getattr(fn, "check_name", None) or item.name


def pytest_configure(config):
    _STATE.update(path=config.getoption("--results"), timed_out=None, failing=[], named=[], kata=None,
                  stdout=[])


def pytest_collection_modifyitems(session, config, items):
    if items:
        _STATE["kata"] = kata_of(items[0].fspath)
    if _STATE["path"]:
        _emit({"event": "start", "checks": [{"id": i.nodeid, "name": _name(i)} for i in items]})


def pytest_runtest_setup(item):
    if _STATE["timed_out"]:
        pytest.skip(f"not run: the attempt did not finish in check '{_STATE['timed_out']}'")
    if _STATE["path"]:
        marker = item.get_closest_marker("timeout")
        limit = float(marker.args[0]) if marker and marker.args else None
        _emit({"event": "begin", "id": item.nodeid, "time": time.time(), "timeout": limit})


def _message(item, call) -> tuple[str, str, str | None]:
    """(status, message, repro) for a failed phase."""
    exc = call.excinfo.value
    if isinstance(exc, checks.NotImplementedYet):
        return "not_implemented", exc.message, None
    if isinstance(exc, checks.CheckFailed):
        if exc.calls:
            _STATE["failing"].extend(exc.calls)
        if exc.bug:
            _STATE["named"].append(exc.bug)
        return "failed", exc.message, exc.repro
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if call.excinfo.typename == "Failed" and text.startswith("Timeout"):
        found = re.search(r">\s*([\d.]+)\s*s", text)
        limit = f"{float(found.group(1)):g} s" if found else "the time limit"
        _STATE["timed_out"] = _name(item)
        pending = checks.LOG.calls[-1] if checks.LOG.calls else None
        where = f" on {pending.source}" if pending else ""
        return "failed", f"did not finish within {limit}{where}: an endless loop, or far too slow", None
    if call.excinfo.typename == "Skipped":
        return "skipped", text, None
    last = checks.LOG.calls[-1].source if checks.LOG.calls else None
    after = f" after {last}" if last else ""
    return "failed", f"the grader could not use the result{after}: {type(exc).__name__}: {text}", None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not _STATE["path"]:
        return
    if report.capstdout:
        _STATE["stdout"].append(report.capstdout)
    # One result per check: the setup phase when it fails or skips, else the call phase.
    if call.when == "setup" and report.passed:
        return
    if call.when == "teardown":
        return
    if report.passed:
        status, message, repro = "passed", "", None
    else:
        status, message, repro = _message(item, call)
    _emit({"event": "check", "id": item.nodeid, "name": _name(item), "status": status,
           "passed": status == "passed", "message": message, "repro": repro})


def pytest_sessionfinish(session):
    if not _STATE["path"]:
        return
    if (_STATE["failing"] or _STATE["named"]) and _STATE["kata"]:
        from graders.diagnose import diagnose

        found = diagnose(_STATE["kata"], _STATE["failing"], checks.HISTORY, _STATE["named"])
        if found:
            _emit({"event": "diagnosis", **found})
    stdout = "".join(_STATE["stdout"])
    _emit({"event": "done", "stdout": stdout[-4000:]})
