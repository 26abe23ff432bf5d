"""`kata compare`: identical stretches fold, and a changed line faces only a line like it."""
from __future__ import annotations

from practice.views import compare

DOC = ['"""Batched causal multi-head attention.', ""] + \
      [f"Line {i} of a long question that both files share." for i in range(48)] + ['"""']

ATTEMPT = DOC + [
    "import numpy as np",
    "",
    "",
    "def split(a):",
    "    return a.reshape(B, T, n_heads, d_head)",
    "",
    "def causal_mha(x, W_q, W_k, W_v, W_o, n_heads):",
    "    q = split(x @ W_q)",
    "    return q",
]
REFERENCE = DOC + [
    "import numpy as np",
    "",
    "",
    "def causal_mha(x, W_q, W_k, W_v, W_o, n_heads):",
    "    B, T, d_model = x.shape",
    "    q = x @ W_q",
    "    return q @ W_o",
]


def test_changed_lines_face_only_lines_like_them():
    rows = compare.align(ATTEMPT, REFERENCE)
    faced = {(ATTEMPT[i], REFERENCE[j]) for tag, i, j in rows if tag == "replace"}
    assert ("    q = split(x @ W_q)", "    q = x @ W_q") in faced
    assert ("    return q", "    return q @ W_o") in faced
    for left, right in faced:  # never an unrelated pair, such as a def against a blank line
        assert left.strip() and right.strip()
        assert left.split()[0] == right.split()[0]
    alone = [ATTEMPT[i] for tag, i, j in rows if tag == "delete"]
    assert "def split(a):" in alone and "    return a.reshape(B, T, n_heads, d_head)" in alone
    assert "    B, T, d_model = x.shape" in [REFERENCE[j] for tag, i, j in rows if tag == "insert"]
    # every line of each side appears once, in order
    assert [i for _, i, _ in rows if i is not None] == list(range(len(ATTEMPT)))
    assert [j for _, _, j in rows if j is not None] == list(range(len(REFERENCE)))


def test_a_long_identical_stretch_folds_to_one_row_with_context():
    rows = compare.fold(compare.align(ATTEMPT, REFERENCE))
    folds = [r for r in rows if r[0] == "fold"]
    assert folds == [("fold", len(DOC) + 3 - compare.CONTEXT, None)]  # all but the context
    assert rows[0][0] == "fold"  # the shared docstring is not shown line by line
    short = compare.align(["a", "b", "x"], ["a", "b", "y"])
    assert compare.fold(short) == short  # a short stretch stays


def test_compare_opens_with_the_difference_not_the_docstring(kenv):
    kenv.run("start", "causal_mha")
    kenv.write("causal_mha", "\n".join(ATTEMPT) + "\n")
    (kenv.root / "solutions" / "causal_mha.py").write_text("\n".join(REFERENCE) + "\n")
    r = kenv.run("compare", "causal_mha", "--yes", "--width", "120")
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[1].count('"""Batched causal multi-head attention. …"""') == 2  # the docstring, one line
    assert "Line 7 of a long question" not in r.stdout
    assert any("def split(a):" in ln for ln in lines[:8])
    split_row = next(ln for ln in lines if "def split(a):" in ln)
    assert split_row.rstrip().endswith("<")  # only yours: nothing faces it
    assert any("q = split(x @ W_q)" in ln and "q = x @ W_q" in ln for ln in lines)


def test_a_narrow_terminal_gets_a_unified_diff_with_every_word_whole(tmp_path, subprocess_env):
    """Side by side, 40 columns cut `raise` into "rais" and "e"; below the width side by side
    needs, the two files come one above the other."""
    import subprocess

    from conftest import make_tree, stand_in_command

    root = make_tree(tmp_path / "tree")
    reference = "\n".join(REFERENCE + ["    # the reference's comment, long enough to wrap in half of a hundred columns"])
    (root / "solutions" / "causal_mha.py").write_text(reference + "\n")

    def kata(*args, columns="40"):
        return subprocess.run(stand_in_command(root, *args), env=dict(subprocess_env, COLUMNS=columns),
                              capture_output=True, text=True, timeout=60)

    kata("start", "causal_mha")
    (tmp_path / "home" / "causal_mha.py").write_text("\n".join(ATTEMPT + ["    raise NotImplementedError"]) + "\n")
    for width in ("40", "100"):
        out = kata("compare", "--yes", "--width", width).stdout
        lines = out.splitlines()
        assert lines[0] == "--- yours: causal_mha.py" and lines[1] == "+++ reference: causal_mha.py", out
        assert "-    raise NotImplementedError" in lines and "+    B, T, d_model = x.shape" in lines
        assert "-def split(a):" in lines and lines[2].startswith("@@ -")
        assert "side by side, code only, from 1" in out  # and how wide it would take
        # every line of the diff whole: the reference's long comment is one `+` line, not cut in two
        long_comment = "+    # the reference's comment, long enough to wrap in half of a hundred columns"
        assert long_comment in lines, out
        body = lines[:lines.index(next(x for x in lines if x.endswith("lines match; - only yours, + only the reference.")))]
        assert all(x[:1] in "-+@ " and x for x in body), out
    wide = kata("compare", "--yes", columns="200").stdout  # the terminal's own width, wide enough
    assert "~" in wide and not wide.startswith("---")


def _catalogued_attempt(name: str) -> str:
    """An attempt as candidates write them: the first known mistake of the kata's catalogue."""
    from graders.engine import bugs

    return next(iter(bugs.load(name))).source


def test_every_kata_is_side_by_side_at_120_columns_code_only(tmp_path, capsys, monkeypatch):
    from practice import catalogue

    for name in ("NO_COLOR", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)
    for k in catalogue.katas():
        attempt = tmp_path / f"{k.name}.py"
        attempt.write_text(_catalogued_attempt(k.name))
        compare.show(attempt, k.solution, width=120)
        out = capsys.readouterr().out
        lines = out.splitlines()
        assert lines[0].split()[:3] == ["#", "yours:", f"{k.name}.py"], (k.name, out)  # not a diff
        assert max(len(ln.rstrip()) for ln in lines[:-1]) <= 120, k.name
        reference = k.solution.read_text()
        doc_lines = [ln.strip() for ln in reference.split('"""')[3].splitlines()[1:] if len(ln.strip()) > 20]
        assert doc_lines and not any(d in out for d in doc_lines), k.name  # a docstring is one line
        comments = [ln.split("#", 1)[1].strip() for ln in reference.splitlines()
                    if "#" in ln and len(ln.split("#", 1)[1].strip()) > 25 and '"' not in ln and "'" not in ln]
        assert not any(c in out for c in comments), k.name  # code only
        assert "Code only: comments left out" in lines[-1]
        compare.show(attempt, k.solution, width=100)  # narrower than it needs: the diff, whole
        narrow = capsys.readouterr().out
        assert narrow.startswith(f"--- yours: {k.name}.py\n+++ reference: {k.name}.py\n"), k.name
        assert "(side by side, code only, from 1" in narrow


def test_a_long_line_wraps_after_a_space_or_bracket_under_its_indentation():
    from rich.text import Text

    line = "        raise ValueError(f\"n_heads={n_heads} does not divide d_model={d_model}\")"
    pieces = [p.plain for p in compare.wrap(Text(line), 40)]
    assert all(len(p) <= 40 for p in pieces) and len(pieces) > 1
    assert pieces[0] == "        raise ValueError(" and all(p.startswith(" " * 12) for p in pieces[1:])
    assert "".join(p.strip() + (" " if p.endswith(" ") else "") for p in pieces).replace(" ", "") == line.replace(" ", "")
    shown = compare.code_only('"""A module.\n\nMore words."""\nimport numpy as np  # numbers\n# a comment\nx = 1\n')
    assert shown.lines == ['"""A module. …"""', "import numpy as np", "x = 1"]
    assert shown.numbers == [1, 4, 6] and shown.cut and shown.docstrings == {0}


def test_compare_on_a_120_column_terminal_in_a_real_process(tmp_path, subprocess_env):
    """causal_mha needed 207 columns for its lines whole; code only, it is side by side at 120."""
    import subprocess
    import sys

    def kata(*args, columns="120"):
        return subprocess.run([sys.executable, "-c", "import kata; kata.cli(prog_name='kata')", *args],
                              env=dict(subprocess_env, COLUMNS=columns), capture_output=True, text=True,
                              timeout=60, check=False)

    assert kata("start", "causal_mha").returncode == 0
    (tmp_path / "home" / "causal_mha.py").write_text(_catalogued_attempt("causal_mha"))
    wide = kata("compare", "--yes")
    assert wide.returncode == 0, wide.stderr
    lines = wide.stdout.splitlines()
    said = next(i for i, ln in enumerate(lines) if "Code only" in ln)   # then the efficiency last graded
    assert lines[0].split()[:2] == ["#", "yours:"]
    assert max(len(ln.rstrip()) for ln in lines[:said] + lines[said + 1:]) <= 120
    assert any(" ~ " in ln for ln in lines[:said]) and lines[said + 2].startswith("Efficiency: not measured")
    narrow = kata("compare", "--yes", columns="100")
    assert narrow.stdout.startswith("--- yours: causal_mha.py") and "from 109 columns" in narrow.stdout
