"""A kata's interview question (the stub's docstrings, under each signature) and the
follow-up questions an interviewer would ask next, as `kata start`, `kata submit` and a mock
interview print them.
"""
from __future__ import annotations

import ast
import re
import textwrap

from rich.text import Text

from practice import term


def follow_ups(k, heading: str = "An interviewer would ask next:", indent: int = 2) -> Text:
    lines: list[Text | str] = [Text(heading, style="bold")] if heading else []
    pad = " " * indent
    for i, f in enumerate(k.follow_ups, 1):
        lines.append(textwrap.fill(f.question, width=min(88, term.width()), initial_indent=f"{pad}{i}. ",
                                   subsequent_indent=pad + "   "))
    return term.join(lines)


def question(k) -> Text:
    """The interview question: the stub's docstrings (module, then each function's,
    under its signature)."""
    try:
        source = k.stub.read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return Text(k.title)
    parts: list[Text | str] = []
    doc = ast.get_docstring(tree)
    if doc:
        parts.append(doc)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            fdoc = ast.get_docstring(node)
            m = re.search(rf"^def {node.name}\((.*?)\)\s*(?:->[^:]*)?:", source, re.M | re.S)
            args = " ".join(m.group(1).split()) if m else ast.unparse(node.args)
            sig = Text(f"def {node.name}({args}):", style="bold")
            parts.append(sig + ("\n" + textwrap.indent(fdoc.rstrip("\n"), " " * 4) if fdoc else ""))
    return term.join(parts, "\n\n") if parts else Text(k.title)
