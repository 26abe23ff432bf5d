"""`kata compare`: the attempt beside the reference, and their efficiency."""
from __future__ import annotations

from pathlib import Path

import click

from practice.cli import examples, friendly, kata_argument, kata_of, open_practice, out, spoiler_guard


@examples(
    'kata compare                       the attempt you worked on last',
    'kata compare causal_mha --width 120',
)
@click.command("compare")
@kata_argument(required=False)
@click.option("--yes", "-y", is_flag=True, help="Skip the spoiler question.")
@click.option("--width", type=click.IntRange(40, 400),
              help="Width in columns (default: the terminal's).")
@friendly
def command(kata, yes, width):
    """Show your attempt beside the reference.

    NAME's attempt, or the attempt you worked on last. Side by side, code only (comments
    left out, docstrings cut to their first line, long identical stretches folded, long
    lines wrapped under their indentation), lines paired by a diff, when the width holds it
    (some 110 columns); else a unified diff of the whole files. Under the code, the
    efficiency your last grading measured (Python lines, memory and time at growing sizes)
    beside the reference's. Asks first while it would spoil an attempt, as `kata solution`
    does.
    """
    from practice import aids, targets
    from practice.views import compare

    p = open_practice()
    k = kata_of(p, kata, "compare", last_worked_on=True)
    a = targets.attempt_for(p.store, k.name)
    if a is None or not Path(a.path).is_file():
        raise click.UsageError(f"{k.name} has no attempt to compare; `kata start {k.name}`")
    if not spoiler_guard(p, k, yes, "compare"):
        out("Not shown.")
        return
    aids.record_viewing(p, k.name, "compare")
    compare.show(Path(a.path), k.solution, width=width)
    from practice import paths
    from practice.errors import UnusableAttempt
    from practice.store import records
    from practice.views import efficiency

    last = records.last_grading(p.store, a.id)
    code = last.code if last else None
    code = code.encode("utf-8") if isinstance(code, str) else code
    try:
        edited = code != paths.read_attempt(Path(a.path))
    except (OSError, UnusableAttempt):
        edited = True
    out("", efficiency.compared(records.stored_report(last) if last else None, edited))
