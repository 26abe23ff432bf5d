"""`kata reset NAME`: the stub back, the attempt archived."""
from __future__ import annotations

import click

from practice.cli import examples, friendly, kata_argument, open_practice, out


@examples(
    'kata reset rope',
)
@click.command("reset")
@kata_argument()
@friendly
def command(kata):
    """Put the stub back; the attempt is archived.

    The attempt in progress at NAME ends, and its file is copied into archive/NAME/ in the
    work folder before the stub replaces it (nothing is deleted). `kata start NAME` then
    starts a new clock.
    """
    from practice.views.start import reset_done

    p = open_practice()
    out(reset_done(kata, p.reset(kata)))
