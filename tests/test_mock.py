"""Mock interviews end to end: the pick, one clock, no hints, the report."""
from __future__ import annotations

import json
import os
import re

from practice import catalogue


def picked(out: str) -> list[str]:
    return re.findall(r"Question \d+: (\w+):", out)


def test_a_mock_interview_from_start_to_report(kenv):
    r = kenv.run("mock", "--count", "2", "--minutes", "30", "--seed", "7")
    assert r.exit_code == 0, r.stderr
    names = picked(r.stdout)
    assert len(names) == 2 and len(set(names)) == 2
    assert "30:00 on one clock" in r.stdout and "seed 7" in r.stdout
    files = [kenv.home / "mock" / "1" / f"{n}.py" for n in names]
    for n, f in zip(names, files):
        assert f"QUESTION {n}" in r.stdout and str(f) in r.stdout
        assert "raise NotImplementedError" in f.read_text()

    # Hints, solutions, comparisons and pauses are refused while it runs, as usage errors.
    for args in (["hint"], ["hint", names[0]], ["solution", names[0], "--yes"],
                 ["compare", names[0], "--yes"], ["pause"]):
        res = kenv.run(*args)
        assert res.exit_code == 2, args
        assert "mock interview" in res.stderr
    st = kenv.run("status").stdout
    assert "Mock interview #1" in st and "30:00 left" in st

    # Work: the first kata passes after two checks, the second is left failing.
    kenv.clock.advance(300)
    files[0].write_text("wrong\n")
    assert kenv.run("check", names[0]).exit_code == 1
    kenv.clock.advance(300)
    files[0].write_text("# PASS\n")
    assert kenv.run("check", names[0]).exit_code == 0
    files[1].write_text("half\n")
    kenv.clock.advance(120)

    r = kenv.run("submit")
    assert r.exit_code == 1  # not everything passed
    out = r.stdout
    assert "Interview report" in out and "Time used: 12:00 of 30:00" in out
    row0 = next(ln for ln in out.splitlines() if f" {names[0]} " in ln + " " and "passed" in ln)
    assert "10:00" in row0 and "3 times" in row0  # graded twice, then the final grading
    row1 = next(ln for ln in out.splitlines() if f"{names[1]} " in ln and "failed" in ln)
    assert "1/3" in row1
    assert f"{names[1]} still fails:\n    - rows sum to 1\n    - agrees with the reference" in out
    assert "Follow-up questions to answer aloud" in out
    for n in names:
        assert catalogue.get(n).follow_ups[0].question[:30] in out.replace("\n     ", " ")

    # It is over: hints work again, history shows mock attempts, files are kept.
    assert kenv.run("hint", names[0]).exit_code == 0
    hist = kenv.run("history").stdout
    assert sum(1 for ln in hist.splitlines() if " mock " in ln) == 2
    assert all(f.exists() for f in files)
    assert "No kata in progress" in kenv.run("status").stdout


def test_the_same_seed_picks_the_same_katas(kenv, tmp_path, monkeypatch):
    first = picked(kenv.run("mock", "--count", "3", "--seed", "42").stdout)
    monkeypatch.setenv("KATA_HOME", str(tmp_path / "other"))
    again = picked(kenv.run("mock", "--count", "3", "--seed", "42").stdout)
    assert first == again and len(first) == 3
    seen = set()
    for seed in range(12):
        monkeypatch.setenv("KATA_HOME", str(tmp_path / f"s{seed}"))
        seen.add(tuple(picked(kenv.run("mock", "--count", "3", "--seed", str(seed)).stdout)))
    assert len(seen) > 1  # the seed matters among equally needed katas


def test_mock_picks_what_the_user_most_needs(kenv):
    # Everything passed quickly except rope, which failed: never-tried first, then rope.
    for k in catalogue.katas():
        if k.name == "rope":
            continue
        kenv.run("start", k.name)
        kenv.write(k.name, "# PASS\n")
        kenv.run("submit")
    kenv.run("start", "rope")
    kenv.run("submit")  # fails
    kenv.clock.advance(2 * 86400)
    r = kenv.run("mock")
    assert picked(r.stdout) == ["rope"] and "(the katas you most need)" in r.stdout


def test_any_command_after_the_deadline_ends_the_mock(kenv):
    r = kenv.run("mock", "--minutes", "20", "--seed", "1")
    name = picked(r.stdout)[0]
    f = kenv.home / "mock" / "1" / f"{name}.py"
    kenv.clock.advance(5 * 60)
    f.write_text("# PASS\n")
    os.utime(f, (kenv.clock.t, kenv.clock.t))
    kenv.clock.advance(60 * 60)
    r = kenv.run("list")
    assert r.exit_code == 0
    assert "time is up" in r.stdout and "Interview report" in r.stdout
    # Graded only at the end, so it counts as done at the deadline, not at some later hour.
    assert "Time used: 20:00 of 20:00, ended at the deadline" in r.stdout
    row = next(ln for ln in r.stdout.splitlines() if f"{name} " in ln and "once" in ln)
    assert "passed" in row and "20:00" in row  # graded once, at the end
    assert "1:05:00" not in r.stdout
    assert kenv.run("hint", name).exit_code == 0  # it has ended


def test_edits_after_the_deadline_do_not_count(kenv):
    r = kenv.run("mock", "--minutes", "10", "--seed", "1")
    name = picked(r.stdout)[0]
    f = kenv.home / "mock" / "1" / f"{name}.py"
    kenv.clock.advance(200)
    f.write_text("wrong\n")
    kenv.run("check")
    kenv.clock.advance(3600)
    f.write_text("# PASS\n")
    late = kenv.clock.t
    os.utime(f, (late, late))
    r = kenv.run("status")
    assert "edited after the deadline" in r.stdout
    assert "failed 1/3" in r.stdout
    assert "Time used: 10:00 of 10:00, ended at the deadline" in r.stdout
    con = kenv.db()
    assert con.execute("SELECT passed FROM attempts").fetchone()[0] == 0


def test_check_json_after_the_deadline_keeps_stdout_clean(kenv):
    import json

    r = kenv.run("mock", "--minutes", "10", "--seed", "1")
    name = picked(r.stdout)[0]
    kenv.clock.advance(3600)
    r = kenv.run("check", name, "--json")
    json.loads(r.stdout)  # only the object; the interview report went to stderr
    assert "Interview report" in r.stderr


def test_mock_pauses_practice_and_refuses_a_second_mock(kenv):
    kenv.run("start", "softmax")
    kenv.clock.advance(40)
    r = kenv.run("mock", "--seed", "2")
    assert "Paused softmax at 0:40" in r.stdout
    r = kenv.run("mock")
    assert r.exit_code == 1 and "already running" in r.stderr
    kenv.run("submit")
    kenv.clock.advance(999)
    assert "0:40 used" in kenv.run("status").stdout


def test_a_mock_interview_in_real_processes(tmp_path, subprocess_env):
    import subprocess
    from pathlib import Path

    from conftest import make_tree, stand_in_command

    root = make_tree(tmp_path / "tree")
    home = Path(subprocess_env["KATA_HOME"])

    def kata(*args):
        return subprocess.run(stand_in_command(root, *args), env=subprocess_env,
                              capture_output=True, text=True, timeout=60)

    r = kata("mock", "--seed", "11", "--minutes", "45")
    assert r.returncode == 0, r.stderr
    (name,) = picked(r.stdout)
    f = home / "mock" / "1" / f"{name}.py"
    assert str(f) in r.stdout
    assert kata("hint").returncode == 2
    assert re.search(r"4[45]:\d\d left of 45:00", kata("status").stdout)  # real seconds pass
    f.write_text("# PASS\n")
    r = kata("check")
    assert r.returncode == 0 and "3/3 checks passed" in r.stdout
    r = kata("submit")
    assert r.returncode == 0, r.stderr
    assert "Interview report" in r.stdout and "Follow-up questions to answer aloud" in r.stdout
    assert kata("hint", name).returncode == 0


# -- one clock, every question ---------------------------------------------------------------
def two_question_mock(kenv) -> list:
    r = kenv.run("mock", "--count", "2", "--seed", "5")
    names = picked(r.stdout)
    return names, [kenv.home / "mock" / "1" / f"{n}.py" for n in names]


def test_bare_check_in_a_mock_grades_every_question(kenv):
    (a, b), files = two_question_mock(kenv)
    files[0].write_text("# PASS\n")
    r = kenv.run("check")
    assert r.exit_code == 1  # one question still fails
    assert [c[0] for c in kenv.calls] == [a, b]
    assert f"{a} (mock interview #1)" in r.stdout and f"{b} (mock interview #1)" in r.stdout
    assert "3/3 checks passed" in r.stdout and "not implemented yet" in r.stdout
    r = kenv.run("check", "--json")
    report = json.loads(r.stdout)
    assert report["kata"] == f"{a},{b}" and report["passed"] is False
    assert [x["kata"] for x in report["reports"]] == [a, b] and report["recorded"] is True
    assert report["checks"][0]["name"].startswith(f"{a}: ")
    files[1].write_text("# PASS\n")
    assert kenv.run("check").exit_code == 0


def test_solving_one_question_does_not_say_the_interview_clock_stopped(kenv):
    (a, b), files = two_question_mock(kenv)
    kenv.clock.advance(300)
    files[0].write_text("# PASS\n")
    r = kenv.run("check", a)
    assert "clock stopped" not in r.stdout and "Solved in" not in r.stdout
    assert "Interview clock: 5:00 used" in r.stdout
    assert f"{a} passes every check (1 of 2 questions does)" in r.stdout
    kenv.clock.advance(60)
    assert "6:00 used" in kenv.run("status").stdout  # the interview clock did run on
    files[1].write_text("# PASS\n")
    r = kenv.run("check", b)
    assert "Every question passes: the interview clock is stopped." in r.stdout
    kenv.clock.advance(600)
    assert "6:00 used" in kenv.run("status").stdout


def test_the_interview_clock_follows_the_budgets_of_what_it_picked(kenv):
    r = kenv.run("mock", "--count", "2", "--seed", "3")
    names = picked(r.stdout)
    from practice import clock

    total = sum(catalogue.get(n).minutes for n in names)
    assert f"{clock.fmt(60 * total)} on one clock" in r.stdout
    for n in names:
        assert f"{n}: {catalogue.get(n).title} ({catalogue.get(n).minutes} min)" in r.stdout
    kenv.run("submit")
    r = kenv.run("mock", "--count", "2", "--seed", "3", "--minutes", "30")
    assert "30:00 on one clock" in r.stdout


def test_a_seed_repeats_the_same_pick_whatever_the_history(kenv, tmp_path, monkeypatch):
    first = picked(kenv.run("mock", "--count", "3", "--seed", "42").stdout)
    kenv.run("submit")
    for k in catalogue.katas():  # a history that changes what is most needed
        kenv.run("start", k.name)
        if k.name in first:
            kenv.write(k.name, "# PASS\n")
        kenv.run("submit")
    kenv.clock.advance(3 * 86400)
    r = kenv.run("mock", "--count", "3", "--seed", "42")
    assert picked(r.stdout) == first and "(seed 42)" in r.stdout
    kenv.run("submit")
    need = picked(kenv.run("mock", "--count", "3").stdout)
    assert not set(need) & set(first)  # without a seed: what failed comes first


def test_the_report_of_an_untouched_question_says_not_implemented_yet(kenv):
    (a, b), files = two_question_mock(kenv)
    files[0].write_text("# PASS\n")
    out = kenv.run("submit").stdout
    row = next(ln for ln in out.splitlines() if f" {b} " in ln + " " and "graded" not in ln)
    assert "not implemented" in row
    assert f"  {b}: not implemented yet" in out
    assert "- implemented" not in out and f"{b} still fails" not in out


def test_after_a_mock_the_solution_is_shown_without_asking(kenv):
    (a, b), files = two_question_mock(kenv)
    kenv.run("submit")
    r = kenv.run("solution", b)  # no terminal, no --yes: it must not ask
    assert r.exit_code == 0 and "# PASS" in r.stdout and "time is not up" not in r.stderr
