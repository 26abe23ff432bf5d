"""`kata followups NAME`: a kata's follow-up questions, one at a time, rated."""
from __future__ import annotations

import click

from practice.cli import examples, friendly, kata_argument, open_practice, out, spoiler_guard


@examples(
    'kata followups param_count         ask them, one at a time',
    'kata followups gqa --answers --yes with the model answers',
    "printf 'k\\n131072 bytes\\n' | kata followups param_count",
    '                                   answers piped in, a line each',
)
@click.command("followups")
@kata_argument()
@click.option("--answers", is_flag=True,
              help="Show each model answer (asks first, as `kata solution` does).")
@click.option("--yes", "-y", is_flag=True, help="With --answers, skip the spoiler question.")
@friendly
def command(kata, answers, yes):
    """Ask a kata's follow-up questions; numbers are checked.

    Say each answer aloud and rate it (k: knew it, p: partly, m: missed), or type the number
    it asks for, alone or with its unit. Ratings count in what to practise next and in
    `kata progress`.
    """
    from practice import followups

    p = open_practice()
    if not answers or spoiler_guard(p, kata, yes, "followups"):
        return followups.practise(p, kata, answers)
    out("Not shown.")
