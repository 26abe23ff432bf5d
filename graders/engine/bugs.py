"""The catalogue of realistic mistakes, one module per kata (graders/KATA/bugs.py).

Each module defines `BUGS`, a list of `Bug`: a complete attempt that contains one
mistake candidates really make, the check it must fail, and the one-line lesson shown
when an attempt behaves like it. The project's tests run every entry through its grader;
the grader uses the same entries to name the likely cause of a failure.

Each module also defines `BASE`, a correct answer, and writes every bug as
`edited(BASE, (old, new), ...)`, so that a bug reads as exactly the mistake it is. A
mistake that only exists in another layout (an einsum, a loop over heads) is an edit of
a second correct answer in that layout, named `BASE_...`. The project's tests grade
every base as a correct answer.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass
from functools import cached_property
from types import ModuleType


@dataclass(frozen=True)
class Bug:
    name: str      # short identifier, unique within the kata
    fails: str     # the check this bug must fail: its function in the grader, e.g. "agrees"
    likely: str    # the lesson, completing "Likely cause: ..."
    code: str      # the attempt's source; `import numpy as np` is added when absent
    stateful: bool = False  # its answers depend on earlier calls (a cache, a reused buffer)
    # what a reader should be told when no name is given: "kind" or "kind@part" (graders.engine.said),
    # any one of them; a near miss must get one of them, and no catalogued name
    says: tuple[str, ...] = ()

    @property
    def source(self) -> str:
        body = textwrap.dedent(self.code).strip() + "\n"
        if "import numpy as np" not in body:
            body = "import numpy as np\n\n" + body
        return body

    @cached_property
    def module(self) -> ModuleType:
        return self.fresh_module()

    @cached_property
    def compiled(self):
        return compile(self.source, f"<bug {self.name}>", "exec")

    def fresh_module(self) -> ModuleType:
        """The attempt as a new module, with none of the state earlier calls left behind."""
        module = ModuleType(f"bug_{self.name}")
        exec(self.compiled, module.__dict__)
        return module


def edited(base: str, *changes: tuple[str, str], count: int = 1) -> str:
    """`base` with each (old, new) change made, for a bug that is one edit away from a
    correct answer. Each `old` must occur exactly `count` times, so an edit that no longer
    applies (the base was reworded) fails loudly instead of leaving a correct "bug"."""
    code = base
    for old, new in changes:
        found = code.count(old)
        assert found == count, f"{old!r} occurs {found} times in the correct answer, not {count}"
        code = code.replace(old, new)
    return code


def _module(kata: str):
    from graders.engine import files

    return files.bugs(kata)


def load(kata: str) -> list[Bug]:
    """The known mistakes for `kata` (an empty list when it has none)."""
    module = _module(kata)
    return list(module.BUGS) if module else []


def near_misses(kata: str) -> list[Bug]:
    """Mistakes close to a catalogued one but not it: the grader must fail them and the
    diagnosis must not name them as a bug they are not (their `likely` says what they are)."""
    module = _module(kata)
    return list(getattr(module, "NEAR_MISSES", ())) if module else []


def variants(kata: str) -> list[Bug]:
    """Catalogued mistakes with their trigger moved (another threshold, another mode, another
    cache key): no entry of the catalogue is them, and the report must still say what each is
    (its `says`) without naming one."""
    module = _module(kata)
    return list(getattr(module, "VARIANTS", ())) if module else []


def bases(kata: str) -> dict[str, str]:
    """The correct answers `kata`'s bugs are edited from, by name: `BASE`, and a `BASE_...`
    for each other layout (an einsum, a loop over heads) in which some mistake only exists.
    Each is a whole answer file, imports included."""
    module = _module(kata)
    if module is None:
        return {}
    return {name: code for name, code in vars(module).items()
            if (name == "BASE" or name.startswith("BASE_")) and isinstance(code, str)}
