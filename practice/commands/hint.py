"""`kata hint`: the next hint, recorded."""
from __future__ import annotations

import click

from practice.cli import examples, friendly, kata_argument, kata_of, open_practice, out


@examples(
    'kata hint',
    'kata hint causal_mha',
)
@click.command("hint")
@kata_argument(required=False)
@friendly
def command(kata):
    """Show the next hint (hints used are recorded).

    NAME defaults to the kata in progress. The first hint is the one for the first check
    that failed in your last grading. Refused in a mock interview.
    """
    from practice import aids
    from practice.views import hints

    p = open_practice()
    k = kata_of(p, kata, "hint")
    out(hints.hint(k, aids.hint(p, k)))
