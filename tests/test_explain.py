"""What the report observes, said with care: relations confirmed on a second case, masks compared,
what a failure needs, the earlier call it needs, and repros that show what the check saw when
they are run; and the explanation's cost, a count of calls."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from graders.engine import bugs as bug_catalogue  # noqa: E402
from graders.engine import explain  # noqa: E402
from graders.engine.bugs import edited  # noqa: E402
from graders.engine.compared import Compared  # noqa: E402
from graders.engine.confirm import confirmed  # noqa: E402
from graders.engine.contrast import Neighbour, error_ratio, said  # noqa: E402
from graders.engine.harness import graded  # noqa: E402
from graders.engine.recorder import Call  # noqa: E402
from graders.engine.relations import findings  # noqa: E402
from graders.engine.repros import with_refusal, without_unused  # noqa: E402


def softmax(s, axis=-1):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def compared(got, want, constants=None, **kw) -> Compared:
    call = Call("f", (), {}, written="f()")
    return Compared(call, got, want, {}, constants or {}, "the output", **kw)


def bug(kata: str, name: str):
    return next(b for b in bug_catalogue.load(kata) + bug_catalogue.near_misses(kata) + bug_catalogue.variants(kata)
                if b.name == name)


def grade_source(kata: str, source: str, tmp_path):
    path = tmp_path / f"{kata}.py"
    path.write_text(source)
    report, grading = graded(kata, path)
    return report, grading, path


# ----------------------------------------------------------------------------- confirmation

def test_a_relation_of_a_degenerate_case_is_not_confirmed_by_a_larger_one():
    rng = np.random.default_rng(0)
    small = softmax(rng.normal(size=(1, 2)))          # two keys: any other row is "another temperature"
    other = softmax(rng.normal(size=(1, 2)))
    assert [f.kind for f in findings(other, small, every=True)].count("tempered") == 1
    large = softmax(rng.normal(size=(1, 5)))
    unrelated = softmax(rng.normal(size=(1, 5)))
    assert confirmed(compared(other, small), compared(unrelated, large)) == []


def test_a_factor_is_named_only_after_the_one_name_that_fits_both_cases():
    rng = np.random.default_rng(1)
    w1, w2 = rng.normal(size=(2, 4)), rng.normal(size=(3, 5))
    # case one: sqrt(d_head) = 2 = B, two names; case two: sqrt(d_head) = 3, B = 5: one name fits both
    one = compared(2.0 * w1, w1, {"sqrt(d_head)": 2.0, "B": 2})
    two = compared(3.0 * w2, w2, {"sqrt(d_head)": 3.0, "B": 5})
    assert [f.text for f in confirmed(one, two)] == ["the output equals the reference times 2 (sqrt(d_head))"]
    ambiguous = compared(3.0 * w2, w2, {"sqrt(d_head)": 3.0, "B": 3})
    assert [f.text for f in confirmed(one, ambiguous)] == ["the output equals the reference times 2"]


def test_a_factor_that_changes_from_case_to_case_is_said_as_such():
    rng = np.random.default_rng(2)
    w1, w2 = rng.normal(size=(2, 4)), rng.normal(size=(3, 5))
    found = confirmed(compared(1.3 * w1, w1), compared(1.7 * w2, w2))
    assert [f.text for f in found] == ["the output equals the reference times 1.3 (with another factor on other sizes)"]


def test_two_numbers_always_have_a_ratio_so_one_that_changes_is_not_said():
    assert confirmed(compared(7.0, 2.0), compared(11.0, 5.0)) == []
    assert [f.kind for f in confirmed(compared(8.0, 2.0), compared(20.0, 5.0))] == ["ratio"]


# ----------------------------------------------------------------------------- masks

def causal_weights(t_q, t_k, hi_shift=0, lo=None, seed=3):
    """Weights of random scores over a band: query i sees keys up to t_k - t_q + i + hi_shift, and
    from that minus lo when a window is given."""
    rng = np.random.default_rng(seed)
    s = rng.normal(size=(t_q, t_k))
    i, j = np.arange(t_q)[:, None], np.arange(t_k)[None, :]
    seen = j <= t_k - t_q + i + hi_shift
    if lo is not None:
        seen &= j > t_k - t_q + i - lo
    return softmax(np.where(seen, s, -np.inf))


def mask_texts(got, want):
    return [f.text for f in findings(got, want, masks=("",)) if f.kind == "mask"]


@pytest.mark.parametrize("shift, words", [(1, "moved by +1: each query also sees the next key"),
                                          (-1, "moved by -1: no query sees its own key"),
                                          (2, "moved by +2: each query also sees the next 2 keys")])
def test_a_diagonal_moved(shift, words):
    want = causal_weights(5, 7)
    got = causal_weights(5, 7, hi_shift=shift)
    assert mask_texts(got, want) == [f"the mask of the output is the reference's with its diagonal {words}"]


def test_a_mask_aligned_top_left_and_a_window_one_wider():
    want = causal_weights(3, 6)
    got = softmax(np.where(np.tri(3, 6, 0, dtype=bool), np.random.default_rng(3).normal(size=(3, 6)), -np.inf))
    assert mask_texts(got, want)[0].startswith("the output aligns the mask top-left")
    assert mask_texts(causal_weights(6, 6, lo=3), causal_weights(6, 6, lo=2)) == [
        "the window of the output is 1 key wider than the reference's: each query sees 1 more earlier key"]


def test_a_band_both_ways_an_inverted_mask_and_a_fill_value():
    rng = np.random.default_rng(4)
    s = rng.normal(size=(6, 6))
    i, j = np.arange(6)[:, None], np.arange(6)[None, :]
    two_sided = softmax(np.where(abs(i - j) <= 2, s, -np.inf))
    assert mask_texts(two_sided, causal_weights(6, 6, lo=3))[0].startswith(
        "the band of keys the output sees reaches both ways")
    future = np.triu(np.ones((4, 4), dtype=bool), 1)
    assert findings(~future, future, masks=("",))[0].text.endswith("the mask is inverted")
    scores = rng.normal(size=(4, 4))
    want, got = np.where(future, -np.inf, scores), np.where(future, -1e9, scores)
    assert mask_texts(got, want) == ["the output holds -1e+09 where the reference holds -inf (the blocked entries), "
                                     "and agrees everywhere else: the mask's fill value is -1e+09, not -inf"]


def test_zeros_of_a_softmax_are_no_mask_unless_the_output_is_declared_one():
    want = causal_weights(4, 4)
    got = causal_weights(4, 4, hi_shift=1)
    assert not [f for f in findings(got, want) if f.kind == "mask"]


# ----------------------------------------------------------------------------- what a failure needs

def test_what_a_failure_needs_is_said_once_a_dimension_and_phrases_share_their_word():
    n_heads = Neighbour("n_heads", "with n_heads = 1", "with n_heads = 2")
    batch = Neighbour("B", "with B = 2", "with B = 1")
    dtype = Neighbour("dtype", "in float32", "in float64")
    assert [s.text for s in said([n_heads, batch, Neighbour("B", "with B = 2", "with B = 3")])] == [
        "fails with n_heads = 1 and B = 2; passes with n_heads = 2 and with B = 1"]
    assert said([dtype])[0].text == "fails in float32; passes in float64"
    related = Neighbour("t_q", "with t_q = 2", "with t_q = 3", related="t_q < t_k")
    assert said([related])[0].text == "fails only when t_q < t_k (t_q = 2); passes with t_q = 3, where they are equal"


def test_the_error_as_a_share_of_the_tolerance():
    want = np.array([1.0, 2.0])
    assert error_ratio(want, want, np.float64) == 0
    assert error_ratio(want * (1 + 2e-6), want, np.float64) == pytest.approx(2, rel=1e-3)
    assert error_ratio((want, 3), (want, 3), np.float64) == 0
    assert error_ratio({"a": 1}, {"a": 2}, np.float64) == float("inf")
    assert error_ratio(want[:1], want, np.float64) == float("inf")


# ----------------------------------------------------------------------------- repros

def test_unused_lines_go_but_draws_that_later_draws_follow_stay():
    repro = "\n".join(["import numpy as np", "from runpy import run_path", "attempt = run_path('f.py')",
                       "f = attempt['f']", "g = attempt['g']", "rng = np.random.default_rng(0)",
                       "a = rng.standard_normal((2,))", "b = rng.standard_normal((2,))", "c = np.ones(2)",
                       "print(f(b))"])
    assert without_unused(repro).split("\n") == [
        "import numpy as np", "from runpy import run_path", "attempt = run_path('f.py')", "f = attempt['f']",
        "rng = np.random.default_rng(0)", "a = rng.standard_normal((2,))", "b = rng.standard_normal((2,))",
        "print(f(b))"]


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_a_repro_of_a_refused_sampler_makes_the_same_refusal(tmp_path):
    source = bug_catalogue.bases("top_p")["BASE"].replace(
        "    u = rng.random(probs.shape[:-1] + (1,))\n",
        "    u = np.random.rand(*probs.shape[:-1], 1)\n")
    report, _, _ = grade_source("top_p", source, tmp_path)
    refused = [c for c in report.checks if c.status.value == "failed" and "global random state" in c.message]
    assert refused, [c.message for c in report.checks if c.status.value == "failed"]
    done = run_python(refused[0].repro)
    assert done.returncode != 0 and "np.random.rand draws from NumPy's global random state" in done.stderr
    assert with_refusal("print(1)", "no refusal here") == "print(1)"


def test_every_repro_prints_the_expected_value_beside_the_attempts(tmp_path):
    report, _, _ = grade_source("softmax", bug("softmax", "sum_over_everything").source, tmp_path)
    failing = [c for c in report.checks if c.status.value == "failed" and c.id == "agrees"]
    done = run_python(failing[0].repro)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().split("\n")
    assert any(line.startswith("expected:") for line in lines) and len(lines) >= 2


def test_a_failure_that_needs_an_earlier_call_says_so_and_its_repro_makes_both(tmp_path):
    report, grading, _ = grade_source("softmax", bug("softmax", "result_cached_by_size").source, tmp_path)
    said_ = grading.explanation
    assert said_ and said_[0].kind == "history", said_
    assert "is right when made alone" in said_[0].text and "wrong right after" in said_[0].text
    check = next(c for c in report.checks if c.status.value == "failed" and c.repro and "fresh copy" in c.repro)
    done = run_python(check.repro)
    assert done.returncode == 0, done.stderr
    printed = done.stdout.strip().split("\n")
    wrong, expected, right = printed[-3], printed[-2], printed[-1]   # after, the reference's, alone
    assert expected.startswith("expected:") and wrong != right
    assert np.allclose(numbers(expected), numbers(right), rtol=1e-6) and not np.allclose(numbers(wrong), numbers(right))


def numbers(line: str) -> list[float]:
    return [float(v) for v in re.findall(r"-?\d+\.?\d*(?:e[-+]?\d+)?", line.split(":", 1)[-1])]


# ----------------------------------------------------------------------------- whole gradings

def test_an_explanation_makes_a_bounded_number_of_calls(tmp_path, monkeypatch):
    made = []
    original = explain.explain

    def counted(failures, candidate, ref, domain, seconds):
        before = candidate.grading.sent
        out = original(failures, candidate, ref, domain, seconds)
        made.append(candidate.grading.sent - before)
        return out

    monkeypatch.setattr(explain, "explain", counted)
    for name in ("mask_off_by_one", "no_scaling"):
        grade_source("single_head_attention", bug("single_head_attention", name).source, tmp_path)
    assert made and max(made) <= explain.CALLS + 4


def test_what_only_larger_cases_show_comes_after_what_the_smallest_case_needs(tmp_path):
    said = grade_source("softmax", bug("softmax", "max_over_first_axis").source, tmp_path)[1].explanation
    assert [(s.kind, s.part) for s in said][:2] == [("needs", "axis"), ("normalised", "")], said
    assert said[0].text == "fails with axis = -1; passes with axis = 0" and "[on a larger case: " in said[1].text


def test_a_raise_comes_before_sentences_that_say_only_where(tmp_path):
    said = grade_source("attention_backward", bug("attention_backward", "rowsum_without_keepdims").source,
                        tmp_path)[1].explanation
    assert said[0].kind == "conduct" and "raises ValueError" in said[0].text, said
    assert {s.kind for s in said[1:]} <= {"where", "parts"}


def test_a_whole_number_of_the_call_is_a_neighbour(tmp_path):
    said = grade_source("param_count", bug("param_count", "gib_bytes_floored").source, tmp_path)[1].explanation
    assert said[0].kind == "needs" and said[0].text == "fails with bits = 4; passes with bits = 8", said


def test_the_same_file_gets_the_same_sentences(tmp_path):
    source = bug("kv_cache", "mask_offset_one_ahead").source
    first = grade_source("kv_cache", source, tmp_path)[1].explanation
    again = grade_source("kv_cache", source, tmp_path)[1].explanation
    assert first == again and first[0].kind == "mask"


@pytest.mark.parametrize("kata, name, not_failed", [
    ("rope", "freqs_minus_i_over_d", {"pairing", "custom_positions", "float32_far_positions", "long_sequence",
                                      "leading_axes", "base"}),
    ("kv_cache", "top_left_alignment", {"state", "long_cache", "huge_scores", "zero_rows", "far_below_zero",
                                        "tiny_weights"}),
    ("gqa", "tile_instead_of_repeat", {"large_scores", "d_model_differs"}),
])
def test_a_formula_error_fails_agreement_not_the_checks_of_one_property(kata, name, not_failed, tmp_path):
    report, _, _ = grade_source(kata, bug(kata, name).source, tmp_path)
    failed = {c.id for c in report.checks if c.status.value == "failed"}
    assert "agrees" in failed and not failed & not_failed, failed


def test_two_mistakes_in_functions_of_their_own_are_both_named(tmp_path):
    base = bug_catalogue.bases("gqa")["BASE"]
    source = edited(base, ("k = np.repeat(k, group, axis=1)", "k = np.tile(k, (1, group, 1, 1))"),
                    ("v = np.repeat(v, group, axis=1)", "v = np.tile(v, (1, group, 1, 1))"),
                    ("return 2 * n_layers", "return n_layers"))
    report, _, _ = grade_source("gqa", source, tmp_path)
    assert report.bug == "tile_instead_of_repeat, kv_cache_keys_only", (report.bug, report.diagnosis)
    assert report.diagnosis.startswith("2 mistakes, one in each function")
