"""`kata history`: past attempts, time to pass, best times and what next; one attempt replayed."""
from __future__ import annotations

import click

from practice.cli import examples, friendly, kata_argument, name_of, open_practice, out


@examples(
    'kata history                       every attempt, best times, what next',
    "kata history rope                  rope's attempts",
    'kata history rope --attempt 2      attempt 2, grading by grading',
    'kata history rope --full           the last attempt, whole code each time',
)
@click.command("history")
@kata_argument(required=False)
@click.option("--attempt", "number", type=click.IntRange(1),
              help="Replay attempt N of NAME: every grading with the code it graded.")
@click.option("--full", is_flag=True,
              help="Replay an attempt with the whole code of every grading, not the changes: "
                   "attempt N with --attempt, else the last attempt (NAME's, or the one you "
                   "worked on last).")
@friendly
def command(kata, number, full):
    """Past attempts, time to pass, best times and what next.

    Every attempt (practice or mock, time, result, gradings, hints, solution viewed),
    each kata's time to pass attempt by attempt, the best time per kata and what to
    practise next by a spaced-repetition schedule. With --attempt, or --full, one
    attempt replayed grading by grading.
    """
    if number is not None and not kata:
        raise click.UsageError("--attempt needs a kata: kata history NAME --attempt N")
    p = open_practice()
    from practice.views.history import overview, replay

    if number is not None or full:
        name, number = (kata.name, number) if number is not None else _last_attempt(p, kata)
        out(replay(p.store, name, number, full=full))
    else:
        out(overview(p.store, name_of(kata)))


def _last_attempt(p, kata) -> tuple[str, int]:
    """(kata, number) of NAME's last attempt, or of the attempt worked on last."""
    from practice import history, targets

    if kata:
        attempts = history.attempts_of(p.store, kata.name)
        if not attempts:
            raise click.UsageError(f"{kata.name} has no attempt yet; `kata start {kata.name}` makes one")
        return kata.name, attempts[-1].n
    a = targets.last_worked_on(p.store)
    if a is None:
        raise click.UsageError("no attempt yet to replay; `kata start NAME` makes one")
    return a.kata, history.number_of(p.store, a)
