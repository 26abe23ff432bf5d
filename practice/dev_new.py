"""`kata dev new NAME`: every file a new kata needs, written from templates.

It writes the stub, the reference, the grader, the domain, the catalogue of known bugs, two
alternative answers and a catalogue entry, each marked where it must be filled in
(practice.dev.TEMPLATE_MARK), and never overwrites a file: `kata dev check` then lists what
is left to do, kata by kata.
"""
from __future__ import annotations

from pathlib import Path

from practice.dev import TEMPLATE_MARK

M = TEMPLATE_MARK
QUESTION = f'''"""{M}: the question, as an interviewer asks it.

    Task
        {M}: what to write, in one or two sentences.

    Shapes
        x        (..., d)      {M}: every input and output, with its shape

    Conventions
        - {M}: what defines the answer where the standard definitions leave a choice.
        - Raise ValueError when {M}.
        - Do not modify any input: return new arrays.

    What the grader checks
        {M}: agreement with the reference on sizes of 1 and odd sizes, float64 and float32,
        the kata's own properties, the ValueErrors, and that the inputs are left unchanged.

    Time budget: {{minutes}} minutes.
    """'''
SIGNATURE = "def {name}(x):\n    " + QUESTION + "\n"
STUB = '"""{title}."""\nimport numpy as np\n\n\n' + SIGNATURE + "    raise NotImplementedError\n"
REFERENCE = '"""{title}, from scratch in NumPy."""\nimport numpy as np\n\n\n' + SIGNATURE + \
    f"    raise NotImplementedError  # {M}: the model answer, shape-commented\n"
GRADER = f'''"""Grader for {{name}}(x): {M} the properties of the kata."""
import numpy as np

from graders.engine.vocabulary import check, expect_close, expect_shape, with_dtypes

CASES = [{{{{"n": 3, "seed": 0}}}}, {{{{"n": 1, "seed": 1}}}}]


@check("agrees with the reference", with_dtypes(CASES))
def agrees(impl, new, ref, n, dtype):
    x = new.normal("x", (n,), dtype=dtype)
    out = impl.{{name}}(x)
    expect_close(out, ref.{{name}}(x.astype(np.float64)), impl.last_call(), dtype)
    raise NotImplementedError("{M}: the kata's own properties, each a @check")
'''
DOMAIN = f'''"""The input domain of {{name}}(x): {M} sizes, value families, scalars, invalid calls."""
from graders.engine.domain import REAL_SIZES, Dim, Domain, Explore, Grows, floats


def draw(new, case: dict) -> dict:
    return {{{{"x": floats(new, "x", (case["n"],), case)}}}}  # {M}: every argument


DOMAIN = Domain(Explore("{{name}}", draw, dims={{{{"n": Dim()}}}},
                        pairs=(("n", "values"),),  # {M}: the families and parameters that interact
                        cites={{{{"n": REAL_SIZES}}}},  # {M}: the contract's words for each limit
                        # {M}: the size its cost grows with, and others a loop may run over
                        grows=(Grows("n", "entry", lambda n: {{{{"n": n}}}}),)))
'''
BUGS = f'''"""Mistakes candidates make in {{name}}: {M}."""
from graders.engine.bugs import Bug, edited  # noqa: F401

BASE = """import numpy as np


def {{name}}(x):
    raise NotImplementedError  # {M}: a correct answer
"""

BUGS = []          # {M}: Bug(name, the check it fails, the lesson, edited(BASE, (old, new)))
NEAR_MISSES = []   # {M}: mistakes close to a catalogued one, which must be named as none
'''
ALTERNATIVE = f"import numpy as np\n\n\ndef {{name}}(x):\n    raise NotImplementedError  # {M}: a correct answer in another style\n"
ENTRY = f'''
[[kata]]
name = "{{name}}"
title = "{{title}}"
group = "training"
difficulty = "medium"
minutes = {{minutes}}
hints = [
    "{M}: a hint that teaches how to avoid one of the kata's traps.",
    "{M}: the next hint, closer to the fix.",
]
hint_checks = [  # for each hint, the checks it helps with
    ["agrees"],
    ["agrees"],
]
traps = []

[[kata.follow_ups]]
question = "{M}: the question an interviewer asks next."
answer = "{M}: its model answer, a few sentences in our own words."

[[kata.follow_ups]]
question = "{M}: and the one after (a number to work out gets number, unit and tolerance)."
answer = "{M}: its model answer."
'''


def existing(root: Path, name: str) -> list[Path]:
    """What of a kata `name` the repository at `root` has already: its catalogue entry, its files."""
    catalogue = root / "katas" / "catalogue.toml"
    found = [catalogue] if f'name = "{name}"' in catalogue.read_text(encoding="utf-8") else []
    return found + [p for p in (root / "katas" / f"{name}.py", root / "solutions" / f"{name}.py", root / "graders" / name)
                    if p.exists()]


def new(root: Path, name: str, title: str | None = None, minutes: int = 20) -> list[Path]:
    """Write the files of a new kata `name` under `root`; the paths written (none is replaced)."""
    title = title or name.replace("_", " ").capitalize()
    values = {"name": name, "title": title, "minutes": minutes}
    files = {root / "katas" / f"{name}.py": STUB, root / "solutions" / f"{name}.py": REFERENCE,
             root / "graders" / name / "__init__.py": f'"""The grading content of the {name} kata."""\n',
             root / "graders" / name / "grader.py": GRADER, root / "graders" / name / "domain.py": DOMAIN,
             root / "graders" / name / "bugs.py": BUGS,
             root / "graders" / name / "alternatives" / "loops.py": ALTERNATIVE,
             root / "graders" / name / "alternatives" / "vectorised.py": ALTERNATIVE}
    written = []
    for path, template in files.items():
        if path.exists():
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.format(**values), encoding="utf-8")
        written.append(path)
    catalogue = root / "katas" / "catalogue.toml"
    if f'name = "{name}"' not in catalogue.read_text(encoding="utf-8"):
        with open(catalogue, "a", encoding="utf-8") as f:
            f.write(ENTRY.format(**values))
        written.append(catalogue)
    return written
