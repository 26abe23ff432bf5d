"""The conditions a command reports to the user (kata.py turns them into exit statuses)."""
from __future__ import annotations


class SessionError(Exception):
    """The user asked for something the session rules do not allow; the message says why."""


class NothingToGrade(SessionError):
    """No attempt to grade (a usage error on the command line)."""


class NotInProgress(SessionError):
    """The command needs a kata in progress and there is none (a usage error)."""


class UnusableAttempt(NothingToGrade):
    """The file to grade is not a regular file, or far larger than any attempt (a usage error)."""


class MockRefusal(SessionError):
    """What a mock interview refuses while it runs: a hint, the reference, a pause (a usage
    error, as in a strict one)."""


class StrictRefusal(MockRefusal):
    """What the rules of a strict mock interview refuse: a fourth grading, a second submit,
    a hint, the reference, a model answer (a usage error)."""
