"""Mock interviews: several katas on one clock that nothing pauses, no hints, a report.

- `start` picks the katas (practice.schedule), writes their stubs under mock/ID/ and
  starts one clock for the whole interview, pausing any practice clock.
- The interview's clock stops while every question passes and runs again when one fails.
- `end` closes it: on `kata submit`, or on any command after the deadline, when each
  question is graded as it stood at the deadline (a file edited later counts by its last
  grading before the deadline).
- A strict interview (`--strict`) has rules of its own on top of these: practice.strict.
`p` is the `practice.sessions.Practice` the command opened.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from graders.engine.report import Report
from practice import catalogue, clock, history, paths, schedule
from practice.clock import elapsed
from practice.errors import SessionError
from practice.store import Attempt, Mock, records

ASKED = ("check", "watch")  # the gradings a candidate asks for (not the last, at the submit)
STRICT_GRADINGS = 3         # the gradings a question of a strict interview may have


@dataclass(frozen=True)
class MockStarted:
    """What `start` did: the interview, its questions' attempts in order, the clocks paused."""
    mock: Mock
    attempts: list[Attempt]
    paused: list[Attempt]


@dataclass(frozen=True)
class Interview:
    """A question's interview and how many of its questions pass now (and, in a strict
    one, the gradings each has used, by kata)."""
    mock: Mock
    solved: int
    total: int
    used: dict[str, int] | None = None


@dataclass(frozen=True)
class Question:
    """One question in the interview report."""
    attempt: Attempt
    kata: catalogue.Kata
    n_gradings: int
    report: Report | None              # its final grading (None: never graded)
    note: str | None = None            # how its final grading was chosen, when that needs saying
    asked: int = 0                     # the gradings asked for (ASKED), the final one not counted

    @property
    def passed(self) -> bool:
        return bool(self.report and self.report.passed)

    @property
    def failing(self) -> list[str]:
        return self.report.failing if self.report else []


@dataclass(frozen=True)
class MockReport:
    """The interview report: the interview, and each question in the order asked."""
    mock: Mock
    questions: list[Question]

    @property
    def passed(self) -> bool:
        return all(q.passed for q in self.questions)


@dataclass(frozen=True)
class _Final:
    """A question's grading at the end of the interview."""
    attempt: Attempt
    report: Report | None
    note: str | None = None


def ready() -> list[str]:
    """The katas an interview can ask: every one whose stub is in this checkout."""
    return [k.name for k in catalogue.katas() if k.stub.is_file()]


def pick(p, count: int, seed: int | None) -> tuple[list[str], int, bool]:
    """(katas, seed, seeded): drawn by `seed` alone when one is given, whatever the
    history; else the katas most in need of practice, ties broken by a drawn seed."""
    if seed is not None:
        return schedule.draw(ready(), count, seed), seed, True
    drawn = int.from_bytes(os.urandom(4), "big") % 1_000_000
    due = [d for d in history.plan(p.store) if d.kata in set(ready())]
    return schedule.pick(due, count, clock.now(), drawn), drawn, False


def start(p, count: int, minutes: float | None, seed: int | None,
          strict: bool = False) -> MockStarted:
    """Start an interview of `count` katas on one clock: `minutes`, or the sum of the
    picked katas' own budgets; `strict`, under practice.strict's rules."""
    p.store.require_writable()
    if p.running_mock():
        raise SessionError("a mock interview is already running; `kata status` shows it")
    names, seed, seeded = pick(p, count, seed)
    if minutes is None:
        minutes = sum(catalogue.get(n).minutes for n in names)
    t = clock.now()
    with p.store.tx() as s:
        paused = p.pause_running(s, t, "mock interview")
        mock_id = records.insert_mock(s, t, 60.0 * minutes, seed, seeded, strict)
        for pos, name in enumerate(names):
            path = paths.mock_attempt_path(p.home, mock_id, name)
            # Written before the commit, so no record ever points at a missing file.
            stub = catalogue.get(name).stub.read_bytes()
            if not paths.create_new(path, stub) and path.read_bytes() != stub:
                p.archive_file(path, name, f"mock{mock_id}-{name}")
                paths.write_atomic(path, stub)
            # each question's budget is its kata's own, as history and progress show it
            records.insert_attempt(s, name, "mock", str(path), t, 60.0 * catalogue.get(name).minutes,
                                   mock_id=mock_id, position=pos, touched_at=t - pos * 1e-3)
        records.add_event(s, "mock-start", mock_id=mock_id, detail=",".join(names))
    return MockStarted(records.mock(p.store, mock_id), p.mock_attempts(mock_id), paused)


def interview(s, a: Attempt) -> Interview | None:
    """For a question of a mock interview: the interview and how many of its questions
    pass; None for a practice attempt."""
    if a.mock_id is None:
        return None
    questions, m = records.mock_attempts(s, a.mock_id), records.mock(s, a.mock_id)
    used = ({q.kata: records.n_gradings(s, q.id, ASKED) for q in questions}
            if m.strict else None)
    return Interview(m, sum(1 for q in questions if q.clock == "solved"), len(questions), used)


def settle_clock(s, mock_id: int, t: float) -> None:
    """Inside a transaction after a grading: the interview's clock stops while every
    question is solved (or, in a strict interview, submitted) and runs again as soon as one
    is not."""
    m = records.mock(s, mock_id)
    if m.state != "running":
        return
    all_solved = all(a.clock == "solved" or a.state != "open"
                     for a in records.mock_attempts(s, mock_id))
    if all_solved and m.clock == "running":
        records.set_mock_clock(s, mock_id, "solved", None, elapsed(m, t))
    elif not all_solved and m.clock == "solved":
        records.set_mock_clock(s, mock_id, "running", t)


def expire(p) -> MockReport | None:
    """End the running mock interview if its deadline has passed; its report, or None."""
    mock = p.running_mock()  # its clock never pauses: the deadline is wall time
    if mock and clock.now() - mock.started_at >= mock.budget:
        return end(p, mock, "deadline")
    return None


def _final_grading(p, a: Attempt, reason: str, deadline: float) -> _Final:
    """Grade one question for the end of the interview: as it stands, or by its last
    grading before the deadline when the file was edited after it."""
    path = Path(a.path)
    if reason == "deadline" and path.exists() and path.stat().st_mtime > deadline:
        before = records.last_grading(p.store, a.id, before=deadline)
        return _Final(a, records.stored_report(before) if before else None,
                      "edited after the deadline: its last grading before it counts")
    report = None
    if path.is_file():
        g = p.grade(a, "mock-end")
        if not g.recorded:  # the interview cannot end without its record
            raise g.error
        report, a = g.report, g.attempt
    return _Final(a, report)


def end(p, mock: Mock, reason: str) -> MockReport:
    """Grade every question still open (as it stood at the deadline), close them and the
    interview, and return the interview report."""
    deadline = mock.started_at + mock.budget
    results = [_final_grading(p, a, reason, deadline) for a in p.mock_attempts(mock.id)
               if a.state == "open"]
    t = clock.now()
    with p.store.tx() as s:
        m = records.mock(s, mock.id)
        if m.state != "running":  # another process ended it meanwhile
            return report(p, m.id)
        used = min(elapsed(m, t), m.budget) if reason == "deadline" else elapsed(m, t)
        records.end_mock(s, m.id, t, reason, used)
        for r in results:
            a = records.attempt(s, r.attempt.id)
            passed = bool(r.report and r.report.passed)
            a_used = a.solved_at if (passed and a.solved_at is not None) else used
            p.close(s, a, t, "submitted", "mock-ended", passed, used=a_used)
        records.add_event(s, "mock-end", mock_id=m.id, detail=reason)
    return report(p, mock.id, {r.attempt.id: r for r in results})


def report(p, mock_id: int, graded: dict[int, _Final] | None = None) -> MockReport:
    """The interview report: the interview, and for each question its attempt, kata,
    number of gradings, final report and any note (`graded`: the final gradings just
    made, by attempt; else each question's last grading)."""
    questions = []
    for a in p.mock_attempts(mock_id):
        mine = (graded or {}).get(a.id) or _Final(a, None)
        rep = mine.report
        if rep is None:
            last = records.last_grading(p.store, a.id)
            rep = records.stored_report(last) if last else None
        questions.append(Question(a, catalogue.get(a.kata),
                                  records.n_gradings(p.store, a.id), rep, mine.note,
                                  records.n_gradings(p.store, a.id, ASKED)))
    return MockReport(records.mock(p.store, mock_id), questions)
