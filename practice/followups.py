"""Follow-up questions at the prompt: a round of a kata's questions, a number checked against
the catalogue, and how each was answered (knew it, partly, missed) recorded for the schedule.

A round reads one line of standard input per question. A question answered with a number
takes the number ("131072", "131,072", "14.96", "3.4e10"), and the number followed by the
question's unit ("131072 bytes", "131,072 B", "1.5 GiB"; another unit is asked again),
checked exactly or within the question's tolerance: right is "knew", wrong is "missed". Any
question takes a rating of the answer given aloud: k (knew it), p (partly) or m (missed).
Enter skips a question and records nothing. Input that ends before its first line (nothing
to read: `< /dev/null`) asks nothing, and the questions are listed; input that ends after
one ends the round there: it says so, and the questions left are neither listed nor recorded.
Prompts go to standard error, so standard output holds the questions, each verdict and (with
`answers`) the model answers. Nothing is read from a terminal whose output goes elsewhere
(`kata followups NAME | less`): no one would see the question. What a round shows is drawn
by practice.views.followups.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from fractions import Fraction

from rich.text import Text

from practice import catalogue, clock, term
from practice.store import records
from practice.views import followups

RATINGS = {"k": "knew", "knew": "knew", "knew it": "knew", "p": "partly", "partly": "partly",
           "m": "missed", "missed": "missed"}


@dataclass(frozen=True)
class Rated:
    """How one question of a round was answered."""
    index: int                         # its place among the kata's follow-ups, from 1
    rating: str                        # knew | partly | missed
    answer: str | None = None          # the number typed, when one was


@dataclass(frozen=True)
class Round:
    """A round of a kata's questions: the ratings given, whether a line was read, and
    whether the input ended in it after one was (then the questions from there on were not
    answered)."""
    rated: list[Rated]
    heard: bool = False
    ended: bool = False


class _End(Exception):
    """The end of standard input: stop asking (`after_a_line`: a line was read before it, in
    the same question: a number in another unit, say)."""

    def __init__(self, after_a_line: bool = False):
        super().__init__()
        self.after_a_line = after_a_line


_NUMBER = re.compile(r"\s*([-+]?(?:\d[\d,_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*?)\s*$")
# Short forms of a unit's first word, beside its singular and plural: 131,072 B, 8B params, 4.2x.
SHORT = {"bytes": {"b"}, "parameters": {"params", "param"}, "times": {"x", "×"}}


def reading(text: str) -> tuple[Fraction, str] | None:
    """The number `text` starts with, exactly (thousands separators allowed), and the words
    after it (a unit, or nothing); None when it starts with no number."""
    m = _NUMBER.match(text)
    if not m:
        return None
    try:
        return Fraction(m.group(1).replace(",", "").replace("_", "")), m.group(2)
    except (ValueError, ZeroDivisionError):
        return None


def number(text: str) -> Fraction | None:
    """The number written in `text`, alone, exactly; None if there is none or more."""
    read = reading(text)
    return read[0] if read and not read[1] else None


def _words(unit: str) -> list[str]:
    return unit.lower().replace("/", " per ").replace(",", " ").split()


def same_unit(said: str, unit: str) -> bool:
    """Whether `said`, typed after a number, is the question's `unit`: nothing, or its first
    word (singular, plural or a short form, in any case), then as many of its other words as
    one likes ("bytes", "B", "bytes per token", "B/token" for "bytes per token, with 8 KV
    heads")."""
    typed, wanted = _words(said), _words(unit)
    if not typed:
        return True
    if not wanted:
        return False
    head = wanted[0]
    heads = {head, head.removesuffix("s"), head + "s"} | SHORT.get(head, set())
    return typed[0] in heads and typed[1:] == wanted[1:len(typed)]


def right(f: catalogue.FollowUp, given: Fraction) -> bool:
    """Whether `given` answers the numeric follow-up `f`: exactly, or within its tolerance."""
    return abs(given - _exact(f.number)) <= _exact(f.tolerance)


def _exact(x) -> Fraction:
    return Fraction(str(x))  # 0.005 as the catalogue writes it, not its nearest binary float


def can_ask() -> bool:
    """Whether to read answers: from a pipe or a file, yes; from a terminal, only when the
    questions go to a terminal too."""
    stdin = sys.stdin
    try:
        return stdin is not None and (not stdin.isatty() or sys.stdout.isatty())
    except ValueError:  # a closed stream
        return False


def _read(prompt: str) -> str:
    """One line typed after `prompt`; _End at the end of input. Ctrl-C is left to the
    command (it exits 130)."""
    sys.stdout.flush()  # the question first, wherever the two streams go
    sys.stderr.write(prompt)
    sys.stderr.flush()
    line = sys.stdin.readline()
    if not sys.stdin.isatty():  # no one typed it: show it, so what is written reads in order
        sys.stderr.write(line if line.endswith("\n") else line + "\n")
    if not line:
        raise _End
    return line.strip()


def practise(p, k: catalogue.Kata, answers: bool = False) -> list[Rated]:
    """`kata followups NAME`: the heading, the round, and what was recorded."""
    term.out(followups.heading(k))
    if can_ask():
        term.out(term.wrap(followups.INVITE, style="dim"))
    if answers and not p.store.readonly:
        with p.store.tx() as s:
            records.add_event(s, "answers", k.name)  # model answers shown, as `kata solution` is
    done = ask(p, k, answers)
    if done.rated:
        term.out(followups.summary(k, done.rated))
    return done.rated


def after_interview(p, report) -> None:
    """The follow-up questions of every question of a mock interview that has just ended,
    asked one at a time, each rating recorded with the interview (`report`: practice.mock's
    MockReport)."""
    term.out("", Text("Follow-up questions to answer aloud:", style="bold"))
    if can_ask():
        term.out(term.wrap(followups.INVITE, style="dim"))
    heard = False
    for n, q in enumerate(report.questions):
        if len(report.questions) > 1:
            term.out(f"  {q.kata.name}:")
        done = ask(p, q.kata, mock_id=report.mock.id, heard=heard,
                   then=[o.kata.name for o in report.questions[n + 1:]])
        heard = heard or done.heard
        if done.rated:
            term.out(followups.summary(q.kata, done.rated))
        if done.ended:
            return


def ask(p, k: catalogue.Kata, answers: bool = False, mock_id: int | None = None,
        heard: bool = False, then: list[str] = ()) -> Round:
    """Ask `k`'s follow-up questions one at a time and record each rating given (with the
    mock interview they follow, if any); with `answers`, each model answer after its
    question. Input that ends before any line was read (in this round, or before it:
    `heard`) asks nothing more and the questions are listed; input that ends after one
    ends the round there, saying so (and that the follow-ups of the katas `then` were not
    asked either)."""
    started, asking, rated = clock.now(), can_ask(), []
    record = not p.store.readonly
    if asking and not record:
        term.out("note: the work folder is read-only, so your ratings are not recorded", err=True)
    for i, f in enumerate(k.follow_ups, 1):
        term.out(followups.question(i, f))
        got = None
        try:
            got = _answer(i, f) if asking else None
            heard = heard or asking
        except _End as end:
            asking = False
            if heard or end.after_a_line:
                term.out(followups.ended(len(k.follow_ups) - i + 1, then))
                return Round(rated, heard=True, ended=True)
        if got:
            rated.append(got)
            term.out(followups.verdict(f, got, k.name, answers))
            if record:
                with p.store.tx() as s:
                    records.insert_rating(s, clock.now(), started, k.name, i, f.question,
                                          got.rating, got.answer, mock_id)
        if answers:
            term.out(followups.model_answer(f))
    return Round(rated, heard=heard)


def _answer(i: int, f: catalogue.FollowUp) -> Rated | None:
    """The answer to one question as typed: a number, a rating or nothing (Enter)."""
    asked = (f"     Your answer, in {f.unit} (or k, p, m; Enter skips): " if f.numeric else
             "     Said aloud? knew it (k), partly (p) or missed (m); Enter skips: ")
    first = True
    while True:
        try:
            typed = _read(asked)
        except _End:
            raise _End(after_a_line=not first) from None
        first = False
        if not typed:
            return None
        if typed.lower() in RATINGS:
            return Rated(i, RATINGS[typed.lower()])
        read = reading(typed) if f.numeric else None
        if read is not None and same_unit(read[1], f.unit):
            return Rated(i, "knew" if right(f, read[0]) else "missed", typed)
        if read is not None:
            asked = f"     In {f.unit}, please: the number alone or with that unit (or k, p, m; Enter skips): "
            continue
        asked = ("     A number, please (or k, p, m; Enter skips): " if f.numeric else
                 "     k, p or m, please (Enter skips): ")
