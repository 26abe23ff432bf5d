"""What the commands (practice/commands/) share: the KataName parameter type and the NAME
argument, the examples that end a command's help, the store each command opens, the kata a
command means, the spoiler guard, the one output path and the mapping of known conditions to
click's errors and exit statuses.

It imports click and nothing heavy: the commands that grade start the grading process
once click has parsed their command line, and everything loaded before that delays it.
"""
from __future__ import annotations

import functools
import inspect
import os
import sys

import click

from practice import startup

SIGPIPE_STATUS = 128 + 13  # how a shell reports a command that its reader stopped reading


class KataName(click.ParamType):
    """A kata's name, checked against the catalogue (a usage error with "did you mean"
    when it is none) and completed from it; the value is its catalogue entry."""
    name = "kata"

    def convert(self, value, param, ctx):
        from practice import catalogue

        if isinstance(value, catalogue.Kata):
            return value
        try:
            return catalogue.get(value)
        except catalogue.UnknownKata as e:
            self.fail(str(e), param, ctx)
        except catalogue.CatalogueError as e:  # the catalogue itself is wrong: not a usage error
            raise click.ClickException(str(e)) from None

    def shell_complete(self, ctx, param, incomplete: str):
        """`kata start so<TAB>` gives softmax, with its title."""
        from click.shell_completion import CompletionItem

        from practice import catalogue

        try:
            katas = catalogue.katas()
        except catalogue.CatalogueError:
            return []
        return [CompletionItem(k.name, help=k.title) for k in katas if k.name.startswith(incomplete)]


KATA = KataName()


def kata_argument(required: bool = True):
    """The NAME argument of a command: a kata's catalogue entry."""
    return click.argument("kata", metavar="NAME" if required else "[NAME]", type=KATA,
                          required=required)


def name_of(k) -> str | None:
    """The name of the kata NAME gave (a catalogue entry), or None when NAME was not given."""
    return k.name if k else None


def examples(*lines: str):
    """End the help of the command below (`kata COMMAND --help`, `kata help COMMAND`) with its
    examples: a command line each, and what it does, in the column the help text keeps. They
    are kept as they are written (`\\b` keeps click from wrapping them)."""

    def add(command: click.Command) -> click.Command:
        heading = "Example:" if len(lines) == 1 else "Examples:"
        command.help = inspect.cleandoc(command.help or "") + "\n\n\b\n" + heading + "\n" + "\n".join(
            "  " + line for line in lines)
        return command

    return add


def open_practice(json_mode: bool = False):
    """Open the store; end a mock interview whose deadline has passed (printing its report)."""
    from practice import mock, paths, term
    from practice.sessions import Practice
    from practice.store import Store
    from practice.views.mock import mock_report

    p = Practice(Store(paths.home()))
    click.get_current_context().call_on_close(p.store.close)  # no connection outlives its command
    report = None if p.store.readonly else mock.expire(p)
    if report:
        out(term.styled("The mock interview's time is up.", "bold yellow"),
            mock_report(report), "", err=json_mode)
    return p


def kata_of(p, k, what: str, last_worked_on: bool = False):
    """`k`, the kata named on the command line, else the kata of the open session (or, for
    `compare`, of the attempt worked on last); a usage error when there is none."""
    from practice import catalogue, targets

    if k:
        return k
    a = targets.last_worked_on(p.store) if last_worked_on else targets.current(p.store)
    if a is None:
        raise click.UsageError(f"no kata is in progress: name one (`kata {what} NAME`)")
    return catalogue.get(a.kata)


def spoiler_guard(p, k, yes: bool, kind: str) -> bool:
    """The spoiler guard: confirm before showing a reference (or, for `kind` "followups",
    the model answers) that would spoil something."""
    from practice import aids
    from practice.views.hints import spoiler_question

    answers = kind == "followups"
    aids.refuse_in_mock(p, "model answers" if answers else "solutions")
    why = aids.spoiler(p, k.name)
    if yes or why is None:
        return True
    shown = "the model answers" if answers else "the reference solution"
    click.echo(spoiler_question(k, why, shown) + " [y/N]: ", nl=False, err=True)
    try:  # not click.confirm, which makes a Ctrl-C (exit 130 here) an end of input
        answer = input("")
    except EOFError:
        click.echo(err=True)
        again = f"kata {kind} {k.name}{' --answers' if answers else ''} --yes"
        raise click.ClickException(f"no answer to the question; `{again}` shows it") from None
    return answer.strip().lower() in ("y", "yes")


def out(*parts, err: bool = False) -> None:
    from practice import term

    term.out(*(parts or ("",)), err=err)


def friendly(f):
    """Turn the user's mistakes and known conditions into click errors: exit 2 for a wrong
    command line or nothing to act on, 1 for the rest; never a traceback. A reader that
    stops reading (`kata list | head -1`) ends the command quietly."""

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        try:
            return _run(f, *args, **kwargs)
        except BrokenPipeError:
            _reader_gone()
        except KeyboardInterrupt:  # Ctrl-C: the status a shell gives a command it interrupted
            sys.stderr.write("\n")
            sys.exit(startup.INTERRUPTED)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as e:
            error = click_error(e)
            if error is None:
                raise
            raise error from None

    return wrapper


def click_error(e: Exception) -> click.ClickException | None:
    """The click error that says `e` to the user; None for a fault of kata itself."""
    import sqlite3

    from practice import catalogue, grading
    from practice.errors import MockRefusal, NothingToGrade, NotInProgress, SessionError
    from practice.store import StoreError

    if isinstance(e, (catalogue.UnknownKata, NothingToGrade, NotInProgress, MockRefusal,
                      grading.BadSetting)):
        return click.UsageError(str(e))
    if isinstance(e, grading.GradingUnavailable):  # it may quote what the attempt returned: shown, not obeyed
        from practice.term import visible

        return click.ClickException(visible(str(e)))
    if isinstance(e, (SessionError, StoreError, catalogue.CatalogueError)):
        return click.ClickException(str(e))
    if isinstance(e, OSError):  # an unwritable work folder, a full disk
        return click.ClickException(f"{e.strerror or e}: {e.filename or ''}".rstrip(": "))
    if isinstance(e, sqlite3.OperationalError) and ("locked" in str(e) or "busy" in str(e)):
        return click.ClickException("the practice database is busy (another `kata` is writing); "
                                    "try again")
    if isinstance(e, sqlite3.DatabaseError):
        return _damaged(e)
    return None


def _run(f, *args, **kwargs):
    """Run the command (again, once, if it read records that were then set aside) and
    flush what it printed, so that a closed pipe shows here and not at exit."""
    try:
        try:
            return f(*args, **kwargs)
        except Exception as e:
            from practice.store import RecordsSetAside

            if not isinstance(e, RecordsSetAside):
                raise
            return f(*args, **kwargs)
    finally:
        sys.stdout.flush()


def _reader_gone():
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # nothing more to write, even at exit
    sys.exit(SIGPIPE_STATUS)


def _damaged(e: Exception) -> click.ClickException:
    from practice import paths
    from practice.store import Store

    try:
        Store(paths.home()).close()  # opening again checks it and sets a damaged file aside
    except Exception:
        pass
    return click.ClickException(f"the practice database failed ({e}); run the command again")
