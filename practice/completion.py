"""Shell completion of kata names, answered without loading click.

A Tab runs `kata` with _KATA_COMPLETE set, and click answers after importing itself and
every command, which takes most of the time the shell waits. When the word completed is
the first argument of a command that takes a kata's name (`kata start so<Tab>`), this
module answers from the catalogue alone, in the lines click's completion scripts read
(`kata.KataName.shell_complete` gives the same names through click). Anything else
(commands, options, paths, quoted words) is left to click.
"""
from __future__ import annotations

import os
import sys

# The commands whose first argument is a kata's name (tests/test_completion.py holds this
# to kata.py's commands).
NAME_FIRST = ("start", "check", "watch", "submit", "pause", "resume", "hint", "solution",
              "compare", "history", "reset", "followups")
CATALOGUE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                         "katas", "catalogue.toml")


def complete_quickly() -> None:
    """Print the completions and exit when this module can answer; else return."""
    lines = answer(os.environ)
    if lines is not None:
        sys.stdout.write(lines + "\n")
        sys.stdout.flush()
        sys.exit(0)


def answer(environ) -> str | None:
    """What click would print for the completion asked in `environ`; None when the
    question is not one answered here."""
    shell, _, instruction = environ.get("_KATA_COMPLETE", "").partition("_")
    words = environ.get("COMP_WORDS", "")
    if instruction != "complete" or shell not in ("bash", "zsh", "fish") or any(c in words for c in "'\"\\"):
        return None
    args, incomplete = _arguments(shell, words.split(), environ.get("COMP_CWORD", ""))
    if args is None or len(args) != 1 or args[0] not in NAME_FIRST or incomplete.startswith("-"):
        return None
    katas = _katas()
    if katas is None:
        return None
    return "\n".join(_line(shell, name, title) for name, title in katas if name.startswith(incomplete))


def _arguments(shell: str, words: list[str], cword: str) -> tuple[list[str] | None, str]:
    """(the words before the one completed, that word), as click reads them for `shell`."""
    if shell == "fish":  # COMP_CWORD is the word itself, also last in COMP_WORDS
        args = words[1:]
        if cword and args and args[-1] == cword:
            args.pop()
        return args, cword
    if not cword.isdigit():
        return None, ""
    n = int(cword)
    return words[1:n], words[n] if n < len(words) else ""


def _line(shell: str, name: str, title: str) -> str:
    """One completion as click's BashComplete, ZshComplete and FishComplete write it."""
    if shell == "bash":
        return f"plain,{name}"
    if shell == "zsh":
        return f"plain\n{name}\n{title or '_'}"
    help_ = title.replace("\n", "\\n").replace("\t", " ")
    return f"plain,{name}\t{help_}" if title else f"plain,{name}"


def _katas() -> list[tuple[str, str]] | None:
    """(name, title) of every kata, in catalogue order; None when the catalogue cannot be
    read (click then says nothing either, or what is wrong)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        return None
    try:
        with open(CATALOGUE, "rb") as f:
            entries = tomllib.load(f)["kata"]
        return [(e["name"], e["title"]) for e in entries]
    except (OSError, ValueError, KeyError, TypeError):
        return None
