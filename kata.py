"""The `kata` command: practise transformer NumPy katas against a clock and hidden graders.

This module is the command layer only: it parses the command line, asks practice/ to do
the work and prints what practice.messages and practice.render say, through the one
output path practice.term. It imports nothing heavy at start-up (no numpy, pytest,
rich or watchdog): each command loads what it needs when it needs it.
"""
from __future__ import annotations

import signal
import sys

# Ctrl-C while kata loads its modules ends it at once, quietly, with the status of an
# interrupted command (130); once loaded, commands take it as KeyboardInterrupt (KataGroup).
_QUIET_INTERRUPT = signal.getsignal(signal.SIGINT) is signal.default_int_handler
if _QUIET_INTERRUPT:
    signal.signal(signal.SIGINT, lambda *_: __import__("os")._exit(130))

# The commands that grade start the attempt's interpreter first: it needs as long to import
# NumPy as this process needs for everything else, so both are ready at about the same time.
if sys.argv[1:2] and sys.argv[1] in ("check", "watch", "submit"):
    from practice.grading import prepare

    prepare(sys.argv[2:])

import functools
import json
import os
import sqlite3
from pathlib import Path

import click

from practice import aids, catalogue, clock, grading, paths, targets
from practice import history as past
from practice import mock as mocks
from practice.errors import NothingToGrade, NotInProgress, SessionError
from practice.sessions import Practice
from practice.store import RecordsSetAside, Store, StoreError

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
SIGPIPE_STATUS = 128 + 13  # how a shell reports a command that its reader stopped reading


# -- plumbing ----------------------------------------------------------------------------
def out(*parts, err: bool = False) -> None:
    from practice import term

    term.out(*(parts or ("",)), err=err)


def _kata(name: str) -> catalogue.Kata:
    """The catalogue entry, or a usage error with 'did you mean'."""
    try:
        return catalogue.get(name)
    except catalogue.UnknownKata as e:
        raise click.UsageError(str(e)) from None


def _complete(ctx, param, incomplete: str):
    """Shell completion of kata names (`kata start so<TAB>`), with their titles."""
    from click.shell_completion import CompletionItem

    return [CompletionItem(k.name, help=k.title) for k in catalogue.katas()
            if k.name.startswith(incomplete)]


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
        except (catalogue.UnknownKata, NothingToGrade, NotInProgress, grading.BadSetting) as e:
            raise click.UsageError(str(e)) from None
        except grading.GradingUnavailable as e:  # it may quote what the attempt returned: shown, not obeyed
            from practice.term import visible

            raise click.ClickException(visible(str(e))) from None
        except (SessionError, StoreError) as e:
            raise click.ClickException(str(e)) from None
        except OSError as e:  # an unwritable work folder, a full disk
            raise click.ClickException(f"{e.strerror or e}: {e.filename or ''}".rstrip(": ")) \
                from None
        except sqlite3.OperationalError as e:
            if "locked" in str(e) or "busy" in str(e):
                raise click.ClickException(
                    "the practice database is busy (another `kata` is writing); try again"
                ) from None
            raise _damaged(e) from None
        except sqlite3.DatabaseError as e:
            raise _damaged(e) from None

    return wrapper


def _run(f, *args, **kwargs):
    """Run the command (again, once, if it read records that were then set aside) and
    flush what it printed, so that a closed pipe shows here and not at exit."""
    try:
        try:
            return f(*args, **kwargs)
        except RecordsSetAside:
            return f(*args, **kwargs)
    finally:
        sys.stdout.flush()


def _reader_gone():
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # nothing more to write, even at exit
    sys.exit(SIGPIPE_STATUS)


def _damaged(e: Exception) -> click.ClickException:
    try:
        Store(paths.home()).close()  # opening again checks it and sets a damaged file aside
    except Exception:
        pass
    return click.ClickException(f"the practice database failed ({e}); run the command again")


def _practice(json_mode: bool = False) -> Practice:
    """Open the store; end a mock interview whose deadline has passed (printing its report)."""
    from practice import messages, term

    p = Practice(Store(paths.home()))
    click.get_current_context().call_on_close(p.store.close)  # no connection outlives its command
    report = None if p.store.readonly else mocks.expire(p)
    if report:
        out(term.styled("The mock interview's time is up.", "bold yellow"),
            messages.mock_report(report), "", err=json_mode)
    return p


def _kata_of(p: Practice, name: str | None, what: str, last_worked_on: bool = False):
    """NAME's catalogue entry, else the kata of the open session (or, for `compare`, of
    the attempt worked on last); a usage error when there is none."""
    if name:
        return _kata(name)
    a = targets.last_worked_on(p.store) if last_worked_on else targets.current(p.store)
    if a is None:
        raise click.UsageError(f"no kata is in progress: name one (`kata {what} NAME`)")
    return catalogue.get(a["kata"])


class KataGroup(click.Group):
    def list_commands(self, ctx):
        return list(self.commands)  # in the order defined: the order of a practice round

    def invoke(self, ctx):
        """An interrupted command (Ctrl-C) exits 130, without a traceback or "Aborted!"."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo(err=True)
            raise click.exceptions.Exit(130) from None


@click.group(cls=KataGroup, context_settings=CONTEXT)
@click.version_option(package_name="attention-katas", message="%(prog)s %(version)s")
def cli():
    """Timed NumPy katas on transformer attention, graded by hidden tests.

    \b
    A practice round:
      kata list                  the katas, your status and best times
      kata start causal_mha      copy the stub, print the question, start the clock
      kata watch                 live countdown; re-grades every time you save
      kata check                 grade the attempt now
      kata hint                  the next hint (recorded)
      kata submit                final grading; result, time and follow-up questions
      kata history               past attempts and what to practise next
    A mock interview: kata mock, then kata watch / kata check, then kata submit.

    \b
    Attempts are plain .py files in the work folder, which is:
      KATA_HOME, when it is set;
      else work/ in the repository, for an editable install (pip install -e .);
      else a folder of your own: ~/.local/share/attention-katas on Linux
      ($XDG_DATA_HOME/attention-katas), ~/Library/Application Support/attention-katas
      on macOS, %LOCALAPPDATA%\\attention-katas on Windows (pip install .).
    `kata status` names the folder in use.

    \b
    Shell completion of commands and kata names (zsh and fish: see the README):
      eval "$(_KATA_COMPLETE=bash_source kata)"
    """


# -- commands ------------------------------------------------------------------------------
@cli.command("list")
@friendly
def list_():
    """List the katas, your status and best times.

    One kata a line, its name first, in the order of the path (attention, position,
    block, decoding, training): group, title, difficulty, time budget, status (not
    started, in progress, passed, not passed), best time and last result. A narrow
    terminal drops the columns it has no room for.
    """
    from practice import messages

    p = _practice()
    out(messages.kata_list(past.statuses(p.store), past.best_times(p.store),
                           past.last_results(p.store)))


@cli.command()
@click.argument("name", shell_complete=_complete)
@click.option("--minutes", type=click.IntRange(1, 24 * 60),
              help="Time budget in minutes (default: the kata's own budget).")
@click.option("--fresh", is_flag=True,
              help="Archive the attempt in progress (code and results are kept) and start "
                   "again from the stub.")
@click.option("--edit", is_flag=True, help="Open the attempt in $EDITOR.")
@friendly
def start(name, minutes, fresh, edit):
    """Start or resume a kata, and its clock.

    Copies the stub to your work folder (never over an attempt), prints the question
    and the file to edit, and starts the clock. An attempt in progress is resumed.
    """
    from practice import messages

    k = _kata(name)
    p = _practice()
    res = p.start(k, minutes=minutes, fresh=fresh)
    out(messages.started(k, res, clock.now()))
    if edit:
        click.edit(filename=str(res["attempt"]["path"]))


@cli.command()
@click.argument("name", required=False, shell_complete=_complete)
@click.option("--file", "file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Grade this file instead of your attempt (records nothing).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the report as one JSON object on stdout (notes go to stderr).")
@friendly
def check(name, file, as_json):
    """Grade your attempt, or any file with --file.

    Grades NAME's attempt, or the attempt of the session in progress (in a mock
    interview, every question), and records the grading with the code it graded. With
    --file, grades that file and records nothing. Exit status 0 when every check
    passes, 1 when any fails, 2 on a usage error.
    """
    grading.prepare()
    ctx = click.get_current_context()
    if file is not None:
        k = _kata(name or _name_of(file))
        report = grading.grade(k.name, file, source=paths.read_attempt(file))
        _show([(k.name, file, report)], as_json, recorded=False)
        ctx.exit(0 if report.get("passed") else 1)
    if name:
        _kata(name)
    p = _practice(json_mode=as_json)
    before = targets.to_grade(p.store, name)
    done = [p.grade(a, "check") for a in before]
    shown = [(_label(p, g.attempt), g.attempt["path"], g.report) for g in done]
    _show(shown, as_json, recorded=all(g.recorded for g in done))
    _after(p, before, done, err=as_json)
    ctx.exit(0 if all(g.report.get("passed") for g in done) else 1)


def _name_of(file: Path) -> str:
    if file.stem not in catalogue.names():
        raise click.UsageError(f"cannot tell which kata {file} is for (its name is not a "
                               f"kata's); name it: kata check NAME --file {file}")
    return file.stem


def _label(p: Practice, a: dict) -> str:
    from practice import messages

    return messages.attempt_label(dict(a, n=past.number_of(p.store, a)))


def _show(graded: list[tuple], as_json: bool, recorded: bool) -> None:
    """Print gradings: as text, or as one JSON object on stdout (summaries to stderr)."""
    from practice import messages, render

    if as_json:
        reports = [rep for _, _, rep in graded]
        one = reports[0] if len(reports) == 1 else grading.combined(reports)
        click.echo(json.dumps(dict(one, recorded=recorded)))
        out(*(render.summary(rep) for rep in reports), err=True)
        return
    for label, file, rep in graded:
        out(messages.graded(label, file, rep))


def _after(p: Practice, before: list[dict], done: list, err: bool) -> None:
    """The notes and the clock after `kata check`."""
    from practice import messages

    for g in done:
        if g.note:
            out(f"note: {g.note}", err=True)
    if all(g.recorded for g in done):
        pairs = [(a, g.attempt) for a, g in zip(before, done)]
        out(messages.after_grading(pairs, clock.now(), mocks.interview(p.store, before[0])),
            err=err)


@cli.command()
@friendly
def status():
    """Show the kata in progress, its clock and the work folder."""
    from practice import messages

    p = _practice()
    out(messages.status(targets.status(p.store), clock.now()),
        f"Work folder: {paths.shown(p.home)}" + (" (read-only)" if p.store.readonly else ""))


@cli.command()
@click.argument("name", required=False, shell_complete=_complete)
@friendly
def pause(name):
    """Stop the clock (recorded)."""
    if name:
        _kata(name)
    p = _practice()
    a = p.pause(name)
    out(f"Paused {a['kata']} at {clock.fmt(a['elapsed'])}. `kata resume` restarts the clock.")


@cli.command()
@click.argument("name", required=False, shell_complete=_complete)
@friendly
def resume(name):
    """Restart a paused clock (NAME's, or the last one)."""
    from practice import messages

    if name:
        _kata(name)
    p = _practice()
    out(messages.resumed(p.resume(name), clock.now()))


@cli.command()
@click.argument("name", required=False, shell_complete=_complete)
@click.option("--poll", is_flag=True,
              help="Poll the file instead of waiting for file-system events "
                   "(for network and WSL file systems).")
@click.option("--interval", type=click.FloatRange(0.1, 60), default=1.0, show_default=True,
              help="Seconds between countdown updates and polls.")
@friendly
def watch(name, poll, interval):
    """Live countdown; re-grades on every save.

    Shows the clock and the checks, grades the attempt again each time the file is
    saved (in a mock interview, every question), stops the clock when every check
    passes. Ctrl-C leaves.
    """
    from practice import watch as watching

    if name:
        _kata(name)
    p = _practice()
    watching.run(p, targets.to_grade(p.store, name), poll=poll, interval=interval, echo=out)


@cli.command()
@click.argument("name", required=False, shell_complete=_complete)
@friendly
def submit(name):
    """Final grading; records the result.

    Stops the clock, records the result (time, gradings, hints, solution viewed) and
    shows the follow-up questions. In a mock interview this ends the interview and
    prints its report.
    Exit status 0 when everything passed, 1 otherwise.
    """
    from practice import messages, render

    if name:
        _kata(name)
    p = _practice()
    res = p.submit(name)
    ctx = click.get_current_context()
    if "mock" in res:
        out(messages.mock_report(res["mock"]))
        ok = all(r["report"] and r["report"].get("passed") for r in res["mock"]["rows"])
        ctx.exit(0 if ok else 1)
    a, report = res["attempt"], res["report"]
    if res.get("note"):  # graded, but nothing could be recorded
        out(render.report(report), render.summary(report))
        raise click.ClickException(f"{res['note']}; nothing was submitted")
    out(messages.submitted(catalogue.get(a["kata"]), a, report, res["n_checks"]))
    ctx.exit(0 if a["passed"] else 1)


@cli.command()
@click.option("--minutes", type=click.IntRange(1, 24 * 60),
              help="Length of the whole interview in minutes (default: the sum of the "
                   "budgets of the katas it asks).")
@click.option("--count", type=click.IntRange(1, 20), default=1, show_default=True,
              help="How many katas the interview asks.")
@click.option("--seed", type=int,
              help="Draw the katas from this seed alone: the same seed asks the same "
                   "katas, whatever your history.")
@friendly
def mock(minutes, count, seed):
    """Start a mock interview: one clock, no hints.

    Picks the katas you most need (the schedule of `kata history`), or with --seed the
    katas that seed draws; starts one clock for the whole interview, as long as the
    katas' budgets together unless --minutes says otherwise, and prints the questions.
    `kata submit` ends it.
    """
    from practice import messages

    p = _practice()
    if count > len(mocks.ready()):
        raise click.UsageError(f"--count is at most {len(mocks.ready())}")
    out(messages.mock_started(mocks.start(p, count, minutes, seed)))


@cli.command()
@click.argument("name", required=False, shell_complete=_complete)
@friendly
def hint(name):
    """Show the next hint (hints used are recorded)."""
    from practice import messages

    p = _practice()
    k = _kata_of(p, name, "hint")
    out(messages.hint(k, aids.hint(p, k)))


def _guard(p: Practice, k: catalogue.Kata, yes: bool, kind: str) -> bool:
    """The spoiler guard: confirm before showing a reference that would spoil something."""
    from practice import messages

    aids.refuse_in_mock(p, "solutions")
    why = aids.spoiler(p, k.name)
    if yes or why is None:
        return True
    try:
        return click.confirm(messages.spoiler_question(k, why), default=False, err=True)
    except click.Abort:
        raise click.ClickException(
            f"no answer to the question; `kata {kind} {k.name} --yes` shows it") from None


@cli.command()
@click.argument("name", shell_complete=_complete)
@click.option("--yes", "-y", is_flag=True, help="Skip the spoiler question.")
@friendly
def solution(name, yes):
    """Show the reference solution.

    Asks first while it would spoil an attempt: you have not passed the kata, and your
    latest attempt at it has not ended and still has time.
    """
    k = _kata(name)
    p = _practice()
    if not _guard(p, k, yes, "solution"):
        out("Not shown.")
        return
    aids.record_viewing(p, k.name, "solution")
    from practice import compare

    compare.show_code(k.solution, title=f"Reference solution: {paths.shown(k.solution)}")


@cli.command()
@click.argument("name", required=False, shell_complete=_complete)
@click.option("--yes", "-y", is_flag=True, help="Skip the spoiler question.")
@click.option("--width", type=click.IntRange(40, 400),
              help="Width in columns (default: the terminal's).")
@friendly
def compare(name, yes, width):
    """Show your attempt beside the reference.

    NAME's attempt, or the attempt you worked on last. Lines are paired by a diff (long
    identical stretches folded) and wrapped to the terminal; asks first while it would
    spoil an attempt, as `kata solution` does.
    """
    p = _practice()
    k = _kata_of(p, name, "compare", last_worked_on=True)
    a = targets.attempt_for(p.store, k.name)
    if a is None or not Path(a["path"]).is_file():
        raise click.UsageError(f"{k.name} has no attempt to compare; `kata start {k.name}`")
    if not _guard(p, k, yes, "compare"):
        out("Not shown.")
        return
    aids.record_viewing(p, k.name, "compare")
    from practice import compare as comparing

    comparing.side_by_side(Path(a["path"]), k.solution, width=width)


@cli.command()
@click.argument("name", required=False, shell_complete=_complete)
@click.option("--attempt", "number", type=click.IntRange(1),
              help="Replay attempt N of NAME: every grading with the code it graded.")
@click.option("--full", is_flag=True,
              help="With --attempt, print the whole code of every grading, not the changes.")
@friendly
def history(name, number, full):
    """Past attempts, time to pass, best times and what next.

    Every attempt (practice or mock, time, result, gradings, hints, solution viewed),
    each kata's time to pass attempt by attempt, the best time per kata and what to
    practise next by a spaced-repetition schedule.
    """
    if name:
        _kata(name)
    if number is not None and not name:
        raise click.UsageError("--attempt needs a kata: kata history NAME --attempt N")
    p = _practice()
    from practice import render_history as hist

    if number is not None:
        out(hist.replay(p.store, name, number, full=full))
    else:
        out(hist.overview(p.store, name))


@cli.command()
@click.argument("name", shell_complete=_complete)
@friendly
def reset(name):
    """Put the stub back; the attempt is archived."""
    from practice import messages

    k = _kata(name)
    p = _practice()
    out(messages.reset_done(k, p.reset(k)))


if _QUIET_INTERRUPT:  # loaded: Ctrl-C is a KeyboardInterrupt again
    signal.signal(signal.SIGINT, signal.default_int_handler)

if __name__ == "__main__":  # pragma: no cover
    cli(prog_name="kata")
