"""`kata progress`: how ready you are, group by group of the path."""
from __future__ import annotations

import click

from practice.cli import examples, friendly, open_practice, out


@examples(
    'kata progress',
    'kata progress --json               the same figures, as one JSON object',
)
@click.command("progress")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
@friendly
def command(as_json):
    """How ready you are, group by group of the path.

    Katas passed within budget, time to pass against it, the weakest katas and follow-ups,
    what is due.
    """
    from practice import progress
    from practice.views.progress import readiness

    figures = progress.figures(open_practice(json_mode=as_json).store)
    if as_json:
        return click.echo(progress.as_json(figures))
    out(readiness(figures))
