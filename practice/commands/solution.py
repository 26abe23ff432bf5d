"""`kata solution NAME`: the reference solution, asked for first while it would spoil."""
from __future__ import annotations

import click

from practice.cli import examples, friendly, kata_argument, open_practice, out, spoiler_guard


@examples(
    'kata solution softmax',
    'kata solution softmax --yes        without the question',
)
@click.command("solution")
@kata_argument()
@click.option("--yes", "-y", is_flag=True, help="Skip the spoiler question.")
@friendly
def command(kata, yes):
    """Show the reference solution.

    Asks first (y/N) while it would spoil an attempt: when you have never tried NAME, when
    your attempt in progress has not passed and its time is not up, and when you set your
    last attempt aside without ever passing NAME. Once you have passed it, or submitted
    your attempt, it is shown at once. Seeing it counts against an attempt in progress that
    has not passed. Refused in a mock interview.
    """
    from practice import aids, paths
    from practice.views import compare

    p = open_practice()
    if not spoiler_guard(p, kata, yes, "solution"):
        out("Not shown.")
        return
    aids.record_viewing(p, kata.name, "solution")
    compare.show_code(kata.solution, title=f"Reference solution: {paths.shown(kata.solution)}")
