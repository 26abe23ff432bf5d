"""The harness turns whatever an attempt does into a report; it never raises or hangs."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from graders.engine.harness import grade
from practice import catalogue

ROOT = catalogue.ROOT
GOOD = """
import numpy as np

def softmax(z, axis=-1):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
"""


def attempt(tmp_path, body: str, name: str = "softmax.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def failures(report):
    return [c for c in report["checks"] if not c["passed"]]


@pytest.fixture
def quick_timeouts(monkeypatch):
    monkeypatch.setenv("KATA_CHECK_SECONDS", "0.5")


def test_a_correct_attempt_passes_every_check(tmp_path):
    report = grade("softmax", attempt(tmp_path, GOOD))
    assert report["passed"] and not report["not_implemented"]
    assert all(c["status"] == "passed" for c in report["checks"])
    json.dumps(report)


def test_syntax_error_is_one_clear_failure(tmp_path):
    report = grade("softmax", attempt(tmp_path, "def softmax(z, axis=-1)\n    return z\n"))
    [only] = report["checks"]
    assert only["message"].startswith("syntax error on line 1")


@pytest.mark.parametrize("line, word", [
    ("import scipy.special", "only NumPy"),
    ("from torch import nn", "only NumPy"),
    ("from solutions.softmax import softmax", "project's own modules"),
    ("import graders.checks", "project's own modules"),
    ("x = __import__('jax')", "only NumPy"),
    ("from . import softmax", "relative import"),
])
def test_forbidden_imports_are_refused_before_running(tmp_path, line, word):
    marker = tmp_path / "ran"
    body = f"open({str(marker)!r}, 'w').close()\n{line}\n" + GOOD
    report = grade("softmax", attempt(tmp_path, body))
    [only] = report["checks"]
    assert word in only["message"] and not report["passed"]
    assert not marker.exists(), "the attempt's code ran before its imports were checked"


def test_standard_library_and_numpy_submodules_are_allowed(tmp_path):
    report = grade("softmax", attempt(tmp_path, "import math, functools\nfrom numpy.linalg import norm\n" + GOOD))
    assert report["passed"], failures(report)


def test_raising_names_the_call_the_error_and_the_line(tmp_path):
    report = grade("softmax", attempt(tmp_path, """
        import numpy as np
        def softmax(z, axis=-1):
            return np.exp(z) / z[99]
    """))
    message = failures(report)[0]["message"]
    assert "softmax(z" in message and "IndexError" in message and "line 4 of your file" in message


def test_printing_does_not_break_the_report(tmp_path):
    path = attempt(tmp_path, 'import os\nprint("{ not json")\n' + GOOD.replace(
        "    e =", '    print("}}}"); os.write(1, b"raw\\n")\n    e ='))
    report = grade("softmax", path)
    assert report["passed"], failures(report)
    assert "}}}" in report["stdout"]


@pytest.mark.parametrize("body, words", [
    ("import sys\ndef softmax(z, axis=-1):\n    sys.exit(3)\n", "called sys.exit(3)"),
    ("import os\ndef softmax(z, axis=-1):\n    os._exit(0)\n", "ended the Python interpreter"),
    ("import ctypes\ndef softmax(z, axis=-1):\n    ctypes.string_at(0)\n", "crashed the Python interpreter"),
    ("def softmax(z, axis=-1):\n    return 'hello'\n", "is a str, expected a NumPy array"),
    ("def softmax(z, axis=-1):\n    z.sum()\n", "forget to `return`"),
    ("import threading, sys\ndef softmax(z, axis=-1):\n    t = threading.Thread(target=sys.exit, args=(4,))\n"
     "    t.start(); t.join()\n", "is None"),
    ("import numpy as np\ndef softmax(z, axis=-1):\n    return np.ones((300_000, 300_000))\n", "ran out of memory"),
    ("def softmax(z, axis=-1):\n    return [0] * 10**12\n", "ran out of memory"),
    ("raise RuntimeError('boom')\n", "failed to load: RuntimeError: boom"),
    ("def soft_max(z, axis=-1):\n    return z\n", "defines no function `softmax`"),
])
def test_misbehaving_attempts_fail_with_a_clear_message(tmp_path, body, words):
    report = grade("softmax", attempt(tmp_path, body))
    assert not report["passed"]
    assert any(words in c["message"] for c in failures(report)), failures(report)
    json.dumps(report)


def test_an_endless_loop_fails_one_check_and_stops(tmp_path, quick_timeouts):
    report = grade("softmax", attempt(tmp_path, "def softmax(z, axis=-1):\n    while True:\n        pass\n"))
    first, *rest = failures(report)
    assert "did not finish within 0.5 s on softmax(z" in first["message"]
    assert rest + report["skipped"] and all("did not finish" in c["message"] for c in rest)
    assert report["seconds"] < 4


def test_a_call_stuck_in_c_code_is_killed_from_outside(tmp_path, quick_timeouts):
    # time.sleep in a thread that the main thread joins: the alarm cannot interrupt a join
    body = """
        import threading, time
        def softmax(z, axis=-1):
            t = threading.Thread(target=time.sleep, args=(60,))
            t.start(); t.join()
    """
    report = grade("softmax", attempt(tmp_path, body))
    assert not report["passed"]
    assert "did not finish" in failures(report)[0]["message"]
    assert report["seconds"] < 20


def test_untouched_stub_is_one_not_implemented_check():
    report = grade("softmax", ROOT / "katas" / "softmax.py")
    assert report["not_implemented"] and [c["status"] for c in report["checks"]] == ["not_implemented"]
    assert "not implemented yet" in report["checks"][0]["message"]


def test_a_failure_is_shrunk_and_comes_with_a_repro_that_runs(tmp_path):
    path = attempt(tmp_path, GOOD.replace("axis=axis, keepdims=True))\n    return",
                                          "axis=-1, keepdims=True))\n    return"))
    report = grade("softmax", path)
    failed = {c["name"]: c for c in failures(report)}
    agree = failed["agrees with the reference"]
    assert "[shape=(2, 1), axis=0" in agree["message"], agree["message"]
    assert report["diagnosis"] and report["bug"] == "max_over_last_axis"
    run = subprocess.run([sys.executable, "-c", agree["repro"]], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "[[" in run.stdout, run.stderr


def test_a_bug_is_named_only_when_the_attempt_fails_the_check_that_bug_fails(tmp_path):
    """The same recorded calls name the bug when its own check is among those failed, and
    nothing when it is not: a bug that behaves like the attempt gets its verdicts."""
    from graders.engine import bugs
    from graders.engine.diagnose import diagnose
    from graders.engine.harness import graded

    bug = next(b for b in bugs.load("softmax") if b.name == "max_over_last_axis")
    report, grading = graded("softmax", attempt(tmp_path, bug.source))
    report = report.to_dict()
    failed = {c["id"] for c in failures(report)}
    assert report["bug"] == bug.name and bug.fails in failed
    calls = list(grading.history)  # the grading's recorded calls
    assert diagnose("softmax", calls, calls, failed=failed)["bug"] == bug.name
    others = {b.fails for b in bugs.load("softmax")} - {bug.fails}
    assert diagnose("softmax", calls, calls, failed=others) is None


def test_graders_run_under_plain_pytest(tmp_path):
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    base = [sys.executable, "-m", "pytest", "-p", "pytest_timeout", "-q", "graders/softmax/grader.py"]
    on_reference = subprocess.run(base, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert on_reference.returncode == 0, on_reference.stdout[-2000:]
    bug = attempt(tmp_path, "import numpy as np\ndef softmax(z, axis=-1):\n    return np.exp(z) / np.exp(z).sum(axis, keepdims=True)\n")
    on_bug = subprocess.run(base + ["--impl", str(bug)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert on_bug.returncode == 1
    assert "To reproduce:" in on_bug.stdout and "softmax(z)" in on_bug.stdout


# three groups of katas, so that parallel test workers share the pytest runs
GROUPS = [catalogue.names()[i::3] for i in range(3)]


@pytest.mark.parametrize("katas", GROUPS, ids=[f"group{i}" for i in range(3)])
def test_plain_pytest_and_the_harness_agree_on_a_bug_of_every_kata(tmp_path, katas):
    """The harness runs checks without pytest for speed; pytest must judge the same way: on the
    first known bug of every kata, the checks that fail under pytest (one run over a folder
    of attempts) are the checks the harness reports failed."""
    from graders.engine import bugs, files, judge

    expected = {}
    for kata in katas:
        path = attempt(tmp_path, bugs.load(kata)[0].source, f"{kata}.py")
        report = grade(kata, path)
        expected[kata] = {c["name"] for c in report["checks"] if c["status"] == "failed"}
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    graders = [f"graders/{kata}/grader.py" for kata in katas]
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "pytest_timeout", "-q", "-rf", "--impl", str(tmp_path),
                          *graders], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    failed_by_pytest: dict[str, set[str]] = {kata: set() for kata in expected}
    for line in run.stdout.splitlines():
        if line.startswith("FAILED"):
            module, test = line.split()[1].split("::")[:2]
            kata = Path(module).parent.name
            names = {fn.__name__: fn.check_name for fn in judge.checks_of(files.grader(kata))}
            failed_by_pytest[kata].add(names[test])
    differ = {kata: (failed, failed_by_pytest[kata]) for kata, failed in expected.items()
              if failed != failed_by_pytest[kata]}
    assert not differ, f"harness vs pytest: {differ}\n{run.stdout[-3000:]}"
