"""One grammar for every message, the grader's and the command line's: a word with its
article ("an OrderedDict", "a uint8"), a count with its noun
("1 entry", "2 entries"), a part of a whole ("3 of 8 entries", "the only entry"), a run of
indices ("entries 0-3 of 8", "entry 0 of 2"), and a verb that agrees with its subject ("the
weights (scores up to 1e4) differ", "the reference's weights sum", "1 of 4 checks fails").
"""
from __future__ import annotations

import re

# Plurals that are not the noun and an s; and nouns that end in s but are one thing.
IRREGULAR = {"entry": "entries", "axis": "axes", "index": "indices", "matrix": "matrices",
             "query": "queries", "batch": "batches", "this": "these", "that": "those",
             "is": "are", "was": "were", "has": "have", "does": "do", "it": "they"}
SINGULAR = {"axis", "loss", "bias", "its", "this", "is", "was", "has", "does", "dlogits", "process",
            "class", "mass", "status", "focus"}
_PAREN = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
# Where the head of a subject ends: what follows names whose it is, where or when.
_AFTER_HEAD = re.compile(r",| of | from | in | at | on | with | for | along | over | when | where ")


def a(word: str) -> str:
    """`word` with the article its sound takes: 'a list', 'an OrderedDict', 'a uint8', 'an ndarray'."""
    w = word.lower()
    vowel = w[:1] in "aeiou" and not w.startswith(("uint", "uni", "use", "usu", "uti", "ufunc", "one"))
    return f"{'an' if vowel or w.startswith('nd') else 'a'} {word}"


def plural(noun: str) -> str:
    """The plural of a noun, or of the last word of a phrase ("more line": "more lines")."""
    *before, last = noun.split(" ")
    if last in IRREGULAR:
        many = IRREGULAR[last]
    elif last.endswith("y") and last[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        many = last[:-1] + "ies"
    elif last.endswith(("s", "x", "ch", "sh")):
        many = last + "es"
    else:
        many = last + "s"
    return " ".join([*before, many])


def noun(n: int, one: str, many: str | None = None) -> str:
    """The noun for `n` things: `one` for 1, else its plural (`many`, when it is irregular)."""
    return one if n == 1 else (many or plural(one))


def count(n: int, one: str, many: str | None = None) -> str:
    """'1 entry', '2 entries', '0 entries'."""
    return f"{n} {noun(n, one, many)}"


def of(k: int, n: int, one: str, whose: str = "the") -> str:
    """`k` of `n` things: '3 of 8 entries'; of a single one, '{whose} only entry'."""
    return f"{whose} only {one}" if n == 1 else f"{k} of {n} {noun(n, one)}"


def span(first: int, last: int, n: int, one: str, many: str | None = None) -> str:
    """A run of indices among `n`: 'entries 0-3 of 8', and 'entry 0 of 2' for one."""
    if first == last:
        return f"{one} {first} of {n}"
    return f"{noun(2, one, many)} {first}-{last} of {n}"


def head(subject: str) -> str:
    """The word a subject is about: 'the weights (scores up to 1e4 here)', 'the reference's
    weights' and 'the weights of head 0' are about weights, 'y from call 1 of 4' about y."""
    text, before = subject, None
    while before != text:  # brackets inside brackets: the innermost first
        before, text = text, _PAREN.sub(" ", text)
    text = _AFTER_HEAD.split(f" {text} ", maxsplit=1)[0]
    words = text.split()
    return words[-1].strip("`'\".:;") if words else subject


def is_plural(subject: str) -> bool:
    """Whether a subject takes a plural verb: its head noun is a plural ('the weights (scores
    ...)' does, 'the weight matrix of head 0' and 'dlogits' do not)."""
    word = head(subject).lower()
    if word in SINGULAR or word in IRREGULAR:
        return False
    return word in IRREGULAR.values() or (word.endswith("s") and not word.endswith(("ss", "us")))


def agrees(subject: str, one: str, many: str) -> str:
    """The verb that agrees with `subject`: `one` ("differs") or `many` ("differ")."""
    return many if is_plural(subject) else one


def times(n: int) -> str:
    """'never', 'once', '3 times'."""
    return "never" if n == 0 else "once" if n == 1 else f"{n} times"


def verb(n: int, one: str, many: str) -> str:
    """The verb for a count: '1 of 4 checks fails', '2 of 4 checks fail'."""
    return one if n == 1 else many
