"""Attempts that go after the judge: its terminal, the user's folder, its limits, its
channel, the processes around it. Each runs `kata` as a real process (and a few more cases
grade through the harness in this process): the verdict is the checks' own, nothing is
left running or written outside the attempt's own folder, and nothing the attempt writes
steers the terminal."""
from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from graders.engine.harness import grade

REPO = Path(__file__).resolve().parent.parent
LINUX = sys.platform.startswith("linux")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
GOOD = textwrap.dedent("""
    import numpy as np

    def softmax(z, axis=-1):
        e = np.exp(z - z.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)
""")


def kata(env, *args, cwd=REPO, timeout=60):
    return subprocess.run([sys.executable, "-m", "kata", *args], cwd=cwd, env=env, capture_output=True,
                          timeout=timeout)


@pytest.fixture
def env(tmp_path, subprocess_env):
    """`kata`'s environment: a temporary folder of its own, and a mark in the environment that
    every process the attempt starts inherits."""
    (tmp_path / "tmp").mkdir()
    return dict(subprocess_env, TMPDIR=str(tmp_path / "tmp"), HOSTILE_MARK=uuid.uuid4().hex)


@pytest.fixture
def world(env):
    """... and a work folder with an attempt and its history."""
    assert kata(env, "start", "softmax").returncode == 0
    return env


def marked(env) -> list[int]:
    """Running processes whose environment holds this test's mark."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[-1].split()[0]
        except OSError:
            continue
        if env["HOSTILE_MARK"].encode() in environ and state not in (b"Z", b"X"):
            found.append(int(pid))
    return found


def left_behind(env, seconds: float = 3.0) -> tuple[list[int], list[str]]:
    """(processes still running, what is left in TMPDIR) once the grading's leftovers are gone."""
    tmp, end = Path(env["TMPDIR"]), time.monotonic() + seconds
    while time.monotonic() < end and (marked(env) or list(tmp.iterdir())):
        time.sleep(0.05)
    pids = marked(env)
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    return pids, [p.name for p in tmp.iterdir()]


def tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


# ----------------------------------------------------------------------------- a correct attempt that attacks

ATTACKS = """
import os, resource, signal, subprocess, sys
print("\\x1b[2J\\x1b]0;title\\x07\\x1b]52;c;ZXZpbA==\\x07\\x1b]8;;http://x\\x07link\\x1b[1A\\r  \\u2713 fake")
print("SEES", os.environ.get("KATA_HOME"), any("{repo}" in p for p in sys.path), os.getcwd())
for root in (".", "..", os.path.dirname(os.path.abspath(__file__)), os.path.expanduser("~")):
    try:
        names = os.listdir(root)
    except OSError:
        continue
    for name in names:
        try:
            os.truncate(os.path.join(root, name), 0)
        except OSError:
            pass
with open("big", "wb") as f:
    f.truncate(200 << 20)
for limit in (resource.RLIMIT_AS, resource.RLIMIT_FSIZE):
    try:
        resource.setrlimit(limit, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        print("LIMIT LIFTED", limit)
    except (ValueError, OSError):
        pass
subprocess.Popen(["sleep", "1000"], start_new_session=True)
for sig in (signal.SIGTERM, signal.SIGSTOP):
    try:
        os.kill(os.getppid(), sig)
    except OSError:
        pass
os.fork()  # both processes carry on
"""


@pytest.mark.skipif(not LINUX, reason="processes are found through /proc")
def test_a_correct_attempt_that_attacks_passes_and_changes_nothing(world, tmp_path):
    home = Path(world["KATA_HOME"])
    before = tree(home)
    path = tmp_path / "softmax.py"
    path.write_text(ATTACKS.format(repo=REPO) + GOOD)
    r = kata(world, "check", "softmax", "--file", str(path), cwd=home)
    out = r.stdout.decode()
    assert r.returncode == 0, out + r.stderr.decode()
    assert not CONTROL.search(out + r.stderr.decode()), "a raw control character reached the terminal"
    assert "\\x1b]52;c;ZXZpbA==\\x07" in out and "\\r  ✓ fake" in out  # shown, not obeyed
    sees = next(line for line in out.splitlines() if "SEES" in line).split()
    assert sees[-3:-1] == ["None", "False"] and "kata-attempt-" in sees[-1] and str(home) not in sees[-1]
    assert "LIMIT LIFTED" not in out
    assert left_behind(world) == ([], [])
    assert tree(home) == before and path.read_text().startswith("\nimport os"), "the user's files were touched"
    history = kata(world, "history", cwd=home)
    assert b"No attempts yet" not in history.stdout and b"softmax" in history.stdout


# ----------------------------------------------------------------------------- imports at run time

def test_imports_the_source_does_not_spell_out_are_refused_as_it_runs(env, tmp_path):
    path = tmp_path / "softmax.py"
    path.write_text("import importlib\nsoftmax = importlib.import_module('sol' + 'utions.softmax').softmax\n")
    r = kata(env, "check", "softmax", "--file", str(path), "--json")
    [check] = json.loads(r.stdout)["checks"]
    assert r.returncode == 1 and check["name"] == "imports only NumPy and the standard library"
    assert check["message"] == ("line 2 imports `solutions`: an attempt may not use the project's own modules "
                                "(the reference solutions, graders or stubs)")


def test_an_import_refused_in_a_call_fails_the_file_even_when_caught(tmp_path):
    path = tmp_path / "softmax.py"
    path.write_text(GOOD.replace("    e = np.exp", "    try:\n        __import__('ri' + 'ch')\n    except ImportError:\n"
                                 "        pass\n    np.testing  # NumPy's own lazy import goes through\n    e = np.exp"))
    [check] = grade("softmax", path)["checks"]
    assert check["message"] == "line 6 imports `rich`: an attempt may import only NumPy and the Python standard library"


# ----------------------------------------------------------------------------- limits and the memory rule

def test_the_memory_rule_holds_whatever_the_attempt_does_to_its_limits_and_tracer(env, tmp_path):
    path = tmp_path / "flash_attention.py"
    path.write_text((REPO / "solutions" / "flash_attention.py").read_text() + textwrap.dedent("""
        import resource, tracemalloc
        _blockwise = flash_attention

        def flash_attention(q, k, v, block_size=128, causal=True):
            if q.shape[-2] >= 4096:
                try:
                    resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
                except (ValueError, OSError):
                    pass
                tracemalloc.stop()
                mask = np.tril(np.ones((q.shape[-2], k.shape[-2]), dtype=bool))
                del mask
            return _blockwise(q, k, v, block_size, causal)
    """))
    r = kata(env, "check", "flash_attention", "--file", str(path), "--json")
    report = json.loads(r.stdout)
    failed = {c["name"]: c["message"] for c in report["checks"] if not c["passed"]}
    assert r.returncode == 1 and len(failed) == 1, failed
    [message] = failed.values()
    assert "stopped or restarted the memory tracer" in message


# ----------------------------------------------------------------------------- files that are not attempts

def test_a_file_that_is_not_a_regular_small_file_is_a_usage_error(world, tmp_path):
    fifo = tmp_path / "softmax.py"
    os.mkfifo(fifo)  # no writer: reading it would wait forever
    r = kata(world, "check", "softmax", "--file", str(fifo), timeout=30)
    assert r.returncode == 2 and b"is a FIFO" in r.stderr and b"Traceback" not in r.stderr, r.stderr
    attempt = Path(world["KATA_HOME"]) / "softmax.py"
    attempt.unlink()
    os.mkfifo(attempt)  # the user's own attempt
    r = kata(world, "check", timeout=30)
    assert r.returncode == 2 and b"is a FIFO" in r.stderr, r.stderr


def test_a_device_or_a_huge_file_is_refused_before_it_is_read(tmp_path):
    from practice import paths
    from practice.errors import UnusableAttempt

    big = tmp_path / "big.py"
    big.write_bytes(b"#" * (paths.MAX_ATTEMPT_BYTES + 1))
    for path, words in [("/dev/zero", "is a character device"), (big, "larger than 1 MiB")]:
        with pytest.raises(UnusableAttempt, match=words):
            paths.read_attempt(path)


def test_a_file_with_null_bytes_says_so(env, tmp_path):
    path = tmp_path / "softmax.py"
    path.write_bytes(b"import numpy as np\x00\n")
    r = kata(env, "check", "softmax", "--file", str(path))
    assert r.returncode == 1 and b"holds null bytes" in r.stdout and b"line None" not in r.stdout


# ----------------------------------------------------------------------------- types

def test_a_list_is_not_an_array(env, tmp_path):
    path = tmp_path / "softmax.py"
    path.write_text(GOOD.replace("return e / e.sum(axis=axis, keepdims=True)",
                                 "return (e / e.sum(axis=axis, keepdims=True)).tolist()"))
    r = kata(env, "check", "softmax", "--file", str(path))
    assert r.returncode == 1 and b"is a list, expected a NumPy array" in r.stdout


KV = (REPO / "solutions" / "kv_cache.py").read_text()
COUNTS = (REPO / "solutions" / "param_count.py").read_text()


@pytest.mark.parametrize("kata_name, source, words", [
    ("kv_cache", KV + "\nfrom collections import namedtuple\nCache = namedtuple('Cache', 'k v')\n_f = attend_with_cache\n"
     "def attend_with_cache(*a, **k):\n    y, (kk, vv) = _f(*a, **k)\n    return y, Cache(kk, vv)\n", None),
    ("param_count", COUNTS + "\nfrom collections import OrderedDict\n_f = llama_param_counts\n"
     "def llama_param_counts(*a, **k):\n    return OrderedDict(_f(*a, **k))\n", None),
    ("softmax", GOOD + "\nclass Probabilities(np.ndarray):\n    pass\n_f = softmax\n"
     "def softmax(z, axis=-1):\n    return _f(z, axis).view(Probabilities)\n", None),
    ("softmax", GOOD + "\nfrom collections import OrderedDict\ndef softmax(z, axis=-1):\n    return OrderedDict(p=z)\n",
     "is an OrderedDict, expected a NumPy array"),
    ("kv_cache", KV + "\n_f = attend_with_cache\ndef attend_with_cache(*a, **k):\n    y, (kk, vv) = _f(*a, **k)\n"
     "    return y, {'k': kk, 'v': vv}\n", "is a dict, expected a pair (k, v)"),
], ids=["namedtuple", "OrderedDict", "ndarray subclass", "an OrderedDict named", "a dict named"])
def test_any_tuple_dict_or_array_type_counts_and_a_wrong_one_is_named(tmp_path, kata_name, source, words):
    path = tmp_path / f"{kata_name}.py"
    path.write_text(source)
    report = grade(kata_name, path)
    failed = [c["message"] for c in report["checks"] if not c["passed"]]
    if words is None:
        assert report["passed"], failed
    else:
        assert any(words in m for m in failed) and not any("Opaque" in m for m in failed), failed


# ----------------------------------------------------------------------------- Ctrl-C, processes around the attempt

def test_ctrl_c_while_kata_loads_or_grades_exits_130_without_a_traceback(subprocess_env, tmp_path):
    slow = tmp_path / "softmax.py"
    slow.write_text("import time\ntime.sleep(5)\n" + GOOD)  # kata is still waiting for its report at 0.3 s
    for delay in (0.02, 0.3):  # while kata imports its modules, and while it waits for a report
        code = (f"import os, signal, sys, threading\n"
                f"sys.argv = ['kata', 'check', 'softmax', '--file', {str(slow)!r}]\n"
                f"t = threading.Timer({delay}, os.kill, (os.getpid(), signal.SIGINT))\nt.daemon = True\nt.start()\n"
                f"import kata\nkata.cli(prog_name='kata')\n")
        r = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=subprocess_env, capture_output=True, timeout=60)
        assert r.returncode == 130 and b"Traceback" not in r.stderr, (delay, r.stderr)


def parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[-1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[-1].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


@pytest.mark.skipif(not LINUX, reason="processes are found through /proc")
def test_a_stopped_grading_service_is_continued_and_killed_when_kata_ends(world, tmp_path):
    path = tmp_path / "softmax.py"
    path.write_text("import time\ntime.sleep(1.5)\n" + GOOD)
    proc = subprocess.Popen([sys.executable, "-m", "kata", "check", "softmax", "--file", str(path)], cwd=REPO,
                            env=world, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    service = None
    for _ in range(200):
        children = [int(p) for p in filter(str.isdigit, os.listdir("/proc")) if parent(int(p)) == proc.pid]
        if children:
            service = children[0]
            break
        time.sleep(0.01)
    time.sleep(0.3)
    os.kill(service, signal.SIGSTOP)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err
    assert _gone(service), "the grading service outlived kata"


def _gone(pid: int, seconds: float = 5.0) -> bool:
    """The process is gone, or dead and waiting to be reaped by whoever adopted it."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False
