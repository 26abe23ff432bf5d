"""The report's JSON, written by this version and read back from every version ever stored."""
from __future__ import annotations

import json

from graders.engine.report import FORMAT_VERSION, CheckResult, Report, Status


def sample() -> Report:
    return Report("causal_mha", [
        CheckResult("returns y and weights", Status.PASSED, id="shape"),
        CheckResult("agrees with the reference", Status.FAILED, "differs in 4 of 8 entries",
                    "import numpy as np", "agrees", "causal_mha",
                    {"title": "weights", "values": [[1.0]], "marked": [], "rows": "query", "cols": "key"}),
        CheckResult("works past 1024 positions", Status.SKIPPED,
                    "it runs once every other check passes (a call at T = 1025)", id="test_long"),
        CheckResult("leaves its inputs unchanged", Status.PASSED, id="test_inputs"),
    ], "the scores are divided by sqrt(d_model)", "scale_by_d_model", "hi\n", 3, 0.1234,
        ["the output is the reference's times 0.5"])


def test_a_check_not_run_is_listed_apart_and_counts_as_neither_passed_nor_failed():
    d = sample().to_dict()
    assert d["version"] == FORMAT_VERSION == 3
    assert [c["name"] for c in d["checks"]] == ["returns y and weights", "agrees with the reference",
                                                "leaves its inputs unchanged"]
    assert d["skipped"] == [{"name": "works past 1024 positions", "id": "test_long", "position": 2,
                             "why": "it runs once every other check passes (a call at T = 1025)"}]
    assert d["observed"] == ["the output is the reference's times 0.5"] and d["seconds"] == 0.123
    counts = sample().counts
    assert (counts.passed, counts.failed, counts.skipped, counts.total) == (2, 1, 1, 4)
    assert sample().failing == ["agrees with the reference"]
    rest = Report("rope", [c for c in sample().checks if c.status is not Status.FAILED])
    assert rest.passed and rest.to_dict()["passed"] is True and len(rest.skipped) == 1


def test_a_report_reads_back_as_it_was_written():
    d = sample().to_dict()
    back = Report.from_dict(json.loads(json.dumps(d)))
    assert back.to_dict() == d
    assert [c.status for c in back.checks] == [Status.PASSED, Status.FAILED, Status.SKIPPED, Status.PASSED]
    assert back.checks[2].message.startswith("it runs once") and back.stdout_bytes == 3


def test_a_version_2_report_with_its_skipped_check_inside_checks():
    d = sample().to_dict()
    v2 = dict(d, version=2, checks=[c.to_dict() for c in sample().checks])
    del v2["skipped"], v2["observed"]
    back = Report.from_dict(v2)
    assert [c.name for c in back.checks] == [c.name for c in sample().checks]
    assert back.checks[2].status is Status.SKIPPED and back.observed == []
    assert back.to_dict() == dict(d, observed=[])


def test_an_unversioned_report_lacking_the_later_keys():
    v1 = {"kata": "softmax", "passed": False, "not_implemented": False,
          "checks": [{"name": "output shapes", "passed": True, "message": ""},
                     {"name": "rows sum to 1", "passed": False, "message": "row 3 sums to 0.74",
                      "repro": "f(x)"},
                     {"name": "huge logits", "passed": False, "status": "skipped", "message": "ran out of time"}],
          "diagnosis": None, "stdout": "printed\n", "seconds": 0.5}
    r = Report.from_dict(v1)
    assert [c.status for c in r.checks] == [Status.PASSED, Status.FAILED, Status.SKIPPED]
    assert r.checks[1].repro == "f(x)" and r.checks[1].function is None and r.checks[1].picture is None
    assert r.stdout_bytes == len("printed\n") and r.bug is None and not r.passed
    assert (r.counts.passed, r.counts.total) == (1, 3)
    d = r.to_dict()
    assert d["version"] == 3 and [s["name"] for s in d["skipped"]] == ["huge logits"]
    assert Report.from_dict({}).checks == [] and not Report.from_dict({}).passed  # an empty row


def test_an_unknown_key_is_kept_and_an_unknown_status_is_read_by_passed():
    r = Report.from_dict({"kata": "rope", "checks": [{"name": "x", "passed": False, "status": "exploded"}],
                          "recorded": True})
    assert r.checks[0].status is Status.FAILED and r.to_dict()["recorded"] is True


def test_a_mock_interviews_combined_report():
    stub = Report("gqa", [CheckResult("implemented", Status.NOT_IMPLEMENTED, "not implemented yet",
                                      function="gqa")])
    both = Report.combine([sample(), stub])
    d = both.to_dict()
    assert d["kata"] == "causal_mha,gqa" and d["passed"] is False and d["not_implemented"] is False
    assert d["checks"][0]["name"] == "causal_mha: returns y and weights" and d["checks"][0]["kata"] == "causal_mha"
    assert d["checks"][-1]["name"] == "gqa: implemented"
    assert [s["name"] for s in d["skipped"]] == ["causal_mha: works past 1024 positions"]
    assert d["diagnosis"] == "causal_mha: the scores are divided by sqrt(d_model)"
    assert d["bug"] == "causal_mha: scale_by_d_model"
    assert [x["kata"] for x in d["reports"]] == ["causal_mha", "gqa"]
    back = Report.from_dict(json.loads(json.dumps(d)))
    assert back.to_dict() == d and [p.kata for p in back.parts] == ["causal_mha", "gqa"]
    old = {"kata": "causal_mha,gqa", "passed": False, "not_implemented": False,
           "checks": d["checks"], "reports": [sample().to_dict(), stub.to_dict()]}
    assert Report.from_dict(old).to_dict() == d  # as the combined object was printed before
