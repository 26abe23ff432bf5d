"""`kata list`: every kata, its status and best times."""
from __future__ import annotations

import click

from practice.cli import examples, friendly, open_practice, out


@examples(
    'kata list',
    'kata list | grep "not started"     what is left to try',
)
@click.command("list")
@friendly
def command():
    """List the katas, your status and best times.

    One kata a line, its name first, in the order of the path (attention, position,
    block, decoding, training): group, title, difficulty, time budget, status (not
    started, in progress, passed, not passed), best time and last result. A narrow
    terminal drops the columns it has no room for.
    """
    from practice import history
    from practice.views.status import kata_list

    p = open_practice()
    out(kata_list(history.statuses(p.store), history.best_times(p.store),
                           history.last_results(p.store)))
