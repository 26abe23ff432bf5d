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


# ----------------------------------------------------------------------------- the explorer as an adversary

def _reference(kata: str) -> str:
    from pathlib import Path

    return (Path(__file__).resolve().parent.parent / "solutions" / f"{kata}.py").read_text()


CACHED = SOFTMAX.replace("def softmax(z, axis=-1):\n", """_SEEN = {}


def softmax(z, axis=-1):
    key = KEY
    if key not in _SEEN:
        _SEEN[key] = _softmax(z, axis)
    return _SEEN[key].copy()


def _softmax(z, axis=-1):
""")


import pytest  # noqa: E402

READ_ONLY_CACHED = SOFTMAX.replace("def softmax(z, axis=-1):\n", """_SEEN = {}


def softmax(z, axis=-1):
    if z.flags.writeable:  # a read-only array "cannot change": its answer is kept by where it lies
        return _softmax(z, axis)
    key = (z.ctypes.data, z.shape, axis)
    if key not in _SEEN:
        _SEEN[key] = _softmax(z, axis)
    return _SEEN[key].copy()


def _softmax(z, axis=-1):
""")


@pytest.mark.parametrize("key", ["(z.shape, axis, float(z.sum()))", "(z.shape, axis, z.reshape(-1)[:3].tobytes())",
                                 "read-only"])
def test_a_cache_keyed_on_a_cheap_summary_fails_the_calls_that_look_alike(tmp_path, key):
    """A key on a sum, the first entries, or the memory of a read-only array (while the caller
    rewrites what lies under it): a later call that agrees with an earlier one on it and differs
    elsewhere gets the earlier answer, and the failure is put down to state."""
    report = graded(tmp_path, READ_ONLY_CACHED if key == "read-only" else CACHED.replace("KEY", key))
    message = failed(report).get("lookalikes", "")
    assert "the same call made first, in a new process, gives something else" in message, failed(report)
    assert "an earlier call that agrees with this one on" in message, message


KV_BUFFER = ('''
        if _BUF and k_past.base is _BUF[0] and v_past.base is _BUF[1] and _BUF[0].shape[2] >= k_past.shape[2] + t_new:
            t0 = k_past.shape[2]
            _BUF[0][:, :, t0:t0 + t_new] = k
            _BUF[1][:, :, t0:t0 + t_new] = v
            k, v = _BUF[0][:, :, :t0 + t_new], _BUF[1][:, :, :t0 + t_new]
        else:
            k = np.concatenate([k_past, k], axis=2)
            v = np.concatenate([v_past, v], axis=2)
            kb = np.zeros(k.shape[:2] + (k.shape[2] + 64, k.shape[3]))
            vb = np.zeros_like(kb)
            kb[:, :, :k.shape[2]] = k
            vb[:, :, :v.shape[2]] = v
            _BUF[:] = [kb, vb]
            k, v = kb[:, :, :k.shape[2]], vb[:, :, :v.shape[2]]''')


def test_a_cache_grown_in_place_fails_when_the_same_cache_is_passed_back_twice(tmp_path):
    """Keys and values appended into one buffer when the cache given is the buffer's own view:
    a caller who passes the returned cache back works, until the same cache feeds two branches."""
    import subprocess
    import sys

    ref = _reference("kv_cache")
    old = ("        k = np.concatenate([k_past, k], axis=2)               # (B, n_heads, t_past + t_new, d_head)\n"
           "        v = np.concatenate([v_past, v], axis=2)               # (B, n_heads, t_past + t_new, d_head)")
    assert old in ref
    wrong = ref.replace(old, KV_BUFFER.strip("\n")).replace("import numpy as np\n", "import numpy as np\n_BUF = []\n", 1)
    report = graded(tmp_path, wrong, "kv_cache")
    check = next(c for c in report["checks"] if c["id"] == "lookalikes")
    assert not check["passed"] and "passed back" in check["message"], check["message"]
    assert ":= attend_with_cache(" in check["repro"] and "cache=out" in check["repro"], check["repro"]
    run = subprocess.run([sys.executable, "-c", check["repro"]], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr  # the repro keeps each result and passes it back as the check did


def test_a_list_for_a_tuple_in_one_mode_breaks_the_rule_on_result_types(tmp_path):
    """The returned cache as a list for one new token only: the explorer's comparison holds the
    contract's result types on every call, in every mode, not in one check."""
    ref = _reference("kv_cache")
    wrong = ref.replace("    return merged @ W_o, (k, v)", "    return merged @ W_o, [k, v] if t_new == 1 else (k, v)")
    assert wrong != ref
    messages = failed(graded(tmp_path, wrong, "kv_cache"))
    assert any("part [1] of what attend_with_cache(" in m and "is a list, where the contract asks for a tuple" in m
               for m in messages.values()), messages


def test_a_constant_seed_for_the_random_default_fails_two_new_processes(tmp_path):
    ref = _reference("top_p")
    wrong = ref.replace("np.random.default_rng()", "np.random.default_rng(1234)")
    assert wrong != ref
    message = failed(graded(tmp_path, wrong, "top_p")).get("lookalikes", "")
    assert "with rng left out, drew the same 4096 numbers in two new processes" in message, message


def test_a_full_score_matrix_only_when_not_causal_fails_the_memory_rule_in_that_mode(tmp_path):
    ref = _reference("flash_attention")
    old = "    lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])\n"
    wrong = ref.replace(old, "    if not causal:\n        s = q @ np.swapaxes(k, -1, -2) / np.sqrt(d)\n"
                             "        e = np.exp(s - s.max(axis=-1, keepdims=True))\n"
                             "        return (e / e.sum(axis=-1, keepdims=True)) @ v\n" + old)
    assert wrong != ref
    report = graded(tmp_path, wrong, "flash_attention")
    assert set(failed(report)) == {"memory_modes"}, failed(report)
    assert "causal=False" in failed(report)["memory_modes"] and report["bug"] == "full_score_matrix"


def test_an_input_written_in_one_family_only_breaks_the_rule_on_every_call(tmp_path):
    """softmax replacing -inf in place when a slice begins with it: no call of the grader's own
    checks has such a slice; the rule, held on every call the explorer makes, sees it."""
    wrong = SOFTMAX.replace("    e = np.exp(", "    if z.size and np.isneginf(z.flat[0]) and z.flags.writeable:\n"
                                              "        z[np.isneginf(z)] = -1e300\n    e = np.exp(")
    messages = failed(graded(tmp_path, wrong))
    assert "input_unchanged" not in messages, messages
    assert any("modified its input `z`" in m and "neg_inf_run" in m for m in messages.values()), messages


@pytest.mark.parametrize("edit, words", [
    (("def softmax(z, axis=-1):\n", "def softmax(z, axis=-1):\n    axis = 0 if isinstance(axis, np.integer) else axis\n"),
     "scalars as NumPy numbers"),
])
def test_a_scalar_typed_another_way_the_contract_allows_is_explored(tmp_path, edit, words):
    message = failed(graded(tmp_path, SOFTMAX.replace(*edit))).get("explored", "")
    assert words in message, message


def test_an_int_for_a_float_is_explored(tmp_path):
    """rms_norm ignoring an eps given as an int (eps=0 where the contract allows any number)."""
    ref = _reference("rms_norm")
    old = "    ms = np.mean(x * x, axis=-1, keepdims=True)"
    wrong = ref.replace(old, "    eps = eps if isinstance(eps, float) else 1e-6\n" + old)
    assert wrong != ref
    message = failed(graded(tmp_path, wrong, "rms_norm")).get("explored", "")
    assert "whole floats passed as ints" in message and "eps=" in message, message


def test_an_unbounded_block_size_is_explored_past_2_to_the_31(tmp_path):
    ref = _reference("flash_attention")
    old = "    if block_size < 1:\n"
    wrong = ref.replace(old, "    block_size = int(np.int32(block_size % 2**32 - 2**31 * (block_size % 2**32 >= 2**31)))\n"
                             + old)
    assert wrong != ref
    message = failed(graded(tmp_path, wrong, "flash_attention")).get("explored", "")
    assert "block_size=2147483648" in message or "block_size=1000000000000" in message, message


def test_an_answer_far_below_one_is_compared_relative_to_its_scale(tmp_path):
    """weight_gib rounded to nine decimals: right for a model, wrong for a handful of weights,
    which the contract's atol of 1e-9 alone would pass."""
    ref = _reference("param_count")
    wrong = ref.replace("    return n_params * bits / 8 / 2**30", "    return round(n_params * bits / 8 / 2**30, 9)")
    assert wrong != ref
    message = failed(graded(tmp_path, wrong, "param_count")).get("explored", "")
    assert "weight_gib(" in message and "n_params=" in message, message


def test_relative_comparison_only_where_the_data_and_the_answer_are_small():
    import numpy as np

    from graders.engine.calls import expect_same
    from graders.engine.failures import CheckFailed

    expect_same(np.array([1e-10]), np.array([1.1e-10]), "x", data=1.0)     # the contract's atol passes it
    with pytest.raises(CheckFailed):
        expect_same(np.array([1e-10]), np.array([1.1e-10]), "x", data=1e-30)   # tiny data: relative to 1e-10
    expect_same(np.array([1.0 + 1e-12]), np.array([1.0]), "x", data=1e-30)   # an answer of order 1: unchanged


def test_no_case_draws_a_feature_size_past_a_real_models(tmp_path):
    """The contract's d_model of 16,384 bounds every feature size the explorer draws, so an answer
    quadratic in it is not refused for its memory (a (d, d) array at 33,000 needs 8.7 GB)."""
    from graders.engine import explorer, files
    from practice import catalogue

    sizes = ("d_model", "d", "d_k", "d_head")
    for kata in catalogue.names():
        for ex in files.domain(kata).functions:
            for case in [*explorer.explored_cases(ex), *ex.big, *ex.real]:
                over = {k: case[k] for k in sizes if isinstance(case.get(k), int) and case[k] > 16_384}
                assert not over, (kata, ex.function, over)


def test_a_covering_array_meets_every_pair_of_undeclared_factors():
    from graders.engine import palettes
    from graders.engine.domain import Dim, Explore

    ex = Explore("f", lambda new, case: {}, dims={"a": Dim(), "b": Dim()}, families=("huge", "ties"),
                 scalars={"s": (0.0, 1.0, 2.0)}, pairs=(("a", "b"),))
    table = {k: palettes._spread(v) for k, v in palettes.palettes(ex).items()}
    rows = palettes.covering(ex, lambda i: {"a": 2, "b": 3, "values": "normal", "dtype": "float64"}, "test")
    for a, b in palettes.undeclared(ex):
        assert ("a", "b") != (a, b)
        for va in table[a]:
            for vb in table[b]:
                assert any(r.get(a) == va and r.get(b) == vb for r in rows), (a, va, b, vb)


def test_a_generator_made_once_at_import_from_fresh_entropy_is_a_fresh_default(tmp_path):
    """Two new processes that each run the file draw apart, though a copy of one that ran it
    would not: a module-level np.random.default_rng() is a correct default."""
    ref = _reference("top_p")
    right = ref.replace("np.random.default_rng()", "_RNG").replace(
        "import numpy as np\n", "import numpy as np\n\n_RNG = np.random.default_rng()\n", 1)
    assert "_RNG = np.random.default_rng()" in right
    report = graded(tmp_path, right, "top_p")
    assert report["passed"], failed(report)
