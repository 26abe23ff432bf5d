"""The explorer finds the wrong answers that hide along each dimension of the input domain,
blames the check about that dimension, shrinks within the valid domain, and says the same
thing every time."""
from __future__ import annotations

from graders.engine.harness import grade

SOFTMAX = """import numpy as np


def softmax(z, axis=-1):
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
"""


def graded(tmp_path, source: str, kata: str = "softmax") -> dict:
    path = tmp_path / f"{kata}.py"
    path.write_text(source)
    return grade(kata, path)


def failed(report: dict) -> dict[str, str]:
    return {c["id"]: c["message"] for c in report["checks"] if c["status"] == "failed"}


def test_an_argument_that_cannot_be_passed_positionally_fails_the_call_styles(tmp_path):
    report = graded(tmp_path, SOFTMAX.replace("def softmax(z, axis=-1)", "def softmax(z, *, axis=-1)"))
    message = failed(report)["call_styles"]
    assert "every argument passed positionally" in message and "TypeError" in message, message
    assert "`def softmax(z, axis=-1)`" in message


def test_a_wrong_default_fails_the_call_styles_and_only_they_know_it(tmp_path):
    report = graded(tmp_path, SOFTMAX.replace("def softmax(z, axis=-1)", "def softmax(z, axis=0)"))
    message = failed(report)["call_styles"]
    assert "softmax(z) (axis left out, so the default applies) differs from softmax(z, axis=-1)" in message, message


def test_rows_taken_in_chunks_that_drop_the_remainder_fail_past_16384_rows(tmp_path):
    chunked = SOFTMAX.replace("def softmax(z, axis=-1):\n", """def softmax(z, axis=-1):
    if z.ndim == 2 and axis in (-1, 1) and len(z) > 8192:
        out = np.zeros(z.shape)
        for start in range(0, len(z) // 8192 * 8192, 8192):
            out[start:start + 8192] = softmax(z[start:start + 8192])
        return out
""")
    report = graded(tmp_path, chunked)
    assert set(failed(report)) == {"explored"}, failed(report)
    rows = int(failed(report)["explored"].split("m=")[1].split(",")[0])
    assert 8192 < rows <= 16385  # shrunk, and still past the chunk


def test_a_cache_keyed_by_the_array_object_fails_the_sequence_as_a_matter_of_state(tmp_path):
    cached = SOFTMAX.replace("def softmax(z, axis=-1):\n", """_SEEN = {}


def softmax(z, axis=-1):
    key = (id(z), axis)
    if key not in _SEEN:
        _SEEN[key] = _softmax(z, axis)
    return _SEEN[key].copy()


def _softmax(z, axis=-1):
""")
    report = graded(tmp_path, cached)
    message = failed(report)["repeated_calls"]  # an id is reused once its array is gone: any call may show it
    assert "the same call made first, in a new process, gives something else" in message, message
    # whether an id comes back during agrees too depends on the allocator; if it does, the
    # message must put it down to state, never to the formula
    for check, said in failed(report).items():
        assert check in ("repeated_calls", "lookalikes") or "state kept between calls" in said, (check, said)


def test_returning_an_input_fails_new_arrays_with_the_input_named(tmp_path):
    aliased = SOFTMAX.replace("    e = np.exp(", "    if z.shape[axis] == 1:\n        z[...] = 1.0\n        return z\n"
                                                  "    e = np.exp(")
    report = graded(tmp_path, aliased)
    assert "shares memory with its input z" in failed(report).get("new_arrays", ""), failed(report)


def test_a_shrunk_case_stays_within_the_valid_domain(tmp_path):
    """A flash attention wrong whenever causal: every shrunk failing case still has t_q <= t_k."""
    from pathlib import Path

    ref = (Path(__file__).resolve().parent.parent / "solutions" / "flash_attention.py").read_text()
    wrong = ref.replace("def flash_attention(q, k, v, block_size=128, causal=True):",
                        "def flash_attention(q, k, v, block_size=128, causal=True):\n"
                        "    return _flash(q, k, v, block_size, causal) * (1.01 if causal else 1.0)\n\n\n"
                        "def _flash(q, k, v, block_size=128, causal=True):")
    report = graded(tmp_path, wrong, "flash_attention")
    import re

    for message in failed(report).values():
        for t_q, t_k in re.findall(r"t_q=(\d+), t_k=(\d+)", message):
            assert int(t_q) <= int(t_k), message


def test_the_same_file_gets_the_same_report(tmp_path):
    wrong = SOFTMAX.replace("np.max(z, axis=axis, keepdims=True)", "np.max(z)")
    first, second = graded(tmp_path, wrong), graded(tmp_path, wrong)
    keep = ("checks", "observed", "bug", "diagnosis")
    assert {k: first[k] for k in keep} == {k: second[k] for k in keep}


def test_a_wrong_loss_with_its_own_right_gradient_is_blamed_on_the_loss(tmp_path):
    """cross_entropy weighting positions unequally, loss and gradient alike: the loss disagrees with
    the reference, and the gradient, being the gradient of that loss, is not called wrong."""
    from pathlib import Path

    ref = (Path(__file__).resolve().parent.parent / "solutions" / "cross_entropy.py").read_text()
    weighted = ref.replace("    loss = np.sum(nll, where=counted) / n ",
                           "    w = (rows + 1.0) / np.sum((rows + 1.0)[counted])\n"
                           "    loss = np.sum(nll * w, where=counted) ").replace(
        "dz = np.where(counted[:, None], dz / n, 0)", "dz = np.where(counted[:, None], dz * w[:, None], 0)")
    assert weighted.count("w[:, None]") == 1
    report = graded(tmp_path, weighted, "cross_entropy")
    assert "agrees" in failed(report) and "finite_differences" not in failed(report), failed(report)


def test_checks_that_compare_the_attempt_with_itself_do_not_pass_a_function_that_always_raises(tmp_path):
    """A softmax whose max has no keepdims raises on every 2-D call: the checks that compare
    one call of it with another have nothing to compare, and say so instead of passing."""
    report = graded(tmp_path, SOFTMAX.replace("keepdims=True", "keepdims=False"))
    skipped = {s["id"]: s["why"] for s in report["skipped"]}
    passed = {c["id"] for c in report["checks"] if c["status"] == "passed"}
    for check in ("call_styles", "layouts", "repeated_calls"):
        assert check not in passed and "ValueError" in skipped.get(check, ""), (check, skipped)
