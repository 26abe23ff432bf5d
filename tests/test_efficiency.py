"""Efficiency as an interviewer sees it, measured in real processes once every check passes:
a loop over the positions, over the heads, over pairs of positions, a (T, T) array where the
kata needs none, each named with the line that does it; the references, vectorised and
blockwise, with no remark; the same figures on an idle machine and with both cores busy;
and where the figures are shown (check, --json, compare, mock and strict mock, progress).
Every reference, and every blockwise answer, is measured with nothing to remark in
tests/test_katas.py, which grades them already."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from graders.engine import costs, counting, efficiency
from graders.engine.harness import grade
from graders.engine.protocol import Done
from graders.engine.report import Report
from practice import catalogue

POSITIONS = textwrap.dedent('''\
    import numpy as np


    def causal_mha(x, W_q, W_k, W_v, W_o, n_heads):
        B, T, d_model = x.shape
        if d_model % n_heads:
            raise ValueError("n_heads must divide d_model")
        d_head = d_model // n_heads
        q = (x @ W_q).reshape(B, T, n_heads, d_head).transpose(0, 2, 1, 3)
        k = (x @ W_k).reshape(B, T, n_heads, d_head).transpose(0, 2, 1, 3)
        v = (x @ W_v).reshape(B, T, n_heads, d_head).transpose(0, 2, 1, 3)
        weights = np.zeros((B, n_heads, T, T), dtype=np.result_type(x, np.float32))
        out = np.zeros((B, n_heads, T, d_head), dtype=weights.dtype)
        for t in range(T):
            s = q[:, :, t:t + 1, :] @ np.swapaxes(k[:, :, :t + 1, :], -1, -2) / np.sqrt(d_head)
            e = np.exp(s - s.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            weights[:, :, t:t + 1, :t + 1] = w
            out[:, :, t:t + 1, :] = w @ v[:, :, :t + 1, :]
        return out.transpose(0, 2, 1, 3).reshape(B, T, d_model) @ W_o, weights
    ''')

HEADS = textwrap.dedent('''\
    import numpy as np


    def causal_mha(x, W_q, W_k, W_v, W_o, n_heads):
        B, T, d_model = x.shape
        if d_model % n_heads:
            raise ValueError("n_heads must divide d_model")
        d = d_model // n_heads
        q, k, v = x @ W_q, x @ W_k, x @ W_v
        future = np.triu(np.ones((T, T), dtype=bool), 1)
        outs, weights = [], []
        for h in range(n_heads):
            cols = slice(h * d, (h + 1) * d)
            s = np.where(future, -np.inf, q[..., cols] @ np.swapaxes(k[..., cols], -1, -2) / np.sqrt(d))
            e = np.exp(s - s.max(axis=-1, keepdims=True))
            weights.append(e / e.sum(axis=-1, keepdims=True))
            outs.append(weights[-1] @ v[..., cols])
        return np.concatenate(outs, axis=-1) @ W_o, np.stack(weights, axis=1)
    ''')

PAIRS = textwrap.dedent('''\
    import math

    import numpy as np


    def single_head_attention(x, W_q, W_k, W_v, causal=True):
        q, k, v = x @ W_q, x @ W_k, x @ W_v
        T, d_k = q.shape
        weights = np.zeros((T, T), dtype=np.result_type(q, np.float32))
        for i in range(T):
            seen = i + 1 if causal else T
            s = np.empty(seen)
            for j in range(seen):
                s[j] = float(q[i] @ k[j]) / math.sqrt(d_k)
            e = np.exp(s - s.max())
            weights[i, :seen] = e / e.sum()
        return weights @ v, weights
    ''')


def full_mask() -> str:
    """The reference of kv_cache, but with the whole (t_all, t_all) causal mask built and its last
    rows taken, for caches of up to 4,096 positions (so that the checks at 32,768 stay quick:
    the efficiency measures at 256 to 1,024)."""
    reference = catalogue.get("kv_cache").solution.read_text()
    line = "    future = np.arange(t_all)[None, :] > (t_past + np.arange(t_new))[:, None]   # (t_new, t_all)\n"
    assert line in reference
    return reference.replace(line, (
        "    if t_all <= 4096:  # the whole causal mask, then its last rows\n"
        "        future = (np.arange(t_all)[None, :] > np.arange(t_all)[:, None])[t_past:]\n"
        "    else:\n" + line.replace("    future", "        future")))


def graded(tmp_path: Path, kata: str, source: str, name: str | None = None) -> dict:
    path = tmp_path / f"{name or kata}.py"
    path.write_text(source)
    report = grade(kata, path)
    assert report["passed"], [c for c in report["checks"] if not c["passed"]]
    return report


def without_time(e: dict) -> dict:
    """The efficiency's counted figures: everything but the time, which depends on the machine."""
    return {**e, "functions": [{k: v for k, v in f.items() if k != "time"} for f in e["functions"]]}


@pytest.fixture(scope="module")
def positions(tmp_path_factory) -> dict:
    return graded(tmp_path_factory.mktemp("positions"), "causal_mha", POSITIONS)


# ----------------------------------------------------------------------------- each kind, in real processes

def test_a_loop_over_the_positions_is_named_with_its_line_against_the_vectorised_reference(positions):
    e = positions["efficiency"]
    assert e["measured"] and e["why"] is None
    (f,) = e["functions"]
    assert f["dimension"] == {"name": "T", "unit": "position", "sizes": [16, 32, 64], "note": ""}
    mine, theirs = f["attempt"], f["reference"]
    assert mine["lines_growth"] == "linear" and theirs["lines_growth"] == "constant"
    assert mine["loop"]["line"] == 14 and mine["loop"]["code"] == "for t in range(T):"
    assert mine["loop"]["counts"] == [17, 33, 65] and mine["loop"]["rate"] == 1.0
    assert theirs["loop"] is None and len(set(theirs["lines"])) == 1
    assert f["time"]["indicative"] is True and f["time"]["size"] == 64
    (remark,) = e["remarks"]
    assert remark.startswith("`causal_mha` loops over the positions in Python: line 14 (`for t in range(T):`) "
                             "runs once per position (65 times at T = 64)")
    assert f"the reference runs the same {theirs['lines'][-1]} lines at any T" in remark


def test_a_loop_over_the_heads_is_named_and_the_positions_are_not_blamed(tmp_path):
    e = graded(tmp_path, "causal_mha", HEADS)["efficiency"]
    (f,) = e["functions"]
    assert f["attempt"]["lines_growth"] == "constant"  # every position at once
    heads = next(o for o in f["others"] if o["dimension"]["name"] == "n_heads")
    assert heads["attempt"]["loop"]["code"] == "for h in range(n_heads):" and heads["attempt"]["loop"]["rate"] == 1.0
    assert heads["reference"]["lines_growth"] == "constant"
    (remark,) = e["remarks"]
    assert remark.startswith("`causal_mha` loops over the heads in Python: line 12 (`for h in range(n_heads):`) "
                             "runs once per head (9 times at n_heads = 8)")


def test_a_double_loop_over_queries_and_keys_is_a_loop_over_pairs_of_positions(tmp_path):
    e = graded(tmp_path, "single_head_attention", PAIRS)["efficiency"]
    (f,) = e["functions"]
    mine = f["attempt"]
    assert mine["lines_growth"] == "quadratic" and mine["loop"]["growth"] == "quadratic"
    assert mine["loop"]["code"] == "for j in range(seen):"
    (remark,) = e["remarks"]
    assert remark.startswith("`single_head_attention` loops over pairs of positions in Python: line 13 "
                             "(`for j in range(seen):`) runs once per 2 pairs of positions")
    assert "every pair of positions at once in array operations" in remark


def test_a_full_t_by_t_mask_where_the_kata_needs_none_is_a_memory_remark(tmp_path):
    e = graded(tmp_path, "kv_cache", full_mask())["efficiency"]
    (f,) = e["functions"]
    assert f["attempt"]["memory_growth"] == "quadratic" and f["reference"]["memory_growth"] == "linear"
    assert f["attempt"]["lines_growth"] == f["reference"]["lines_growth"] == "constant"  # no loop to blame
    (remark,) = e["remarks"]
    assert remark.startswith("`attend_with_cache`'s peak memory grows as t_past squared (")
    assert "it holds something of t_past x t_past entries at once, where the reference's grows as t_past" in remark


def test_the_blockwise_references_loop_over_blocks_by_design():
    """flash_attention is measured with block_size = T / 4, so its blocks are as many at every T;
    sliding_window with a window of 8, so its blocks of 64 queries grow as T, once per 64."""
    flash = grade("flash_attention", catalogue.get("flash_attention").solution)["efficiency"]["functions"][0]
    assert flash["dimension"]["note"] == "block_size = T / 4" and flash["reference"]["lines_growth"] == "constant"
    window = grade("sliding_window", catalogue.get("sliding_window").solution)["efficiency"]["functions"][0]
    loop = window["reference"]["loop"]
    assert loop["code"].startswith("for i0 in range(0, T, block)") and loop["rate"] == pytest.approx(1 / 64, rel=0.01)


def test_the_same_figures_on_an_idle_machine_and_with_both_cores_busy(tmp_path, subprocess_env):
    """Each grading in a `kata` of its own: the attempt's figures and the reference's are both
    measured afresh, once as the machine is, once with a busy loop on each core."""
    path = tmp_path / "causal_mha.py"
    path.write_text(POSITIONS)

    def measured() -> dict:
        run = subprocess.run([sys.executable, "-c", "import kata; kata.cli(prog_name='kata')", "check", "causal_mha",
                              "--file", str(path), "--json"], env=subprocess_env, capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0, run.stderr
        return json.loads(run.stdout)["efficiency"]

    idle = measured()
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        loaded = measured()
    finally:
        for p in busy:
            p.kill()
            p.wait()
    assert without_time(loaded) == without_time(idle) and idle["measured"]
    assert loaded["remarks"] == idle["remarks"] and len(idle["remarks"]) == 1


def test_a_failing_attempt_is_not_measured_and_the_json_says_why(tmp_path, subprocess_env):
    bad = tmp_path / "softmax.py"
    bad.write_text("import numpy as np\n\n\ndef softmax(z, axis=-1):\n    return np.exp(z)\n")
    run = subprocess.run([sys.executable, "-c", "import kata; kata.cli(prog_name='kata')", "check", "softmax",
                          "--file", str(bad), "--json"], env=subprocess_env, capture_output=True, text=True,
                         timeout=120, cwd=Path(__file__).resolve().parent.parent)
    assert run.returncode == 1, run.stderr
    e = json.loads(run.stdout)["efficiency"]
    assert e == {"measured": False, "why": costs.UNMEASURED, "functions": [], "remarks": []}
    assert "Efficiency" not in subprocess.run(
        [sys.executable, "-c", "import kata; kata.cli(prog_name='kata')", "check", "softmax", "--file", str(bad)],
        env=subprocess_env, capture_output=True, text=True, timeout=120).stdout


def test_kata_check_shows_the_figures_beside_the_reference_and_the_remark(tmp_path, subprocess_env, positions):
    path = tmp_path / "causal_mha.py"
    path.write_text(POSITIONS)
    run = subprocess.run([sys.executable, "-c", "import kata; kata.cli(prog_name='kata')", "check", "causal_mha",
                          "--file", str(path)], env=subprocess_env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    text = run.stdout
    assert "  Efficiency, counted (the same on any machine); the time is indicative:" in text
    assert "    causal_mha at T = 16, 32, 64" in text
    f = positions["efficiency"]["functions"][0]
    mine, theirs = f["attempt"], f["reference"]
    rows = [" ".join(ln.split()) for ln in text.splitlines()]
    assert (f"Python lines yours {', '.join(map(str, mine['lines']))} as T: "
            f"{costs.rate_text(mine['lines_rate'])} lines a position") in rows
    assert f"reference {', '.join(map(str, theirs['lines']))} the same at every T" in rows
    assert any(r.startswith("peak memory yours ") and r.endswith("KiB as T squared") for r in rows)
    assert "(indicative: it depends on the machine)" in text
    assert "  Remark: `causal_mha` loops over the positions in Python: line 14" in text
    total = len(positions["checks"])
    assert text.index("Remark:") < text.index(f"{total}/{total} checks passed")


# ----------------------------------------------------------------------------- counting

def test_line_events_are_counted_in_one_file_once_per_run_and_stop_at_the_cap(tmp_path, monkeypatch):
    source = "def f(n):\n    total = 0\n    for i in range(n):\n        total += i\n    return sorted([total])\n"
    path = str(tmp_path / "counted.py")
    namespace: dict = {}
    exec(compile(source, path, "exec"), namespace)
    reply: dict = {}
    assert counting.lines(lambda: namespace["f"](10), path, reply) == [45]
    assert reply["lines"] == [[2, 1], [3, 11], [4, 10], [5, 1]] and "lines_capped" not in reply
    monkeypatch.setattr(counting, "LINE_CAP", 7)
    reply = {}
    counting.lines(lambda: namespace["f"](10), path, reply)
    assert reply["lines_capped"] is True and sum(n for _, n in reply["lines"]) == 7


def test_growth_is_read_from_how_each_step_grows():
    sizes = [32, 64, 128]
    assert efficiency.grows(sizes, [18, 18, 18]) == (costs.CONSTANT, 0.0)
    assert efficiency.grows(sizes, [3 * n + 11 for n in sizes]) == (costs.LINEAR, 3.0)
    assert efficiency.grows(sizes, [n * (n + 1) // 2 + 5 for n in sizes]) == (costs.QUADRATIC, 0.5)
    assert efficiency.grows(sizes, [2 * n ** 3 for n in sizes])[0] == costs.CUBIC
    assert efficiency.grows([128, 256, 512], [17, 27, 47]) == (costs.LINEAR, 0.0781)  # blocks of 64 and a rest
    assert efficiency.grows(sizes, [1000, 1500, 1800], tolerance=1024) == (costs.CONSTANT, 0.0)


def test_what_the_attempts_process_says_it_counted_is_read_with_care():
    done = Done.read({"id": 3, "value": 1, "lines": [[1, 2], ["x", 1], [2, -1], [True, 4], [5, 6, 7], [9, 3]],
                      "lines_capped": 1, "timed": -0.5, "peak": 12})
    assert done.lines == [[1, 2], [9, 3]] and done.lines_capped is False and done.timed is None and done.peak == 12
    assert Done.read({"timed": float("inf")}).timed is None and Done.read({"timed": 0.25}).timed == 0.25


# ----------------------------------------------------------------------------- the report and what shows it

def test_the_report_keeps_its_efficiency_and_an_older_report_has_none(positions):
    report = Report.from_dict(positions)
    assert report.efficiency is not None and report.to_dict()["efficiency"] == positions["efficiency"]
    old = Report.from_dict({k: v for k, v in positions.items() if k != "efficiency"})
    assert old.efficiency is None and old.to_dict()["efficiency"]["measured"] is False
    both = Report.combine([report, old])
    assert both.to_dict()["efficiency"]["remarks"] == [f"causal_mha: {r}" for r in positions["efficiency"]["remarks"]]


@pytest.fixture
def measured(kenv, monkeypatch, positions):
    """The stand-in grader, whose passing reports carry the efficiency of a real grading."""
    from practice import grading

    stand_in = grading.grade

    def grade_with_efficiency(kata, path, source=None, progress=None):
        report = stand_in(kata, path, source, progress)
        if report.passed:
            report.efficiency = costs.Efficiency.from_dict(positions["efficiency"])
        return report

    monkeypatch.setattr(grading, "grade", grade_with_efficiency)
    return kenv


def test_kata_compare_shows_the_last_gradings_efficiency_beside_the_reference(measured):
    kenv = measured
    assert kenv.run("start", "softmax").exit_code == 0
    assert "not measured in your last grading" in kenv.run("compare", "--yes").stdout
    kenv.write("softmax", "# PASS\n")
    kenv.run("check")
    out = kenv.run("compare", "--yes").stdout
    assert "Efficiency of your last grading, beside the reference's:" in out
    assert "reference" in out and "Remark: `causal_mha` loops over the positions" in out
    kenv.write("softmax", "# PASS\n# edited\n")
    said = " ".join(kenv.run("compare", "--yes").stdout.split())
    assert "(the file changed since: `kata check` measures it again)" in said


def test_kata_progress_lists_a_kata_passed_with_python_loops(measured):
    kenv = measured
    kenv.run("start", "softmax")
    kenv.write("softmax", "# PASS\n")
    kenv.run("check")
    figures = json.loads(kenv.run("progress", "--json").stdout)
    assert [(w["kata"], w["loops"]) for w in figures["passed_with_loops"]] == [
        ("softmax", ["`causal_mha` loops over the positions (line 14)"])]
    text = kenv.run("progress").stdout
    assert "Passed, but with Python loops the reference does not have" in text
    assert "`causal_mha` loops over the positions (line 14)" in text


def test_a_mock_report_gives_each_question_its_efficiency_and_a_strict_one_no_remark(measured, positions):
    kenv = measured
    r = kenv.run("mock", "--count", "1", "--seed", "5")
    name = r.stdout.split("Question 1: ")[1].split(":")[0]
    kenv.write(f"mock/1/{name}", "# PASS\n")
    checked = kenv.run("check").stdout
    assert "Efficiency, counted" in checked and "Remark: `causal_mha` loops over the positions" in checked
    report = kenv.run("submit", input="\n" * 10).stdout
    rate = costs.rate_text(positions["efficiency"]["functions"][0]["attempt"]["lines_rate"])
    assert (f"  causal_mha, efficiency: Python lines grow as T ({rate} lines a position), the reference's are the "
            f"same at every T; peak memory grows as T squared, the reference's grows as T squared") in report
    assert f"  {name}, remark: `causal_mha` loops over the positions in Python" in report

    r = kenv.run("mock", "--strict", "--count", "1", "--seed", "5")
    kenv.write(f"mock/2/{name}", "# PASS\n")
    checked = kenv.run("check").stdout
    assert "Efficiency, counted" in checked and "Remark" not in checked  # the figures, and no remark
    shown = json.loads(kenv.run("check", "--json").stdout)["efficiency"]
    assert without_time(shown) == without_time(dict(positions["efficiency"], remarks=[]))
    report = kenv.run("submit", input="\n" * 10).stdout
    assert "causal_mha, efficiency: Python lines grow as T" in report and "remark:" not in report

