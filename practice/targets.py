"""Which attempt a command means when the user names a kata, or names none.

Each function takes the open store `s` and only reads. The open session is the running
mock interview, else the practice attempt whose clock runs, else the one touched last.
"""
from __future__ import annotations

from dataclasses import dataclass

from practice import history, schedule
from practice.errors import NothingToGrade, NotInProgress
from practice.store import Attempt, Grading, Mock, records


@dataclass(frozen=True)
class MockInProgress:
    """`kata status` during a mock interview: each question with its last grading row."""
    mock: Mock
    questions: list[tuple[Attempt, Grading | None]]


@dataclass(frozen=True)
class PracticeInProgress:
    """`kata status` with a practice attempt open (the running clock's first)."""
    attempt: Attempt
    last: Grading | None                # its last grading row
    n_gradings: int
    others: list[Attempt]               # the other attempts open
    hints_shown: int                   # hints shown for it, those after it passed included


@dataclass(frozen=True)
class NothingInProgress:
    """`kata status` with nothing open: what to practise next, if anything."""
    next: schedule.Due | None


def current(s) -> Attempt | None:
    """The attempt of the open session: the running mock's, else the practice attempt
    last started, resumed or checked."""
    mock = records.running_mock(s)
    opened = [a for a in records.open_attempts(s)
              if (a.mock_id == mock.id if mock else a.mode == "practice")]
    running = [a for a in opened if a.clock == "running"]
    return (running or opened or [None])[0]


def attempt_for(s, kata: str) -> Attempt | None:
    """The attempt `kata check NAME` grades: the open one (the running mock's first),
    else the latest whose file is still in place."""
    mock = records.running_mock(s)
    if mock:
        in_mock = [a for a in records.mock_attempts(s, mock.id)
                   if a.kata == kata and a.state == "open"]
        if in_mock:
            return in_mock[0]
    return records.open_practice_attempt(s, kata) or records.latest_in_place(s, kata)


def in_progress(s, kata: str | None, then: str = "") -> Attempt:
    """The open practice attempt at `kata`, or the open session's; NotInProgress when
    there is none (its message ends with `then`, what the user can do)."""
    a = records.open_practice_attempt(s, kata) if kata else current(s)
    if a is None:
        what = f"{kata} is not in progress" if kata else "no kata is in progress"
        raise NotInProgress(what + (f"; {then}" if then else ""))
    return a


def target(s, kata: str | None, command: str = "check") -> Attempt:
    """The attempt `kata check [NAME]` (or `kata watch`: `command`) grades; NothingToGrade
    when there is none."""
    if kata:
        a = attempt_for(s, kata)
        if a is None:
            raise NothingToGrade(
                f"nothing to grade: {kata} has no attempt yet; `kata start {kata}` makes one "
                f"(or `kata check {kata} --file PATH` grades any file)")
        return a
    a = current(s)
    if a is None:
        raise NothingToGrade(
            f"nothing to grade: no kata is in progress; name one (`kata {command} NAME`) "
            "or start one (`kata start NAME`)")
    return a


def to_grade(s, kata: str | None, command: str = "check") -> list[Attempt]:
    """What `kata check [NAME]` and `kata watch [NAME]` grade: NAME's attempt, else every
    question of the running mock interview, else the open session's attempt."""
    mock = None if kata else records.running_mock(s)
    return records.mock_attempts(s, mock.id) if mock else [target(s, kata, command)]


def last_worked_on(s) -> Attempt | None:
    """The practice attempt started, resumed, graded or finished last (open or not): what
    `kata compare` without a name compares."""
    return records.last_touched(s)


def status(s) -> MockInProgress | PracticeInProgress | NothingInProgress:
    """What `kata status` shows: the running mock, else the open practice attempts
    (the running clock first), else what to practise next."""
    mock = records.running_mock(s)
    if mock:
        return MockInProgress(mock, [(a, records.last_grading(s, a.id))
                                     for a in records.mock_attempts(s, mock.id)])
    opened = [a for a in records.open_attempts(s) if a.mode == "practice"]
    opened.sort(key=lambda a: a.clock != "running")
    if not opened:
        due = history.plan(s)
        return NothingInProgress(due[0] if due else None)
    a = opened[0]
    return PracticeInProgress(a, records.last_grading(s, a.id),
                              records.n_gradings(s, a.id), opened[1:],
                              records.hints_taken(s, a.kata, a.id))
