"""The strict mock interview (`kata mock --strict`), run the way an interviewer runs one.

- Each question may be graded three times (`kata check`, `kata watch`): a fourth grading is
  refused, a usage error. Code unchanged since the question's last grading, or still its
  stub, is not graded again: its last grading is shown and none is used. Code is compared as
  Python reads it, token by token (`same_code`): an edit to comments, blank lines or the
  spaces between tokens changes nothing.
- A grading shows only which checks fail: no message, no likely cause, no named bug, no
  observed relation, no repro, no picture; of the efficiency, the figures (Python lines,
  memory, time, beside the reference's) and no remark, since a remark says what to change.
  It is recorded as shown, so nothing read later (`kata history`, `kata export`, `--json`)
  says more.
- Hints, solutions, comparisons and model answers are refused (practice.aids), also a usage
  error.
- Each question is submitted once: `kata submit NAME` submits that question as it stands;
  `kata submit` submits every question left and ends the interview.
`p` is the `practice.sessions.Practice` the command opened; `s` an open store.
"""
from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass, replace

from graders.engine.report import CheckResult, Report, Status
from practice import catalogue, clock, mock
from practice.clock import elapsed
from practice.errors import StrictRefusal
from practice.store import Attempt, Mock, records


@dataclass(frozen=True)
class QuestionSubmitted:
    """`kata submit NAME` in a strict interview that goes on: the question as closed, its
    final grading, the gradings it used and how many questions are still open."""
    attempt: Attempt
    report: Report
    used: int
    left: int


def of(s, a: Attempt) -> bool:
    """Whether the attempt is a question of a strict mock interview that is running (once it
    has ended, its questions are graded as any attempt is)."""
    if a.mock_id is None:
        return False
    m = records.mock(s, a.mock_id)
    return bool(m.strict) and m.state == "running"


def used(s, a: Attempt) -> int:
    """The gradings the question has used (the final one, at its submit, is not one)."""
    return records.n_gradings(s, a.id, mock.ASKED)


def allow(s, a: Attempt, origin: str, fresh: bool = True) -> None:
    """Nothing, or StrictRefusal when the question may not be graded for `origin` (again;
    not `fresh`: code unchanged since its last grading, which is shown again)."""
    if origin not in mock.ASKED or not of(s, a):
        return
    if a.state != "open":
        raise StrictRefusal(f"{a.kata} has been submitted; a strict interview grades a "
                            "question no more after that")
    if fresh and used(s, a) >= mock.STRICT_GRADINGS:
        raise StrictRefusal(f"{a.kata} has used its {mock.STRICT_GRADINGS} gradings in this "
                            f"strict interview; `kata submit {a.kata}` submits it as it stands")


def before_grading(s, a: Attempt, origin: str, code: bytes) -> Report | None:
    """For a question of a strict interview that the candidate asks to grade: the report to
    show without grading when `code` has not changed since its last grading (or is still
    the stub); else None, once the grading is allowed (StrictRefusal when it is not)."""
    if origin not in mock.ASKED or not of(s, a):
        return None
    last = records.last_grading(s, a.id)
    before = catalogue.get(a.kata).stub.read_bytes() if last is None else last.code
    again = same_code(before if isinstance(before, bytes) else before.encode("utf-8"), code)
    allow(s, a, origin, fresh=not again)
    if not again:
        return None
    if last:
        return records.stored_report(last)
    return Report(a.kata, [CheckResult("implemented", Status.NOT_IMPLEMENTED,
                                          "not implemented yet: still the stub")])


# Tokens that say nothing of what code does, and those whose text is only layout.
_UNSAID = frozenset({tokenize.ENCODING, tokenize.COMMENT, tokenize.NL})
_LAYOUT = frozenset({tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE, tokenize.ENDMARKER})


def code_tokens(code: bytes) -> tuple[tuple[int, str], ...] | None:
    """The code as Python reads it, token by token, without comments, blank lines and the
    whitespace between tokens (an indent is one token, whatever its width); None when it
    does not tokenize (then only the same bytes are the same code)."""
    try:
        return tuple((tok.type, "" if tok.type in _LAYOUT else tok.string)
                     for tok in tokenize.tokenize(io.BytesIO(code).readline)
                     if tok.type not in _UNSAID)
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError, LookupError):
        return None


def same_code(before: bytes, after: bytes) -> bool:
    """Whether two versions of a file are the same code: the same bytes, or the same tokens
    (an edit to comments or whitespace alone)."""
    if before == after:
        return True
    tokens = code_tokens(before)
    return tokens is not None and tokens == code_tokens(after)


def shown(s, a: Attempt, report: Report) -> Report:
    """The report as the attempt's interview may show it: whole, or in a strict interview
    only which checks pass and fail."""
    if not of(s, a):
        return report
    checks = [c if c.status in (Status.SKIPPED, Status.NOT_IMPLEMENTED) else
              replace(c, message="", repro=None, picture=None) for c in report.checks]
    efficiency = replace(report.efficiency, remarks=[]) if report.efficiency is not None else None
    return replace(report, checks=checks, diagnosis=None, bug=None, observed=[], efficiency=efficiency,
                   extra=dict(report.extra, strict=True))


def submit_question(p, interview: Mock, kata: str) -> QuestionSubmitted | mock.MockReport:
    """Submit one question of a strict interview: graded a last time and closed. The
    interview report when it was the last question open."""
    a = next(q for q in p.mock_attempts(interview.id) if q.kata == kata)
    if a.state != "open":
        raise StrictRefusal(f"{kata} has been submitted already; each question is submitted once")
    g = p.grade(a, "submit")
    if not g.recorded:  # a question cannot be closed without its record
        raise g.error
    t = clock.now()
    with p.store.tx() as s:
        a, m = records.attempt(s, a.id), records.mock(s, interview.id)
        passed = g.report.passed
        p.close(s, a, t, "submitted", "submitted", passed,
                used=a.solved_at if passed and a.solved_at is not None else elapsed(m, t))
        records.add_event(s, "submit", kata, a.id, m.id,
                          detail="passed" if passed else "not passed")
        mock.settle_clock(s, m.id, t)
    left = [q for q in p.mock_attempts(interview.id) if q.state == "open"]
    if not left:
        return mock.end(p, records.mock(p.store, interview.id), "submitted")
    return QuestionSubmitted(p.attempt(a.id), g.report, used(p.store, a), len(left))
