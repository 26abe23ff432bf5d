"""The `kata` command: practise transformer NumPy katas against a clock and hidden graders.

This module is the command layer only: it parses the command line, asks practice.sessions
to do the work and prints the answer. It imports nothing heavy at start-up (no numpy,
pytest, rich or watchdog) so that `kata check` and `kata status` feel instant.
"""
from __future__ import annotations

import functools
import json
import os
import sqlite3
from pathlib import Path

import click

from practice import catalogue, clock, grading, paths, render
from practice.sessions import NothingToGrade, Practice, SessionError
from practice.store import Store, StoreError

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


# -- plumbing ----------------------------------------------------------------------------
def _color() -> bool | None:
    return False if os.environ.get("NO_COLOR") else None


def out(text: str = "", err: bool = False) -> None:
    click.echo(text, err=err, color=_color())


def _kata(name: str) -> catalogue.Kata:
    """The catalogue entry, or a usage error with 'did you mean'."""
    try:
        return catalogue.get(name)
    except catalogue.UnknownKata as e:
        raise click.UsageError(str(e)) from None


def friendly(f):
    """Turn the user's mistakes and known conditions into click errors: exit 2 for a wrong
    command line, exit 1 for the rest; never a traceback."""

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        try:
            return f(*args, **kwargs)
        except catalogue.UnknownKata as e:
            raise click.UsageError(str(e)) from None
        except (NothingToGrade, grading.BadSetting) as e:
            raise click.UsageError(str(e)) from None
        except (SessionError, StoreError, grading.GradingUnavailable) as e:
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


def _damaged(e: Exception) -> click.ClickException:
    try:
        Store(paths.home()).close()  # opening again checks it and sets a damaged file aside
    except Exception:
        pass
    return click.ClickException(f"the practice database failed ({e}); run the command again")


def _practice(json_mode: bool = False) -> Practice:
    """Open the store; end a mock interview whose deadline has passed (printing its report)."""
    p = Practice(Store(paths.home()))
    report = p.expire_mock()
    if report:
        out(click.style("The mock interview's time is up.", fg="yellow", bold=True), err=json_mode)
        out(render.mock_report(report), err=json_mode)
        out(err=json_mode)
    return p


def _kata_of(p: Practice, name: str | None, what: str) -> catalogue.Kata:
    if name:
        return _kata(name)
    a = p.current()
    if a is None:
        raise click.UsageError(f"no kata is in progress: name one (`kata {what} NAME`)")
    return catalogue.get(a["kata"])


def _label(a: dict) -> str:
    if a["mode"] == "mock":
        return f"{a['kata']} (mock interview #{a['mock_id']})"
    n = a.get("n")
    return f"{a['kata']}" + (f" (attempt {n})" if n else "")


class KataGroup(click.Group):
    def list_commands(self, ctx):
        return list(self.commands)  # in the order defined: the order of a practice round


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

    Attempts are plain .py files in the work folder (KATA_HOME, or work/ in the repository).
    """


# -- commands ------------------------------------------------------------------------------
@cli.command("list")
@friendly
def list_():
    """List the katas, your status and best times.

    One kata a line, its name first: title, difficulty, time budget, status (not
    started, in progress, passed, not passed), best time and last result.
    """
    p = _practice()
    statuses, best, last = p.statuses(), p.best_times(), p.last_results()
    rows = []
    for k in catalogue.katas():
        rows.append([
            k.name, k.title, k.difficulty, f"{k.minutes} min", statuses[k.name],
            clock.fmt(best[k.name]) if k.name in best else "-",
            render.result_text(last.get(k.name)),
        ])
    out(render.columns(rows, ["kata", "title", "difficulty", "budget", "status", "best",
                              "last result"]))


@cli.command()
@click.argument("name")
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
    k = _kata(name)
    p = _practice()
    res = p.start(k, minutes=minutes, fresh=fresh)
    a = res["attempt"]
    for other in res["paused"]:
        out(f"Paused {other['kata']} at {clock.fmt(other['elapsed'])}.")
    if res.get("closed"):
        c = res["closed"]
        out(f"Archived the previous attempt ({clock.fmt(c['time_used'] or 0)} on its clock, "
            f"{render.attempt_result(c)}) as {render.path(res['archived'] or c['path'])}.")
    elif res.get("archived"):
        out(f"Kept the previous file as {render.path(res['archived'])}.")
    out(click.style(f"{k.name}: {k.title}", bold=True)
        + f" ({k.difficulty}, {k.minutes} min)")
    out()
    out(render.question(k))
    out()
    if res["resumed"]:
        was = {"paused": "it was paused; the clock runs again",
               "solved": "it already passes; the clock is stopped"}.get(res["was"], "")
        out(click.style("Resuming the attempt in progress", fg="yellow", bold=True)
            + (f" ({was})" if was else "") + ".")
        if res.get("minutes_ignored"):
            out("--minutes applies to a new attempt; `kata start NAME --fresh --minutes N` "
                "starts one.")
        if res.get("recreated"):
            out("Its file was missing, so the stub was copied there again.")
    else:
        out(click.style("Clock started.", fg="green", bold=True))
        if res.get("adopted"):
            out(f"{paths.shown(a['path'])} was already there with no session, so it is your "
                "attempt as it stands; `kata start NAME --fresh` archives it and starts from "
                "the stub.")
    out(f"Edit:  {render.path(a['path'])}")
    out(f"Clock: {render.clock_text(a, clock.now())}")
    out("Then `kata check` grades it, `kata watch` re-grades on every save, "
        "`kata hint` gives a hint, `kata submit` finishes.")
    if edit:
        click.edit(filename=str(a["path"]))


@cli.command()
@click.argument("name", required=False)
@click.option("--file", "file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Grade this file instead of your attempt (records nothing).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the report as one JSON object on stdout (notes go to stderr).")
@friendly
def check(name, file, as_json):
    """Grade your attempt, or any file with --file.

    Grades NAME's attempt, or the attempt of the session in progress, and records the
    check with the code it graded. With --file, grades that file and records nothing.
    Exit status 0 when every check passes, 1 when any fails, 2 on a usage error.
    """
    ctx = click.get_current_context()
    if file is not None:
        if name is None:
            if file.stem not in catalogue.names():
                raise click.UsageError(
                    f"cannot tell which kata {file} is for (its name is not a kata's); "
                    f"name it: kata check NAME --file {file}")
            name = file.stem
        k = _kata(name)
        report = grading.grade(k.name, file)
        _show_report(report, f"{k.name}: {paths.shown(file)}", as_json)
        ctx.exit(0 if report.get("passed") else 1)
    if name:
        _kata(name)
    p = _practice(json_mode=as_json)
    a = p.target(name)
    report, after = p.grade(a, "check")
    n = next((x["n"] for x in p.attempts_of(after["kata"]) if x["id"] == after["id"]), None)
    header = f"{_label(dict(after, n=n))}: {paths.shown(after['path'])}"
    _show_report(report, header, as_json)
    _after_grading(a, after, report, err=as_json)
    ctx.exit(0 if report.get("passed") else 1)


def _show_report(report: dict, header: str, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(report))
        out(render.summary(report), err=True)
        return
    out(click.style(header, bold=True))
    out(render.report(report))
    out(render.summary(report))


def _after_grading(before: dict, after: dict, report: dict, err: bool) -> None:
    t = clock.now()
    if after["state"] != "open":
        out(f"(this attempt was already {after['state']}; the check is kept in its history)",
            err=err)
        return
    out(f"Clock: {render.clock_text(after, t)}", err=err)
    if after["clock"] == "solved" and before["clock"] != "solved":
        out(click.style(f"Solved in {clock.fmt(after['solved_at'])}.", fg="green", bold=True)
            + " The clock is stopped; `kata submit` records the result.", err=err)
    elif after["clock"] == "running" and before["clock"] == "solved":
        out("It no longer passes, so the clock runs again.", err=err)
    elif after["clock"] == "paused":
        out("The clock is paused; `kata resume` restarts it.", err=err)


@cli.command()
@friendly
def status():
    """Show the kata in progress and its clock."""
    p = _practice()
    t = clock.now()
    mock = p.running_mock()
    if mock:
        out(click.style(f"Mock interview #{mock['id']}", bold=True)
            + f": {render.clock_text(dict(mock, clock='running'), t)}")
        for a in p.mock_attempts(mock["id"]):
            last = p.last_check(a["id"])
            out(f"  {a['kata']:<24} {render.path(a['path'])}  last check: "
                f"{render.result_text(last)}")
        out("Hints and solutions wait until it ends; `kata submit` ends it.")
        return
    opened = [a for a in p.open_attempts() if a["mode"] == "practice"]
    opened.sort(key=lambda a: a["clock"] != "running")  # the running clock first
    if not opened:
        due = p.plan()
        nxt = due[0] if due else None
        out("No kata in progress."
            + (f" Next up: {nxt.kata} ({nxt.reason}); `kata start {nxt.kata}`." if nxt else ""))
        return
    a = opened[0]
    last = p.last_check(a["id"])
    k = catalogue.get(a["kata"])
    out(click.style(f"{a['kata']}: {k.title}", bold=True))
    out(f"  file:   {render.path(a['path'])}")
    out(f"  clock:  {render.clock_text(a, t)}")
    out(f"  checks: {p.n_checks(a['id'])}, last: {render.result_text(last)}"
        + (f" at {clock.when(last['at'])}" if last else ""))
    out(f"  hints:  {a['hints']} of {len(k.hints)}"
        + ("; solution viewed" if a["solution_viewed"] else ""))
    for other in opened[1:]:
        out(f"Also in progress: {other['kata']} ({render.clock_text(other, t)})")


@cli.command()
@friendly
def pause():
    """Stop the clock (the pause is recorded)."""
    p = _practice()
    a = p.pause()
    out(f"Paused {a['kata']} at {clock.fmt(a['elapsed'])}. `kata resume` restarts the clock.")


@cli.command()
@click.argument("name", required=False)
@friendly
def resume(name):
    """Restart a paused clock (NAME's, or the last one)."""
    if name:
        _kata(name)
    p = _practice()
    res = p.resume(name)
    a = res["attempt"]
    for other in res["paused"]:
        out(f"Paused {other['kata']} at {clock.fmt(other['elapsed'])}.")
    word = "Resumed" if res["was"] == "paused" else "Back to"
    out(f"{word} {a['kata']}: {render.clock_text(a, clock.now())}. Edit {render.path(a['path'])}.")


@cli.command()
@click.argument("name", required=False)
@click.option("--poll", is_flag=True,
              help="Poll the file instead of waiting for file-system events "
                   "(for network and WSL file systems).")
@click.option("--interval", type=click.FloatRange(0.1, 60), default=1.0, show_default=True,
              help="Seconds between countdown updates and polls.")
@friendly
def watch(name, poll, interval):
    """Live countdown; re-grades on every save.

    Shows the clock and the checks, grades the attempt again each time the file is
    saved, stops the clock when every check passes. Ctrl-C leaves.
    """
    from practice import watch as watching

    if name:
        _kata(name)
    p = _practice()
    if name:
        targets = [p.target(name)]
    else:
        mock = p.running_mock()
        targets = p.mock_attempts(mock["id"]) if mock else [p.target(None)]
    watching.run(p, targets, poll=poll, interval=interval, echo=out)


@cli.command()
@click.argument("name", required=False)
@friendly
def submit(name):
    """Final grading; records the result.

    Stops the clock, records the result (time, checks, hints, solution viewed) and
    shows the follow-up questions. In a mock interview this ends the interview and
    prints its report.
    Exit status 0 when everything passed, 1 otherwise.
    """
    if name:
        _kata(name)
    p = _practice()
    res = p.submit(name)
    ctx = click.get_current_context()
    if "mock" in res:
        out(render.mock_report(res["mock"]))
        ok = all(r["report"] and r["report"].get("passed") for r in res["mock"]["rows"])
        ctx.exit(0 if ok else 1)
    a, report = res["attempt"], res["report"]
    k = catalogue.get(a["kata"])
    out(click.style(f"{k.name}: final grading of {paths.shown(a['path'])}", bold=True))
    out(render.report(report))
    out(render.summary(report))
    result = click.style("passed", fg="green", bold=True) if a["passed"] else \
        click.style("not passed", fg="red", bold=True)
    over = (click.style(f", {clock.fmt(a['time_used'] - a['budget'])} over time", fg="red")
            if a["overtime"] else f" of {clock.fmt(a['budget'])}")
    out(f"Recorded: {result} in {clock.fmt(a['time_used'])}{over}; {res['n_checks']} "
        f"check{'s' if res['n_checks'] != 1 else ''}, {a['hints']} "
        f"hint{'s' if a['hints'] != 1 else ''}, solution "
        f"{'viewed' if a['solution_viewed'] else 'not viewed'}.")
    out()
    out(render.follow_ups(k))
    ctx.exit(0 if a["passed"] else 1)


@cli.command()
@click.option("--minutes", type=click.IntRange(1, 24 * 60), default=40, show_default=True,
              help="Length of the whole interview in minutes.")
@click.option("--count", type=click.IntRange(1, 10), default=1, show_default=True,
              help="How many katas the interview asks.")
@click.option("--seed", type=int, help="Make the choice of katas repeatable.")
@friendly
def mock(minutes, count, seed):
    """Start a mock interview: one clock, no hints.

    Picks the katas you most need (the schedule of `kata history`), starts one clock
    for the whole interview and prints the questions. `kata submit` ends it.
    """
    p = _practice()
    if count > len(catalogue.katas()):
        raise click.UsageError(f"--count is at most {len(catalogue.katas())}")
    res = p.start_mock(count, minutes, seed)
    m = res["mock"]
    for other in res["paused"]:
        out(f"Paused {other['kata']} at {clock.fmt(other['elapsed'])}.")
    out(click.style(f"Mock interview #{m['id']}: {len(res['attempts'])} "
                    f"question{'s' if len(res['attempts']) > 1 else ''}, "
                    f"{clock.fmt(m['budget'])} on one clock", bold=True)
        + f" (seed {m['seed']}).")
    out("No hints or solutions until it ends. `kata watch` shows the countdown; "
        "`kata submit` ends the interview.")
    for i, a in enumerate(res["attempts"], 1):
        k = catalogue.get(a["kata"])
        out()
        out(click.style(f"Question {i}: {k.name}: {k.title}", bold=True))
        out()
        out(render.question(k))
        out()
        out(f"Edit:  {render.path(a['path'])}")


@cli.command()
@click.argument("name", required=False)
@friendly
def hint(name):
    """Show the next hint (hints used are recorded)."""
    p = _practice()
    k = _kata_of(p, name, "hint")
    res = p.hint(k)
    if res["hint"] is None:
        out(f"No more hints for {k.name}: all {res['total']} are shown below. "
            f"`kata compare {k.name}` puts the reference beside your attempt.")
        for i, h in enumerate(res["all"], 1):
            out(f"  {i}. {h}")
        return
    out(click.style(f"Hint {res['index']} of {res['total']} for {k.name}:", bold=True))
    out(f"  {res['hint']}")


def _guard(p: Practice, k: catalogue.Kata, yes: bool, kind: str) -> bool:
    """The spoiler guard: confirm before showing the reference of an unsolved kata."""
    p._refuse_in_mock("solutions")
    if yes or p.spoiler_free(k.name):
        return True
    try:
        return click.confirm(
            f"You have not passed {k.name} and its time is not up. Show the reference "
            f"solution anyway? (this is recorded)", default=False, err=True)
    except click.Abort:
        raise click.ClickException(
            f"no answer to the question; `kata {kind} {k.name} --yes` shows it") from None


@cli.command()
@click.argument("name")
@click.option("--yes", "-y", is_flag=True, help="Skip the spoiler question.")
@friendly
def solution(name, yes):
    """Show the reference solution.

    Asks first if you have not passed the kata and its time is not up.
    """
    k = _kata(name)
    p = _practice()
    if not _guard(p, k, yes, "solution"):
        out("Not shown.")
        return
    p.record_viewing(k.name, "solution")
    from practice import compare

    compare.show_code(k.solution, title=f"Reference solution: {paths.shown(k.solution)}")


@cli.command()
@click.argument("name", required=False)
@click.option("--yes", "-y", is_flag=True, help="Skip the spoiler question.")
@click.option("--width", type=click.IntRange(40, 400),
              help="Width in columns (default: the terminal's).")
@friendly
def compare(name, yes, width):
    """Show your attempt beside the reference.

    Lines are paired by a diff and wrapped to the terminal; asks first if you have not
    passed the kata and its time is not up.
    """
    p = _practice()
    k = _kata_of(p, name, "compare")
    a = p.attempt_for(k.name)
    if a is None or not Path(a["path"]).is_file():
        raise click.UsageError(f"{k.name} has no attempt to compare; `kata start {k.name}`")
    if not _guard(p, k, yes, "compare"):
        out("Not shown.")
        return
    p.record_viewing(k.name, "compare")
    from practice import compare as comparing

    comparing.side_by_side(Path(a["path"]), k.solution, width=width)


@cli.command()
@click.argument("name", required=False)
@click.option("--attempt", "number", type=click.IntRange(1),
              help="Replay attempt N of NAME: every check with the code it graded.")
@click.option("--full", is_flag=True,
              help="With --attempt, print the whole code of every check, not the changes.")
@friendly
def history(name, number, full):
    """Past attempts, best times and what next.

    Every attempt (practice or mock, time, result, hints, solution viewed), the best
    time per kata and what to practise next by a spaced-repetition schedule.
    """
    if name:
        _kata(name)
    if number is not None and not name:
        raise click.UsageError("--attempt needs a kata: kata history NAME --attempt N")
    p = _practice()
    from practice import history as hist

    if number is not None:
        out(hist.replay(p, name, number, full=full))
    else:
        out(hist.overview(p, name))


@cli.command()
@click.argument("name")
@friendly
def reset(name):
    """Put the stub back; the attempt is archived."""
    k = _kata(name)
    p = _practice()
    res = p.reset(k)
    if res["closed"]:
        c = res["closed"]
        out(f"Closed the attempt in progress ({clock.fmt(c['time_used'] or 0)} on its clock, "
            f"{render.attempt_result(c)}).")
    if res["archived"]:
        out(f"Archived the old file as {render.path(res['archived'])}.")
    out(f"{render.path(res['path'])} is the stub again. `kata start {k.name}` starts the clock.")


if __name__ == "__main__":  # pragma: no cover
    cli(prog_name="kata")
