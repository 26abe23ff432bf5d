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
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from graders.engine.confine import open_to_others
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
        # the signal is sent `delay` after kata's import began (the harness's own lines do not count)
        code = (f"import os, signal, sys, threading, time\n"
                f"sys.argv = ['kata', 'check', 'softmax', '--file', {str(slow)!r}]\n"
                f"def interrupt():\n    while 'kata' not in sys.modules:\n        time.sleep(0.001)\n"
                f"    time.sleep({delay})\n    os.kill(os.getpid(), signal.SIGINT)\n"
                f"threading.Thread(target=interrupt, daemon=True).start()\n"
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


# ----------------------------------------------------------------------------- the machine as it was

def snapshot(paths: list[Path]) -> dict[str, tuple]:
    """What grading must leave as it was: each path's content, mode, owner, times and extended attributes."""
    out = {}
    for p in paths:
        st = os.lstat(p)
        content = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() and not p.is_symlink() else None
        try:
            xattrs = {name: os.getxattr(p, name, follow_symlinks=False) for name in os.listxattr(p, follow_symlinks=False)}
        except OSError:
            xattrs = None
        out[str(p)] = (content, st.st_mode, st.st_uid, st.st_gid, st.st_mtime_ns, xattrs)
    return out


def decoy_home(base: Path) -> list[Path]:
    """A home folder full of what an attempt must never touch (and the folder itself)."""
    home = base / "decoy"
    (home / ".ssh").mkdir(parents=True)
    files = {".ssh/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----\nnot a real key\n", ".bash_history": "ls\n",
             ".netrc": "machine example.com login me password secret\n", "notes.txt": "my notes\n"}
    for name, text in files.items():
        (home / name).write_text(text)
        os.chmod(home / name, 0o600 if name != "notes.txt" else 0o644)
    os.chmod(home / ".ssh", 0o700)
    return [home, home / ".ssh", *(home / name for name in files)]


TOUCHES = """
import os, stat
def _every(paths):
    for p in paths:
        for touch in (lambda: os.chmod(p, 0o4777), lambda: os.chmod(p, 0), lambda: os.utime(p, (1, 1)),
                      lambda: os.setxattr(p, "user.kata", b"x"), lambda: os.chown(p, os.getuid(), os.getgid()),
                      lambda: os.truncate(p, 0), lambda: open(p, "a").write("x"), lambda: os.rename(p, p + ".moved"),
                      lambda: os.unlink(p), lambda: os.rmdir(p)):
            try:
                touch()
                print("TOUCHED", p)
            except (OSError, ValueError):
                pass
_every({paths!r})
"""


def as_ordinary_user() -> list[str] | None:
    """A prefix that runs a command as an ordinary user (run as root, where that user can run
    this Python and read this project), else None."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return None
    needed = [os.path.realpath(sys.executable), str(REPO), sys.prefix]
    if not all(open_to_others(p) for p in needed):
        return None
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


USERS = ["as whoever runs the tests", "as an ordinary user"]


@pytest.mark.skipif(not LINUX, reason="the judge's guarantees are Linux's")
@pytest.mark.parametrize("user", USERS)
@pytest.mark.parametrize("tmp_mode", [0o1777, 0o755], ids=["tmp 1777", "tmp 755"])
def test_a_hostile_attempt_leaves_the_users_files_and_the_temporary_folder_as_they_were(tmp_path, subprocess_env,
                                                                                         user, tmp_mode, request):
    prefix = [] if user == USERS[0] else as_ordinary_user()
    if prefix is None:
        pytest.skip("no ordinary user can run this Python here")
    base = tmp_path / "base"
    if prefix:  # pytest's own folders are root's alone: the ordinary user's world is under a folder it can reach
        base = Path(tempfile.mkdtemp(prefix="kata-hostile-"))
        request.addfinalizer(lambda: shutil.rmtree(base, ignore_errors=True))
        if not open_to_others(str(base.parent)):
            pytest.skip("no folder an ordinary user can reach for its files")
    else:
        base.mkdir()
    tmp = base / "tmp"
    tmp.mkdir()
    os.chmod(tmp, tmp_mode)
    decoys = decoy_home(base)
    work = base / "work"
    env = dict(subprocess_env, HOME=str(decoys[0]), TMPDIR=str(tmp), KATA_HOME=str(work))
    assert kata(env, "start", "softmax").returncode == 0  # a store and an attempt of the user's
    store = [p for p in work.rglob("*") if p.is_file()]
    grader = REPO / "graders" / "softmax" / "grader.py"
    path = work / "softmax.py"
    targets = [*reversed(decoys), *store, path, tmp, work, grader]
    path.write_text(TOUCHES.format(paths=[str(p) for p in targets]) + GOOD)
    if prefix:
        for p in (base, tmp, *work.rglob("*"), work):
            os.chown(p, 65534, 65534)
    decoys += [*store, path, work, grader]
    before, tmp_before = snapshot(decoys), os.stat(tmp)
    r = subprocess.run([*prefix, sys.executable, "-m", "kata", "check", "softmax", "--file", str(path)], cwd=REPO,
                       env=env, capture_output=True, timeout=60)
    out = r.stdout.decode()
    assert r.returncode == 0, out + r.stderr.decode()
    assert "TOUCHED" not in out
    assert snapshot(decoys) == before, "grading changed the user's files"
    after = os.stat(tmp)
    assert (after.st_mode, after.st_uid, after.st_gid) == (tmp_before.st_mode, tmp_before.st_uid, tmp_before.st_gid)
    assert list(tmp.iterdir()) == [], "an attempt's folder was left behind"


ENVIRONMENT = """
import os, socket
seen = dict(os.environ)
with open("/proc/self/environ", "rb") as f:
    block = dict(item.split(b"=", 1) for item in f.read().split(b"\\0") if b"=" in item)
print("ENV", sorted(seen), "BLOCK", sorted(k.decode() for k in block))
print("SECRET", any("not-for-the-attempt" in v for v in seen.values()) or any(b"not-for-the-attempt" in v for v in block.values()))
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
    print("CONNECTED")
except OSError as exc:
    print("REFUSED", type(exc).__name__)
print("IDS", os.getuid(), os.geteuid(), os.getgid(), os.getegid(), os.getgroups())
"""


@pytest.mark.skipif(not LINUX, reason="the judge's guarantees are Linux's")
def test_the_attempt_sees_a_whitelisted_environment_and_no_network(tmp_path, subprocess_env):
    import socket

    from graders.engine.whitelist import ENVIRONMENT as WHITELIST

    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    path = tmp_path / "softmax.py"
    path.write_text(ENVIRONMENT.format(port=listener.getsockname()[1]) + GOOD)
    env = dict(subprocess_env, AWS_SECRET_ACCESS_KEY="not-for-the-attempt", KATA_SECRET="not-for-the-attempt")
    r = subprocess.run([sys.executable, "-m", "kata", "check", "softmax", "--file", str(path)], cwd=REPO, env=env,
                       capture_output=True, timeout=60)
    out = r.stdout.decode()
    assert r.returncode == 0, out + r.stderr.decode()
    line = next(x for x in out.splitlines() if "ENV" in x)
    names = set(re.findall(r"'([A-Z_]+)'", line))
    assert names and names <= set(WHITELIST), names - set(WHITELIST)
    assert "SECRET False" in out and "REFUSED" in out and "CONNECTED" not in out
    with pytest.raises(socket.timeout):
        listener.accept()
    ids = next(x for x in out.splitlines() if "IDS" in x).split(maxsplit=1)[1]
    if os.geteuid() == 0:  # run as root, the attempt gives up every id
        assert "0" not in re.findall(r"\d+", ids), ids


def test_the_standard_librarys_own_imports_are_its_business(tmp_path):
    path = tmp_path / "softmax.py"
    path.write_text("import copy\nimport dataclasses\nimport decimal\n" + GOOD.replace(
        "    e = np.exp(z", "    z = copy.deepcopy(z)\n    e = np.exp(z"))
    report = grade("softmax", path)
    assert report["passed"], [c["message"] for c in report["checks"] if not c["passed"]]


def test_a_class_merely_named_valueerror_is_not_a_valueerror(tmp_path):
    path = tmp_path / "causal_mha.py"
    path.write_text("class ValueError(Exception):\n    pass\n" + (REPO / "solutions" / "causal_mha.py").read_text())
    report = grade("causal_mha", path)
    failed = [c["message"] for c in report["checks"] if not c["passed"]]
    assert failed and all("raised ValueError" in m and "expected ValueError" in m for m in failed), failed


def test_a_stopped_call_names_its_shapes_and_its_line(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_CHECK_SECONDS", "1")
    path = tmp_path / "top_p.py"
    slow = (REPO / "solutions" / "top_p.py").read_text().replace(
        "def top_p_probs(logits, temperature=1.0, top_p=1.0):",
        "def top_p_probs(logits, temperature=1.0, top_p=1.0):\n    if logits.shape[-1] > 4000:\n"
        "        while True:\n            pass")
    path.write_text(slow)
    report = grade("top_p", path)
    [message] = [c["message"] for c in report["checks"] if not c["passed"]]
    assert re.search(r"^did not finish within [\d.]+ s on top_p_probs\(.*\) \(logits \([\d, ]*4097\) float\d\d\): it "
                     r"was running line [78] of your file", message), message


def test_a_number_whose_value_depends_on_how_it_is_read_is_not_that_number(tmp_path):
    path = tmp_path / "gqa.py"
    path.write_text((REPO / "solutions" / "gqa.py").read_text() + textwrap.dedent("""
        class Liar(np.int64):
            def __index__(self):
                return 0
        _bytes = kv_cache_bytes

        def kv_cache_bytes(n_layers, n_kv_heads, d_head, n_tokens, bytes_per_value=2):
            return Liar(_bytes(n_layers, n_kv_heads, d_head, n_tokens, bytes_per_value))
    """))
    report = grade("gqa", path)
    failed = [c["message"] for c in report["checks"] if not c["passed"]]
    assert failed and all("Liar" in m for m in failed) and any("depends on how it is read" in m for m in failed), failed


def test_a_call_that_leaves_a_thread_running_fails(tmp_path):
    path = tmp_path / "softmax.py"
    path.write_text(GOOD + textwrap.dedent("""
        import threading, time
        _softmax = softmax

        def softmax(z, axis=-1):
            out = _softmax(z, axis)
            def later():
                time.sleep(0.3)
                out[...] = 0.0
            threading.Thread(target=later, daemon=True).start()
            return out
    """))
    report = grade("softmax", path)
    failed = [c["message"] for c in report["checks"] if not c["passed"]]
    assert failed and all(re.search(r": left \d+ threads? running after it returned", m) for m in failed), failed


@pytest.mark.skipif(not LINUX, reason="the memory rule is measured from /proc")
def test_the_memory_rule_is_measured_from_outside_whatever_the_attempt_hides(env, tmp_path):
    path = tmp_path / "flash_attention.py"
    path.write_text((REPO / "solutions" / "flash_attention.py").read_text() + textwrap.dedent("""
        import mmap
        _blockwise = flash_attention

        def flash_attention(q, k, v, block_size=128, causal=True):
            if q.shape[-2] >= 4096:  # a full (T, T) mask the tracer does not see
                T = q.shape[-2]
                buffer = mmap.mmap(-1, T * T)
                mask = np.frombuffer(buffer, dtype=bool).reshape(T, T)
                mask[...] = np.tri(T, dtype=bool)[:1].repeat(1, 0)[0]
                del mask
            return _blockwise(q, k, v, block_size, causal)
    """))
    r = kata(env, "check", "flash_attention", "--file", str(path), "--json")
    report = json.loads(r.stdout)
    failed = {c["name"]: c["message"] for c in report["checks"] if not c["passed"]}
    assert r.returncode == 1 and len(failed) == 1, failed
    [message] = failed.values()
    assert "the peak memory" in message and "MiB" in message, message


def test_a_deep_tree_of_folders_is_removed_and_an_attempt_may_read_its_own_file(tmp_path, env):
    path = tmp_path / "softmax.py"
    path.write_text(textwrap.dedent("""
        import os
        with open(__file__) as f:
            assert "deep tree" in f.read()
        fd = os.open(".", os.O_RDONLY)
        for _ in range(5000):  # a deep tree
            os.mkdir("d", dir_fd=fd)
            fd = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.mkdir("locked", 0, dir_fd=fd)
    """) + GOOD)
    r = kata(env, "check", "softmax", "--file", str(path))
    assert r.returncode == 0, r.stdout.decode() + r.stderr.decode()
    assert list(Path(env["TMPDIR"]).iterdir()) == []
