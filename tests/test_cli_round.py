"""A full practice round as a user types it, each command a real `kata` process with the
real grader: start, check, hint, check, submit, history, list."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def kata(env, *args, timeout=240):
    return subprocess.run([sys.executable, "-m", "kata", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_a_full_practice_round_in_real_processes(subprocess_env):
    home = Path(subprocess_env["KATA_HOME"])
    r = kata(subprocess_env, "start", "softmax")
    assert r.returncode == 0, r.stderr
    attempt = home / "softmax.py"
    assert str(attempt) in r.stdout and "def softmax(z, axis=-1):" in r.stdout

    r = kata(subprocess_env, "check")
    assert r.returncode == 1, r.stderr
    assert "not implemented yet" in r.stdout and "left of 10:00" in r.stdout

    r = kata(subprocess_env, "hint")
    assert r.returncode == 0 and "Hint 1 of" in r.stdout

    # A classic mistake first (no max subtraction), then the right answer.
    attempt.write_text("import numpy as np\n\n\ndef softmax(z, axis=-1):\n"
                       "    e = np.exp(z)\n    return e / e.sum(axis=axis, keepdims=True)\n")
    r = kata(subprocess_env, "check", "--json")
    assert r.returncode == 1
    report = json.loads(r.stdout)
    assert report["kata"] == "softmax" and not report["passed"]
    assert any(not c["passed"] for c in report["checks"])
    assert "used" in r.stderr

    attempt.write_text((REPO / "solutions" / "softmax.py").read_text())
    r = kata(subprocess_env, "check")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Solved in" in r.stdout

    r = kata(subprocess_env, "submit")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Recorded: passed" in r.stdout and "1 hint" in r.stdout
    assert "graded 4 times" in r.stdout  # three checks and the final grading
    assert "An interviewer would ask next" in r.stdout

    r = kata(subprocess_env, "history", "softmax")
    assert r.returncode == 0
    row = next(ln for ln in r.stdout.splitlines() if ln.startswith("softmax "))
    assert " passed " in row and " practice " in row

    r = kata(subprocess_env, "history", "softmax", "--attempt", "1")
    assert "grading 1" in r.stdout and "grading 4" in r.stdout  # three checks and the submit
    assert "e = np.exp(z)" in r.stdout

    r = kata(subprocess_env, "list")
    row = next(ln for ln in r.stdout.splitlines() if ln.startswith("softmax "))
    assert re.search(r" passed +\d+:\d\d +passed (\d+)/\1$", row), row


def test_the_contract_command_lines_on_the_reference_and_the_stub(subprocess_env):
    r = kata(subprocess_env, "check", "softmax", "--file", "solutions/softmax.py")
    assert r.returncode == 0, r.stdout + r.stderr
    r = kata(subprocess_env, "check", "--file", "katas/softmax.py", "--json")
    assert r.returncode == 1
    report = json.loads(r.stdout)
    assert "not implemented yet" in json.dumps(report["checks"])
    r = kata(subprocess_env, "check", "sofmax", "--file", "katas/softmax.py")
    assert r.returncode == 2 and "Did you mean softmax" in r.stderr
    assert not (Path(subprocess_env["KATA_HOME"]) / "kata.sqlite3").exists()


def test_a_function_still_missing_is_one_line_and_its_checks_stay_in_the_count(subprocess_env, tmp_path):
    """moe with load_balancing_loss not written yet: one line says how many checks wait for
    it, and the count of checks is the count once it is written."""
    import ast

    source = (REPO / "solutions" / "moe.py").read_text()
    fn = next(n for n in ast.parse(source).body if getattr(n, "name", "") == "load_balancing_loss")
    lines = source.splitlines()
    half = lines[:fn.body[1].lineno - 1] + ["    raise NotImplementedError"] + lines[fn.end_lineno:]
    path = tmp_path / "moe.py"
    path.write_text("\n".join(half) + "\n")
    missing = kata(subprocess_env, "check", "--file", str(path))
    whole = kata(subprocess_env, "check", "moe", "--file", "solutions/moe.py")
    assert missing.returncode == 1 and whole.returncode == 0, missing.stdout + whole.stdout
    assert re.search(r"… `load_balancing_loss`: not implemented yet \((\d+) checks need it\)", missing.stdout)
    assert "implemented: not implemented" not in missing.stdout
    total = re.search(r"\d+/(\d+) checks passed$", whole.stdout.strip()).group(1)
    assert re.search(rf"\d+/{total} checks passed \(\d+ wait for `load_balancing_loss`\)", missing.stdout)


def test_importing_the_command_loads_nothing_heavy():
    code = ("import sys, kata, practice.grading, graders.engine.harness; "
            "print(sorted(m for m in ('numpy', 'pytest', 'rich', 'watchdog', 'pygments') "
            "if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


BAD_ATTEMPTS = {
    "prints": ('import sys\nprint("{ not json")\ndef softmax(z, axis=-1):\n    print("}}}")\n'
               '    sys.stdout.write("[1, 2]")\n    return z\n', "agrees with the reference"),
    "never_returns": ("def softmax(z, axis=-1):\n    while True:\n        pass\n", "did not finish within 0.5 s"),
    "exits": ("import os\ndef softmax(z, axis=-1):\n    os._exit(7)\n", "ended the Python interpreter"),
    "raises": ("def softmax(z, axis=-1):\n    raise KeyError('axis')\n", "raised KeyError"),
    "syntax_error": ("def softmax(z, axis=-1)\n    return z\n", "syntax error on line 1"),
    "wrong_type": ("def softmax(z, axis=-1):\n    return {'p': z}\n", "is a dict, expected a NumPy array"),
    "array_array": ("import array\ndef softmax(z, axis=-1):\n    return array.array('d', [1.0])\n",
                    "is an array.array, expected a NumPy array"),
    "huge_memory": ("import numpy as np\ndef softmax(z, axis=-1):\n    return np.zeros((10**6, 10**6))\n",
                    "ran out of memory"),
}


@pytest.mark.parametrize("name", sorted(BAD_ATTEMPTS))
def test_check_json_on_a_misbehaving_attempt_is_one_object_and_exit_1(subprocess_env, tmp_path, name):
    source, words = BAD_ATTEMPTS[name]
    path = tmp_path / "softmax.py"
    path.write_text(source)
    env = dict(subprocess_env, KATA_CHECK_SECONDS="0.5")
    r = kata(env, "check", "--file", str(path), "--json")
    assert r.returncode == 1, r.stderr
    report = json.loads(r.stdout)  # the whole of stdout is one JSON object
    assert report["kata"] == "softmax" and report["passed"] is False
    assert any(words in c["message"] or words == c["name"] for c in report["checks"] if not c["passed"]), report
    assert report["version"] == 3 and report["recorded"] is False and isinstance(report["observed"], list)
    assert all(c["status"] != "skipped" for c in report["checks"])  # a check not run is under skipped
    if name == "never_returns":
        assert any("were not run" in c["why"] for c in report["skipped"])
    assert "Traceback" not in r.stderr
    plain = kata(env, "check", "--file", str(path))
    assert plain.returncode == 1 and "Traceback" not in plain.stdout + plain.stderr
