"""`kata watch`: a live countdown; the attempt graded again on every save."""
from __future__ import annotations

import click

from practice import startup
from practice.cli import examples, friendly, kata_argument, name_of, open_practice, out


@examples(
    'kata watch                         the kata in progress (in a mock, all)',
    'kata watch rope --poll             on a network or WSL file system',
)
@click.command("watch")
@kata_argument(required=False)
@click.option("--poll", is_flag=True,
              help="Poll the file instead of waiting for file-system events "
                   "(for network and WSL file systems).")
@click.option("--interval", type=click.FloatRange(0.1, 60), default=1.0, show_default=True,
              help="Seconds between countdown updates and polls.")
@friendly
def command(kata, poll, interval):
    """Live countdown; re-grades on every save.

    Shows the clock and the checks, grades the attempt again each time the file's
    contents change (in a mock interview, every question), stops the clock when every
    check passes. Ctrl-C leaves (exit status 130).
    """
    startup.start_grading(name_of(kata))
    from practice import targets, watch

    p = open_practice()
    watch.run(p, targets.to_grade(p.store, name_of(kata), "watch"), poll=poll, interval=interval, echo=out)
