"""`kata export`: the whole history on stdout, as JSON or CSV."""
from __future__ import annotations

import click

from practice.cli import examples, friendly, open_practice


@examples(
    'kata export > history.json',
    'kata export --format csv > history.csv',
)
@click.command("export")
@click.option("--format", "fmt", type=click.Choice(["json", "csv"]), default="json",
              show_default=True, help="JSON: one object; CSV: one row per record.")
@friendly
def command(fmt):
    """Write your whole history to stdout, as JSON or CSV.

    Mock interviews, attempts, gradings, hints shown and ratings of follow-up answers.
    """
    from practice import export

    data = export.everything(open_practice(json_mode=True).store)
    click.echo(export.as_json(data) if fmt == "json" else export.as_csv(data), nl=False)
