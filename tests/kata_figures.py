"""The standard each kata is held to, as figures: printed at the end of a test run.

tests/test_katas.py records, for every known bug, near miss, variant and alternative answer
it grades, what came of it; this plugin gathers the records (from every xdist worker, through
a folder named in the environment) and prints four tables, one line per kata: the
dimensions of the input domain its explorer ranges over; what the explorer as an adversary
makes of it (pairs varied on the plain case, a covering array, the cache adversary's
sequences, modes, the rules held on every call); bugs caught, bugs named as
themselves and alternative answers accepted; and the explanations' rightness: near misses
and variants (catalogued mistakes with their trigger moved) explained as each declares a
reader should be told, those of which nothing was said, and those given a wrong name (which
must be none). Rightness is a match of the declared explanation, not the presence of a
sentence.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections import defaultdict

FOLDER = "KATA_FIGURES_DIR"


def record(kata: str, kind: str, name: str, caught: bool, named: str | None, right: bool,
           said: list | None = None, explained: bool | None = None) -> None:
    """One graded entry: kind is "bug", "near miss", "variant" or "alternative". `said`: what its
    report observed; `explained`: whether that is what the entry declares (None: it declares
    nothing)."""
    folder = os.environ.get(FOLDER)
    if not folder:
        return
    line = json.dumps({"kata": kata, "kind": kind, "name": name, "caught": caught, "named": named, "right": right,
                       "said": len(said or []), "explained": explained})
    with open(os.path.join(folder, f"{os.getpid()}.jsonl"), "a", encoding="utf-8") as f:
        f.write(line + "\n")


def pytest_configure(config):
    if not hasattr(config, "workerinput") and FOLDER not in os.environ:  # the controlling process
        config._kata_figures = tempfile.mkdtemp(prefix="kata-figures-")
        os.environ[FOLDER] = config._kata_figures


def pytest_unconfigure(config):
    folder = getattr(config, "_kata_figures", None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(FOLDER, None)


KEYS = ("bugs", "named", "alternatives", "bugs explained", "near misses", "variants", "nothing said", "misnamed")


def figures(folder: str) -> dict[str, dict[str, list[int]]]:
    """{kata: {key: [count, total]}} for each of KEYS: bugs caught, bugs named as themselves,
    alternatives passed, bugs whose observation alone is what they declare, near misses and
    variants explained right, near misses and variants of which nothing was said, and those
    named (misnamed)."""
    out: dict = defaultdict(lambda: {k: [0, 0] for k in KEYS})
    for name in os.listdir(folder):
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                row = out[r["kata"]]
                if r["kind"] == "alternative":
                    _count(row["alternatives"], r["caught"] is False)
                elif r["kind"] == "bug":
                    _count(row["bugs"], r["caught"])
                    _count(row["named"], r["right"])
                    if r.get("explained") is not None:
                        _count(row["bugs explained"], r["explained"])
                else:
                    _count(row["near misses" if r["kind"] == "near miss" else "variants"],
                           bool(r.get("explained")) and r["named"] is None)
                    _count(row["nothing said"], not r.get("said"))
                    _count(row["misnamed"], r["named"] is not None)
    return dict(out)


def _count(pair: list[int], yes: bool) -> None:
    pair[0] += bool(yes)
    pair[1] += 1


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    folder = getattr(config, "_kata_figures", None)
    if not folder or not os.listdir(folder):
        return
    table = figures(folder)

    def pct(pair):
        return f"{100 * pair[0] / pair[1]:5.1f}% ({pair[0]}/{pair[1]})" if pair[1] else "   -"

    def ratio(pair):
        return f"{pair[0]}/{pair[1]}" if pair[1] else "-"

    terminalreporter.section("the standard, kata by kata")
    _dimensions(terminalreporter, sorted(table))
    _adversary(terminalreporter, sorted(table))
    terminalreporter.write_line(f"{'kata':22} {'bugs caught':>16} {'named as itself':>16} {'alternatives':>14}")
    for kata in sorted(table):
        row = table[kata]
        terminalreporter.write_line(f"{kata:22} {pct(row['bugs']):>16} {pct(row['named']):>16} "
                                    f"{pct(row['alternatives']):>14}")
    terminalreporter.write_line("")
    terminalreporter.write_line("explained right (what the report observed is the explanation the entry declares) / "
                                "total, without a name")
    heads = ("near misses", "variants", "nothing said", "misnamed", "bugs explained")
    terminalreporter.write_line(f"{'kata':22} " + " ".join(f"{h:>15}" for h in heads))
    total = {h: [0, 0] for h in heads}
    for kata in sorted(table):
        row = table[kata]
        for h in heads:
            total[h][0] += row[h][0]
            total[h][1] += row[h][1]
        terminalreporter.write_line(f"{kata:22} " + " ".join(f"{ratio(row[h]):>15}" for h in heads))
    terminalreporter.write_line(f"{'all':22} " + " ".join(f"{pct(total[h]):>15}" for h in heads))


def _dimensions(terminalreporter, katas: list[str]) -> None:
    """Which of the explorer's eight dimensions each kata's domain exercises (x: yes, .: no)."""
    from graders.engine import files

    names = None
    lines = []
    for kata in katas:
        domain = files.domain(kata)
        if domain is None:
            lines.append(f"{kata:22} (no domain declared)")
            continue
        dims = domain.dimensions()
        names = names or list(dims)
        applies = _applies(kata)
        lines.append(f"{kata:22} " + " ".join(f"{'x' if dims[n] else '.' if applies.get(n, True) else '-':^5}"
                                              for n in names))
    if names:
        terminalreporter.write_line("x: explored, -: the kata takes no such argument, .: missing")
        terminalreporter.write_line("input domain explored: " + "; ".join(f"{i + 1} {n}" for i, n in enumerate(names)))
        terminalreporter.write_line(f"{'kata':22} " + " ".join(f"{i + 1:^5}" for i in range(len(names))))
    for line in lines:
        terminalreporter.write_line(line)
    terminalreporter.write_line("")


def _adversary(terminalreporter, katas: list[str]) -> None:
    """What the explorer as an adversary makes of each kata's domain: the pairs of factors it
    declares and the cases that vary each pair on the plain case, the covering array of the
    pairs it does not declare, the cache adversary's sequences, the modes the ValueErrors are
    asked for in, and the rules held on every call (with the modes a memory rule is measured in)."""
    from graders.engine import explorer, files, rules

    heads = ("pairs", "pair cases", "covering rows", "sequences", "modes", "memory modes")
    terminalreporter.write_line("the explorer as an adversary: pairs declared and their cases on the plain case, a "
                                "covering array of the rest, the cache adversary's sequences, modes; the rules held "
                                f"on every call: {', '.join(rules.RULES)}")
    terminalreporter.write_line(f"{'kata':22} " + " ".join(f"{h:>13}" for h in heads) + f" {'rules':>6}")
    for kata in katas:
        domain = files.domain(kata)
        if domain is None:
            continue
        row = explorer.figures(domain, files.reference(kata))
        terminalreporter.write_line(f"{kata:22} " + " ".join(f"{getattr(row, h.replace(' ', '_')):>13}" for h in heads)
                                    + f" {row.rules:>6}")
    terminalreporter.write_line("")


def _applies(kata: str) -> dict[str, bool]:
    """Which dimensions a kata's functions have arguments for: leading axes ("...") or an axis."""
    import ast

    from practice import catalogue

    tree = ast.parse(catalogue.get(kata).solution.read_text(encoding="utf-8"))
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]
    docs = [ast.get_docstring(f) or "" for f in fns]
    lead = any("(..." in d for d in docs) or any(a.arg == "axis" for f in fns for a in f.args.args)
    return {"leading axes and every axis": lead, "float64 and float32": any("float32" in d for d in docs)}
