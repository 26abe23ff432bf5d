"""The standard each kata is held to, as figures: printed at the end of a test run.

tests/test_katas.py records, for every known bug, near miss and alternative answer it
grades, what came of it; this plugin gathers the records (from every xdist worker, through
a folder named in the environment) and prints one line per kata: bugs caught, alternative
answers accepted, and the precision of the diagnosis (diagnoses right / diagnoses given,
over the catalogue and the near misses).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections import defaultdict

FOLDER = "KATA_FIGURES_DIR"


def record(kata: str, kind: str, name: str, caught: bool, named: str | None, right: bool) -> None:
    """One graded entry: kind is "bug", "near miss" or "alternative"."""
    folder = os.environ.get(FOLDER)
    if not folder:
        return
    line = json.dumps({"kata": kata, "kind": kind, "name": name, "caught": caught, "named": named, "right": right})
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


def figures(folder: str) -> dict[str, dict[str, list[int]]]:
    """{kata: {"bugs": [caught, total], "alternatives": [...], "diagnoses": [right, given]}}."""
    out: dict = defaultdict(lambda: {"bugs": [0, 0], "alternatives": [0, 0], "diagnoses": [0, 0]})
    for name in os.listdir(folder):
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                row = out[r["kata"]]
                if r["kind"] == "alternative":
                    row["alternatives"][0] += r["caught"] is False
                    row["alternatives"][1] += 1
                    continue
                if r["kind"] == "bug":
                    row["bugs"][0] += r["caught"]
                    row["bugs"][1] += 1
                if r["named"] is not None:
                    row["diagnoses"][0] += r["right"]
                    row["diagnoses"][1] += 1
    return dict(out)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    folder = getattr(config, "_kata_figures", None)
    if not folder or not os.listdir(folder):
        return
    table = figures(folder)

    def pct(pair):
        return f"{100 * pair[0] / pair[1]:5.1f}% ({pair[0]}/{pair[1]})" if pair[1] else "   -"

    terminalreporter.section("the standard, kata by kata")
    terminalreporter.write_line(f"{'kata':24} {'bugs caught':>18} {'alternatives passed':>20} {'diagnosis precision':>20}")
    for kata in sorted(table):
        row = table[kata]
        terminalreporter.write_line(f"{kata:24} {pct(row['bugs']):>18} {pct(row['alternatives']):>20} "
                                    f"{pct(row['diagnoses']):>20}")
