"""`kata compare` and `kata solution`: code shown through practice.term.

Side by side shows code only: comments are left out and each docstring is cut to its first
line (`code_only`), each line keeping its number in the file. Their lines are paired by
difflib so equal lines face each other. Inside a changed stretch a line faces only a line
like it (a renamed variable, a new argument); a line with no counterpart stands alone, so
unrelated lines are never paired. Long runs of identical lines fold into one row. A line
longer than its column wraps at a space, continued under its own indentation, as long as
each column holds WRAP_AT characters; below the width that takes (`needed`: some 110
columns for every kata), the two files come one above the other, whole, as a unified diff.
Syntax colour only where the terminal takes colour (practice.term decides).
"""
from __future__ import annotations

import ast
import difflib
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text

from graders.engine.grammar import count, verb
from practice import term

MARKS = {"equal": " ", "replace": "~", "delete": "<", "insert": ">", "fold": " "}
SIMILAR = 0.6       # how alike two lines must be to face each other as a change
CONTEXT = 2         # identical lines kept on each side of a difference
FOLD_AT = 2 * CONTEXT + 3  # a run of identical lines this long or longer folds
WRAP_AT = 48        # a column this wide (or as wide as the longest line) is wide enough
HANG = 4            # a wrapped line goes on this much further in than it starts
GUTTER = 9          # columns side by side takes besides the code and line numbers


@dataclass(frozen=True)
class Code:
    """A file as side by side shows it: its lines (code only), each line's number in the
    file, whether anything was left out or cut (a comment, a docstring's other lines), and
    which lines are docstrings in one line (cut to the column, not wrapped)."""
    lines: list[str]
    numbers: list[int]
    cut: bool
    docstrings: frozenset[int] = frozenset()


_QUOTE = re.compile(r"[rRbBuUfF]*(\"\"\"|\'\'\'|\"|\')")


def code_only(code: str) -> Code:
    """The lines of `code` without comments, each docstring cut to its first line ("...
    …" with its quotes); the code as it is when it does not parse."""
    lines = code.splitlines()
    docs = _docstrings(code)
    comments = _comments(code)
    kept, numbers, cut, folded = [], [], False, set()
    for n, line in enumerate(lines, 1):
        if n in docs:
            first, more = docs[n]
            if first is not None:
                folded.add(len(kept))
                kept.append(first)
                numbers.append(n)
            cut = cut or more
            continue
        if n in comments:
            line = line[:comments[n]].rstrip()
            cut = True
            if not line:
                continue
        kept.append(line)
        numbers.append(n)
    return Code(kept, numbers, cut, frozenset(folded))


def _docstrings(code: str) -> dict[int, tuple[str | None, bool]]:
    """For each line of a docstring: on its first, the docstring in one line and whether
    that left anything out; on the others, None."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return {}
    lines, out = code.splitlines(), {}
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) \
                or not body or not isinstance(body[0], ast.Expr):
            continue
        doc = body[0].value
        if not (isinstance(doc, ast.Constant) and isinstance(doc.value, str)) or doc.end_lineno is None:
            continue
        start, end = doc.lineno, doc.end_lineno
        if start == end:  # one line already
            out[start] = (lines[start - 1], False)
            continue
        quote = _QUOTE.match(lines[start - 1], doc.col_offset)
        words = [w.strip() for w in doc.value.splitlines() if w.strip()]
        opening = quote.group(0) if quote else '"""'
        closing = quote.group(1) if quote else '"""'
        more = len(words) > 1
        first = " " * doc.col_offset + opening + (words[0] if words else "") + (" …" if more else "") + closing
        out.update({n: (None, more) for n in range(start + 1, end + 1)})
        out[start] = (first, more)
    return out


def _comments(code: str) -> dict[int, int]:
    """Where each comment starts: {line: column}; none when the code does not tokenize."""
    out = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.start[0]] = tok.start[1]
    except (tokenize.TokenError, SyntaxError):
        return {}
    return out


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
    """The attempt beside the reference, code only, when the width holds it (`needed`);
    else one above the other, whole, as a unified diff."""
    width = width or term.layout_width()
    a_code = attempt.read_text(encoding="utf-8", errors="replace").expandtabs(4)
    r_code = reference.read_text(encoding="utf-8", errors="replace").expandtabs(4)
    mine, theirs = code_only(a_code), code_only(r_code)
    rows = align(mine.lines, theirs.lines)
    need = needed(mine, theirs, rows)
    if width >= need:
        side_by_side(attempt.name, reference.name, mine, theirs, rows, width)
    else:
        unified(attempt.name, reference.name, a_code, r_code, width)
        term.console(columns=width).print(f"(side by side, code only, from {need} columns: --width {need})",
                                          style="dim" if term.colour() else "")


def _number_width(mine: Code, theirs: Code) -> int:
    return len(str(max(mine.numbers[-1:] + theirs.numbers[-1:] + [1])))


def needed(mine: Code, theirs: Code, rows: list[tuple]) -> int:
    """The width side by side needs: two line numbers, the gutter, and two columns as wide
    as the longest line shown, or, when lines are longer, as wide as it takes for `wrap`
    to break each of them only where it may (at least WRAP_AT). A docstring's line is cut
    to fit."""
    shown = [r for r in fold(rows) if r[0] != "fold"]
    lines = [mine.lines[i] for _, i, _ in shown if i is not None and i not in mine.docstrings] + \
            [theirs.lines[j] for _, _, j in shown if j is not None and j not in theirs.docstrings]
    longest = max([Text(line).cell_len for line in lines] + [1])
    column = min(longest, WRAP_AT)
    while column < longest and any(_pieces(line, column)[1] for line in lines):
        column += 1
    return 2 * (_number_width(mine, theirs) + column) + GUTTER


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


_BREAK = re.compile(r"(?<=[ (\[,])")  # a line wraps after a space, an opening bracket or a comma


def _pieces(plain: str, room: int) -> tuple[list[tuple[int, int, int]], bool]:
    """Where `wrap` cuts `plain` for a column `room` wide: (start, end, indent) of each
    piece, and whether a piece had to be cut where no break is."""
    if len(plain) <= room or room < 1:
        return [(0, len(plain), 0)], False
    hang = min(_indent(plain) + HANG, room // 2)
    breaks = [m.start() for m in _BREAK.finditer(plain)]
    pieces, start, forced = [], 0, False
    while start < len(plain):
        lead = hang if pieces else 0
        space = room - lead
        if len(plain) - start <= space:
            end = len(plain)
        else:
            end = max((b for b in breaks if start < b <= start + space), default=start + space)
            forced = forced or end == start + space and end not in breaks
        pieces.append((start, end, lead))
        start = end
        while start < len(plain) and plain[start] == " ":
            start += 1
    return pieces, forced


def wrap(line: Text, room: int) -> list[Text]:
    """`line` in pieces of at most `room` cells, each cut after a space, an opening bracket
    or a comma, the pieces after the first going on HANG further in than the line starts (a
    piece longer than that is cut where it must be)."""
    out = []
    for start, end, lead in _pieces(line.plain, room)[0]:
        piece = line[start:end]
        piece.rstrip()
        out.append(Text(" " * lead) + piece if lead else piece)
    return out


def _cell(lines: list[Text], i: int | None, docstrings: frozenset[int], room: int) -> list[Text]:
    """The rows of one side's line in a column `room` wide: wrapped, a docstring cut."""
    if i is None or i >= len(lines):
        return [Text("")]
    return [term.cut(lines[i], room)] if i in docstrings else wrap(lines[i].copy(), room)


def unified(a_name: str, r_name: str, a_code: str, r_code: str, width: int) -> None:
    """The difference as a unified diff of the whole files: `-` only yours, `+` only the
    reference's, with CONTEXT lines around each change; each line printed whole, never cut
    in two (a terminal wraps a long one; redirected, the output is a diff `patch` reads)."""
    colour = term.colour()
    console = term.console(columns=width)
    styles = {"-": "red", "+": "green", "@": "cyan"}
    left, right = a_code.splitlines(), r_code.splitlines()
    for line in difflib.unified_diff(left, right, f"yours: {a_name}",
                                     f"reference: {r_name}", n=CONTEXT, lineterm=""):
        style = "bold" if line.startswith(("--- ", "+++ ")) else styles.get(line[:1], "")
        console.print(Text(line, style=style if colour else ""), soft_wrap=True)
    rows = align(left, right)
    same = sum(1 for r in rows if r[0] == "equal")
    console.print(f"{same} of {count(len(rows), 'line')} {verb(same, 'matches', 'match')}; "
                  "- only yours, + only the reference.")


def side_by_side(a_name: str, r_name: str, mine: Code, theirs: Code, rows: list[tuple],
                 width: int) -> None:
    from rich.table import Table

    colour = term.colour()
    console = term.console(columns=width)
    left = _lines("\n".join(mine.lines) + "\n", colour)
    right = _lines("\n".join(theirs.lines) + "\n", colour)
    nw = _number_width(mine, theirs)
    room = max(1, (width - 2 * nw - GUTTER) // 2)
    table = Table(box=None, show_header=True, pad_edge=False, padding=(0, 1),
                  header_style="bold" if colour else "")
    for name in ("#", f"yours: {a_name}", " ", "#", f"reference: {r_name}"):
        if name == "#":
            table.add_column(name, width=nw, justify="right", no_wrap=True,
                             style="dim" if colour else "")
        elif name == " ":
            table.add_column(name, width=1, no_wrap=True)
        else:
            table.add_column(name, width=room, no_wrap=True, overflow="crop")
    styles = {"replace": "yellow", "delete": "red", "insert": "green"}
    for tag, i, j in fold(rows):
        if tag == "fold":
            table.add_row("", Text(f"⋯ {count(i, 'identical line')} ⋯" if term.can_encode("⋯")
                                   else f"... {count(i, 'identical line')} ...", style="dim"), "", "", "")
            continue
        lt = _cell(left, i, mine.docstrings, room)
        rt = _cell(right, j, theirs.docstrings, room)
        for k in range(max(len(lt), len(rt))):
            a = lt[k] if k < len(lt) else Text("")
            b = rt[k] if k < len(rt) else Text("")
            if colour and tag != "equal":
                a.stylize("on grey15")
                b.stylize("on grey15")
            table.add_row(str(mine.numbers[i]) if i is not None and k == 0 else "", a,
                          Text(MARKS[tag], style=styles.get(tag, "") if colour else "") if k == 0 else "",
                          str(theirs.numbers[j]) if j is not None and k == 0 else "", b)
    console.print(table, soft_wrap=False)
    same = sum(1 for r in rows if r[0] == "equal")
    console.print(f"{same} of {count(len(rows), 'line')} {verb(same, 'matches', 'match')}; ~ differs, < only yours, "
                  "> only the reference."
                  + (" Code only: comments left out, docstrings cut to their first line "
                     "(`kata solution` shows the reference whole)." if mine.cut or theirs.cut else ""))


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
