"""The examples at the end of each command's help (`kata COMMAND --help`, `kata help COMMAND`):
a command line each, and what it does, in the column the help text keeps (`with_examples`)."""
from __future__ import annotations

import inspect

import click

EXAMPLES: dict[str, list[str]] = {
    "list": [
        'kata list',
        'kata list | grep "not started"     what is left to try',
    ],
    "start": [
        'kata start softmax                 start softmax, or resume it',
        "kata start rope --minutes 15       a tighter budget than the kata's own",
        'kata start rope --fresh            archive the attempt, start from the stub',
        'kata start gqa --edit              and open it in $EDITOR',
    ],
    "check": [
        'kata check                         the attempt in progress',
        'kata check rope                    your attempt at rope',
        'kata check --file softmax.py       any file (its name names the kata)',
        'kata check gqa --file x.py --json  one JSON object on stdout',
    ],
    "pause": [
        'kata pause                         the clock that runs',
        "kata pause rope                    rope's clock",
    ],
    "resume": [
        'kata resume                        the kata paused last',
        "kata resume rope                   rope's clock",
    ],
    "watch": [
        'kata watch                         the kata in progress (in a mock, all)',
        'kata watch rope --poll             on a network or WSL file system',
    ],
    "submit": [
        'kata submit                        the kata in progress, or the interview',
        'kata submit swiglu                 one question of a strict mock interview',
    ],
    "mock": [
        'kata mock                          one kata you most need',
        'kata mock --count 2 --seed 7       the same two katas for anyone with seed 7',
        'kata mock --count 3 --minutes 60   three katas in an hour',
        'kata mock --strict --count 2       three gradings a question, no messages',
    ],
    "hint": [
        'kata hint',
        'kata hint causal_mha',
    ],
    "solution": [
        'kata solution softmax',
        'kata solution softmax --yes        without the question',
    ],
    "compare": [
        'kata compare                       the attempt you worked on last',
        'kata compare causal_mha --width 120',
    ],
    "history": [
        'kata history                       every attempt, best times, what next',
        "kata history rope                  rope's attempts",
        'kata history rope --attempt 2      attempt 2, grading by grading',
        'kata history rope --full           the last attempt, whole code each time',
    ],
    "reset": [
        'kata reset rope',
    ],
    "followups": [
        'kata followups param_count         ask them, one at a time',
        'kata followups gqa --answers --yes with the model answers',
        "printf 'k\\n131072 bytes\\n' | kata followups param_count",
        '                                   answers piped in, a line each',
    ],
    "progress": [
        'kata progress',
        'kata progress --json               the same figures, as one JSON object',
    ],
    "export": [
        'kata export > history.json',
        'kata export --format csv > history.csv',
    ],
    "help": [
        'kata help                          every command',
        'kata help check',
        'kata help dev new',
    ],
}


def with_examples(group: click.Group, examples: dict[str, list[str]] = EXAMPLES) -> None:
    """End the help of each of the group's commands with its examples (kept as they are
    written: `\\b` keeps click from wrapping them)."""
    for name, lines in examples.items():
        command = group.commands[name]
        heading = "Example:" if len(lines) == 1 else "Examples:"
        command.help = inspect.cleandoc(command.help or "") + "\n\n\b\n" + heading + "\n" + "\n".join(
            "  " + line for line in lines)
