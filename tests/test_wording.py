"""One grammar for counts and plurals (graders/engine/grammar.py), in the grader's messages and
the command line's alike: "1 entry", "entry 0 of 2", "its only entry", never "by up to NaN";
verbs agree with what a message is about; no parentheses inside parentheses."""
from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

from graders.engine import grammar
from graders.engine.relations import observe
from graders.engine.vocabulary import CheckFailed, expect_causal, expect_close

# What the old phrases looked like: a count of one with a plural, "entries 0-0", NaN as a gap.
WRONG = re.compile(r"\b1 (entries|checks|lines|records|hints|questions|katas|faults|places|days|hours|"
                   r"attempts|gradings|weights|times)\b|\bentries (\d+)-\2\b|by up to nan|\b1 of 1\b", re.IGNORECASE)


def test_counts_plurals_and_runs():
    assert [grammar.count(n, "entry") for n in (0, 1, 2)] == ["0 entries", "1 entry", "2 entries"]
    assert grammar.count(3, "more line") == "3 more lines" and grammar.count(2, "axis") == "2 axes"
    assert grammar.count(1, "query") == "1 query" and grammar.count(4, "query") == "4 queries"
    assert grammar.count(2, "day") == "2 days" and grammar.count(2, "batch") == "2 batches"
    assert grammar.span(0, 0, 2, "entry") == "entry 0 of 2"
    assert grammar.span(0, 3, 8, "feature", "features") == "features 0-3 of 8"
    assert grammar.of(3, 8, "entry") == "3 of 8 entries" and grammar.of(1, 1, "entry", "its") == "its only entry"
    assert [grammar.times(n) for n in (0, 1, 5)] == ["never", "once", "5 times"]
    assert grammar.verb(1, "fails", "fail") == "fails" and grammar.verb(3, "fails", "fail") == "fail"


@pytest.mark.parametrize("subject, verb", [
    ("the weights (scores up to 1.4e+04 here)", "differ"), ("the reference's weights", "differ"),
    ("the weights of head 0", "differ"), ("the weight matrix of head 0", "differs"),
    ("the weights array (scores up to 1e4 here)", "differs"), ("y from call 1 of 4, f(x1)", "differs"),
    ("softmax(z, axis=0)", "differs"), ("dlogits from cross_entropy(logits, targets)", "differs"),
    ("the returned k", "differs"), ("the last 3 rows of the weights from the call", "differ"),
])
def test_a_verb_agrees_with_the_head_of_its_subject(subject, verb):
    assert grammar.agrees(subject, "differs", "differ") == verb


def _message(f, *args, **kwargs) -> str:
    with pytest.raises(CheckFailed) as failed:
        f(*args, **kwargs)
    return str(failed.value)


def test_the_engines_messages_count_in_words():
    one = _message(expect_close, np.array([2.0]), np.array([1.0]), "the output")
    assert one.startswith("the output differs from the reference in its only entry, by up to 1: at index [0]")
    nan = _message(expect_close, np.array([np.nan, 1.0]), np.array([0.5, 1.0]), "the weights (scores up to 1e4 here)")
    assert nan == "the weights (scores up to 1e4 here) differ from the reference in 1 of 2 entries: at index [0] " \
                  "it is nan, expected 0.5"
    leak = np.array([[1.0, 0.0], [0.5, 0.5]])
    leak[0, 1] = 0.25
    assert "1 entry is not 0 in the future" in _message(expect_causal, leak)
    rng = np.random.default_rng(3)
    want = np.array([-0.5, 0.25])  # neither a floor nor a ceiling turns this into the answer below
    got = want + np.array([0.0, 1.37])
    assert observe(got, want) == [("along axis 0, only the first half of the output (entry 0 of 2) agrees with "
                                   "the reference; the second half differs")]
    s = rng.normal(size=(4, 4))
    y = rng.normal(size=3)

    def softmax(a, axis):
        e = np.exp(a - a.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    said = observe((y, softmax(s, 0)), (y, softmax(s, 1)), names=("y", "the weights"))
    assert "the weights sum to 1 along axis 0 where the reference's weights sum to 1 along axis 1" in said


def test_the_command_lines_counts_and_clocks(kenv):
    from graders.engine.report import CheckResult, Report, Status
    from practice.views.report import summary

    waiting = Report("moe", [CheckResult("shapes", Status.PASSED),
                             CheckResult("loss", Status.NOT_IMPLEMENTED, "not implemented yet", function="loss")])
    assert summary(waiting).plain == "1/2 checks passed (1 waits for `loss`)"
    kenv.run("start", "softmax")
    kenv.clock.advance(65)
    kenv.run("pause")
    kenv.run("start", "rope")
    status = kenv.run("status").stdout
    assert "Also in progress: softmax; its clock: 1:05 used, 8:55 left of 10:00 (paused)" in status
    assert not re.search(r"\([^()]*\([^()]*\)[^()]*\)", status)  # no parentheses inside parentheses
    assert not WRONG.search(status)


def test_a_real_grading_of_one_entry_and_of_a_nan_reads_right(tmp_path, subprocess_env):
    """The real grader shrinks a failure to one entry, and meets a NaN where 1 is expected."""
    code = ("import numpy as np\n\n\ndef softmax(z, axis=-1):\n    e = np.exp(z - np.max(z, axis=axis, keepdims=True))\n"
            "    out = e / np.sum(e, axis=axis, keepdims=True)\n    return np.where(out > 0.9, {}, out)\n")
    said = []
    for name, wrong in (("twice", "2 * out"), ("nan", "np.nan")):
        attempt = tmp_path / f"{name}.py"
        attempt.write_text(code.format(wrong))
        r = subprocess.run([sys.executable, "-m", "kata", "check", "softmax", "--file", str(attempt)],
                           env=subprocess_env, capture_output=True, text=True, timeout=240, check=False)
        assert r.returncode == 1, r.stderr
        said.append(r.stdout)
    assert "differs from the reference in its only entry, by up to 1: at index [0" in said[0]
    assert "differs from the reference in its only entry: at index [0, 0] it is nan, expected 1" in said[1]
    for out in said:
        assert not WRONG.search(out), WRONG.search(out)
