"""The one rendering path for terminal output.

Everything `kata` prints goes through `out`, which hands rich (rich.text.Text, or plain
str) to a rich Console made for the stream at hand. Whether that stream takes colour and
how wide it is are decided here, once, for every command:
- colour: only on a terminal whose TERM is not `dumb` (or `unknown`), and never when
  NO_COLOR is set; FORCE_COLOR asks for it anyway. Without colour nothing but the text is
  written: no escape codes of any kind.
- width: COLUMNS when set, else the terminal's; output to a pipe or a file is not cut.
- symbols: ✓ ✗ and block shades where the stream's encoding has them, ASCII otherwise.
Text is never parsed as rich markup: messages hold brackets (`[B=1, T=2]`) of their own.
- control characters: text written here cannot steer the terminal. Every control character
  in it but newline and tab (escape sequences, carriage returns, C1 codes, bidirectional
  overrides) is shown as its escape, `\\x1b`, whatever wrote it: what the attempt printed,
  its exception messages, its type names, the code it holds. This process's own styles are
  the only escape codes written.
"""
from __future__ import annotations

import os
import shutil
import sys

from rich.console import Console
from rich.segment import Segment
from rich.text import Text

from graders.engine.wire import control_characters, escaped

UNBOUNDED = 10_000  # the width of a pipe: nothing is wrapped or cut


def stream(err: bool = False):
    return sys.stderr if err else sys.stdout


def colour(err: bool = False) -> bool:
    """Whether the stream takes colour and styles."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    f = stream(err)
    tty = getattr(f, "isatty", lambda: False)()
    return bool(tty) and os.environ.get("TERM", "") not in ("dumb", "unknown")


def live(err: bool = False) -> bool:
    """Whether the screen can be redrawn in place (a terminal that moves its cursor)."""
    f = stream(err)
    return bool(getattr(f, "isatty", lambda: False)()) and \
        os.environ.get("TERM", "") not in ("dumb", "unknown")


def width(err: bool = False) -> int:
    """Columns to fill: COLUMNS, else the terminal's, else UNBOUNDED (a pipe)."""
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    f = stream(err)
    if getattr(f, "isatty", lambda: False)():
        return shutil.get_terminal_size((100, 40)).columns
    return UNBOUNDED


def layout_width(err: bool = False) -> int:
    """The width for layouts that fill the line (side by side): a pipe gets 100."""
    w = width(err)
    return 100 if w == UNBOUNDED else w


def height() -> int:
    env = os.environ.get("LINES", "")
    return int(env) if env.isdigit() and int(env) > 0 else shutil.get_terminal_size((100, 40)).lines


def can_encode(text: str, err: bool = False) -> bool:
    enc = getattr(stream(err), "encoding", None) or "ascii"
    try:
        text.encode(enc)
        return True
    except (UnicodeEncodeError, LookupError):
        return False


_CONTROL = control_characters(kept="\n\t")  # a terminal's output keeps its lines and tabs
_escape = escaped


def visible(part: Text | str) -> Text | str:
    """`part` with every control character but newline and tab shown as its escape (`\\x1b`),
    its styles kept."""
    plain = part.plain if isinstance(part, Text) else part
    if not isinstance(plain, str) or not _CONTROL.search(plain):
        return part
    if not isinstance(part, Text):
        return _CONTROL.sub(_escape, part)
    cuts = sorted({i for m in _CONTROL.finditer(plain) for i in (m.start(), m.end())})
    out = Text(style=part.style, justify=part.justify, overflow=part.overflow, no_wrap=part.no_wrap,
               end=part.end, tab_size=part.tab_size)
    for piece in part.divide(cuts):
        if len(piece.plain) == 1 and _CONTROL.match(piece.plain):
            shown = Text(_escape(_CONTROL.match(piece.plain)), style=piece.style)
            for span in piece.spans:
                shown.stylize(span.style)
            piece = shown
        out.append_text(piece)
    return out


class _Console(Console):
    def on_broken_pipe(self) -> None:
        raise BrokenPipeError  # kata.py ends the command quietly, with the usual status

    def _render_buffer(self, buffer) -> str:
        """Whatever was printed, through whatever path: no control character but this
        console's own (styles, and rich's control segments) reaches the stream."""
        return super()._render_buffer(
            Segment(_CONTROL.sub(_escape, text), style, control)
            if not control and text and _CONTROL.search(text) else Segment(text, style, control)
            for text, style, control in buffer)


def console(err: bool = False, columns: int | None = None) -> Console:
    """A Console for the stream as it is now (tests swap the streams between commands)."""
    on = colour(err)
    return _Console(file=stream(err), width=columns or width(err), force_terminal=on,
                   color_system="standard" if on else None, no_color=not on,
                   highlight=False, markup=False, emoji=False, soft_wrap=True,
                   legacy_windows=False)


def out(*parts: Text | str, err: bool = False) -> None:
    """Print each part on its own line (a part may hold several), control characters visible."""
    c = console(err)
    for part in parts:
        c.print(visible(part), soft_wrap=True)


def clear() -> None:
    """Clear the screen and put the cursor at the top (only where it can be redrawn)."""
    if live():
        sys.stdout.write("\x1b[H\x1b[2J")


def wrap(text: str, style: str = "", indent: str = "") -> Text:
    """Prose wrapped to the width (at most 88 columns, easier to read)."""
    import textwrap

    return Text(textwrap.fill(text, width=min(88, width()), initial_indent=indent,
                              subsequent_indent=indent), style=style)


def styled(text: str, style: str = "") -> Text:
    return Text(text, style=style)


def join(parts, sep: str = "\n") -> Text:
    """Join Text and str into one Text."""
    return Text(sep).join(p if isinstance(p, Text) else Text(p) for p in parts)


def cut(text: Text | str, room: int, left: bool = False) -> Text:
    """`text` in at most `room` cells, an ellipsis where it was cut (at the start when
    `left`, for paths)."""
    t = text.copy() if isinstance(text, Text) else Text(text)
    if t.cell_len <= room:
        return t
    mark = "…" if can_encode("…") else "~"
    if room <= 1:
        return Text(mark[:room])
    if left:
        return Text(mark) + t[len(t.plain) - (room - 1):]
    t.truncate(room - 1)
    return t + mark


def columns(rows: list[list], header: list[str] | None = None, room: int | None = None,
            squeeze: dict[int, int] | None = None, drop: tuple[int, ...] = (),
            cut_left: tuple[int, ...] = ()) -> Text:
    """Left-aligned columns two spaces apart, one row a line, no borders, in `room`
    columns (the stream's width by default). When they do not fit, the columns in
    `squeeze` ({index: narrowest}) are cut first, then the columns in `drop` are left
    out in that order. The first column is never cut."""
    room = width() if room is None else room
    table = ([header] if header else []) + rows
    if not table:
        return Text("")
    keep = list(range(len(table[0])))
    widths = _widths(table)
    squeeze = dict(squeeze or {})
    for i in [None, *drop]:
        if i is not None:
            keep.remove(i)
        widths = _fit(_widths(table), keep, room, squeeze)
        if sum(widths[j] for j in keep) + 2 * (len(keep) - 1) <= room:
            break
    lines = []
    for n, row in enumerate(table):
        cells = [cut(row[j], widths[j], left=j in cut_left) for j in keep]
        line = Text("  ").join(c + Text(" " * (widths[j] - c.cell_len)) if k < len(keep) - 1
                               else c for k, (j, c) in enumerate(zip(keep, cells)))
        line.rstrip()
        if header and n == 0:
            line.stylize("bold")
        lines.append(line)
    return join(lines)


def _widths(table) -> list[int]:
    return [max(Text(r[i]).cell_len if isinstance(r[i], str) else r[i].cell_len
                for r in table) for i in range(len(table[0]))]


def _fit(widths: list[int], keep: list[int], room: int, squeeze: dict[int, int]) -> list[int]:
    """Narrow the squeezable columns (never below their narrowest) until the row fits."""
    widths = list(widths)
    over = sum(widths[j] for j in keep) + 2 * (len(keep) - 1) - room
    for j, narrowest in squeeze.items():
        if over <= 0 or j not in keep:
            continue
        take = min(over, max(0, widths[j] - narrowest))
        widths[j] -= take
        over -= take
    return widths


def rendered(part: Text | str) -> str:
    """`part` as `out` would write it to stdout (styles and all), as a string without the
    last newline: a screen is compared with the one on display before it is written."""
    c = console()
    with c.capture() as captured:
        c.print(part, soft_wrap=True, end="")
    return captured.get()


def redraw(screen: str) -> None:
    """Clear the screen and write `screen` (from `rendered`) from the top, in one write."""
    clear()
    stdout = stream()
    stdout.write(screen + "\n")
    stdout.flush()


def rewrite_first_line(line: str) -> None:
    """Write `line` (from `rendered`, one row) over the screen's first line, the rest of
    the screen and the cursor left as they are."""
    stdout = stream()
    stdout.write("\x1b7\x1b[H" + line + "\x1b[K\x1b8")
    stdout.flush()
