"""`kata resume`: restart a paused clock."""
from __future__ import annotations

import click

from practice.cli import examples, friendly, kata_argument, name_of, open_practice, out


@examples(
    'kata resume                        the kata paused last',
    "kata resume rope                   rope's clock",
)
@click.command("resume")
@kata_argument(required=False)
@friendly
def command(kata):
    """Restart a paused clock (recorded).

    NAME defaults to the kata in progress: the one started, resumed or graded last. Any
    other clock that runs is paused (one practice clock runs at a time).
    """
    from practice import clock
    from practice.views.start import resumed

    p = open_practice()
    out(resumed(p.resume(name_of(kata)), clock.now()))
