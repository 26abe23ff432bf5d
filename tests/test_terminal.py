"""Terminal output goes one way: colour only where the terminal takes it (not TERM=dumb,
not NO_COLOR), the width of the terminal respected, a closed pipe ended quietly; pictures
of failing checks; `kata list` in the order of the path; shell completion of kata names."""
from __future__ import annotations

import dataclasses
import os
import pty
import re
import select
import shlex
import signal
import subprocess
import time

import pytest
from conftest import make_tree, stand_in_command

from graders.engine.report import CheckResult, Report, Status
from practice import catalogue, grading

ESC = "\x1b["


# -- colour, width, pipes ------------------------------------------------------------------
def on_a_terminal(root, env, *args, until: str | None = None, seconds: float = 30) -> str:
    """Run `kata` with a pseudo-terminal as its stdout; what it wrote. With `until`, send
    Ctrl-C once that text has appeared (for `kata watch`)."""
    main, child = pty.openpty()
    proc = subprocess.Popen(stand_in_command(root, *args), env=env, stdout=child,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    os.close(child)
    got, deadline, sent = b"", time.time() + seconds, False
    while time.time() < deadline:
        ready, _, _ = select.select([main], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            got += chunk
        if until and not sent and until in got.decode(errors="replace"):
            proc.send_signal(signal.SIGINT)
            sent = True
        if proc.poll() is not None and not ready:
            break
    proc.wait(timeout=30)
    os.close(main)
    return got.decode("utf-8", errors="replace")


@pytest.fixture
def world(tmp_path, subprocess_env):
    root = make_tree(tmp_path / "tree")
    env = {k: v for k, v in subprocess_env.items() if k != "NO_COLOR"}
    subprocess.run(stand_in_command(root, "start", "softmax"), env=env, capture_output=True,
                   timeout=60)
    (tmp_path / "home" / "softmax.py").write_text("def softmax(z):\n    return z\n")
    return root, env


@pytest.mark.parametrize("args,until", [(["check"], None), (["list"], None),
                                        (["history"], None), (["status"], None),
                                        (["watch", "--poll"], "Ctrl-C")])
def test_a_dumb_terminal_or_no_color_gets_no_escape_codes(world, args, until):
    root, env = world
    coloured = on_a_terminal(root, dict(env, TERM="xterm-256color"), *args, until=until)
    assert ESC in coloured  # the same command on a capable terminal does use them
    dumb = on_a_terminal(root, dict(env, TERM="dumb"), *args, until=until)
    assert "\x1b" not in dumb and dumb.strip()  # no colour, no cursor movement
    no_color = on_a_terminal(root, dict(env, TERM="xterm-256color", NO_COLOR="1"), *args,
                             until=until)
    assert not re.search(r"\x1b\[[0-9;]*m", no_color) and no_color.strip()  # no colour


def test_list_and_history_fit_the_width(world):
    root, env = world
    subprocess.run(stand_in_command(root, "check"), env=env, capture_output=True, timeout=60)
    for args in (["list"], ["history"], ["history", "softmax"]):
        r = subprocess.run(stand_in_command(root, *args), env=dict(env, COLUMNS="40"),
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        assert lines and max(len(ln) for ln in lines) <= 40, (args, r.stdout)
    r = subprocess.run(stand_in_command(root, "list"), env=dict(env, COLUMNS="40"),
                       capture_output=True, text=True, timeout=60)
    assert [ln.split()[0] for ln in r.stdout.splitlines()[1:]] == \
        [k.name for k in catalogue.in_path_order()]


@pytest.mark.parametrize("args", [["start", "rope"], ["list"], ["history"]])
def test_a_reader_that_stops_reading_ends_the_command_quietly(tmp_path, subprocess_env, args):
    """`kata start rope | head -1`: whether the reader is gone before the first line or
    after it, no error message and no traceback."""
    root = make_tree(tmp_path / "tree")
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written
    proc = subprocess.Popen(stand_in_command(root, *args), env=subprocess_env, stdout=write,
                            stderr=subprocess.PIPE)
    os.close(write)
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141 and err == ""  # as a shell reports it: 128 + SIGPIPE
    head = subprocess.run(["bash", "-c", shlex.join(stand_in_command(root, *args)) + " | head -1"],
                          env=subprocess_env, capture_output=True, text=True, timeout=60)
    assert head.returncode == 0 and head.stderr == "" and len(head.stdout.splitlines()) == 1
    st = subprocess.run(stand_in_command(root, "status"), env=subprocess_env,
                        capture_output=True, text=True, timeout=60)
    assert st.stdout.startswith("rope: ") == (args[0] == "start")  # the start itself was done


# -- pictures -----------------------------------------------------------------------------
def weights(n: int, leak: float = 0.0) -> list[list[float]]:
    """Causal weights, every row uniform over the past; `leak` on the entry (0, n-1)."""
    rows = [[1.0 / (i + 1) if j <= i else 0.0 for j in range(n)] for i in range(n)]
    rows[0] = [1.0 - leak] + [0.0] * (n - 2) + [leak] if n > 1 else [1.0]
    return rows


def report_with(picture: dict | None) -> Report:
    return Report("causal_mha", [
        CheckResult("returns the shapes", Status.PASSED, id="shape"),
        CheckResult("nothing attends to the future", Status.FAILED,
                    "query 0 puts weight 0.3 on key 3, in its future", id="causal",
                    function="causal_mha", picture=picture)], seconds=0.1)


def graded(kenv, monkeypatch, rep: Report, env: dict | None = None) -> str:
    monkeypatch.setattr(grading, "grade", lambda kata, path, source=None: rep)
    f = kenv.root / "causal_mha.py"
    f.write_text("x = 1\n")
    r = kenv.run("check", "--file", str(f), env=env)
    assert r.exit_code == 1, r.stderr
    return r.stdout


PICTURE = {"title": "weights of batch 0, head 0", "values": weights(4, leak=0.3),
           "marked": [[0, 3]], "rows": "query", "cols": "key"}


def test_a_failing_checks_picture_is_a_grid_under_its_message(kenv, monkeypatch):
    out = graded(kenv, monkeypatch, report_with(PICTURE))
    lines = out.splitlines()
    i = next(k for k, ln in enumerate(lines) if "puts weight 0.3 on key 3" in ln)
    assert "weights of batch 0, head 0 (rows: query i, columns: key j)" in lines[i + 1]
    grid = lines[i + 3:i + 7]  # after the column numbers
    assert lines[i + 2].strip() == "0123"
    # Without colour: plain characters, one cell per entry, the marked one an X.
    assert [ln.strip() for ln in grid] == ["0  +..X", "1  ++..", "2  ---.", "3  ----"]
    assert "X: the entries the message is about" in lines[i + 7]


def test_with_colour_the_grid_is_shaded_and_the_marked_entry_stands_out(kenv, monkeypatch):
    out = graded(kenv, monkeypatch, report_with(PICTURE), env={"FORCE_COLOR": "1"})
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert "0  ▓··▒" in plain and "3  ▒▒▒▒" in plain and "X" not in plain
    marked = re.search(r"\x1b\[[0-9;]*m▒\x1b\[0m", out)  # the leak, styled on its own
    assert marked and "41" in marked.group(0)  # on red


def test_a_picture_too_wide_for_the_terminal_is_left_out(kenv, monkeypatch):
    wide = dict(PICTURE, values=weights(64), marked=[])
    out = graded(kenv, monkeypatch, report_with(wide), env={"COLUMNS": "60"})
    assert "is left out: it needs" in out and "60 are available" in out
    assert "rows: query" not in out  # no grid
    out = graded(kenv, monkeypatch, report_with(wide), env={"COLUMNS": "120"})
    assert "left out" not in out and out.count("\n") > 64
    lines = out.splitlines()
    tens = next(i for i, ln in enumerate(lines) if ln.strip().startswith("0         1"))
    assert lines[tens].strip() == "0         1         2         3         4         5         6"
    assert lines[tens + 1].strip() == "0123456789" * 6 + "0123"


def test_nan_weights(kenv, monkeypatch):
    nan = dict(PICTURE, values=[[float("nan"), 0.0], [0.5, 0.5]], marked=[[0, 0]])
    out = graded(kenv, monkeypatch, report_with(nan))
    assert "0  X." in out and "1  ++" in out and "? NaN" in out


def test_an_untouched_stub_is_not_implemented_yet_not_a_failing_check(kenv, monkeypatch):
    stub = Report("gqa", [
        CheckResult("implemented", Status.NOT_IMPLEMENTED,
                    "not implemented yet: `gqa` raises NotImplementedError", function="gqa"),
        CheckResult("the KV cache size", Status.NOT_IMPLEMENTED, "not implemented yet",
                    function="kv_cache_bytes")], seconds=0.1)
    monkeypatch.setattr(grading, "grade", lambda kata, path, source=None: stub)
    kenv.run("start", "gqa")
    out = kenv.run("check").stdout
    assert out.count("not implemented yet") == 1
    assert "gqa: still the stub" in out and "kv_cache_bytes: still the stub" in out
    assert "implemented" not in out.replace("not implemented yet", "")
    assert "✗" not in out and "0/2" not in out


# -- kata list, completion ------------------------------------------------------------------
def test_list_follows_the_path_group_by_group(kenv, monkeypatch):
    shuffled = {"softmax": "training", "rope": "position", "gqa": "attention",
                "swiglu": "block", "top_p": "decoding", "rms_norm": "block"}
    grouped = tuple(dataclasses.replace(k, group=shuffled.get(k.name, ""))
                    for k in catalogue.katas())
    monkeypatch.setattr(catalogue, "katas", lambda: grouped)
    lines = kenv.run("list").stdout.splitlines()
    assert len(lines) == 1 + len(grouped) and lines[0].split()[:2] == ["kata", "group"]
    order = [ln.split()[0] for ln in lines[1:]]
    assert order[:6] == ["gqa", "rope", "rms_norm", "swiglu", "top_p", "softmax"]
    assert [ln.split()[1] for ln in lines[1:7]] == ["attention", "position", "block", "block",
                                                   "decoding", "training"]
    assert order[6:] == [k.name for k in catalogue.katas() if k.name not in shuffled]


def test_the_catalogue_reads_group_and_traps_with_defaults(tmp_path, monkeypatch):
    toml = tmp_path / "catalogue.toml"
    toml.write_text('[[kata]]\nname = "a"\ntitle = "A"\ndifficulty = "easy"\nminutes = 5\n'
                    'hints = ["h"]\nfollow_ups = ["f"]\ngroup = "block"\ntraps = ["k.T"]\n\n'
                    '[[kata]]\nname = "b"\ntitle = "B"\ndifficulty = "easy"\nminutes = 5\n'
                    'hints = ["h"]\nfollow_ups = ["f"]\n')
    monkeypatch.setattr(catalogue, "CATALOGUE", toml)
    catalogue.katas.cache_clear()
    try:
        a, b = catalogue.katas()
        assert (a.group, a.traps) == ("block", ("k.T",)) and (b.group, b.traps) == ("", ())
    finally:
        catalogue.katas.cache_clear()


@pytest.mark.parametrize("words,expected", [
    ("kata start so", ["softmax"]), ("kata check ca", ["causal_mask", "causal_mha"]),
    ("kata history r", ["rope", "rms_norm"]), ("kata st", ["start", "status"])])
def test_shell_completion_completes_commands_and_kata_names(kenv, words, expected):
    env = {"_KATA_COMPLETE": "bash_complete", "COMP_WORDS": words,
           "COMP_CWORD": str(len(words.split()) - 1)}
    r = kenv.run(env=env)
    got = [ln.split(",", 1)[1] for ln in r.stdout.splitlines()]
    assert sorted(got) == sorted(expected)
