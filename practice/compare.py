"""`kata compare` and `kata solution`: code shown with rich (imported only here).

The attempt and the reference sit side by side, their lines paired by difflib so equal
lines face each other and changed ones are marked; long lines wrap within their column at
the terminal's width. Colours and syntax highlighting only on a terminal that takes them:
rich writes plain text when the output is not a terminal or NO_COLOR is set.
"""
from __future__ import annotations

import difflib
import os
from pathlib import Path

MARKS = {"equal": " ", "replace": "~", "delete": "<", "insert": ">"}


def align(left: list[str], right: list[str]) -> list[tuple[str, int | None, int | None]]:
    """Rows (tag, left index or None, right index or None) pairing equal lines."""
    rows = []
    sm = difflib.SequenceMatcher(None, left, right, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            rows += [("equal", i1 + d, j1 + d) for d in range(i2 - i1)]
        else:
            n = max(i2 - i1, j2 - j1)
            for d in range(n):
                li = i1 + d if i1 + d < i2 else None
                rj = j1 + d if j1 + d < j2 else None
                t = "replace" if li is not None and rj is not None else (
                    "delete" if li is not None else "insert")
                rows.append((t, li, rj))
    return rows


def _console(width: int | None = None):
    from rich.console import Console

    return Console(width=width, no_color=bool(os.environ.get("NO_COLOR")) or None,
                   highlight=False, soft_wrap=False)


def _lines(console, code: str):
    """Highlighted lines (rich Text) when colour is on, else plain Text lines."""
    from rich.syntax import Syntax
    from rich.text import Text

    if console.is_terminal and not console.no_color:
        text = Syntax(code, "python", theme="ansi_dark", background_color="default").highlight(code)
        lines = text.split("\n", allow_blank=True)
    else:
        lines = [Text(line) for line in code.split("\n")]
    if code.endswith("\n") and lines:
        lines = lines[:-1]
    return lines


def side_by_side(attempt: Path, reference: Path, width: int | None = None) -> None:
    from rich.table import Table
    from rich.text import Text

    console = _console(width)
    a_code = attempt.read_text(encoding="utf-8", errors="replace").expandtabs(4)
    r_code = reference.read_text(encoding="utf-8", errors="replace").expandtabs(4)
    left, right = _lines(console, a_code), _lines(console, r_code)
    rows = align(a_code.splitlines(), r_code.splitlines())
    color = console.is_terminal and not console.no_color
    nw = len(str(max(len(left), len(right), 1)))

    table = Table(box=None, expand=True, show_header=True, pad_edge=False, padding=(0, 1),
                  header_style="bold" if color else "")
    table.add_column("#", width=nw, justify="right", style="dim" if color else "",
                     no_wrap=True)
    table.add_column(f"yours: {attempt.name}", ratio=1, overflow="fold")
    table.add_column(" ", width=1, no_wrap=True)
    table.add_column("#", width=nw, justify="right", style="dim" if color else "",
                     no_wrap=True)
    table.add_column(f"reference: {reference.name}", ratio=1, overflow="fold")
    styles = {"replace": "yellow", "delete": "red", "insert": "green", "equal": ""}
    for tag, i, j in rows:
        lt = left[i].copy() if i is not None and i < len(left) else Text("")
        rt = right[j].copy() if j is not None and j < len(right) else Text("")
        mark = Text(MARKS[tag], style=styles[tag] if color else "")
        if color and tag != "equal":
            lt.stylize("on grey15")
            rt.stylize("on grey15")
        table.add_row(str(i + 1) if i is not None else "", lt, mark,
                      str(j + 1) if j is not None else "", rt)
    console.print(table)
    same = sum(1 for r in rows if r[0] == "equal")
    console.print(f"{same} of {len(rows)} lines match; "
                  f"~ differs, < only yours, > only the reference.")


def show_code(path: Path, title: str) -> None:
    console = _console()
    code = path.read_text(encoding="utf-8", errors="replace")
    if console.is_terminal and not console.no_color:
        from rich.syntax import Syntax

        console.print(title, style="bold")
        console.print(Syntax(code, "python", theme="ansi_dark", line_numbers=True,
                             background_color="default"))
    else:
        import click

        click.echo(f"# {title}")
        click.echo(code.rstrip("\n"))
