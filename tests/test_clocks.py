"""Honest clocks, in real `kata` processes whose clock a file sets: an attempt that passes,
breaks and passes again says the time `submit` records, and a mock interview's question
records its kata's budget, as history and progress show it."""
from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

from conftest import T0, make_tree, stand_in_command


class World:
    """`kata` processes on one work folder, with the stand-in grader and a clock set by hand."""

    def __init__(self, tmp_path: Path, env: dict):
        self.root = make_tree(tmp_path / "tree")
        self.home = Path(env["KATA_HOME"])
        self.env = env
        self.clock_file = tmp_path / "now"
        self.t = T0
        self.advance(0)

    def advance(self, seconds: float) -> None:
        self.t += seconds
        self.clock_file.write_text(repr(self.t))

    def run(self, *args: str) -> subprocess.CompletedProcess:
        argv = stand_in_command(self.root, *args)
        argv[2] = argv[2].replace("import kata\n", "from practice import clock\nclock.now = lambda: "
                                  f"float(open({str(self.clock_file)!r}).read())\nimport kata\n")
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=60, check=False)

    def attempts(self) -> list[sqlite3.Row]:
        con = sqlite3.connect(self.home / "kata.sqlite3")
        con.row_factory = sqlite3.Row
        try:
            return con.execute("SELECT * FROM attempts ORDER BY id").fetchall()
        finally:
            con.close()


def test_passed_broken_and_passed_again_says_the_time_submit_records(tmp_path, subprocess_env):
    w = World(tmp_path, subprocess_env)
    w.run("start", "softmax")
    w.advance(61)
    (w.home / "softmax.py").write_text("def softmax(x):\n    return x  # PASS\n")
    first = w.run("check")
    assert "Solved in 1:01." in first.stdout and "1:01 used" in first.stdout, first.stdout + first.stderr
    w.advance(30)  # the clock is stopped: these 30 s do not count
    (w.home / "softmax.py").write_text("def softmax(x):\n    return x  # broken\n")
    assert "no longer passes, so the clock runs again" in w.run("check").stdout
    w.advance(8)
    (w.home / "softmax.py").write_text("def softmax(x):\n    return x  # PASS\n")
    again = w.run("check")
    assert "Solved in 1:09." in again.stdout and "1:09 used" in again.stdout, again.stdout
    w.advance(100)
    status = w.run("status").stdout
    assert "1:09 used" in status
    submitted = w.run("submit")
    assert "Recorded: passed in 1:09 of 10:00" in submitted.stdout, submitted.stdout
    (a,) = w.attempts()
    assert a["time_used"] == a["solved_at"] == 69


def test_a_mock_question_records_its_katas_own_budget(tmp_path, subprocess_env):
    from practice import catalogue

    w = World(tmp_path, subprocess_env)
    started = w.run("mock", "--count", "2", "--seed", "3", "--minutes", "30")
    assert "30:00 on one clock" in started.stdout, started.stdout + started.stderr
    questions = w.attempts()
    budgets = {q["kata"]: q["budget"] for q in questions}
    assert budgets == {k: 60.0 * catalogue.get(k).minutes for k in budgets} and len(budgets) == 2
    first = w.home / "mock" / "1" / f"{questions[0]['kata']}.py"
    first.write_text("def f(x):\n    return x  # PASS\n")
    w.advance(200)
    w.run("check")
    w.advance(100)
    w.run("submit")

    progress = json.loads(w.run("progress", "--json").stdout)
    charted = {k["kata"]: k for g in progress["groups"] for k in g["katas"]}
    for q in questions:
        kata = charted[q["kata"]]
        assert [a["budget"] for a in kata["last"]] == [kata["budget"]] == [60.0 * catalogue.get(q["kata"]).minutes]
    replayed = w.run("history", questions[0]["kata"], "--attempt", "1").stdout
    assert f"3:20 of {catalogue.get(questions[0]['kata']).minutes}:00" in replayed, replayed
    assert "30:00" not in replayed
