"""A check's picture: the weights of a failing case as a small grid, one character cell
per entry, shaded by weight, the entries the message is about standing out.

A picture is `{"title", "values": [[float, ...], ...], "marked": [[i, j], ...], "rows",
"cols"}` (values are weights in [0, 1], NaN possible). With colour the cells are block
shades and the marked ones red; without colour they are plain ASCII and the marked ones
are X. A grid that does not fit the width is left out with a line that says so.
"""
from __future__ import annotations

import math

from rich.text import Text

from graders.engine.grammar import verb
from practice import term

# (lowest weight, block shade, ASCII shade), darkest last; exact zeros and NaN apart.
SHADES = [(0.0, "░", ":"), (0.25, "▒", "-"), (0.5, "▓", "+"), (0.75, "█", "#")]
ZERO, NAN, MARK = ("·", "."), ("?", "?"), "X"


def _cell(v, fancy: bool) -> str:
    pick = 0 if fancy else 1
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return NAN[pick]
    if v <= 0:
        return ZERO[pick]
    shade = [s for s in SHADES if v >= s[0]][-1]
    return shade[1 + pick]


def grid(pic: dict, indent: int = 6, room: int | None = None) -> Text:
    """The picture as Text lines, each starting with `indent` spaces."""
    values = pic.get("values") or []
    n_rows, n_cols = len(values), max((len(r) for r in values), default=0)
    pad, w = " " * indent, len(str(max(n_rows - 1, 0)))
    room = term.width() if room is None else room
    need = indent + w + 2 + n_cols
    title = pic.get("title") or "the weights"
    if n_rows == 0 or need > room:
        return Text(f"{pad}(the picture of {title}, {n_rows}x{n_cols}, is left out: it "
                    f"needs {need} columns and {room} {verb(room, 'is', 'are')} available)", style="dim")
    colour = term.colour()
    fancy = colour and term.can_encode("░▒▓█·")
    marked = {tuple(m) for m in pic.get("marked") or []}
    lines = [Text(f"{pad}{title} (rows: {pic.get('rows') or 'row'} i, columns: "
                  f"{pic.get('cols') or 'column'} j)", style="bold")]
    if n_cols > 10:
        lines.append(Text(pad + " " * (w + 2) + "".join(
            str(j // 10) if j % 10 == 0 else " " for j in range(n_cols)), style="dim"))
    lines.append(Text(pad + " " * (w + 2) + "".join(str(j % 10) for j in range(n_cols)),
                      style="dim"))
    for i, row in enumerate(values):
        line = Text(f"{pad}{i:>{w}}  ", style="dim")
        for j, v in enumerate(row):
            if (i, j) in marked:
                line.append(_cell(v, fancy) if colour else MARK, style="bold white on red")
            else:
                line.append(_cell(v, fancy))
        lines.append(line)
    lines.append(_legend(pad, fancy, colour))
    return term.join(lines)


def _legend(pad: str, fancy: bool, colour: bool) -> Text:
    pick = 1 if fancy else 2
    at_least = "≥" if fancy else ">="
    keys = [f"{s[pick]} {'>0' if s[0] == 0 else f'{at_least}{s[0]:g}'}" for s in reversed(SHADES)]
    keys += [f"{ZERO[0 if fancy else 1]} 0", f"{NAN[0]} NaN"]
    legend = Text(pad + "  ".join(keys) + "  ", style="dim")
    legend.append("red" if colour else MARK, style="bold white on red" if colour else "")
    legend.append(": the entries the message is about", style="dim")
    return legend
