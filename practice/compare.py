"""`kata compare` and `kata solution`: code shown through practice.term.

The attempt and the reference sit side by side when the width holds every line shown
whole, else one above the other as a unified diff. Side by side, their lines are paired
by difflib so equal lines face each other. Inside a changed stretch a line faces only a
line like it (a renamed variable, a new argument); a line with no counterpart stands
alone, so unrelated lines are never paired. Long runs of identical lines (the docstring
both files share) fold into one row. Syntax colour only where the terminal takes colour
(practice.term decides).
"""
from __future__ import annotations

import difflib
from pathlib import Path

from rich.text import Text

from practice import term

MARKS = {"equal": " ", "replace": "~", "delete": "<", "insert": ">", "fold": " "}
SIMILAR = 0.6       # how alike two lines must be to face each other as a change
CONTEXT = 2         # identical lines kept on each side of a difference
FOLD_AT = 2 * CONTEXT + 3  # a run of identical lines this long or longer folds


def _pair(left: list[str], right: list[str], i1: int, i2: int, j1: int, j2: int) -> list:
    """Rows for a changed stretch: the most alike pair faces each other, recursively on
    each side of it; what has no counterpart alike enough stands alone."""
    best, at = SIMILAR, None
    if (i2 - i1) * (j2 - j1) <= 4000:
        for i in range(i1, i2):
            for j in range(j1, j2):
                sm = difflib.SequenceMatcher(None, left[i].strip(), right[j].strip())
                if sm.real_quick_ratio() > best and sm.quick_ratio() > best and sm.ratio() > best:
                    best, at = sm.ratio(), (i, j)
    if at is None:
        return [("delete", i, None) for i in range(i1, i2)] + \
               [("insert", None, j) for j in range(j1, j2)]
    i, j = at
    return (_pair(left, right, i1, i, j1, j) + [("replace", i, j)]
            + _pair(left, right, i + 1, i2, j + 1, j2))


def align(left: list[str], right: list[str]) -> list[tuple[str, int | None, int | None]]:
    """Rows (tag, left index or None, right index or None) pairing equal lines."""
    rows = []
    sm = difflib.SequenceMatcher(None, left, right, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            rows += [("equal", i1 + d, j1 + d) for d in range(i2 - i1)]
        else:
            rows += _pair(left, right, i1, i2, j1, j2)
    return rows


def fold(rows: list[tuple]) -> list[tuple]:
    """Fold each run of identical rows of FOLD_AT or more into one ("fold", n, None) row,
    keeping CONTEXT rows next to each difference."""
    out, k = [], 0
    while k < len(rows):
        end = k
        while end < len(rows) and rows[end][0] == "equal":
            end += 1
        run = end - k
        if run >= FOLD_AT:
            keep_before = CONTEXT if k > 0 else 0
            keep_after = CONTEXT if end < len(rows) else 0
            out += rows[k:k + keep_before]
            out.append(("fold", run - keep_before - keep_after, None))
            out += rows[end - keep_after:end]
        else:
            out += rows[k:end]
        out += rows[end:end + 1]
        k = end + 1
    return out


def _lines(code: str, colour: bool) -> list[Text]:
    """Highlighted lines (rich Text) when colour is on, else plain Text lines."""
    if colour:
        from rich.syntax import Syntax

        text = Syntax(code, "python", theme="ansi_dark", background_color="default").highlight(code)
        lines = list(text.split("\n", allow_blank=True))
    else:
        lines = [Text(line) for line in code.split("\n")]
    return lines[:-1] if code.endswith("\n") and lines else lines


def show(attempt: Path, reference: Path, width: int | None = None) -> None:
    """The attempt beside the reference when the width holds every line shown whole; else
    one above the other, as a unified diff (a line cut in two is harder to read than that)."""
    width = width or term.layout_width()
    a_code = attempt.read_text(encoding="utf-8", errors="replace").expandtabs(4)
    r_code = reference.read_text(encoding="utf-8", errors="replace").expandtabs(4)
    rows = align(a_code.splitlines(), r_code.splitlines())
    need = needed(a_code, r_code, rows)
    if width >= need:
        side_by_side(attempt.name, reference.name, a_code, r_code, rows, width)
    else:
        unified(attempt.name, reference.name, a_code, r_code, rows, width)
        term.console(columns=width).print(f"(side by side from {need} columns: --width {need})",
                                          style="dim" if term.colour() else "")


def needed(a_code: str, r_code: str, rows: list[tuple]) -> int:
    """The width at which side by side shows each of its lines whole: two line numbers,
    two of the longest lines shown, the mark and the spaces between columns."""
    left, right = a_code.splitlines(), r_code.splitlines()
    shown = [r for r in fold(rows) if r[0] != "fold"]
    longest = max([Text(left[i]).cell_len for _, i, _ in shown if i is not None]
                  + [Text(right[j]).cell_len for _, _, j in shown if j is not None] + [1])
    return 2 * (len(str(max(len(left), len(right), 1))) + longest) + 9


def unified(a_name: str, r_name: str, a_code: str, r_code: str, rows: list[tuple],
            width: int) -> None:
    """The difference as a unified diff: `-` only yours, `+` only the reference's, with
    CONTEXT lines around each change; each line printed whole, never cut in two (a terminal
    wraps a long one; redirected, the output is a diff `patch` reads)."""
    colour = term.colour()
    console = term.console(columns=width)
    styles = {"-": "red", "+": "green", "@": "cyan"}
    for line in difflib.unified_diff(a_code.splitlines(), r_code.splitlines(), f"yours: {a_name}",
                                     f"reference: {r_name}", n=CONTEXT, lineterm=""):
        style = "bold" if line.startswith(("--- ", "+++ ")) else styles.get(line[:1], "")
        console.print(Text(line, style=style if colour else ""), soft_wrap=True)
    same = sum(1 for r in rows if r[0] == "equal")
    console.print(f"{same} of {len(rows)} lines match; - only yours, + only the reference.")


def side_by_side(a_name: str, r_name: str, a_code: str, r_code: str, rows: list[tuple],
                 width: int) -> None:
    from rich.table import Table

    colour = term.colour()
    console = term.console(columns=width)
    left, right = _lines(a_code, colour), _lines(r_code, colour)
    nw = len(str(max(len(left), len(right), 1)))
    table = Table(box=None, expand=True, show_header=True, pad_edge=False, padding=(0, 1),
                  header_style="bold" if colour else "")
    for name in ("#", f"yours: {a_name}", " ", "#", f"reference: {r_name}"):
        if name == "#":
            table.add_column(name, width=nw, justify="right", no_wrap=True,
                             style="dim" if colour else "")
        elif name == " ":
            table.add_column(name, width=1, no_wrap=True)
        else:
            table.add_column(name, ratio=1, overflow="fold")
    styles = {"replace": "yellow", "delete": "red", "insert": "green"}
    for tag, i, j in fold(rows):
        if tag == "fold":
            table.add_row("", Text(f"⋯ {i} identical lines ⋯" if term.can_encode("⋯")
                                   else f"... {i} identical lines ...", style="dim"), "", "", "")
            continue
        lt = left[i].copy() if i is not None and i < len(left) else Text("")
        rt = right[j].copy() if j is not None and j < len(right) else Text("")
        if colour and tag != "equal":
            lt.stylize("on grey15")
            rt.stylize("on grey15")
        table.add_row(str(i + 1) if i is not None else "", lt,
                      Text(MARKS[tag], style=styles.get(tag, "") if colour else ""),
                      str(j + 1) if j is not None else "", rt)
    console.print(table, soft_wrap=False)
    same = sum(1 for r in rows if r[0] == "equal")
    console.print(f"{same} of {len(rows)} lines match; ~ differs, < only yours, "
                  "> only the reference.")


def show_code(path: Path, title: str) -> None:
    code = path.read_text(encoding="utf-8", errors="replace")
    if not term.colour():
        term.out(f"# {title}", code.rstrip("\n"))
        return
    from rich.syntax import Syntax

    console = term.console()
    console.print(Text(title, style="bold"))
    console.print(Syntax(code, "python", theme="ansi_dark", line_numbers=True,
                         background_color="default"))
