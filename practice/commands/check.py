"""`kata check`: grade the attempt (every question of a mock interview) or any file, and print
the report: on a terminal its checks as they end first (practice.views.check), as JSON with
--json. It loads what it needs when it runs, once the grading process has started.
"""
from __future__ import annotations

import contextlib
from pathlib import Path

import click

from practice import startup
from practice.cli import examples, friendly, kata_argument, name_of, open_practice, out


@examples(
    'kata check                         the attempt in progress',
    'kata check rope                    your attempt at rope',
    'kata check --file softmax.py       any file (its name names the kata)',
    'kata check gqa --file x.py --json  one JSON object on stdout',
)
@click.command("check")
@kata_argument(required=False)
@click.option("--file", "file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Grade this file instead of your attempt (records nothing).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the report as one JSON object on stdout (notes go to stderr).")
@friendly
def command(kata, file, as_json):
    """Grade your attempt, or any file with --file.

    Grades NAME's attempt, or the attempt of the session in progress (in a mock
    interview, every question), and records the grading with the code it graded. With
    --file, grades that file and records nothing. Exit status 0 when every check
    passes, 1 when any fails, 2 on a usage error. On a terminal, each check shows as it
    ends.
    """
    startup.start_grading(name_of(kata), file and str(file))
    from practice import grading, paths, targets, term

    ctx = click.get_current_context()
    live = not as_json and term.live()  # on a terminal: the header at once, each check as it ends
    if file is not None:
        name = kata.name if kata else _kata_of_file(file)
        source = paths.read_attempt(file)
        with _drawn(live, name, file, name) as progress:
            report = grading.grade(name, file, source=source, **progress)
        _show([(name, file, report)], as_json, recorded=False)
        ctx.exit(0 if report.passed else 1)
    p = open_practice(json_mode=as_json)
    before = targets.to_grade(p.store, name_of(kata))
    done = []
    for a in before:
        with _drawn(live, _label(p, a), a.path, a.kata) as progress:
            done.append(p.grade(a, "check", **progress))
        if live:  # each report as soon as it comes
            _show([(_label(p, done[-1].attempt), done[-1].attempt.path, done[-1].report)], False, True)
    if not live:
        shown = [(_label(p, g.attempt), g.attempt.path, g.report) for g in done]
        _show(shown, as_json, recorded=all(g.recorded for g in done))
    _after(p, before, done, err=as_json)
    ctx.exit(0 if all(g.report.passed for g in done) else 1)


@contextlib.contextmanager
def _drawn(live: bool, label: str, file, kata: str):
    """The keyword arguments of a grading: on a terminal (`live`), its progress drawn in
    place until it ends (practice.views.check); elsewhere none, and what prints a report is
    imported while it grades."""
    if not live:
        startup.load_meanwhile("practice.views.check")  # what prints the report, while it grades
        yield {}
        return
    from practice.views.check import Progress

    with Progress(label, file, kata) as shown:
        yield {"progress": shown.add}


def _kata_of_file(file: Path) -> str:
    from practice import catalogue

    if file.stem not in catalogue.names():
        raise click.UsageError(f"cannot tell which kata {file} is for (its name is not a "
                               f"kata's); name it: kata check NAME --file {file}")
    return file.stem


def _label(p, a) -> str:
    from dataclasses import replace

    from practice import history
    from practice.views.attempt import attempt_label

    return attempt_label(replace(a, n=history.number_of(p.store, a)))


def _show(graded: list[tuple], as_json: bool, recorded: bool) -> None:
    """Print gradings: as text, or as one JSON object on stdout (summaries to stderr)."""
    import json

    from graders.engine.report import Report
    from practice.views import report

    if as_json:
        reports = [rep for _, _, rep in graded]
        one = reports[0] if len(reports) == 1 else Report.combine(reports)
        click.echo(json.dumps(dict(one.to_dict(), recorded=recorded)))
        out(*(report.summary(rep) for rep in reports), err=True)
        return
    for label, file, rep in graded:
        out(report.graded(label, file, rep))


def _after(p, before: list, done: list, err: bool) -> None:
    """The notes and the clock after `kata check`."""
    from practice import clock, mock
    from practice.views.check import after_grading

    for g in done:
        if g.note:
            out(f"note: {g.note}", err=True)
    if all(g.recorded for g in done):
        pairs = [(a, g.attempt) for a, g in zip(before, done)]
        out(after_grading(pairs, clock.now(), mock.interview(p.store, before[0])),
            err=err)
