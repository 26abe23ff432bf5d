"""Hints come in the order the attempt needs them: first the hint for its first failing
check, then for the next failing one, then the rest in the catalogue's order; each says
which checks it helps with. `kata dev check` holds every hint to naming checks that exist."""
from __future__ import annotations

from graders.engine.report import CheckResult, Report, Status
from practice import catalogue, dev, grading


def test_the_hint_for_the_first_failing_check_comes_first(kenv, monkeypatch):
    k = catalogue.get("softmax")
    failing = Report("softmax", [
        CheckResult("returns an array of the input's shape", Status.PASSED, id="shape"),
        CheckResult("stays finite and correct for huge logits", Status.FAILED, "NaN at [0, 1]", id="huge_logits"),
        CheckResult("leaves its input unchanged", Status.FAILED, "z was changed", id="input_unchanged")])
    monkeypatch.setattr(grading, "grade", lambda kata, path, source=None: failing)
    kenv.run("start", "softmax")
    kenv.run("check")
    given = []
    for _ in k.hints:
        out = kenv.run("hint").stdout
        given.append(next(n for n, h in enumerate(k.hints, 1) if h in out))
    assert given == [2, 4, 1, 3]  # huge_logits's, then input_unchanged's, then the rest in order
    out = kenv.run("hint").stdout
    assert "No more hints" in out and all(h in out for h in k.hints)


def test_a_hint_says_which_checks_it_helps_with(kenv, monkeypatch):
    kenv.run("start", "softmax")
    out = kenv.run("hint").stdout  # not graded yet: the catalogue's first hint, its checks by id
    assert "Hint 1 of 4 for softmax:" in out and "It helps with:" in out and "· sums to one" in out


def test_a_hint_that_names_no_check_of_its_grader_is_a_fault(tmp_path):
    from test_dev import _copy

    root = _copy(tmp_path)
    toml = root / "katas" / "catalogue.toml"
    text = toml.read_text()
    toml.write_text(text.replace('["huge_logits", "far_below_zero"],', '["huge_logit"],\n    ["minus_inf"],', 1))
    faults = [f"{f.kata}: {f.what}" for f in dev.check(root)]
    assert "softmax: hint 2 names the check 'huge_logit', which the grader does not have" in faults
    assert "softmax: has 4 hints and 5 lists of `hint_checks`: one list for each hint" in faults
