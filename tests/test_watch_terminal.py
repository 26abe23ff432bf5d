"""`kata watch` on a real terminal (a pseudo-terminal), and Ctrl-C as a shell sees it: the
screen is drawn again only when what it shows changes, a mock interview's questions each
have a status line, a short screen leaves out repro code before the likely cause, the
clock and "grading" come at once, and an interrupted command exits 130 within a second."""
from __future__ import annotations

import os
import pty
import re
import select
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from conftest import make_tree, stand_in_command

CLEAR = "\x1b[2J"
TICK = "\x1b7\x1b[H"  # the clock line rewritten in place


class Terminal:
    """A `kata` process whose stdout is a pseudo-terminal; what it wrote, and when."""

    def __init__(self, argv: list[str], env: dict):
        self.main, child = pty.openpty()
        self.proc = subprocess.Popen(argv, env=env, stdout=child, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL)
        os.close(child)
        self.chunks: list[tuple[float, str]] = []

    def read(self, seconds: float, until=None) -> None:
        """Read for `seconds`, or until `until(everything so far)` holds."""
        end = time.monotonic() + seconds
        while time.monotonic() < end and not (until and until(self.text())):
            ready, _, _ = select.select([self.main], [], [], 0.05)
            if ready:
                try:
                    data = os.read(self.main, 65536)
                except OSError:  # the process closed the terminal
                    return
                self.chunks.append((time.monotonic(), data.decode("utf-8", "replace")))

    def text(self, since: float = 0.0) -> str:
        return "".join(c for t, c in self.chunks if t >= since)

    def screen(self) -> str:
        """The last screen drawn, without styles."""
        return re.sub(r"\x1b\[[0-9;]*m", "", self.text().split(CLEAR)[-1].split(TICK)[0])


def test_watch_in_a_mock_interview_on_a_terminal(tmp_path, subprocess_env):
    root = make_tree(tmp_path / "tree")
    home = Path(subprocess_env["KATA_HOME"])
    env = {k: v for k, v in subprocess_env.items() if k != "NO_COLOR"}
    subprocess.run(stand_in_command(root, "mock", "--count", "2", "--seed", "1"), env=env,
                   capture_output=True, timeout=60, check=True)
    first, second = sorted((home / "mock" / "1").glob("*.py"), key=lambda p: p.stat().st_mtime_ns)
    first.write_text("def f(x):\n    return x  # wrong\n")
    term = Terminal(stand_in_command(root, "watch"),
                    dict(env, TERM="xterm-256color", COLUMNS="100", LINES="16"))
    try:
        term.read(30, until=lambda out: "Ctrl-C to leave" in out)
        opening = term.text().split(CLEAR)[1]
        assert "Mock interview: 0:0" in opening and "grading" in opening  # at once, before a report
        term.read(30, until=lambda out: "grading" not in term.screen() and "still the stub" in term.screen())

        idle = time.monotonic()  # ten seconds in which nothing changes: the clock alone ticks
        term.read(10)
        assert term.text(idle).count(CLEAR) == 0 and term.text(idle).count(TICK) >= 7

        shown = term.screen()  # one status line per question, then the failing one's details
        status = [ln for ln in shown.splitlines() if re.match(r"[✗✓…] \w+  ", ln)]
        assert [ln.split()[1] for ln in status] == [first.stem, second.stem], shown
        assert "1/3 checks passed" in status[0] and "not implemented yet" in status[1]
        # 16 rows: the repro goes first; the first failing message, what was observed and the
        # likely cause stay
        assert "reproduce:" not in shown and "more lines: `kata check` shows them all" in shown
        for kept in ("weights row 3 sums to 0.74", "Observed: the weights are the reference's",
                     "Likely cause: future weights zeroed"):
            assert kept in shown, shown

        saved = time.monotonic()  # a fix to the second question appears, drawn a few times at most
        second.write_text("# PASS\n")
        term.read(5, until=lambda out: f"✓ {second.stem}" in term.screen())
        term.read(1)
        assert 1 <= term.text(saved).count(CLEAR) <= 4
        assert f"✓ {second.stem}  3/3 checks passed" in term.screen()
        assert f"✗ {first.stem}  1/3 checks passed" in term.screen()

        stopped = time.monotonic()
        term.proc.send_signal(signal.SIGINT)
        code = term.proc.wait(timeout=10)
        assert time.monotonic() - stopped < 1.0 and code == 130  # as a shell expects
        term.read(1)
        after = term.text(stopped)
        assert "`kata submit` ends the interview" in after and "kata pause" not in after
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
        os.close(term.main)
    assert "Traceback" not in term.proc.stderr.read().decode()


def test_ctrl_c_in_a_mock_while_another_kata_writes_exits_130_at_once(tmp_path, subprocess_env):
    """sqlite's own wait for the write lock cannot be interrupted: `kata check` must not
    sit out its 15 s after Ctrl-C."""
    root = make_tree(tmp_path / "tree")
    home = Path(subprocess_env["KATA_HOME"])
    subprocess.run(stand_in_command(root, "mock", "--count", "2", "--seed", "1"), env=subprocess_env,
                   capture_output=True, timeout=60, check=True)
    other = sqlite3.connect(home / "kata.sqlite3", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another `kata` writing
    try:
        proc = subprocess.Popen(stand_in_command(root, "check"), env=subprocess_env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(2.0)  # graded (the stand-in is instant), and waiting to record it
        assert proc.poll() is None
        stopped = time.monotonic()
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=20)
        assert time.monotonic() - stopped < 1.0 and code == 130
        assert "Traceback" not in proc.stderr.read().decode() and "Aborted" not in proc.stdout.read().decode()
    finally:
        other.execute("ROLLBACK")
        other.close()
