"""The `kata` command: practise transformer NumPy katas against a clock and hidden graders.

This module is the command layer only: it parses the command line, asks practice/ to do
the work and prints what practice.messages and practice.render say, through the one
output path practice.term (practice.cli holds what the commands share). It imports click
and nothing heavy at start-up (no numpy, rich, sqlite or watchdog): each command loads
what it needs when it needs it, and the commands that grade first start the grading
process (practice.grading.prepare), which imports NumPy and the graders while this
process loads the rest.
"""
from __future__ import annotations

from practice import startup

startup.quiet_while_loading()  # until the command is loaded (practice.startup)

from pathlib import Path  # noqa: E402

import click

from practice.check_cli import check_command
from practice.cli import friendly, kata_argument, kata_of, open_practice, out, spoiler_guard
from practice.dev_cli import dev_group
from practice.examples import with_examples

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


# -- plumbing ----------------------------------------------------------------------------
def _name(k) -> str | None:
    return k.name if k else None


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

    def main(self, args=None, *rest, **kwargs):
        """As `kata` run from a shell (its arguments from sys.argv), a command that has
        finished leaves at once (practice.startup.leave); called with arguments (click's test
        runner), it returns or raises as click's main does."""
        if args is not None:
            return super().main(args, *rest, **kwargs)
        try:
            return super().main(args, *rest, **kwargs)
        except SystemExit as e:
            startup.leave(e.code)


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
      kata followups softmax     the follow-up questions, one at a time, rated
      kata history               past attempts and what to practise next
      kata progress              how ready you are, group by group of the path
    A mock interview: kata mock (--strict), then kata watch / kata check, then kata submit.
    `kata help COMMAND` (or `kata COMMAND --help`) says more of each, with examples.

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
def list_command():
    """List the katas, your status and best times.

    One kata a line, its name first, in the order of the path (attention, position,
    block, decoding, training): group, title, difficulty, time budget, status (not
    started, in progress, passed, not passed), best time and last result. A narrow
    terminal drops the columns it has no room for.
    """
    from practice import history, messages

    p = open_practice()
    out(messages.kata_list(history.statuses(p.store), history.best_times(p.store),
                           history.last_results(p.store)))


@cli.command("start")
@kata_argument()
@click.option("--minutes", type=click.IntRange(1, 24 * 60),
              help="Time budget in minutes (default: the kata's own budget).")
@click.option("--fresh", is_flag=True,
              help="Archive the attempt in progress (code and results are kept) and start "
                   "again from the stub.")
@click.option("--edit", is_flag=True, help="Open the attempt in $EDITOR.")
@friendly
def start_command(kata, minutes, fresh, edit):
    """Start or resume a kata, and its clock.

    Copies the stub to your work folder (never over an attempt), prints the question
    and the file to edit, and starts the clock. An attempt in progress is resumed.
    """
    from practice import clock, messages

    p = open_practice()
    res = p.start(kata, minutes=minutes, fresh=fresh)
    out(messages.started(kata, res, clock.now()))
    if edit:
        click.edit(filename=str(res.attempt["path"]))


cli.add_command(check_command)  # `kata check`: practice/check_cli.py


@cli.command("status")
@friendly
def status_command():
    """Show the kata in progress, its clock and the work folder.

    In a mock interview, each question and its last grading; with nothing in progress,
    what to practise next.
    """
    from practice import clock, messages, paths, targets

    p = open_practice()
    out(messages.status(targets.status(p.store), clock.now()),
        f"Work folder: {paths.shown(p.home)}" + (" (read-only)" if p.store.readonly else ""))


@cli.command("pause")
@kata_argument(required=False)
@friendly
def pause_command(kata):
    """Stop the clock (recorded).

    NAME defaults to the kata in progress: the one whose clock runs (else the one
    started, resumed or graded last). A mock interview's clock does not stop.
    """
    from practice import clock

    p = open_practice()
    a = p.pause(_name(kata))
    out(f"Paused {a['kata']} at {clock.fmt(a['elapsed'])}. `kata resume` restarts the clock.")


@cli.command("resume")
@kata_argument(required=False)
@friendly
def resume_command(kata):
    """Restart a paused clock (recorded).

    NAME defaults to the kata in progress: the one started, resumed or graded last. Any
    other clock that runs is paused (one practice clock runs at a time).
    """
    from practice import clock, messages

    p = open_practice()
    out(messages.resumed(p.resume(_name(kata)), clock.now()))


@cli.command("watch")
@kata_argument(required=False)
@click.option("--poll", is_flag=True,
              help="Poll the file instead of waiting for file-system events "
                   "(for network and WSL file systems).")
@click.option("--interval", type=click.FloatRange(0.1, 60), default=1.0, show_default=True,
              help="Seconds between countdown updates and polls.")
@friendly
def watch_command(kata, poll, interval):
    """Live countdown; re-grades on every save.

    Shows the clock and the checks, grades the attempt again each time the file's
    contents change (in a mock interview, every question), stops the clock when every
    check passes. Ctrl-C leaves (exit status 130).
    """
    startup.start_grading(_name(kata))
    from practice import targets, watch

    p = open_practice()
    watch.run(p, targets.to_grade(p.store, _name(kata), "watch"), poll=poll, interval=interval, echo=out)


@cli.command("submit")
@kata_argument(required=False)
@friendly
def submit_command(kata):
    """Final grading; records the result.

    Stops the clock, records the result (time, gradings, hints, solution viewed) and
    shows the follow-up questions. In a mock interview this ends the interview, prints
    its report and asks the follow-up questions (a strict one submits NAME alone).
    Exit status 0 when everything passed, 1 otherwise.
    """
    startup.start_grading(_name(kata))
    from practice import catalogue, followups, messages, mock, render, strict

    p = open_practice()
    res = p.submit(_name(kata))
    ctx = click.get_current_context()
    if isinstance(res, mock.MockReport):
        out(messages.mock_report(res, with_follow_ups=False))
        followups.after_interview(p, res)
        ctx.exit(0 if res.passed else 1)
    if isinstance(res, strict.QuestionSubmitted):
        out(messages.question_submitted(res))
        ctx.exit(0 if res.report.passed else 1)
    if not res.recorded:  # graded, but nothing could be recorded
        out(render.report(res.report), render.summary(res.report))
        raise click.ClickException(f"{res.note}; nothing was submitted")
    a = res.attempt
    out(messages.submitted(catalogue.get(a["kata"]), a, res.report, res.n_gradings))
    ctx.exit(0 if a["passed"] else 1)


@cli.command("mock")
@click.option("--minutes", type=click.IntRange(1, 24 * 60),
              help="Length of the whole interview in minutes (default: the sum of the "
                   "budgets of the katas it asks).")
@click.option("--count", type=click.IntRange(1, 20), default=1, show_default=True,
              help="How many katas the interview asks.")
@click.option("--seed", type=int,
              help="Draw the katas from this seed alone: the same seed asks the same "
                   "katas, whatever your history.")
@click.option("--strict", is_flag=True, help="Three gradings per question, each showing only which "
                                              "checks fail; no hints; one submit per question.")
@friendly
def mock_command(minutes, count, seed, strict):
    """Start a mock interview: one clock, no hints.

    Picks the katas you most need (the schedule of `kata history`), or with --seed the
    katas that seed draws; starts one clock for the whole interview, as long as the
    katas' budgets together unless --minutes says otherwise, and prints the questions.
    `kata submit` ends it.
    """
    from practice import messages, mock

    p = open_practice()
    if count > len(mock.ready()):
        raise click.UsageError(f"--count is at most {len(mock.ready())}")
    out(messages.mock_started(mock.start(p, count, minutes, seed, strict)))


@cli.command("hint")
@kata_argument(required=False)
@friendly
def hint_command(kata):
    """Show the next hint (hints used are recorded).

    NAME defaults to the kata in progress. The first hint is the one for the first check
    that failed in your last grading. Refused in a mock interview.
    """
    from practice import aids, messages

    p = open_practice()
    k = kata_of(p, kata, "hint")
    out(messages.hint(k, aids.hint(p, k)))


@cli.command("solution")
@kata_argument()
@click.option("--yes", "-y", is_flag=True, help="Skip the spoiler question.")
@friendly
def solution_command(kata, yes):
    """Show the reference solution.

    Asks first (y/N) while it would spoil an attempt: when you have never tried NAME, when
    your attempt in progress has not passed and its time is not up, and when you set your
    last attempt aside without ever passing NAME. Once you have passed it, or submitted
    your attempt, it is shown at once. Seeing it counts against an attempt in progress that
    has not passed. Refused in a mock interview.
    """
    from practice import aids, compare, paths

    p = open_practice()
    if not spoiler_guard(p, kata, yes, "solution"):
        out("Not shown.")
        return
    aids.record_viewing(p, kata.name, "solution")
    compare.show_code(kata.solution, title=f"Reference solution: {paths.shown(kata.solution)}")


@cli.command("compare")
@kata_argument(required=False)
@click.option("--yes", "-y", is_flag=True, help="Skip the spoiler question.")
@click.option("--width", type=click.IntRange(40, 400),
              help="Width in columns (default: the terminal's).")
@friendly
def compare_command(kata, yes, width):
    """Show your attempt beside the reference.

    NAME's attempt, or the attempt you worked on last. Side by side, code only (comments
    left out, docstrings cut to their first line, long identical stretches folded, long
    lines wrapped under their indentation), lines paired by a diff, when the width holds it
    (some 110 columns); else a unified diff of the whole files. Under the code, the
    efficiency your last grading measured (Python lines, memory and time at growing sizes)
    beside the reference's. Asks first while it would spoil an attempt, as `kata solution`
    does.
    """
    from practice import aids, compare, targets

    p = open_practice()
    k = kata_of(p, kata, "compare", last_worked_on=True)
    a = targets.attempt_for(p.store, k.name)
    if a is None or not Path(a["path"]).is_file():
        raise click.UsageError(f"{k.name} has no attempt to compare; `kata start {k.name}`")
    if not spoiler_guard(p, k, yes, "compare"):
        out("Not shown.")
        return
    aids.record_viewing(p, k.name, "compare")
    compare.show(Path(a["path"]), k.solution, width=width)
    from practice import paths, records, render_efficiency
    from practice.errors import UnusableAttempt

    last = records.last_grading(p.store, a["id"])
    code = last["code"] if last else None
    code = code.encode("utf-8") if isinstance(code, str) else code
    try:
        edited = code != paths.read_attempt(Path(a["path"]))
    except (OSError, UnusableAttempt):
        edited = True
    out("", render_efficiency.compared(records.stored_report(last) if last else None, edited))


@cli.command("history")
@kata_argument(required=False)
@click.option("--attempt", "number", type=click.IntRange(1),
              help="Replay attempt N of NAME: every grading with the code it graded.")
@click.option("--full", is_flag=True,
              help="Replay an attempt with the whole code of every grading, not the changes: "
                   "attempt N with --attempt, else the last attempt (NAME's, or the one you "
                   "worked on last).")
@friendly
def history_command(kata, number, full):
    """Past attempts, time to pass, best times and what next.

    Every attempt (practice or mock, time, result, gradings, hints, solution viewed),
    each kata's time to pass attempt by attempt, the best time per kata and what to
    practise next by a spaced-repetition schedule. With --attempt, or --full, one
    attempt replayed grading by grading.
    """
    if number is not None and not kata:
        raise click.UsageError("--attempt needs a kata: kata history NAME --attempt N")
    p = open_practice()
    from practice import render_history

    if number is not None or full:
        name, number = (kata.name, number) if number is not None else _last_attempt(p, kata)
        out(render_history.replay(p.store, name, number, full=full))
    else:
        out(render_history.overview(p.store, _name(kata)))


def _last_attempt(p, kata) -> tuple[str, int]:
    """(kata, number) of NAME's last attempt, or of the attempt worked on last."""
    from practice import history, targets

    if kata:
        attempts = history.attempts_of(p.store, kata.name)
        if not attempts:
            raise click.UsageError(f"{kata.name} has no attempt yet; `kata start {kata.name}` makes one")
        return kata.name, attempts[-1]["n"]
    a = targets.last_worked_on(p.store)
    if a is None:
        raise click.UsageError("no attempt yet to replay; `kata start NAME` makes one")
    return a["kata"], history.number_of(p.store, a)


@cli.command("reset")
@kata_argument()
@friendly
def reset_command(kata):
    """Put the stub back; the attempt is archived.

    The attempt in progress at NAME ends, and its file is copied into archive/NAME/ in the
    work folder before the stub replaces it (nothing is deleted). `kata start NAME` then
    starts a new clock.
    """
    from practice import messages

    p = open_practice()
    out(messages.reset_done(kata, p.reset(kata)))


@cli.command("followups")
@kata_argument()
@click.option("--answers", is_flag=True,
              help="Show each model answer (asks first, as `kata solution` does).")
@click.option("--yes", "-y", is_flag=True, help="With --answers, skip the spoiler question.")
@friendly
def followups_command(kata, answers, yes):
    """Ask a kata's follow-up questions; numbers are checked.

    Say each answer aloud and rate it (k: knew it, p: partly, m: missed), or type the number
    it asks for, alone or with its unit. Ratings count in what to practise next and in
    `kata progress`.
    """
    from practice import followups

    p = open_practice()
    if not answers or spoiler_guard(p, kata, yes, "followups"):
        return followups.practise(p, kata, answers)
    out("Not shown.")


@cli.command("progress")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
@friendly
def progress_command(as_json):
    """How ready you are, group by group of the path.

    Katas passed within budget, time to pass against it, the weakest katas and follow-ups,
    what is due.
    """
    from practice import progress, render_progress

    figures = progress.figures(open_practice(json_mode=as_json).store)
    if as_json:
        return click.echo(progress.as_json(figures))
    out(render_progress.progress(figures))


@cli.command("export")
@click.option("--format", "fmt", type=click.Choice(["json", "csv"]), default="json",
              show_default=True, help="JSON: one object; CSV: one row per record.")
@friendly
def export_command(fmt):
    """Write your whole history to stdout, as JSON or CSV.

    Mock interviews, attempts, gradings, hints shown and ratings of follow-up answers.
    """
    from practice import export

    data = export.everything(open_practice(json_mode=True).store)
    click.echo(export.as_json(data) if fmt == "json" else export.as_csv(data), nl=False)


cli.add_command(dev_group)  # `kata dev`: practice/dev_cli.py


@cli.command("help", short_help="Show a command's help, as `kata COMMAND --help` does.")
@click.argument("command", nargs=-1)
def help_command(command):
    """Show a command's help: `kata help COMMAND` is `kata COMMAND --help`.
    """
    ctx = click.get_current_context()
    cmd, at = cli, ctx.parent
    for i, name in enumerate(command):
        sub = cmd.get_command(at, name) if isinstance(cmd, click.Group) else None
        if sub is None:
            import difflib

            known = cmd.list_commands(at) if isinstance(cmd, click.Group) else []
            like = difflib.get_close_matches(name, known, n=1)
            raise click.UsageError(f"no such command: kata {' '.join(command[:i + 1])}"
                                   + (f". Did you mean {like[0]!r}?" if like else ""))
        cmd, at = sub, click.Context(sub, info_name=name, parent=at)
    click.echo(cmd.get_help(at))


with_examples(cli)  # each command's help ends with its examples (practice/examples.py)


startup.loaded()  # Ctrl-C is a KeyboardInterrupt again

if __name__ == "__main__":  # pragma: no cover
    cli(prog_name="kata")
