"""Every kata is complete and every grader is strong and fair.

Strong: each entry of the bug catalogue fails its grader, with the check it names among
the failures, and is diagnosed as itself. Fair: the reference, every correct answer the
known bugs are edited from, and every alternative answer (graders/KATA/alternatives) pass.
The untouched stub says "not implemented yet".
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from graders.engine import bugs as bug_catalogue
from graders.engine.harness import grade, graded
from graders.engine.said import matches
from practice import catalogue

from kata_figures import record
from kata_files import ROOT, alternative_id, alternatives, kata_for_alternative

NAMES = catalogue.names()
BUGS = [(k, b) for k in NAMES for b in bug_catalogue.load(k)]
NEAR_MISSES = [(k, b) for k in NAMES for b in bug_catalogue.near_misses(k)]
VARIANTS = [(k, b) for k in NAMES for b in bug_catalogue.variants(k)]


def failed(report: dict) -> dict[str, str]:
    """Failed checks by id (their function in the grader), with their messages."""
    return {c["id"] or c["name"]: c["message"] for c in report["checks"] if not c["passed"]}


def test_every_kata_is_whole():
    """What a kata needs that can be read without grading (the catalogue, every file and none
    orphaned, stub and reference asking the same question, a broad catalogue of bugs, two
    alternative answers, the domain): `kata dev check` holds the repository to it."""
    run = subprocess.run([sys.executable, "kata.py", "dev", "check"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"every kata is whole ({len(NAMES)} katas)" in run.stdout


@pytest.mark.parametrize("kata", NAMES)
def test_reference_passes(kata):
    report = grade(kata, catalogue.get(kata).solution)
    assert report["passed"], failed(report)
    assert len(report["checks"]) >= 5
    efficiency = report["efficiency"]  # measured once every check passes: nothing to remark on the reference
    assert efficiency["measured"] and efficiency["remarks"] == [], efficiency["why"] or efficiency["remarks"]
    for f in efficiency["functions"]:  # the same code runs the same lines, in its process and in the judge
        assert f["attempt"]["lines"] == f["reference"]["lines"], f["function"]


@pytest.mark.parametrize("kata", NAMES)
def test_untouched_stub_is_not_implemented_yet(kata):
    report = grade(kata, catalogue.get(kata).stub)
    assert not report["passed"] and report["not_implemented"]
    assert len(report["checks"]) == 1
    assert "not implemented yet" in report["checks"][0]["message"]


def explained(kata: str, bug, tmp_path):
    """The report on `bug`'s code, and what its `Observed:` says (graders.engine.said.Said)."""
    path = tmp_path / f"{kata}.py"
    path.write_text(bug.source)
    report, grading = graded(kata, path)
    return report.to_dict(), list(grading.explanation) if grading is not None else []


def explained_right(bug, said: list) -> bool:
    """What was observed is one of the explanations `bug` declares a reader should get."""
    return any(matches(said, spec) for spec in bug.says)


@pytest.mark.parametrize("kata, bug", BUGS, ids=[f"{k}-{b.name}" for k, b in BUGS])
def test_bug_fails_and_is_diagnosed(kata, bug, tmp_path):
    report, said = explained(kata, bug, tmp_path)
    record(kata, "bug", bug.name, not report["passed"], report["bug"], report["bug"] == bug.name, said,
           explained_right(bug, said) if bug.says else None)
    fails = failed(report)
    assert not report["passed"], f"the grader passes the bug {bug.name!r}"
    assert bug.fails in fails, f"{bug.name!r} should fail {bug.fails!r}; it failed {sorted(fails)}"
    assert not report["not_implemented"]
    assert report["bug"] == bug.name, f"diagnosed as {report['bug']!r}: {report['diagnosis']}"
    for name, message in fails.items():
        assert message and "\n" not in message, f"{name}: a failure is one line"


@pytest.mark.parametrize("kata, bug", NEAR_MISSES + VARIANTS, ids=[f"{k}-{b.name}" for k, b in NEAR_MISSES + VARIANTS])
def test_near_miss_fails_and_is_explained_without_another_bugs_name(kata, bug, tmp_path):
    """A mistake close to a catalogued one, but not it (a near miss), or one with its trigger
    moved (a variant): the grader fails it, the report names no cause rather than the wrong
    one, and what it observed is the explanation the entry declares."""
    report, said = explained(kata, bug, tmp_path)
    kind = "variant" if (kata, bug) in VARIANTS else "near miss"
    right = explained_right(bug, said)
    record(kata, kind, bug.name, not report["passed"], report["bug"], right, said, right)
    assert bug.says, f"{bug.name!r} declares no explanation a reader should get (`says`)"
    assert not report["passed"], f"the grader passes the {kind} {bug.name!r} ({bug.likely})"
    assert bug.fails in failed(report), f"{bug.name!r} should fail {bug.fails!r}; it failed {sorted(failed(report))}"
    assert report["bug"] is None, f"{bug.name!r} ({bug.likely}) was diagnosed as {report['bug']!r}"
    if kind == "variant":  # made to move a catalogued trigger: each must be explained right
        assert right, f"{bug.name!r} should be explained as one of {bug.says}; the report observed {said}"
    elif not right:  # counted in the table of rightness; a gap of the explanations, not of the grader
        pytest.xfail(f"{bug.name!r} should be explained as one of {bug.says}; the report observed {said}")


@pytest.mark.parametrize("kata", NAMES)
def test_bug_bases_are_correct_answers(kata, tmp_path):
    bases = bug_catalogue.bases(kata)
    assert "BASE" in bases, f"graders/{kata}/bugs.py has no BASE, the correct answer its bugs are edits of"
    for name, code in bases.items():
        path = tmp_path / name / f"{kata}.py"
        path.parent.mkdir()
        path.write_text(code)
        report = grade(kata, path)
        assert report["passed"], f"{name} fails: {failed(report)}"


BLOCKWISE = ("flash_attention", "sliding_window")   # katas whose answers loop over blocks of positions


@pytest.mark.parametrize("path", alternatives(), ids=[alternative_id(p) for p in alternatives()])
def test_alternative_correct_answer_passes(path):
    kata = kata_for_alternative(path)
    report = grade(kata, path)
    record(kata, "alternative", path.stem, not report["passed"], None, False)
    assert report["passed"], failed(report)
    if kata in BLOCKWISE and path.stem != "loops":  # a loop over blocks is by design: not worth a remark
        assert report["efficiency"]["remarks"] == [], report["efficiency"]["remarks"]
