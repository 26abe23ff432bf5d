"""`kata pause`: stop the clock."""
from __future__ import annotations

import click

from practice.cli import examples, friendly, kata_argument, name_of, open_practice, out


@examples(
    'kata pause                         the clock that runs',
    "kata pause rope                    rope's clock",
)
@click.command("pause")
@kata_argument(required=False)
@friendly
def command(kata):
    """Stop the clock (recorded).

    NAME defaults to the kata in progress: the one whose clock runs (else the one
    started, resumed or graded last). A mock interview's clock does not stop.
    """
    from practice import clock

    p = open_practice()
    a = p.pause(name_of(kata))
    out(f"Paused {a.kata} at {clock.fmt(a.elapsed)}. `kata resume` restarts the clock.")
