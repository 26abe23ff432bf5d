"""The judge stands apart: whatever an attempt does, the verdict is the checks' own, and
nothing the attempt started outlives the grading.

Most cases grade through graders.engine.harness in this process (the judge) with the attempt in
its worker; the ones about `kata` itself being interrupted run `kata` as a real process.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from graders.engine.harness import grade
from graders.engine.vocabulary import LAYOUT_CHECK

REPO = Path(__file__).resolve().parent.parent
GOOD = """
import numpy as np

def softmax(z, axis=-1):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
"""
NO_SHIFT = GOOD.replace("z - z.max(axis=axis, keepdims=True)", "z")


def write(tmp_path, body: str, name: str = "softmax.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def failures(report) -> dict[str, str]:
    return {c["name"]: c["message"] for c in report["checks"] if not c["passed"]}


def alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped has stopped running)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[-1].split()[0] not in (b"Z", b"X")
    except (FileNotFoundError, ProcessLookupError):
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def wait_gone(pids, seconds: float) -> list[int]:
    """The pids still running after `seconds`."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        left = [p for p in pids if alive(p)]
        if not left:
            return []
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def pids_in(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def printed_pids(report) -> list[int]:
    return [int(line.split()[1]) for line in report["stdout"].splitlines() if line.startswith("PID ")]


def pids_under(tmp: Path) -> list[int]:
    """The pids an attempt graded with TMPDIR=`tmp` wrote to `pids` in its own folder."""
    return sorted({p for f in tmp.glob("kata-attempt-*/work/pids") for p in pids_in(f)})


# ----------------------------------------------------------------------------- leftovers

LEFTOVERS = {
    "a thread that never ends": """
        import threading, time
        threading.Thread(target=time.sleep, args=(1000,)).start()
        record(os.getpid())
    """,
    "a forked child": """
        import time
        pid = os.fork()
        if pid == 0:
            time.sleep(1000)
            os._exit(0)
        record(pid)
    """,
    "a Popen child": """
        import subprocess
        record(subprocess.Popen(["sleep", "1000"]).pid)
    """,
    "a child in a new session": """
        import subprocess
        record(subprocess.Popen(["sleep", "1000"], start_new_session=True).pid)
    """,
    "a daemon (double fork)": """
        import time
        r, w = os.pipe()
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.write(w, str(os.getpid()).encode()); time.sleep(1000); os._exit(0)
            os._exit(0)
        record(int(os.read(r, 20)))
    """,
}


# The attempt's process may write only in its own folder: it prints each pid and writes it to
# `pids` there (where the test finds it through TMPDIR while the attempt runs).
RECORDER = ("import os\ndef record(pid):\n    print('PID', pid, flush=True)\n    with open('pids', 'a') as f:\n"
            "        f.write(str(pid) + '\\n')\n")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="orphans are found through /proc")
@pytest.mark.parametrize("what", LEFTOVERS)
def test_nothing_the_attempt_starts_outlives_the_grading(tmp_path, what):
    body = RECORDER + textwrap.dedent(LEFTOVERS[what]) + textwrap.dedent(GOOD)
    started = time.monotonic()
    report = grade("softmax", write(tmp_path, body))
    took = time.monotonic() - started
    assert report["passed"], failures(report)
    assert took < report["seconds"] + 2.0, "the verdict waited for the attempt's leftovers"
    assert printed_pids(report), "the attempt did not run"
    assert wait_gone(printed_pids(report), 2.0) == [], f"{what} outlived the grading"


def kata_process(args, env, **kw):
    return subprocess.Popen([sys.executable, "-m", "kata", *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def wait_for(tmp: Path, seconds: float = 20.0) -> list[int]:
    end = time.monotonic() + seconds
    while time.monotonic() < end and len(pids_under(tmp)) < 2:
        time.sleep(0.05)
    assert len(pids_under(tmp)) >= 2, "the attempt never started its call"
    return pids_under(tmp)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="orphans are found through /proc")
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
def test_interrupting_kata_leaves_no_process_behind(tmp_path, subprocess_env, how):
    body = RECORDER + textwrap.dedent("""
        import subprocess, signal
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        def softmax(z, axis=-1):
            record(os.getpid())
            record(subprocess.Popen(["sleep", "1000"], start_new_session=True).pid)
            while True:
                pass
    """)
    path = write(tmp_path, body)
    (tmp_path / "tmp").mkdir()
    env = dict(subprocess_env, KATA_CHECK_SECONDS="60", TMPDIR=str(tmp_path / "tmp"))
    proc = kata_process(["check", "softmax", "--file", str(path)], env)
    try:
        pids = wait_for(tmp_path / "tmp")
        proc.send_signal(how)
        proc.wait(timeout=10)
    finally:
        proc.kill()
        proc.communicate()
    assert wait_gone(pids, 5.0) == [], "the attempt's processes outlived kata"


# ----------------------------------------------------------------------------- time and output

def test_a_hang_is_one_message_with_its_call_and_line_and_the_rest_are_not_run(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_CHECK_SECONDS", "2")
    hang = "    if z.ndim == 3 and z.shape[1] == 1:\n        import time\n        time.sleep(1000)  # a hang that leaves the cores to the other tests\n    e = np.exp"
    report = grade("softmax", write(tmp_path, GOOD.replace("    e = np.exp", hang)))
    [(name, message)] = failures(report).items()
    assert message.startswith("did not finish within 2 s on softmax(z, axis=1) (z (2, 1, 5) float64): it was "
                              "running line 7 of your file (`time.sleep(1000)  # a hang that leaves the cores to "
                              "the other tests`) when it was stopped"), message
    assert report["skipped"] and all(f"'{name}' did not finish, so the checks after it were not run" in c["why"]
                                     for c in report["skipped"]), report["skipped"]
    assert report["seconds"] < 2 + 2, "the checks after a hang cost nothing more"


def test_an_endless_function_costs_one_time_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_CHECK_SECONDS", "0.5")
    report = grade("softmax", write(tmp_path, "def softmax(z, axis=-1):\n    while True:\n        pass\n"))
    assert not report["passed"]
    assert report["seconds"] < 0.5 + 1.5
    [message] = failures(report).values()
    assert re.search(r"it was running line [23] of your file \(`(while True:|pass)`\) when it was stopped$", message), message
    assert len(report["skipped"]) >= 10 and all("were not run" in c["why"] for c in report["skipped"])
    assert not any(c["status"] == "skipped" for c in report["checks"])  # a check not run is not under checks


def test_slow_top_level_code_is_named_as_the_slow_part(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_CHECK_SECONDS", "0.5")  # top-level code gets at least 2 s
    report = grade("softmax", write(tmp_path, "import time\ntime.sleep(30)\n" + GOOD))
    [only] = report["checks"]
    assert "top-level code did not finish within 2 s" in only["message"]
    assert report["seconds"] < 5


def test_a_print_flood_is_bounded_in_time_memory_and_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_CHECK_SECONDS", "0.5")
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    body = GOOD.replace("    e = np.exp", "    while True:\n        print('spam ' * 20)\n    e = np.exp")
    started = time.monotonic()
    report = grade("softmax", write(tmp_path, body))
    assert time.monotonic() - started < 8
    assert report["stdout_bytes"] > 1_000_000 and len(report["stdout"]) <= 8000
    assert report["stdout"].rstrip().endswith("spam"), "the tail of what was printed is shown"
    assert sum(f.stat().st_size for f in (tmp_path / "tmp").rglob("*") if f.is_file()) == 0


def test_an_invalid_check_time_is_a_usage_error(tmp_path, subprocess_env):
    env = dict(subprocess_env, KATA_CHECK_SECONDS="soon")
    proc = kata_process(["check", "softmax", "--file", str(write(tmp_path, GOOD))], env)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and b"KATA_CHECK_SECONDS" in err and b"Traceback" not in err


# ----------------------------------------------------------------------------- global state

PATCHES = {
    "np.seterr(all='raise')": "np.seterr(all='raise')",
    "np.set_printoptions": "np.set_printoptions(precision=1, floatmode='fixed', threshold=3)",
    "np.isclose patched": "np.isclose = lambda *a, **k: np.True_",
    "np.all and np.allclose patched": "np.all = lambda *a, **k: True\nnp.allclose = lambda *a, **k: True",
    "json.dumps patched": "import json\njson.dumps = lambda *a, **k: '{\"passed\": true}'",
    "the reference looked up": "import sys\nref = [m for n, m in sys.modules.items() if 'solution' in n or 'reference' in n]\n"
                               "if ref:\n    softmax = ref[0].softmax",
}


@pytest.mark.parametrize("patch", PATCHES)
def test_the_attempts_global_state_cannot_change_a_verdict_or_a_message(tmp_path, patch):
    prefix = "import numpy as np\n" + PATCHES[patch] + "\n"
    good = grade("softmax", write(tmp_path, prefix + GOOD.replace(  # underflow is no error: a probability may be 0
        "    e = np.exp(", "    with np.errstate(over='ignore', under='ignore'):\n        e = np.exp(").replace(
        "    return e /", "    with np.errstate(under='ignore'):\n        return e /")))
    assert good["passed"], failures(good)
    plain = failures(grade("softmax", write(tmp_path, NO_SHIFT, "plain.py")))
    patched = grade("softmax", write(tmp_path, NO_SHIFT + "\n" + PATCHES[patch].replace("softmax = ref", "_ = ref")))
    assert not patched["passed"]
    if "seterr" in patch:  # the attempt's own overflow now raises: the same checks fail, for its reason
        assert set(failures(patched)) == set(plain)
        return
    strip = lambda m: m.replace(str(tmp_path / "plain.py"), "").replace(str(tmp_path / "softmax.py"), "")
    assert {k: strip(v) for k, v in failures(patched).items()} == {k: strip(v) for k, v in plain.items()}


def test_a_float32_input_written_in_place_fails_the_inputs_check(tmp_path):
    body = GOOD.replace("    e = np.exp", "    if z.dtype == np.float32:\n        z *= 1\n        z[...] = 0\n    e = np.exp")
    report = grade("softmax", write(tmp_path, body))
    failed = failures(report)
    assert "leaves its input unchanged" in failed and "modified its input `z`" in failed["leaves its input unchanged"]


def test_reference_values_come_from_pristine_inputs(tmp_path):
    """An attempt that overwrites its input with its answer is still compared with the answer
    for the input it was given."""
    body = GOOD.replace("    return e / e.sum(axis=axis, keepdims=True)",
                        "    out = e / e.sum(axis=axis, keepdims=True)\n    z[...] = 0\n    return out")
    report = grade("softmax", write(tmp_path, body))
    failed = failures(report)
    # no comparison with the reference fails: every check that fails says the input was written
    # into (the rule holds on every call the explorer makes), or that a read-only one refused it
    assert {"leaves its input unchanged", LAYOUT_CHECK} <= set(failed)
    assert "agrees with the reference" not in failed
    for name, message in failed.items():
        assert "modified its input `z" in message or "read-only" in message, (name, message)
        assert "differs from the reference" not in message, (name, message)


# ----------------------------------------------------------------------------- the bytes graded

@pytest.mark.parametrize("encoding", ["utf-8-sig", "latin-1 coding line", "crlf"])
def test_files_python_reads_are_graded_as_python_reads_them(tmp_path, encoding):
    text = "# café: a comment Python reads in the file's own encoding\n" + textwrap.dedent(GOOD)
    if encoding == "utf-8-sig":
        data = text.encode("utf-8-sig")
    elif encoding == "crlf":
        data = text.replace("\n", "\r\n").encode()
    else:
        data = ("# -*- coding: latin-1 -*-\n" + text).encode("latin-1")
    path = tmp_path / "softmax.py"
    path.write_bytes(data)
    report = grade("softmax", path)
    assert report["passed"], failures(report)


def test_the_bytes_given_are_what_is_graded(tmp_path):
    path = write(tmp_path, NO_SHIFT)
    report = grade("softmax", path, source=GOOD.encode())
    assert report["passed"], "the file on disk was read instead of the snapshot"


def test_a_raising_line_is_quoted_from_the_bytes_graded(tmp_path):
    path = write(tmp_path, "def softmax(z, axis=-1):\n    return z[99]\n")
    report = grade("softmax", path, source=b"def softmax(z, axis=-1):\n    return 1 / 0  # graded\n")
    assert any("`return 1 / 0  # graded`" in m for m in failures(report).values()), failures(report)


# ----------------------------------------------------------------------------- what escapes

@pytest.mark.parametrize("body, words", [
    ("def softmax(z, axis=-1):\n    raise KeyboardInterrupt\n", "raised KeyboardInterrupt"),
    ("def softmax(z, axis=-1):\n    raise GeneratorExit('bye')\n", "raised GeneratorExit: bye"),
    ("class Stop(BaseException):\n    pass\ndef softmax(z, axis=-1):\n    raise Stop('x')\n", "raised Stop: x"),
    ("class Odd(Exception):\n    def __str__(self):\n        raise RuntimeError\ndef softmax(z, axis=-1):\n"
     "    raise Odd()\n", "its message could not be read"),
    ("import os, signal\ndef softmax(z, axis=-1):\n    os.kill(os.getpid(), signal.SIGTERM)\n", "SIGTERM"),
])
def test_what_escapes_is_named_as_what_it_is(tmp_path, body, words):
    report = grade("softmax", write(tmp_path, body))
    assert any(words in m for m in failures(report).values()), failures(report)
    json.dumps(report)


def test_base_exceptions_are_not_called_an_exit(tmp_path):
    report = grade("softmax", write(tmp_path, "def softmax(z, axis=-1):\n    raise KeyboardInterrupt\n"))
    assert not any("ended the Python interpreter" in m for m in failures(report).values())


# ----------------------------------------------------------------------------- a file saved while graded

def test_a_file_swapped_while_kata_grades_it_is_recorded_as_graded(tmp_path, subprocess_env):
    """Saving (a correct version, a wrong one, over and over) while `kata check` runs: every
    recorded grading's verdict is the verdict on the code recorded with it."""
    import sqlite3
    import threading

    home = Path(subprocess_env["KATA_HOME"])
    start = subprocess.run([sys.executable, "-m", "kata", "start", "softmax"], cwd=REPO, env=subprocess_env,
                           capture_output=True, timeout=120)
    assert start.returncode == 0, start.stderr
    attempt = home / "softmax.py"
    versions = [textwrap.dedent(GOOD).encode(), textwrap.dedent(NO_SHIFT).encode()]
    stop = threading.Event()

    def keep_saving():
        i = 0
        while not stop.is_set():
            tmp = attempt.with_suffix(".tmp")
            tmp.write_bytes(versions[i % 2])
            os.replace(tmp, attempt)  # as editors save: a whole new file
            i += 1
            time.sleep(0.003)

    saver = threading.Thread(target=keep_saving)
    saver.start()
    try:
        for _ in range(4):
            subprocess.run([sys.executable, "-m", "kata", "check"], cwd=REPO, env=subprocess_env,
                           capture_output=True, timeout=120)
    finally:
        stop.set()
        saver.join()
    rows = sqlite3.connect(home / "kata.sqlite3").execute("SELECT code, passed FROM gradings").fetchall()
    assert len(rows) == 4
    for code, passed in rows:
        assert bytes(code) in versions
        assert bool(passed) == (bytes(code) == versions[0]), "a verdict recorded beside code it was not given"
