"""`kata dev`, for the repository's own katas: check that every one is whole, write anew what
is derived, or write the files of a new one (the work is in practice.dev, practice.dev_update
and practice.dev_new). Its commands load what they need when run.
"""
from __future__ import annotations

import click

from practice.cli import out


@click.group("dev")
def command():
    """Check the repository's katas whole, or start a new one."""


@command.command("check")
def dev_check_command():
    """Check that every kata is whole; exit 1 naming each kata and fault.

    Reads the catalogue against its schema, every kata's files (stub, reference, grader,
    domain, known bugs, alternatives) and nothing orphaned, every follow-up with a model
    answer, stub and reference agreeing, no trap phrase in a stub, the README's table, each
    grader's plain agreement check and each domain's coverage of the explorer's dimensions.
    Grades nothing.

    \b
    Example:
      kata dev check                     in a clone of the repository
    """
    from graders.engine.grammar import count
    from practice import dev

    root = _repository()
    faults = dev.check(root)
    for f in faults:
        out(f"{f.kata}: {f.what}")
    katas = len({f.kata for f in faults})
    out(f"{count(len(faults), 'fault')} in {count(katas, 'place')}" if faults
        else f"every kata is whole ({count(len(dev.names(root)), 'kata')})")
    click.get_current_context().exit(1 if faults else 0)


@command.command("update")
def dev_update_command():
    """Write anew what is derived from one source: each stub from its reference (the question,
    the signatures), each reference's time budget from the catalogue, the README's table of
    katas from the catalogue. `kata dev check` reports any of them that has drifted.

    \b
    Example:
      kata dev update                    in a clone of the repository, after editing a reference
    """
    from graders.engine.grammar import count
    from practice import dev, dev_update, paths

    root = _repository()
    written = dev_update.update(root, dev.entries(root))
    for path in written:
        out(f"wrote {paths.shown(path)}")
    out(f"{count(len(written), 'derived file')} written anew" if written
        else "every derived file is up to date")


@command.command("new")
@click.argument("name")
@click.option("--title", help="The kata's title (default: from its name).")
@click.option("--minutes", type=click.IntRange(1, 24 * 60), default=20, show_default=True,
              help="Its time budget.")
def dev_new_command(name, title, minutes):
    """Write every file a new kata needs, from templates.

    The stub, the reference, the grader, the domain, the known bugs, two alternative
    answers and a catalogue entry, each marked where it must be filled in; no file is
    replaced. `kata dev check` then says what is left to do.

    \b
    Example:
      kata dev new alibi --title "ALiBi position biases" --minutes 25
    """
    from practice import dev_new, paths

    root = _repository()
    if not name.isidentifier() or name != name.lower():
        raise click.UsageError(f"{name!r} is not a kata name: lower case letters, digits and _")
    existing = dev_new.existing(root, name)
    if existing:
        raise click.UsageError(f"there is a kata {name} already ({paths.shown(existing[0])}); `kata dev new` "
                               f"starts a new one, under a name of its own")
    written = dev_new.new(root, name, title, minutes)
    for path in written:
        out(f"wrote {paths.shown(path)}")
    out(f"Next: `kata dev check` lists what {name} still needs.")


def _repository():
    """The clone of the repository the current folder is in (the folder itself or one above it):
    the dev commands work on the repository they stand in, whichever copy of `kata` runs them."""
    from pathlib import Path

    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "katas" / "catalogue.toml").is_file() and (folder / "graders" / "engine").is_dir() \
                and (folder / "README.md").is_file() and not any(folder.parent.glob("attention_katas-*.dist-info")):
            return folder
    raise click.UsageError("`kata dev` works in a clone of the repository: run it in the clone's folder "
                           "(or a folder in it)")
