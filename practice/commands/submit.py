"""`kata submit`: the final grading, recorded; in a mock interview, its end."""
from __future__ import annotations

import click

from practice import startup
from practice.cli import examples, friendly, kata_argument, name_of, open_practice, out


@examples(
    'kata submit                        the kata in progress, or the interview',
    'kata submit swiglu                 one question of a strict mock interview',
)
@click.command("submit")
@kata_argument(required=False)
@friendly
def command(kata):
    """Final grading; records the result.

    Stops the clock, records the result (time, gradings, hints, solution viewed) and
    shows the follow-up questions. In a mock interview this ends the interview, prints
    its report and asks the follow-up questions (a strict one submits NAME alone).
    Exit status 0 when everything passed, 1 otherwise.
    """
    startup.start_grading(name_of(kata))
    from practice import catalogue, followups, mock, strict
    from practice.views.mock import mock_report, question_submitted
    from practice.views.report import report, summary
    from practice.views.submit import submitted

    p = open_practice()
    res = p.submit(name_of(kata))
    ctx = click.get_current_context()
    if isinstance(res, mock.MockReport):
        out(mock_report(res, with_follow_ups=False))
        followups.after_interview(p, res)
        ctx.exit(0 if res.passed else 1)
    if isinstance(res, strict.QuestionSubmitted):
        out(question_submitted(res))
        ctx.exit(0 if res.report.passed else 1)
    if not res.recorded:  # graded, but nothing could be recorded
        out(report(res.report), summary(res.report))
        raise click.ClickException(f"{res.note}; nothing was submitted")
    a = res.attempt
    out(submitted(catalogue.get(a.kata), a, res.report, res.n_gradings))
    ctx.exit(0 if a.passed else 1)
