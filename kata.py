"""The `kata` command: practise transformer NumPy katas against a clock and hidden graders.

This module is the command line's root only: the group of commands, in the order of a
practice round (COMMANDS), and its help. Each command is a module of its own,
practice/commands/NAME.py, loaded when it is run or its help is asked for, so that a command
loads only what it needs (practice/commands/__init__.py says how a command is written).
Nothing heavy is imported at start-up (no NumPy, rich, sqlite or watchdog); what makes
`kata` start fast is in practice.startup.
"""
from __future__ import annotations

from practice import startup

startup.quiet_while_loading()  # until the command is loaded (practice.startup)

import importlib  # noqa: E402

import click  # noqa: E402

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
# Every command, in the order of a practice round (`kata --help` lists them so): each is the
# `command` of practice/commands/NAME.py.
COMMANDS = ("list", "start", "check", "status", "pause", "resume", "watch", "submit", "mock", "hint",
            "solution", "compare", "history", "reset", "followups", "progress", "export", "dev", "help")


class KataGroup(click.Group):
    """The commands of COMMANDS, each imported from its module when it is first needed."""

    def list_commands(self, ctx):
        return list(COMMANDS)

    def get_command(self, ctx, name):
        if name not in COMMANDS:
            return None
        return importlib.import_module(f"practice.commands.{name}").command

    def resolve_command(self, ctx, args):
        found = super().resolve_command(ctx, args)
        startup.loaded()  # the command is loaded: Ctrl-C is its KeyboardInterrupt now
        return found

    def invoke(self, ctx):
        """An interrupted command (Ctrl-C) exits 130, without a traceback or "Aborted!"."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo(err=True)
            raise click.exceptions.Exit(130) from None

    def main(self, args=None, *rest, **kwargs):
        """As `kata` run from a shell (its arguments from sys.argv), a command that has
        finished leaves at once (practice.startup.leave); called with arguments (click's test
        runner), it returns or raises as click's main does. Ctrl-C is quiet until the command
        is loaded."""
        startup.quiet_while_loading()
        try:
            if args is not None:
                return super().main(args, *rest, **kwargs)
            try:
                return super().main(args, *rest, **kwargs)
            except SystemExit as e:
                startup.leave(e.code)
        finally:
            startup.loaded()


@click.group(cls=KataGroup, context_settings=CONTEXT)
@click.version_option(package_name="attention-katas", message="%(prog)s %(version)s")
def cli():
    """Timed NumPy katas on transformer attention, graded by hidden tests.

    \b
    A practice round:
      kata list                  the katas, your status and best times
      kata start causal_mha      copy the stub, print the question, start the clock
      kata watch                 live countdown; re-grades every time you save
      kata check                 grade the attempt now
      kata hint                  the next hint (recorded)
      kata submit                final grading; result, time and follow-up questions
      kata followups softmax     the follow-up questions, one at a time, rated
      kata history               past attempts and what to practise next
      kata progress              how ready you are, group by group of the path
    A mock interview: kata mock (--strict), then kata watch / kata check, then kata submit.
    `kata help COMMAND` (or `kata COMMAND --help`) says more of each, with examples.

    \b
    Attempts are plain .py files in the work folder, which is:
      KATA_HOME, when it is set;
      else work/ in the repository, for an editable install (pip install -e .);
      else a folder of your own: ~/.local/share/attention-katas on Linux
      ($XDG_DATA_HOME/attention-katas), ~/Library/Application Support/attention-katas
      on macOS, %LOCALAPPDATA%\\attention-katas on Windows (pip install .).
    `kata status` names the folder in use.

    \b
    Shell completion of commands and kata names (zsh and fish: see the README):
      eval "$(_KATA_COMPLETE=bash_source kata)"
    """


startup.loaded()  # Ctrl-C is a KeyboardInterrupt again

if __name__ == "__main__":  # pragma: no cover
    cli(prog_name="kata")
