"""`kata status`: the kata in progress, its clock and the work folder."""
from __future__ import annotations

import click

from practice.cli import friendly, open_practice, out


@click.command("status")
@friendly
def command():
    """Show the kata in progress, its clock and the work folder.

    In a mock interview, each question and its last grading; with nothing in progress,
    what to practise next.
    """
    from practice import clock, paths, targets
    from practice.views.status import status

    p = open_practice()
    out(status(targets.status(p.store), clock.now()),
        f"Work folder: {paths.shown(p.home)}" + (" (read-only)" if p.store.readonly else ""))
