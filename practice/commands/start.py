"""`kata start NAME`: start or resume a kata, and its clock."""
from __future__ import annotations

import click

from practice.cli import examples, friendly, kata_argument, open_practice, out


@examples(
    'kata start softmax                 start softmax, or resume it',
    "kata start rope --minutes 15       a tighter budget than the kata's own",
    'kata start rope --fresh            archive the attempt, start from the stub',
    'kata start gqa --edit              and open it in $EDITOR',
)
@click.command("start")
@kata_argument()
@click.option("--minutes", type=click.IntRange(1, 24 * 60),
              help="Time budget in minutes (default: the kata's own budget).")
@click.option("--fresh", is_flag=True,
              help="Archive the attempt in progress (code and results are kept) and start "
                   "again from the stub.")
@click.option("--edit", is_flag=True, help="Open the attempt in $EDITOR.")
@friendly
def command(kata, minutes, fresh, edit):
    """Start or resume a kata, and its clock.

    Copies the stub to your work folder (never over an attempt), prints the question
    and the file to edit, and starts the clock. An attempt in progress is resumed.
    """
    from practice import clock
    from practice.views.start import started

    p = open_practice()
    res = p.start(kata, minutes=minutes, fresh=fresh)
    out(started(kata, res, clock.now()))
    if edit:
        click.edit(filename=str(res.attempt.path))
