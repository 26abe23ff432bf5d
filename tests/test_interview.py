"""The interview beyond the code: follow-up questions with model answers and numbers checked at
the prompt, the strict mock interview, readiness at a glance (`kata progress`) and the whole
history exported (`kata export`)."""
from __future__ import annotations

import csv
import io
import json
import re
import signal
import subprocess

from conftest import stand_in_command

from practice import catalogue


def picked(out: str) -> list[str]:
    return re.findall(r"Question \d+: (\w+):", out)


def test_every_follow_up_of_every_kata_has_its_model_answer(kenv):
    for k in catalogue.katas():
        r = kenv.run("followups", k.name, "--answers", "--yes")
        assert r.exit_code == 0, r.stderr
        shown = " ".join(r.stdout.split())
        assert len(k.follow_ups) >= 2 and shown.count("Model answer:") == len(k.follow_ups)
        for f in k.follow_ups:
            assert f.answer.strip() and " ".join(f.answer.split()) in shown, (k.name, f.question)
            assert not f.numeric or f"{f.number:,}".split(".")[0] in f.answer, (k.name, f.question)
    # Without --yes and without a terminal to ask on, no answer is shown.
    r = kenv.run("followups", "gqa", "--answers")
    assert r.exit_code == 1 and "Model answer" not in r.stdout and "--answers --yes" in r.stderr


def real(kenv, subprocess_env):
    """`kata` as a real process, in kenv's work folder, with the stand-in grader."""
    env = dict(subprocess_env, KATA_HOME=str(kenv.home))

    def kata(*args, typed=""):
        return subprocess.run(stand_in_command(kenv.root, *args), env=env, input=typed,
                              capture_output=True, text=True, timeout=60)
    return kata, env


def test_numbers_are_checked_and_ratings_move_the_weakest_in_real_processes(kenv, subprocess_env):
    kata, env = real(kenv, subprocess_env)
    before = json.loads(kenv.run("progress", "--json").stdout)
    assert before["weakest_katas"] == [] and before["weakest_follow_ups"] == []
    # param_count asks two numbers, exactly: the cache per token (2nd), the parameters saved (4th).
    r = kata("followups", "param_count", typed="\n131,072\np\n805306367\n")
    assert r.returncode == 0, r.stderr
    assert "Right: 131,072 bytes per token." in r.stdout
    assert "Not right: 805306367 is not the answer; recorded as missed" in r.stdout
    assert "Recorded: partly." in r.stdout and "805,306,368" not in r.stdout
    # Within a stated rounding: 31.31 GiB of logits is right, the uniform loss 11.77 nats is not.
    r = kata("followups", "cross_entropy", typed="\n31.31\n\nk\n11.77\n")
    assert "Right: 31.3125 GiB (answers within 0.005 count)." in r.stdout
    assert "Not right: 11.77 is not the answer" in r.stdout
    # Ctrl-C at the prompt leaves at once, with the status a shell gives an interrupted command.
    asking = subprocess.Popen(stand_in_command(kenv.root, "followups", "gqa"), env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert asking.stderr.read(len("     Your answer")) == b"     Your answer"
    asking.send_signal(signal.SIGINT)
    assert asking.wait(timeout=60) == 130 and b"How many bytes" in asking.stdout.read()
    ratings = kenv.db().execute("SELECT kata, question, rating, answer FROM ratings").fetchall()
    assert [tuple(x) for x in ratings] == [
        ("param_count", 2, "knew", "131,072"), ("param_count", 3, "partly", None),
        ("param_count", 4, "missed", "805306367"), ("cross_entropy", 2, "knew", "31.31"),
        ("cross_entropy", 4, "knew", None), ("cross_entropy", 5, "missed", "11.77")]
    after = json.loads(kata("progress", "--json").stdout)
    assert {w["kata"] for w in after["weakest_katas"]} == {"param_count", "cross_entropy"}
    assert [(w["kata"], w["question"], w["rating"]) for w in after["weakest_follow_ups"]] == [
        ("cross_entropy", 5, "missed"), ("param_count", 4, "missed"), ("param_count", 3, "partly")]


def test_a_number_with_its_unit_is_an_answer_and_input_that_ends_says_so(kenv, subprocess_env):
    kata, _ = real(kenv, subprocess_env)
    k = catalogue.get("param_count")
    assert len(k.follow_ups) == 4 and k.follow_ups[1].unit.startswith("bytes per token")
    r = kata("followups", "param_count", typed="k\n131072 bytes\n")  # ends at question 3
    assert r.returncode == 0, r.stderr
    assert "Right: 131,072 bytes per token." in r.stdout and "A number, please" not in r.stderr
    said = " ".join(r.stdout.split())
    assert "The input ended: this question and the next went unanswered, and nothing is recorded for them." in said
    assert k.follow_ups[3].question[:40] not in said  # the questions left are not listed
    assert "Rated 2 of 4 follow-ups of param_count" in said
    # 131,072 B and B/token are that unit too; KiB is another, asked again, not rated
    r = kata("followups", "param_count", typed="\n128 KiB\n131,072 B/token\n\n805,306,368 params\n")
    assert "In bytes per token, please" in r.stderr and "Right: 131,072 bytes per token." in r.stdout
    assert "Right: 805,306,368 parameters." in r.stdout and "The input ended" not in r.stdout
    r = kata("followups", "causal_mha", typed="\n64 GiB\n")
    assert "Right: 64 GiB." in r.stdout and "The input ended: this question went unanswered" in " ".join(r.stdout.split())
    ratings = kenv.db().execute("SELECT kata, question, rating, answer FROM ratings").fetchall()
    assert [tuple(x) for x in ratings] == [
        ("param_count", 1, "knew", None), ("param_count", 2, "knew", "131072 bytes"),
        ("param_count", 2, "knew", "131,072 B/token"), ("param_count", 4, "knew", "805,306,368 params"),
        ("causal_mha", 2, "knew", "64 GiB")]
    # no input at all asks nothing and lists every question, as without a terminal
    r = kata("followups", "param_count", typed="")
    assert "The input ended" not in r.stdout and k.follow_ups[3].question[:40] in " ".join(r.stdout.split())


def test_input_that_ends_in_a_mocks_follow_ups_leaves_the_next_questions_unasked(kenv):
    a, b = picked(kenv.run("mock", "--count", "2", "--seed", "5").stdout)
    r = kenv.run("submit", input="k\n")
    said = " ".join(r.stdout.split())
    assert f"the follow-ups of {b} were not asked either." in said, said
    assert catalogue.get(b).follow_ups[0].question[:40] not in said
    assert [tuple(x) for x in kenv.db().execute("SELECT kata, question, rating FROM ratings")] == [(a, 1, "knew")]


def test_a_strict_mock_in_real_processes_refuses_a_fourth_grading_and_a_hint(kenv, subprocess_env):
    kata, _ = real(kenv, subprocess_env)
    (name,) = picked(kata("mock", "--strict", "--seed", "3").stdout)
    attempt = kenv.home / "mock" / "1" / f"{name}.py"
    for n in (1, 2, 3):
        attempt.write_text(f"wrong {n}\n")
        r = kata("check", name)
        assert r.returncode == 1 and "✗ rows sum to 1" in r.stdout, r.stderr
        assert "Likely cause" not in r.stdout and "reproduce" not in r.stdout
        assert "sums to 0.74" not in r.stdout  # which checks fail, and nothing more
        assert f"Gradings used: {name} {n} of 3." in r.stdout
    attempt.write_text("# PASS\n")
    r = kata("check", name)
    assert r.returncode == 2 and "used its 3 gradings" in r.stderr
    refused = kata("hint")
    assert refused.returncode == 2 and "hints are not available during a strict mock" in refused.stderr


def test_a_strict_mock_counts_a_grading_only_when_the_code_changes_not_its_comments(kenv, subprocess_env):
    kata, _ = real(kenv, subprocess_env)
    (name,) = picked(kata("mock", "--strict", "--seed", "3").stdout)
    attempt = kenv.home / "mock" / "1" / f"{name}.py"
    attempt.write_text("def f(x):\n    return x + 1\n")
    assert f"Gradings used: {name} 1 of 3." in kata("check", name).stdout
    for same in ("# why: the shift\ndef f(x):  # the answer\n\n    return x + 1\n",
                 "def f(x):\r\n        return x+1   \r\n"):  # comments, blank lines, spaces, line ends
        attempt.write_text(same)
        r = kata("check", name)
        assert r.returncode == 1 and "✗ rows sum to 1" in r.stdout and f"Gradings used: {name} 1 of 3." in r.stdout
    attempt.write_text("def f(x):\n    return x + 2  # the same comment as before\n")
    assert f"Gradings used: {name} 2 of 3." in kata("check", name).stdout
    attempt.write_text("def f(x):\n    return (x + 2\n")  # does not tokenize: only its bytes say it changed
    assert f"Gradings used: {name} 3 of 3." in kata("check", name).stdout
    attempt.write_text("def f(x):\n    return (x + 2\n")
    assert f"Gradings used: {name} 3 of 3." in kata("check", name).stdout
    assert [r[0] for r in kenv.db().execute("SELECT command FROM gradings")] == ["check"] * 3


def test_a_strict_mock_shows_nothing_more_anywhere_and_takes_one_submit_a_question(kenv):
    r = kenv.run("mock", "--strict", "--count", "2", "--seed", "5")
    assert r.exit_code == 0 and "Strict mock interview #1" in r.stdout
    a, b = picked(r.stdout)
    for args in (["solution", a, "--yes"], ["compare", a, "--yes"],
                 ["followups", a, "--answers", "--yes"]):
        assert kenv.run(*args).exit_code == 2, args
    f = kenv.home / "mock" / "1" / f"{a}.py"
    f.write_text("wrong\n")
    assert kenv.run("check").exit_code == 1  # b is still its stub: graded, but no grading used
    assert kenv.run("check", a).exit_code == 1  # the same code again: no grading used either
    report = json.loads(kenv.run("check", "--json").stdout)
    assert report["diagnosis"] is None and report["bug"] is None and report["observed"] == []
    stub = "not implemented yet: still the stub"
    assert all(c["repro"] is None and (c["passed"] or c["message"] in ("", stub))
               for c in report["checks"])
    assert [n[0] for n in kenv.db().execute("SELECT command FROM gradings")] == ["check"]
    r = kenv.run("submit", a)  # one question submitted: the interview goes on
    assert r.exit_code == 1 and f"{a} used 1 of its 3 gradings. 1 question still open" in r.stdout
    assert kenv.run("submit", a).exit_code == 2 and kenv.run("check", a).exit_code == 2
    r = kenv.run("submit", input="k\n")  # the rest, then the follow-ups, rated
    assert r.exit_code == 1 and "Interview report: strict mock interview #1" in r.stdout
    row = next(ln for ln in r.stdout.splitlines() if f" {a} " in ln + " ")
    assert "1 of 3, then submitted" in row and "failed" in row
    assert "likely cause" not in r.stdout.lower()
    assert [tuple(x) for x in kenv.db().execute("SELECT kata, rating, mock_id FROM ratings")] == [
        (a, "knew", 1)]
    replay = kenv.run("history", a, "--attempt", "1").stdout
    assert "likely cause" not in replay and "sums to 0.74" not in replay and "grading 2" in replay


def test_progress_by_group_and_the_export_of_the_whole_history(kenv, subprocess_env):
    for name in ("softmax", "rope"):
        kenv.run("start", name)
        kenv.clock.advance(60)
        kenv.write(name, "# PASS\n")
        kenv.run("check")
        kenv.run("submit")
    kenv.run("start", "swiglu")
    kenv.run("hint")
    kenv.run("check")
    assert kenv.run("followups", "softmax", input="m\np\nk\n").exit_code == 0
    progress = json.loads(kenv.run("progress", "--json").stdout)
    assert [g["group"] for g in progress["groups"]] == list(catalogue.GROUPS)
    assert (progress["groups"][0]["passed_within_budget"], progress["groups"][0]["total"]) == (1, 7)
    assert [(w["kata"], w["reason"]) for w in progress["weakest_katas"]] == [
        ("softmax", "follow-ups partly known")]
    text = kenv.run("progress", env={"COLUMNS": "60"}).stdout
    assert all(f"{g}: " in text for g in catalogue.GROUPS)
    assert text.split("Weakest katas")[1].splitlines()[1].split()[0] == "softmax"
    assert max(len(ln) for ln in text.splitlines()) <= 60

    kata, _ = real(kenv, subprocess_env)
    exported = json.loads(kata("export", "--format", "json").stdout)
    table = kata("history").stdout.split("Time to pass")[0].splitlines()[2:]
    assert {(a["kata"], a["n"]) for a in exported["attempts"]} == {
        (ln.split()[0], int(ln.split()[1])) for ln in table if ln.strip()}
    assert len(exported["gradings"]) == 5 and exported["gradings"][0]["code"] == "# PASS\n"
    assert [h["kata"] for h in exported["hints"]] == ["swiglu"] and len(exported["ratings"]) == 3
    rows = list(csv.DictReader(io.StringIO(kata("export", "--format", "csv").stdout)))
    assert [r["record"] for r in rows].count("attempt") == 3 and rows[-1]["rating"] == "knew"
    assert kenv.run("export", "--format", "xml").exit_code == 2


def test_ctrl_c_at_a_spoiler_question_exits_130(kenv, subprocess_env):
    _, env = real(kenv, subprocess_env)
    for args in (("solution", "rope"), ("followups", "rope", "--answers")):
        asking = subprocess.Popen(stand_in_command(kenv.root, *args), env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        said = b""
        while b"[y/N]" not in said:
            chunk = asking.stderr.read1(4096)
            assert chunk, said
            said += chunk
        asking.send_signal(signal.SIGINT)
        assert asking.wait(timeout=60) == 130, args
        assert b"no answer" not in asking.stderr.read() and b"def rope" not in asking.stdout.read()
