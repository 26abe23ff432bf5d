"""`kata mock`: a mock interview, one clock, no hints."""
from __future__ import annotations

import click

from practice.cli import examples, friendly, open_practice, out


@examples(
    'kata mock                          one kata you most need',
    'kata mock --count 2 --seed 7       the same two katas for anyone with seed 7',
    'kata mock --count 3 --minutes 60   three katas in an hour',
    'kata mock --strict --count 2       three gradings a question, no messages',
)
@click.command("mock")
@click.option("--minutes", type=click.IntRange(1, 24 * 60),
              help="Length of the whole interview in minutes (default: the sum of the "
                   "budgets of the katas it asks).")
@click.option("--count", type=click.IntRange(1, 20), default=1, show_default=True,
              help="How many katas the interview asks.")
@click.option("--seed", type=int,
              help="Draw the katas from this seed alone: the same seed asks the same "
                   "katas, whatever your history.")
@click.option("--strict", is_flag=True, help="Three gradings per question, each showing only which "
                                              "checks fail; no hints; one submit per question.")
@friendly
def command(minutes, count, seed, strict):
    """Start a mock interview: one clock, no hints.

    Picks the katas you most need (the schedule of `kata history`), or with --seed the
    katas that seed draws; starts one clock for the whole interview, as long as the
    katas' budgets together unless --minutes says otherwise, and prints the questions.
    `kata submit` ends it.
    """
    from practice import mock
    from practice.views.mock import mock_started

    p = open_practice()
    if count > len(mock.ready()):
        raise click.UsageError(f"--count is at most {len(mock.ready())}")
    out(mock_started(mock.start(p, count, minutes, seed, strict)))
