"""`kata help COMMAND`: a command's help, as `kata COMMAND --help` shows it."""
from __future__ import annotations

import click

from practice.cli import examples


@examples(
    'kata help                          every command',
    'kata help check',
    'kata help dev new',
)
@click.command("help", short_help="Show a command's help, as `kata COMMAND --help` does.")
@click.argument("words", metavar="[COMMAND]...", nargs=-1)
def command(words):
    """Show a command's help: `kata help COMMAND` is `kata COMMAND --help`.
    """
    at = click.get_current_context().parent  # the root's: `kata`
    cmd = at.command
    for i, name in enumerate(words):
        sub = cmd.get_command(at, name) if isinstance(cmd, click.Group) else None
        if sub is None:
            import difflib

            known = cmd.list_commands(at) if isinstance(cmd, click.Group) else []
            like = difflib.get_close_matches(name, known, n=1)
            raise click.UsageError(f"no such command: kata {' '.join(words[:i + 1])}"
                                   + (f". Did you mean {like[0]!r}?" if like else ""))
        cmd, at = sub, click.Context(sub, info_name=name, parent=at)
    click.echo(cmd.get_help(at))
