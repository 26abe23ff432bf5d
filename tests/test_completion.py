"""Tab completion of kata names is answered without click (practice.completion) exactly as
click would answer it; whatever else is asked is left to click."""
from __future__ import annotations

import pytest

from practice import completion


def asked(shell: str, words: str) -> dict:
    if shell == "fish":  # fish sends the word being completed itself
        return {"_KATA_COMPLETE": "fish_complete", "COMP_WORDS": words,
                "COMP_CWORD": words.split()[-1] if not words.endswith(" ") else ""}
    return {"_KATA_COMPLETE": f"{shell}_complete", "COMP_WORDS": words,
            "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1))}


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
@pytest.mark.parametrize("words", ["kata start so", "kata check ca", "kata history r", "kata watch ",
                                   "kata hint nothing"])
def test_kata_names_are_completed_as_click_completes_them(kenv, shell, words):
    env = asked(shell, words)
    fast = completion.answer(env)
    assert fast is not None
    assert fast + "\n" == kenv.run(env=env).stdout


@pytest.mark.parametrize("words", ["kata st", "kata start --", "kata check --file so", "kata dev new x",
                                   "kata start 'so", "kata "])
def test_anything_else_is_left_to_click(words):
    assert completion.answer(asked("bash", words)) is None


def test_the_commands_that_take_a_kata_first_are_those_of_the_command_line():
    import click

    import kata
    from practice.cli import KataName

    ctx = click.Context(kata.cli)
    commands = {name: kata.cli.get_command(ctx, name) for name in kata.cli.list_commands(ctx)}
    takes = {name for name, command in commands.items()
             if command.params and isinstance(command.params[0].type, KataName)}
    assert set(completion.NAME_FIRST) == takes
