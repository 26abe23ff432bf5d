"""Every command through click's CliRunner, with a stand-in grader and a hand-moved clock."""
from __future__ import annotations

import json
import re
import sqlite3
import sys

import click
import pytest

import kata
from practice import catalogue


def counts(kenv) -> dict:
    if not (kenv.home / "kata.sqlite3").exists():
        return {}
    con = kenv.db()
    out = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
           for t in ("attempts", "gradings", "events", "mocks")}
    con.close()
    return out


# -- help and errors ---------------------------------------------------------------------
def test_every_command_and_option_has_help():
    ctx = click.Context(kata.cli)
    for name in kata.cli.list_commands(ctx):
        cmd = kata.cli.get_command(ctx, name)
        assert cmd.help and cmd.help.strip(), name
        for p in cmd.params:
            if isinstance(p, click.Option) and p.name != "help":
                assert p.help, f"kata {name} {p.opts[0]} has no help"
    assert set(kata.cli.list_commands(ctx)) >= {
        "list", "start", "check", "status", "pause", "resume", "watch", "submit", "mock",
        "hint", "solution", "compare", "history", "reset"}


def test_the_command_list_shows_each_help_line_whole(kenv):
    r = kenv.run("--help", env={"COLUMNS": "80"})
    commands = r.stdout.split("Commands:")[1]
    assert "..." not in commands
    assert len(commands.strip().splitlines()) == len(kata.cli.list_commands(click.Context(kata.cli)))


def test_help_runs_for_every_command(kenv):
    for name in kata.cli.list_commands(click.Context(kata.cli)):
        r = kenv.run(name, "--help")
        assert r.exit_code == 0, name
        assert "Usage: kata " + name in r.stdout


def _every_command() -> list[list[str]]:
    ctx = click.Context(kata.cli)
    names = [[n] for n in kata.cli.list_commands(ctx)]
    dev = kata.cli.get_command(ctx, "dev")
    return names + [["dev", n] for n in dev.list_commands(click.Context(dev))]


def test_kata_help_command_is_the_commands_own_help_with_examples(kenv):
    assert kenv.run("help").stdout == kenv.run("--help").stdout
    for words in _every_command():
        own = kenv.run(*words, "--help").stdout
        assert kenv.run("help", *words).stdout == own, words
        if words not in (["status"], ["dev"]):  # nothing to vary in `kata status`; dev lists two commands
            assert "Example" in own, words
    wrong = kenv.run("help", "chek")
    assert wrong.exit_code == 2 and "Did you mean 'check'?" in wrong.stderr
    assert kenv.run("help", "dev", "nwe").exit_code == 2


def test_help_says_what_a_command_does_by_default_and_before_showing_a_reference(kenv):
    def said(*words):
        return " ".join(kenv.run(*words, "--help").stdout.split())

    assert "NAME defaults to the kata in progress: the one whose clock runs" in said("pause")
    assert "NAME defaults to the kata in progress" in said("resume") and "NAME defaults" in said("hint")
    assert "Asks first (y/N) while it would spoil an attempt: when you have never tried NAME" in said("solution")
    assert "else the last attempt (NAME's, or the one you worked on last)" in said("history")


@pytest.mark.parametrize("args", [
    ["start", "causal_mah"], ["check", "sofmax"], ["hint", "causal_mah"],
    ["solution", "sofmax"], ["reset", "causal_mah"], ["history", "sofmax"],
])
def test_unknown_kata_is_a_usage_error_with_did_you_mean(kenv, args):
    r = kenv.run(*args)
    assert r.exit_code == 2
    assert "Did you mean" in r.stderr
    assert "Traceback" not in r.stderr + r.stdout


def test_wrong_command_lines_exit_2(kenv):
    assert kenv.run("start").exit_code == 2
    assert kenv.run("start", "softmax", "--minutes", "0").exit_code == 2
    assert kenv.run("mock", "--count", "0").exit_code == 2
    assert kenv.run("history", "--attempt", "1").exit_code == 2
    assert kenv.run("frobnicate").exit_code == 2


# -- list ---------------------------------------------------------------------------------
def test_list_shows_every_kata_one_a_line_name_first(kenv):
    r = kenv.run("list")
    assert r.exit_code == 0
    lines = r.stdout.strip().splitlines()
    names = catalogue.names()
    assert lines[0].split()[0] == "kata"  # the header
    assert [ln.split()[0] for ln in lines[1:]] == names
    assert all("not started" in ln for ln in lines[1:])
    assert not any(ch in r.stdout for ch in "│┃|+═─")


def test_list_gains_status_best_time_and_last_result(kenv):
    kenv.run("start", "softmax")
    kenv.run("start", "causal_mha")
    kenv.clock.advance(125)
    kenv.write("causal_mha", "def f(): return 1  # PASS\n")
    kenv.run("check", "causal_mha")
    kenv.run("submit", "causal_mha")
    rows = {ln.split()[0]: ln for ln in kenv.run("list").stdout.splitlines()[1:]}
    assert "in progress" in rows["softmax"]
    assert "passed" in rows["causal_mha"] and "2:05" in rows["causal_mha"]
    assert "passed 3/3" in rows["causal_mha"]
    assert "not started" in rows["gqa"]


# -- start ---------------------------------------------------------------------------------
def test_start_copies_the_stub_prints_question_path_and_starts_the_clock(kenv):
    r = kenv.run("start", "causal_mha")
    assert r.exit_code == 0
    path = kenv.attempt("causal_mha")
    assert path.read_text() == (kenv.root / "katas" / "causal_mha.py").read_text()
    assert "QUESTION causal_mha" in r.stdout
    assert str(path) in r.stdout
    assert "40:00 left" in r.stdout  # the kata's own budget
    con = kenv.db()
    a = con.execute("SELECT * FROM attempts").fetchone()
    assert a["kata"] == "causal_mha" and a["budget"] == 40 * 60 and a["clock"] == "running"


def test_start_again_resumes_and_says_so_and_never_overwrites(kenv):
    kenv.run("start", "softmax", "--minutes", "7")
    kenv.write("softmax", "my work\n")
    kenv.clock.advance(60)
    r = kenv.run("start", "softmax")
    assert "Resuming" in r.stdout
    assert kenv.attempt("softmax").read_text() == "my work\n"
    assert "1:00 used, 6:00 left of 7:00" in r.stdout
    assert counts(kenv)["attempts"] == 1


def test_start_of_another_kata_pauses_the_running_one(kenv):
    kenv.run("start", "softmax")
    kenv.clock.advance(30)
    r = kenv.run("start", "rope")
    assert "Paused softmax at 0:30" in r.stdout
    kenv.clock.advance(600)
    r = kenv.run("resume", "softmax")
    assert "0:30 used" in r.stdout
    assert "Paused rope at 10:00" in r.stdout


def test_start_fresh_archives_the_old_attempt_and_records_a_restart(kenv):
    kenv.run("start", "softmax")
    kenv.write("softmax", "first try\n")
    kenv.clock.advance(90)
    r = kenv.run("start", "softmax", "--fresh")
    assert r.exit_code == 0 and "Archived the previous attempt" in r.stdout
    assert "raise NotImplementedError" in kenv.attempt("softmax").read_text()
    archived = list((kenv.home / "archive" / "softmax").glob("*.py"))
    assert [p.read_text() for p in archived] == ["first try\n"]
    con = kenv.db()
    old, new = con.execute("SELECT * FROM attempts ORDER BY id").fetchall()
    assert old["state"] == "archived" and old["time_used"] == 90 and old["archive"] == archived[0].relative_to(kenv.home).as_posix()
    assert new["restarted_from"] == old["id"] and new["elapsed"] == 0
    assert "a restart" in kenv.run("history", "softmax").stdout


def test_start_edit_opens_the_editor(kenv, tmp_path):
    log = tmp_path / "editor.log"
    script = tmp_path / "editor.py"
    script.write_text(f"import sys; open({str(log)!r}, 'a').write(sys.argv[1])\n")
    r = kenv.run("start", "rms_norm", "--edit", env={"EDITOR": f"{sys.executable} {script}",
                                                      "VISUAL": ""})
    assert r.exit_code == 0, r.stderr
    assert log.read_text() == str(kenv.attempt("rms_norm"))


def test_start_refused_during_a_mock(kenv):
    kenv.run("mock", "--seed", "1")
    r = kenv.run("start", "softmax")
    assert r.exit_code == 1 and "mock interview is running" in r.stderr


# -- check --------------------------------------------------------------------------------
def test_check_file_grades_that_file_and_changes_nothing(kenv, tmp_path):
    kenv.run("start", "softmax")
    before = counts(kenv)
    f = tmp_path / "anything.py"
    f.write_text("x = 1  # PASS\n")
    r = kenv.run("check", "softmax", "--file", str(f))
    assert r.exit_code == 0
    assert kenv.calls[-1] == ("softmax", str(f))
    assert counts(kenv) == before


def test_check_file_takes_the_name_from_the_file(kenv, tmp_path):
    f = tmp_path / "causal_mask.py"
    f.write_text("def f(): pass\n")
    r = kenv.run("check", "--file", str(f))
    assert r.exit_code == 1
    assert kenv.calls[-1] == ("causal_mask", str(f))
    assert not (kenv.home / "kata.sqlite3").exists()  # no state at all


def test_check_file_usage_errors(kenv, tmp_path):
    r = kenv.run("check", "--file", str(tmp_path / "missing.py"))
    assert r.exit_code == 2
    f = tmp_path / "mine.py"
    f.write_text("x = 1\n")
    r = kenv.run("check", "--file", str(f))
    assert r.exit_code == 2 and "kata check NAME --file" in r.stderr
    r = kenv.run("check", "sofmax", "--file", str(f))
    assert r.exit_code == 2 and "softmax" in r.stderr


def test_check_json_prints_exactly_one_object_on_stdout(kenv, tmp_path):
    kenv.run("start", "softmax")
    r = kenv.run("check", "--json")
    assert r.exit_code == 1
    report = json.loads(r.stdout)
    assert report["kata"] == "softmax" and report["passed"] is False
    assert report["recorded"] is True
    assert "not implemented yet" in report["checks"][0]["message"]
    assert "used" in r.stderr  # the clock goes to stderr
    f = tmp_path / "softmax.py"
    f.write_text("# PASS\n")
    r = kenv.run("check", "--file", str(f), "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["passed"] is True
    assert json.loads(r.stdout)["recorded"] is False  # --file records nothing


def test_check_records_the_code_it_graded_and_shows_the_time(kenv):
    kenv.run("start", "softmax")
    kenv.clock.advance(61)
    kenv.write("softmax", "def softmax(z): return z\n")
    r = kenv.run("check")
    assert r.exit_code == 1
    assert "1:01 used, 8:59 left of 10:00" in r.stdout
    con = kenv.db()
    c = con.execute("SELECT * FROM gradings").fetchone()
    assert c["code"] == b"def softmax(z): return z\n" and c["clock"] == 61 and c["passed"] == 0
    assert json.loads(c["report"])["checks"][1]["name"] == "rows sum to 1"


def test_check_renders_failures_repro_and_diagnosis(kenv):
    kenv.run("start", "softmax")
    kenv.write("softmax", "def softmax(z): return z\n")
    out = kenv.run("check").stdout
    lines = out.splitlines()
    assert any(ln.strip() == "✓ output shapes" for ln in lines)
    assert any(ln.strip() == "✗ rows sum to 1" for ln in lines)
    i = next(i for i, ln in enumerate(lines) if ln.strip() == "✗ rows sum to 1")
    assert lines[i + 1].startswith("      weights row 3 sums to 0.74")
    assert any(ln.startswith("          x = np.ones((1, 4, 8))") for ln in lines)
    assert "Likely cause: future weights zeroed" in out
    assert "1/3 checks passed" in out


def test_check_of_an_untouched_stub_says_not_implemented_once(kenv):
    kenv.run("start", "softmax")
    out = kenv.run("check").stdout
    assert out.count("not implemented yet") == 1
    assert "✗" not in out and "0/1" not in out


def test_check_overtime(kenv):
    kenv.run("start", "softmax", "--minutes", "5")
    kenv.clock.advance(5 * 60 + 75)
    assert "1:15 over the 5:00 budget" in kenv.run("check").stdout
    kenv.write("softmax", "# PASS\n")
    kenv.run("check")
    r = kenv.run("submit")
    assert "over time" in r.stdout
    con = kenv.db()
    assert con.execute("SELECT overtime FROM attempts").fetchone()[0] == 1


def test_check_nothing_to_grade_is_exit_2(kenv):
    r = kenv.run("check")
    assert r.exit_code == 2 and "nothing to grade" in r.stderr
    r = kenv.run("check", "gqa")
    assert r.exit_code == 2 and "kata start gqa" in r.stderr
    kenv.run("start", "gqa")
    kenv.attempt("gqa").unlink()  # the user deleted it
    r = kenv.run("check", "gqa")
    assert r.exit_code == 2 and "missing" in r.stderr


def test_check_names_the_attempt_or_the_open_session(kenv):
    kenv.run("start", "softmax")
    kenv.run("start", "rope")
    kenv.run("check")
    assert kenv.calls[-1] == ("rope", str(kenv.attempt("rope")))
    kenv.run("check", "softmax")
    assert kenv.calls[-1] == ("softmax", str(kenv.attempt("softmax")))


def test_passing_stops_the_clock_and_failing_again_restarts_it(kenv):
    kenv.run("start", "softmax")
    kenv.clock.advance(100)
    kenv.write("softmax", "# PASS\n")
    r = kenv.run("check")
    assert r.exit_code == 0 and "Solved in 1:40" in r.stdout
    kenv.clock.advance(500)
    assert "1:40 used" in kenv.run("status").stdout
    kenv.write("softmax", "broken\n")
    r = kenv.run("check")
    assert "clock runs again" in r.stdout
    kenv.clock.advance(20)
    assert "2:00 used" in kenv.run("status").stdout


# -- status, pause, resume ----------------------------------------------------------------
def test_status_pause_resume(kenv):
    assert "No kata in progress" in kenv.run("status").stdout
    kenv.run("start", "softmax")
    kenv.clock.advance(42)
    r = kenv.run("pause")
    assert r.exit_code == 0 and "Paused softmax at 0:42" in r.stdout
    assert kenv.run("pause").exit_code == 1  # already paused: a clear error
    kenv.clock.advance(3600)
    st = kenv.run("status").stdout
    assert "0:42 used" in st and "(paused)" in st
    r = kenv.run("resume")
    assert "Resumed softmax" in r.stdout
    kenv.clock.advance(8)
    assert "0:50 used" in kenv.run("status").stdout
    con = kenv.db()
    kinds = [r[0] for r in con.execute("SELECT kind FROM events ORDER BY id")]
    assert kinds.count("pause") == 1 and kinds.count("unpause") == 1


@pytest.mark.parametrize("args", [["check"], ["hint"], ["watch"], ["compare"], ["submit"],
                                  ["pause"], ["resume"], ["pause", "softmax"],
                                  ["resume", "softmax"], ["submit", "softmax"]])
def test_nothing_in_progress_is_a_usage_error_for_every_command(kenv, args):
    r = kenv.run(*args)
    assert r.exit_code == 2, (args, r.stderr)
    assert "in progress" in r.stderr or "nothing to grade" in r.stderr


def test_pause_takes_a_kata_name_as_resume_does(kenv):
    kenv.run("start", "softmax")
    kenv.clock.advance(12)
    r = kenv.run("pause", "softmax")
    assert r.exit_code == 0 and "Paused softmax at 0:12" in r.stdout
    r = kenv.run("pause", "softmax")
    assert r.exit_code == 1 and "already paused" in r.stderr
    assert kenv.run("pause", "rope").exit_code == 2  # not in progress
    assert kenv.run("pause", "sofmax").exit_code == 2  # not a kata
    assert "Resumed softmax" in kenv.run("resume", "softmax").stdout


# -- hints ----------------------------------------------------------------------------------
def test_hints_come_one_at_a_time_and_are_recorded(kenv):
    k = catalogue.get("causal_mha")
    kenv.run("start", "causal_mha")
    for i, h in enumerate(k.hints, 1):
        r = kenv.run("hint")
        assert f"Hint {i} of {len(k.hints)}" in r.stdout and h in r.stdout
    r = kenv.run("hint")
    assert "No more hints" in r.stdout
    con = kenv.db()
    assert con.execute("SELECT hints FROM attempts").fetchone()[0] == len(k.hints)
    assert f"hints:  {len(k.hints)} of {len(k.hints)}" in kenv.run("status").stdout


def test_hint_without_an_attempt_needs_a_name(kenv):
    assert kenv.run("hint").exit_code == 2
    r = kenv.run("hint", "softmax")
    assert r.exit_code == 0 and "Hint 1" in r.stdout


# -- submit ---------------------------------------------------------------------------------
def test_submit_records_the_result_and_shows_follow_ups(kenv):
    k = catalogue.get("softmax")
    kenv.run("start", "softmax")
    kenv.run("hint")
    kenv.clock.advance(200)
    kenv.write("softmax", "# PASS\n")
    r = kenv.run("submit")
    assert r.exit_code == 0
    assert "Recorded: passed in 3:20 of 10:00; graded once, 1 hint, solution not viewed" in r.stdout
    for f in k.follow_ups:
        assert f.question[:40] in r.stdout.replace("\n     ", " ")
    con = kenv.db()
    a = con.execute("SELECT * FROM attempts").fetchone()
    assert (a["state"], a["passed"], a["time_used"], a["hints"]) == ("submitted", 1, 200, 1)
    assert kenv.run("submit").exit_code == 2  # nothing in progress any more
    assert "No kata in progress" in kenv.run("status").stdout


def test_submit_of_a_failing_attempt_exits_1_and_records_it(kenv):
    kenv.run("start", "softmax")
    r = kenv.run("submit")
    assert r.exit_code == 1 and "Recorded: not passed" in r.stdout
    con = kenv.db()
    assert con.execute("SELECT passed FROM attempts").fetchone()[0] == 0


# -- solution and compare -------------------------------------------------------------------
def test_solution_asks_first_then_shows_and_records(kenv):
    kenv.run("start", "softmax")
    r = kenv.run("solution", "softmax", input="n\n")
    assert r.exit_code == 0 and "Not shown" in r.stdout and "# PASS" not in r.stdout
    r = kenv.run("solution", "softmax")  # no answer at all
    assert r.exit_code == 1 and "--yes" in r.stderr
    r = kenv.run("solution", "softmax", input="y\n")
    assert r.exit_code == 0 and "return x * 1.0  # PASS" in r.stdout
    con = kenv.db()
    assert con.execute("SELECT solution_viewed FROM attempts").fetchone()[0] == 1
    assert "solution viewed" in kenv.run("submit").stdout


def test_solution_needs_no_confirmation_once_passed_or_time_is_up(kenv):
    kenv.run("start", "softmax", "--minutes", "1")
    kenv.clock.advance(61)
    r = kenv.run("solution", "softmax")
    assert r.exit_code == 0 and "# PASS" in r.stdout
    r = kenv.run("solution", "rope", "--yes")
    assert r.exit_code == 0 and "def rope" in r.stdout


def test_compare_side_by_side_plain_without_a_terminal(kenv):
    kenv.run("start", "rope")
    kenv.write("rope", kenv.attempt("rope").read_text().replace(
        "raise NotImplementedError", "return x + 1  # mine"))
    r = kenv.run("compare", "--yes", "--width", "120", env={"NO_COLOR": "1"})
    assert r.exit_code == 0, r.stderr
    assert "\x1b[" not in r.stdout
    rows = r.stdout.splitlines()
    # equal lines face each other; the changed line sits beside the reference's
    same = [ln for ln in rows if ln.count('"""Shapes: (T, d) -> (T, d)."""') == 2]
    assert len(same) == 1
    changed = [ln for ln in rows if "return x + 1" in ln]  # code only: the comments left out
    assert len(changed) == 1 and "return x * 1.0" in changed[0] and "~" in changed[0]
    assert "# mine" not in r.stdout and "# PASS" not in r.stdout
    con = kenv.db()
    assert con.execute("SELECT count(*) FROM events WHERE kind = 'compare'").fetchone()[0] == 1


def test_compare_below_its_width_prints_each_line_of_the_diff_whole(kenv):
    kenv.run("start", "rope")
    kenv.write("rope", "x = '" + "a" * 150 + "'\n")
    r = kenv.run("compare", "rope", "--yes", "--width", "80")
    assert r.stdout.startswith("--- yours: rope.py")  # too narrow for side by side
    assert "-x = '" + "a" * 150 + "'" in r.stdout.splitlines()  # one line, not cut at 80


def test_compare_needs_an_attempt(kenv):
    r = kenv.run("compare", "rope", "--yes")
    assert r.exit_code == 2 and "kata start rope" in r.stderr


# -- reset ----------------------------------------------------------------------------------
def test_reset_archives_and_puts_the_stub_back(kenv):
    kenv.run("start", "swiglu")
    kenv.write("swiglu", "half done\n")
    kenv.clock.advance(30)
    r = kenv.run("reset", "swiglu")
    assert r.exit_code == 0 and "Archived" in r.stdout
    assert "raise NotImplementedError" in kenv.attempt("swiglu").read_text()
    archived = list((kenv.home / "archive" / "swiglu").glob("*.py"))
    assert [p.read_text() for p in archived] == ["half done\n"]
    con = kenv.db()
    a = con.execute("SELECT * FROM attempts").fetchone()
    assert a["state"] == "archived" and a["end_reason"] == "reset" and a["time_used"] == 30
    hist = kenv.run("history", "swiglu").stdout
    assert "abandoned" in hist and "archive" in hist
    r = kenv.run("start", "swiglu")
    assert "Clock started" in r.stdout and "Resuming" not in r.stdout


# -- history --------------------------------------------------------------------------------
def test_history_lists_attempts_best_times_and_what_next(kenv):
    kenv.run("start", "softmax")
    kenv.clock.advance(300)
    kenv.write("softmax", "# PASS\n")
    kenv.run("submit")
    kenv.clock.advance(86400)
    kenv.run("start", "softmax")
    kenv.clock.advance(100)
    kenv.write("softmax", "# PASS again\n")
    kenv.run("submit")
    r = kenv.run("history")
    assert r.exit_code == 0
    out = r.stdout
    attempt_rows = [ln for ln in out.splitlines() if ln.startswith("softmax ")]
    assert len(attempt_rows) >= 2
    assert "Best time per kata" in out and "1:40" in out.split("Best time per kata")[1]
    nxt = out.split("What to practise next")[1].strip().splitlines()
    assert nxt[0].split()[0] == "causal_mask"  # never tried comes first, softmax is not due


def test_history_replays_an_attempt_check_by_check(kenv):
    kenv.run("start", "softmax")
    kenv.clock.advance(10)
    kenv.run("check")
    kenv.write("softmax", "def softmax(z):\n    return z\n")
    kenv.clock.advance(50)
    kenv.run("check")
    kenv.run("hint")
    kenv.write("softmax", "def softmax(z):\n    return z  # PASS\n")
    kenv.clock.advance(50)
    kenv.run("check")
    r = kenv.run("history", "softmax", "--attempt", "1")
    assert r.exit_code == 0
    out = r.stdout
    assert "grading 1 at 0:10" in out and "not implemented yet" in out
    assert "grading 2 at 1:00" in out and "failing: rows sum to 1" in out
    assert "hint 1:" in out
    assert "grading 3 at 1:50" in out and "3/3 checks passed" in out
    assert "+    return z  # PASS" in out and "-    return z" in out
    full = kenv.run("history", "softmax", "--attempt", "1", "--full").stdout
    assert full.count("|def softmax(z):") == 2
    r = kenv.run("history", "softmax", "--attempt", "2")
    assert r.exit_code == 2 and "no attempt 2" in r.stderr
    # --full alone replays the last attempt: NAME's, or the one worked on last
    assert kenv.run("history", "softmax", "--full").stdout == full
    assert kenv.run("history", "--full").stdout == full
    kenv.run("start", "softmax", "--fresh")
    last = kenv.run("history", "softmax", "--full").stdout
    assert "softmax attempt 2" in last and "This attempt was never graded." in last
    none = kenv.run("history", "rope", "--full")
    assert none.exit_code == 2 and "rope has no attempt yet" in none.stderr


# -- the work folder --------------------------------------------------------------------------
def test_kata_home_is_the_work_folder(kenv, tmp_path):
    kenv.run("start", "softmax")
    assert (kenv.home / "softmax.py").exists() and (kenv.home / "kata.sqlite3").exists()


def test_default_work_folder_is_inside_the_repository(monkeypatch):
    from practice import paths

    monkeypatch.delenv("KATA_HOME", raising=False)
    assert paths.home() == paths.REPO / "work"
    monkeypatch.setattr(paths, "REPO", paths.REPO / "nowhere")
    monkeypatch.setenv("XDG_DATA_HOME", "/data")
    if sys.platform.startswith("linux"):
        assert str(paths.home()) == "/data/attention-katas"


def test_a_database_error_mid_command_is_not_a_traceback(kenv, monkeypatch):
    from practice.store import records

    kenv.run("start", "softmax")

    def broken(s):
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(records, "open_attempts", broken)
    r = kenv.run("status")
    assert r.exit_code == 1 and "run the command again" in r.stderr


def test_the_open_session_is_the_one_whose_clock_runs(kenv):
    kenv.run("start", "softmax")
    kenv.run("start", "rope")  # pauses softmax
    kenv.run("check", "softmax")  # grading a paused attempt does not make it the session
    kenv.run("check")
    assert kenv.calls[-1][0] == "rope"
    assert kenv.run("status").stdout.startswith("rope")
    r = kenv.run("pause")
    assert r.exit_code == 0 and "Paused rope" in r.stdout
    r = kenv.run("pause")
    assert r.exit_code == 1 and "already paused" in r.stderr


def test_a_file_with_no_session_becomes_the_attempt_as_it_is(kenv):
    kenv.home.mkdir(parents=True)
    kenv.write("rope", "my own start\n")
    r = kenv.run("start", "rope")
    assert r.exit_code == 0 and "was already there with no session" in r.stdout
    assert kenv.attempt("rope").read_text() == "my own start\n"
    assert not (kenv.home / "archive").exists()
    r = kenv.run("start", "rope", "--fresh")
    assert "raise NotImplementedError" in kenv.attempt("rope").read_text()
    (kept,) = (kenv.home / "archive" / "rope").glob("*.py")
    assert kept.read_text() == "my own start\n"


def test_after_the_database_is_set_aside_the_attempt_carries_on(kenv):
    kenv.run("start", "rope")
    kenv.write("rope", "half way\n")
    (kenv.home / "kata.sqlite3").write_bytes(b"\0" * 5000)
    for suffix in ("-wal", "-shm"):
        (kenv.home / f"kata.sqlite3{suffix}").unlink(missing_ok=True)
    r = kenv.run("start", "rope")
    assert "warning: the practice database" in r.stderr
    assert kenv.attempt("rope").read_text() == "half way\n"


def test_an_unwritable_work_folder_is_a_clear_error(kenv, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for home in (blocker / "home", blocker):
        r = kenv.run("status", env={"KATA_HOME": str(home)})
        assert r.exit_code == 1 and r.stdout == ""
        assert r.stderr == (f"Error: cannot use the work folder {home}: "
                            f"{blocker} is a file, not a folder\n")  # which folder, and why
    assert blocker.read_text() == "x"


# -- hints and the reference after passing or after the time is up -----------------------------
def test_a_hint_after_passing_says_it_does_not_count(kenv):
    kenv.run("start", "softmax")
    kenv.write("softmax", "# PASS\n")
    kenv.run("check")
    r = kenv.run("hint")
    total = len(catalogue.get("softmax").hints)
    assert f"Hint 1 of {total}" in r.stdout and "does not count against it" in r.stdout
    st = kenv.run("status").stdout
    assert f"hints:  0 of {total} (and 1 after passing, not counted)" in st
    assert "0 hints" in kenv.run("submit").stdout
    con = kenv.db()
    assert con.execute("SELECT count(*) FROM events WHERE kind = 'hint'").fetchone()[0] == 1


def test_viewing_the_solution_after_the_time_is_up_is_recorded(kenv):
    kenv.run("start", "softmax", "--minutes", "1")
    kenv.clock.advance(90)
    r = kenv.run("solution", "softmax")  # time is up: no question asked
    assert r.exit_code == 0 and "# PASS" in r.stdout
    con = kenv.db()
    assert con.execute("SELECT solution_viewed FROM attempts").fetchone()[0] == 1
    detail = con.execute("SELECT detail FROM events WHERE kind = 'solution'").fetchone()[0]
    assert detail == "before passing, after the time was up"
    kenv.write("softmax", "# PASS\n")
    assert "solution viewed" in kenv.run("submit").stdout


def test_bare_compare_after_submit_compares_the_kata_just_submitted(kenv):
    kenv.run("start", "softmax")
    kenv.run("start", "rope")  # softmax is paused, still open
    kenv.write("rope", "x = 1\n")
    assert kenv.run("submit").exit_code == 1  # rope, not passed
    r = kenv.run("compare")  # no terminal, no --yes: an ended attempt spoils nothing
    assert r.exit_code == 0, r.stderr
    assert "yours: rope.py" in r.stdout and "reference: rope.py" in r.stdout


def test_the_spoiler_question_says_why_it_asks(kenv):
    r = kenv.run("solution", "rope", input="n\n")
    assert "You have not tried rope yet" in r.stderr
    kenv.run("start", "rope")
    r = kenv.run("solution", "rope", input="n\n")
    assert "its time is not up" in r.stderr
    kenv.run("reset", "rope")
    r = kenv.run("solution", "rope", input="n\n")
    assert "You have not passed rope." in r.stderr


def test_what_to_practise_next_says_in_progress(kenv):
    kenv.run("start", "causal_mask")
    nxt = kenv.run("history").stdout.split("What to practise next")[1]
    assert re.search(r"causal_mask\s+in progress\s+in progress, never finished", nxt)
    kenv.run("submit")
    kenv.run("start", "causal_mask")
    nxt = kenv.run("history", "causal_mask").stdout.split("What to practise next")[1]
    assert re.search(r"causal_mask .*not passed last time; in progress now", nxt)


def test_checks_are_properties_and_gradings_are_runs(kenv):
    kenv.run("start", "softmax")
    for _ in range(3):
        kenv.run("check")
    st = kenv.run("status").stdout
    assert "graded: 3 times" in st and "checks:" not in st
    kenv.write("softmax", "# PASS\n")
    out = kenv.run("submit").stdout
    assert "3/3 checks passed" in out and "graded 4 times" in out
    assert not re.search(r"\d+ checks?[,.]", out.replace("3/3 checks passed", ""))
    hist = kenv.run("history", "softmax").stdout
    assert re.search(r"^kata .* graded ", hist, re.M)
    replay = kenv.run("history", "softmax", "--attempt", "1").stdout
    assert "grading 4 at" in replay and "check 4" not in replay


# -- the work folder --------------------------------------------------------------------------
def test_help_and_readme_say_where_the_work_folder_is_for_each_install(kenv):
    from pathlib import Path

    text = " ".join(kenv.run("--help").stdout.split())
    for words in ("KATA_HOME", "pip install -e .", "work/ in the repository", "pip install .",
                  "~/.local/share/attention-katas", "Application Support", "LOCALAPPDATA"):
        assert words in text, words
    assert "Work folder: " + str(kenv.home) in kenv.run("status").stdout
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme.split("## The work folder")[1].split("\n## ")[0]
    for words in ("KATA_HOME", "pip install -e .", "pip install .", ".local/share/attention-katas",
                  "Application Support", "LOCALAPPDATA", "kata status"):
        assert words in section, words
    completion = readme.split("## Shell completion")[1].split("\n## ")[0]
    for shell in ("bash", "zsh", "fish"):
        assert f"_KATA_COMPLETE={shell}_source kata" in completion


def test_a_new_attempt_at_a_kata_passed_before_still_asks_before_spoiling(kenv):
    kenv.run("start", "softmax")
    kenv.write("softmax", "# PASS\n")
    assert kenv.run("submit").exit_code == 0
    assert kenv.run("solution", "softmax").exit_code == 0  # passed and ended: nothing to spoil
    kenv.run("start", "softmax", "--fresh")  # practised again: this attempt is not passed yet
    for args in (("solution", "softmax"), ("followups", "softmax", "--answers")):
        r = kenv.run(*args)  # no terminal, no --yes: nothing shown, nothing recorded
        assert r.exit_code == 1 and "no answer to the question" in r.stderr, (args, r.stderr)
        assert "def softmax" not in r.stdout and "Model answer" not in r.stdout
    assert kenv.db().execute("SELECT SUM(solution_viewed) FROM attempts").fetchone()[0] == 0


def test_the_grading_process_starts_first_only_for_a_check_that_will_grade(monkeypatch):
    """`kata check ...` starts the grading process before click loads; a request for help,
    or any other command, starts nothing there."""
    from practice import grading, startup

    started = []
    monkeypatch.setattr(grading, "prepare", lambda hints=(): started.append(list(hints)))
    for args in (["check", "--help"], ["check", "softmax", "-h"], ["list"], ["watch", "softmax"], []):
        startup.grading_first(args)
    assert started == []
    startup.grading_first(["check", "softmax", "--file", "x/softmax.py", "--json"])
    assert started == [["softmax", "x/softmax.py"]]
