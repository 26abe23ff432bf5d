"""The kata catalogue: one ordered list in katas/catalogue.toml, paths by convention."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TypedDict

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

import graders

ROOT = Path(graders.ROOT)
CATALOGUE = ROOT / "katas" / "catalogue.toml"
DIFFICULTIES = ("easy", "medium", "hard")
# The path through the katas, in the order `kata list` shows it.
GROUPS = ("attention", "position", "block", "decoding", "training")


@dataclass(frozen=True)
class FollowUp:
    """A question an interviewer asks once the code is done, and its model answer. One whose
    answer is a number also has the number, what it counts (`unit`, said at the prompt) and
    how far an answer may be from it (`tolerance`; 0: exactly)."""
    question: str
    answer: str = ""
    number: int | float | None = None
    unit: str = ""
    tolerance: float = 0

    @property
    def numeric(self) -> bool:
        return self.number is not None


@dataclass(frozen=True)
class Kata:
    name: str
    title: str
    difficulty: str
    minutes: int
    hints: tuple[str, ...]
    follow_ups: tuple[FollowUp, ...]
    group: str = ""                   # one of GROUPS ("" when the catalogue gives none)
    traps: tuple[str, ...] = ()       # phrases that spell out a fix; never in the stub
    hint_checks: tuple[tuple[str, ...], ...] = ()  # for each hint, the ids of the checks it helps with

    @property
    def stub(self) -> Path:
        return ROOT / "katas" / f"{self.name}.py"

    @property
    def solution(self) -> Path:
        return ROOT / "solutions" / f"{self.name}.py"

    @property
    def folder(self) -> Path:
        """graders/NAME: the grader, its domain, the known bugs and the alternative answers."""
        return ROOT / "graders" / self.name

    @property
    def grader(self) -> Path:
        return self.folder / "grader.py"

    @property
    def bugs(self) -> Path:
        return self.folder / "bugs.py"

    @property
    def alternatives(self) -> list[Path]:
        return sorted((self.folder / "alternatives").glob("*.py"))


class CatalogueError(ValueError):
    """katas/catalogue.toml cannot be read as the catalogue: which kata, which key, what is wrong."""


class Entry(TypedDict, total=False):
    """A `[[kata]]` table of the catalogue as it is written (SCHEMA says what each key must
    hold; `kata dev check` reads entries that may not)."""
    name: str
    title: str
    writes: str
    group: str
    difficulty: str
    minutes: int
    hints: list[str]
    hint_checks: list[list[str]]
    traps: list[str]
    follow_ups: list


# What every entry holds: key -> (what it must be, required). Checked when the catalogue is read,
# so that a missing or mistyped key is a sentence naming the kata and the key, never a KeyError.
SCHEMA = {
    "name": ("a kata name (lower case, digits and _)", True),
    "title": ("a non-empty string", True),
    "writes": ("a non-empty string: what the candidate writes, for the README's table", False),
    "group": (f"one of {', '.join(GROUPS)}", False),
    "difficulty": (f"one of {', '.join(DIFFICULTIES)}", True),
    "minutes": ("a whole number of minutes above 0", True),
    "hints": ("a list of non-empty strings", True),
    "hint_checks": ("a list with a list of check ids for each hint", False),
    "traps": ("a list of phrases", False),
    "follow_ups": ("a list of questions: [[kata.follow_ups]] tables with a `question` (and "
                   "`answer`, `number`, `unit`, `tolerance`), or strings", True),
}
# The keys of a follow-up table, and what each must hold.
FOLLOW_UP_KEYS = {
    "question": lambda v: isinstance(v, str) and bool(v.strip()),
    "answer": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "unit": lambda v: isinstance(v, str),
    "tolerance": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0,
}


def _valid(key: str, value) -> bool:
    def strings(v, least):
        return isinstance(v, list) and len(v) >= least and all(isinstance(x, str) and x.strip() for x in v)

    return {
        "name": lambda v: isinstance(v, str) and v.isidentifier() and v == v.lower(),
        "title": lambda v: isinstance(v, str) and bool(v.strip()),
        "writes": lambda v: isinstance(v, str) and bool(v.strip()),
        "group": lambda v: v in GROUPS,
        "difficulty": lambda v: v in DIFFICULTIES,
        "minutes": lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0,
        "hints": lambda v: strings(v, 1),
        "hint_checks": lambda v: isinstance(v, list) and all(
            isinstance(ids, list) and all(isinstance(i, str) and i.isidentifier() for i in ids) for ids in v),
        "traps": lambda v: strings(v, 0),
        "follow_ups": lambda v: isinstance(v, list) and len(v) >= 1 and all(map(_follow_up_ok, v)),
    }[key](value)


def _follow_up_ok(v) -> bool:
    """A question as a string, or a table with a question and only the keys a follow-up has."""
    if isinstance(v, str):
        return bool(v.strip())
    return isinstance(v, dict) and "question" in v and \
        all(key in FOLLOW_UP_KEYS and FOLLOW_UP_KEYS[key](x) for key, x in v.items())


def _follow_up(v: str | dict) -> FollowUp:
    return FollowUp(v) if isinstance(v, str) else FollowUp(**v)


def problems(data) -> list[tuple[str, str]]:
    """(kata, what is wrong) for every entry of a parsed catalogue that does not fit SCHEMA."""
    entries = data.get("kata") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        return [("catalogue", "there is no [[kata]] entry")]
    out, seen = [], set()
    for i, entry in enumerate(entries, 1):
        name = entry.get("name") if isinstance(entry, dict) and isinstance(entry.get("name"), str) \
            else f"entry {i}"
        if not isinstance(entry, dict):
            out.append((name, "is not a table of keys"))
            continue
        for key, (what, required) in SCHEMA.items():
            if key not in entry:
                if required:
                    out.append((name, f"has no `{key}` ({what})"))
            elif not _valid(key, entry[key]):
                out.append((name, f"`{key}` must be {what}, not {entry[key]!r}"))
        out += [(name, f"has a key the catalogue does not know: `{key}`") for key in entry if key not in SCHEMA]
        if name in seen:
            out.append((name, "is in the catalogue twice"))
        seen.add(name)
    return out


class UnknownKata(LookupError):
    """A name that is not in the catalogue; carries the closest names."""

    def __init__(self, name: str, suggestions: list[str]):
        self.name = name
        self.suggestions = suggestions
        hint = f" Did you mean {' or '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"no kata named {name!r}.{hint} (`kata list` shows them all)")


@lru_cache(maxsize=None)
def katas() -> tuple[Kata, ...]:
    """Every kata, in catalogue order; CatalogueError when the catalogue does not fit SCHEMA."""
    return tuple(_entry(e) for e in _checked(_parsed(_text())))


def _text() -> str:
    try:
        return CATALOGUE.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise CatalogueError(f"{CATALOGUE} cannot be read: {e}") from None


def _parsed(text: str) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise CatalogueError(f"{CATALOGUE} cannot be read: {e}") from None


def _checked(data: dict) -> list[Entry]:
    found = problems(data)
    if found:
        kata, what = found[0]
        more = f" (and {len(found) - 1} more: `kata dev check` lists them)" if len(found) > 1 else ""
        raise CatalogueError(f"{CATALOGUE}: kata {kata!r} {what}{more}")
    return data["kata"]


def _entry(entry: Entry) -> Kata:
    return Kata(
        name=entry["name"],
        title=entry["title"],
        difficulty=entry["difficulty"],
        minutes=int(entry["minutes"]),
        hints=tuple(entry["hints"]),
        follow_ups=tuple(_follow_up(f) for f in entry["follow_ups"]),
        group=entry.get("group", ""),
        traps=tuple(entry.get("traps", ())),
        hint_checks=tuple(tuple(ids) for ids in entry.get("hint_checks", ())),
    )


@lru_cache(maxsize=None)
def _one(name: str, where: Path) -> Kata | None:
    """`name`'s entry read from its own `[[kata]]` table alone, which is all a command that
    names a kata needs before it starts grading (the whole catalogue takes tens of
    milliseconds to read); None when that table cannot be told apart (then katas() reads
    everything and says what is wrong)."""
    text = _text()
    line = f'name = "{name}"'
    blocks = [b for b in text.split("\n[[kata]]\n")[1:] if b.split("\n", 1)[0].strip() == line]
    if len(blocks) != 1:
        return None
    try:
        data = tomllib.loads("[[kata]]\n" + blocks[0])
    except tomllib.TOMLDecodeError:
        return None
    if problems(data) or [e.get("name") for e in data.get("kata", [])] != [name]:
        return None
    return _entry(data["kata"][0])


def names() -> list[str]:
    return [k.name for k in katas()]


def in_path_order() -> list[Kata]:
    """Every kata by group (in GROUPS order, katas without a known group last), then in
    catalogue order."""
    rank = {g: i for i, g in enumerate(GROUPS)}
    return sorted(katas(), key=lambda k: rank.get(k.group, len(GROUPS)))  # stable


def get(name: str) -> Kata:
    """The kata called `name`, or UnknownKata with 'did you mean' suggestions."""
    if katas.cache_info().currsize == 0 and name.isidentifier():
        found = _one(name, CATALOGUE)  # by its path too: a test may point CATALOGUE elsewhere
        if found is not None:
            return found
    for k in katas():
        if k.name == name:
            return k
    raise UnknownKata(name, suggest(name))


def suggest(name: str) -> list[str]:
    """Close names for a mistyped kata name (also matches a unique prefix or substring)."""
    import difflib  # only for a name that is not a kata's: the command line parses names

    all_names = names()
    close = difflib.get_close_matches(name, all_names, n=2, cutoff=0.5)
    if not close:
        close = [n for n in all_names if name and (n.startswith(name) or name in n)][:2]
    return close
