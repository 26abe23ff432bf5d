"""The judge's handle on the attempt's process: start it, send it calls, stop it.

    box = Sandbox(source, "work/softmax.py", "softmax")
    box.start()
    loaded = box.wait_loaded(deadline)          # {"ok": [function names]} or {"raised": ...}
    reply = box.request({"op": "call", ...}, deadline)

Every wait has a deadline; a worker that overstays it is killed with everything it
started (graders/engine/reaper.py does the killing), and the request raises
`CallTimedOut`. A worker that dies raises `AttemptCrashed` with how it ended. Both are
BaseExceptions, so a grader's `except Exception` never swallows them, and the sandbox
remembers them (`box.gone`): the judge restarts the worker before the next check.
What the attempt prints (stdout and stderr, one pipe) is read while waiting; only the
last few kilobytes are kept.
"""
from __future__ import annotations

import atexit
import collections
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

from graders.engine import reaper
from graders.engine.requests import encode_request
from graders.engine.wire import WireError, decode, recv_exact

ROOT = Path(__file__).resolve().parent.parent.parent
# The template's start: the engine's own modules, then the loop that forks the attempt's processes.
BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from graders.engine.reaper import template; template(int(sys.argv[2]))"
KEEP_OUTPUT = 8000          # bytes of printed output kept (the tail)
LINUX = sys.platform.startswith("linux")
CRASHES = ("SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT", "SIGSYS", "SIGTRAP")
MAX_MESSAGE = 1 << 31


class AttemptGone(BaseException):
    """The worker stopped in the middle of a request; `message` says how, in plain words."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class CallTimedOut(AttemptGone):
    pass


class AttemptCrashed(AttemptGone):
    pass


class GradingUnavailable(RuntimeError):
    """The worker cannot be started at all (not the attempt's fault); the message says why."""


def describe_exit(code: int | None) -> str:
    """How a worker ended, from its exit code (negative: a signal)."""
    if code is None:
        return "stopped for an unknown reason"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        if name == "SIGKILL":
            return "was killed (SIGKILL: most often the machine running out of memory, or a signal it sent itself)"
        if name == "SIGXFSZ":
            return "was stopped for writing a file larger than 256 MiB (SIGXFSZ)"
        if name in CRASHES:
            return f"crashed the Python interpreter ({name})"
        return f"was ended by {name}, a signal sent to its process (by itself, or to its process group?)"
    if code in (70, 71):
        return "broke the grading process (it exited with an internal error)"
    return f"ended the Python interpreter (exit code {code}: `sys.exit` in a thread, `os._exit` or `exit()`?)"


# ----------------------------------------------------------------------------- the template

class Template:
    """A warm interpreter with NumPy imported, which forks one worker per request."""

    def __init__(self):
        mine, theirs = socket.socketpair()
        env = dict(os.environ)
        # One BLAS thread: graders multiply small matrices, where a second thread only adds
        # contention, and a forked process must not inherit a half-started thread pool.
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = "1"
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-c", BOOT, str(ROOT), str(theirs.fileno())],
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, env=env, start_new_session=True)
        theirs.close()
        self.sock = mine
        self.lock = threading.Lock()

    asked = False  # a fork was asked for and not yet taken: the next worker, forked meanwhile

    def prefork(self) -> None:
        """Ask for the next worker now, while there is time: fork() takes it."""
        with self.lock:
            if not self.asked:
                self._ask()

    def fork(self) -> tuple[int, socket.socket, int, socket.socket, str | None]:
        """(reaper pid, request channel, output pipe, control socket, the attempt's folder) of
        a new worker; the one after it is asked for at once, so that the template forks it
        while this one works."""
        with self.lock:
            if not self.asked:
                self._ask()
            got = self._take()
            self._ask()
        return got

    def _ask(self) -> None:
        try:
            self.sock.sendall(b"F")
        except OSError as exc:
            raise GradingUnavailable(self._failure(f"{exc}")) from None
        self.asked = True

    def _take(self) -> tuple[int, socket.socket, int, socket.socket, str | None]:
        self.asked = False
        try:
            msg, fds, _, _ = socket.recv_fds(self.sock, 8192, 3)
        except OSError as exc:
            raise GradingUnavailable(self._failure(f"{exc}")) from None
        if not msg or msg[:1] != b"P" or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            reason = msg[1:].decode("utf-8", "replace") if msg[:1] == b"E" else ""
            raise GradingUnavailable(self._failure(reason))
        for fd in fds:
            os.set_inheritable(fd, False)
        (pid,) = struct.unpack(">i", msg[1:5])
        chan = socket.socket(fileno=fds[0])
        ctl = socket.socket(fileno=fds[2])
        return pid, chan, fds[1], ctl, os.fsdecode(msg[5:]) or None

    def _failure(self, reason: str) -> str:
        code = self.proc.poll()
        err = ""
        if code is not None and self.proc.stderr:
            err = self.proc.stderr.read().decode("utf-8", "replace").strip().splitlines()[-1:] or ""
            err = err[0] if err else ""
        why = reason or err or (f"it exited with code {code}" if code is not None else "no answer")
        return f"the grading process could not start: {why}"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        try:
            self.sock.close()
        finally:
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            if self.proc.stderr:
                self.proc.stderr.close()


class _Forked:
    """What Template needs of a process (poll, wait, kill) for a template forked from this one."""

    stderr = None

    def __init__(self, pid: int):
        self.pid, self.returncode = pid, None

    def poll(self):
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                pid, status = self.pid, 0
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None):
        end = time.monotonic() + (timeout if timeout is not None else 1e9)
        while self.poll() is None:
            if time.monotonic() > end:
                raise subprocess.TimeoutExpired(str(self.pid), timeout)
            time.sleep(0.01)
        return self.returncode

    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def fork_template() -> None:
    """Make this process's template by forking it, which saves an interpreter and a NumPy
    import. Only for a process that has imported nothing of the judge yet (graders.engine.service):
    whatever it holds now, every attempt's process will hold too."""
    global _TEMPLATE
    from graders.engine import reaper

    mine, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        try:
            mine.close()
            os.setsid()
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            if null > 2:
                os.close(null)
            reaper.template(theirs.detach())
        finally:
            os._exit(71)
    theirs.close()
    template = Template.__new__(Template)
    template.proc, template.sock, template.lock, template.asked = _Forked(pid), mine, threading.Lock(), False
    _TEMPLATE = template


_TEMPLATE: Template | None = None
_TEMPLATE_LOCK = threading.Lock()


def template() -> Template:
    """This process's template, started on first use and restarted if it died."""
    global _TEMPLATE
    with _TEMPLATE_LOCK:
        if _TEMPLATE is None or not _TEMPLATE.alive():
            if _TEMPLATE is not None:
                _TEMPLATE.close()
            _TEMPLATE = Template()
        return _TEMPLATE


def warm_up() -> None:
    """Start the template now, so that it imports NumPy while the caller does other work."""
    template()


@atexit.register
def _close_template() -> None:
    global _TEMPLATE
    if _TEMPLATE is not None:
        _TEMPLATE.close()
        _TEMPLATE = None


# ----------------------------------------------------------------------------- the sandbox

class Output:
    """What the attempt printed: the last KEEP_OUTPUT bytes and how many there were."""

    def __init__(self):
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        self.tail += data
        if len(self.tail) > 4 * KEEP_OUTPUT:
            del self.tail[:-KEEP_OUTPUT]

    def text(self) -> str:
        return bytes(self.tail[-KEEP_OUTPUT:]).decode("utf-8", "replace")


def _key(message: dict) -> tuple:
    """What identifies a call request, whatever its id: the function, the fingerprints of its
    arguments and how it is watched."""
    return (message.get("op"), message.get("fn"), tuple(sorted((message.get("digests") or {}).items(), key=repr)),
            repr(sorted((message.get("opts") or {}).items())), message.get("args_from"))


def _write_all(fd: int, data: bytes) -> None:
    """Write `data` to the socket `fd`, whatever blocking mode the reader's timeouts leave it in;
    stop quietly when the other end is gone."""
    view = memoryview(data)
    while view:
        try:
            select.select([], [fd], [], 1.0)
            view = view[os.write(fd, view):]
        except (BlockingIOError, InterruptedError):
            continue
        except OSError:
            return


class Sandbox:
    """One attempt's worker process, restartable; the judge's only way to reach the attempt."""

    started = 0     # processes started by any sandbox of this judge
    process = 0

    def __init__(self, source: bytes, filename: str, module: str, setup: tuple[str, ...] = ()):
        self.source, self.filename, self.module, self.setup = source, filename, module, tuple(setup)
        self.output = Output()
        self.gone: AttemptGone | None = None
        self.chan = self.ctl = None
        self.out_fd: int | None = None
        self.reaper, self.folder = 0, None
        self.loaded: dict = {}      # the reply to the load request
        self.ahead: collections.deque = collections.deque()  # requests sent ahead whose replies are unread
        self.writer: threading.Thread | None = None           # sends them while replies are read
        self.refused: list[str] = []  # imports the attempt's process refused (graders.engine.imports)

    # -- life cycle ---------------------------------------------------------------------
    def copy(self) -> "Sandbox":
        """Another sandbox for the same attempt (not started)."""
        return Sandbox(self.source, self.filename, self.module, self.setup)

    def start(self) -> None:
        """Fork a fresh worker and send it the attempt; returns without waiting."""
        self.close()
        self.reaper, self.chan, self.out_fd, self.ctl, self.folder = template().fork()
        os.set_blocking(self.out_fd, False)
        self.gone, self.loaded = None, {}
        Sandbox.started += 1
        self.process = Sandbox.started   # which process of the attempt: calls in one share its state
        self.chan.sendall(encode_request({"op": "load", "source": self.source, "filename": self.filename,
                                          "module": self.module, "setup": list(self.setup)}))

    def wait_loaded(self, deadline: float) -> dict:
        """The load reply: {"ok": [callables]} or {"raised": description}."""
        self.loaded = self._reply(deadline)
        return self.loaded

    @property
    def functions(self) -> list[str]:
        """The names of the callables the attempt defines (once loaded)."""
        return list(self.loaded.get("ok") or [])

    def close(self) -> None:
        """Stop the worker and everything it started (the reaper kills them when we let go; a
        reaper the attempt stopped is killed here, and the template cleans up after it)."""
        self.ahead.clear()
        if self.chan is None:
            return
        self._drain_output()
        for s in (self.ctl, self.chan):
            try:
                s.close()
            except OSError:
                pass
        try:
            os.close(self.out_fd)
        except OSError:
            pass
        self.chan = self.ctl = self.out_fd = None
        if self.reaper and LINUX and reaper.state(self.reaper) in ("T", "t"):
            try:
                os.kill(self.reaper, signal.SIGKILL)
            except OSError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- requests -----------------------------------------------------------------------
    def request(self, message: dict, deadline: float) -> dict:
        if self.gone is not None:
            raise self.gone
        if self.chan is None:
            raise AttemptCrashed("the attempt's process is not running")
        if self.ahead:
            if self.ahead[0] == _key(message):  # sent ahead, and maybe answered already
                self.ahead.popleft()
                return self._reply(deadline)
            self._settle(deadline)  # the calls went another way: the rest are read and dropped
        self._join_writer()
        try:
            self.chan.sendall(encode_request(message))
        except OSError:
            self._lost()
        return self._reply(deadline)

    def send_ahead(self, messages: list[dict]) -> None:
        """Send these call requests now, before their calls are made: the attempt's process
        answers them back to back while the judge draws and compares (fewer round trips), and
        request() hands each reply to the call that matches it, in order. A reply is read only
        when its call asks for it, so a call that hangs or crashes fails its own case."""
        if self.gone is not None or self.chan is None or not messages:
            return
        if self.ahead:
            return  # one run ahead at a time
        self._join_writer()
        data = b"".join(encode_request(m) for m in messages)
        self.ahead.extend(_key(m) for m in messages)
        self.writer = threading.Thread(target=_write_all, args=(self.chan.fileno(), data), daemon=True)
        self.writer.start()

    def _settle(self, deadline: float) -> None:
        while self.ahead:
            self.ahead.popleft()
            self._reply(deadline)
        self._join_writer()

    def _join_writer(self) -> None:
        if self.writer is not None:
            self.writer.join()
            self.writer = None

    def _reply(self, deadline: float) -> dict:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._fail(CallTimedOut("timeout"))
            readable, _, _ = select.select([self.chan, self.out_fd], [], [], remaining)
            if self.out_fd in readable:
                self._drain_output()
            if self.chan in readable:
                return self._read_reply(deadline)

    def _read_reply(self, deadline: float) -> dict:
        self.chan.settimeout(max(5.0, deadline - time.monotonic()))
        try:
            (n,) = struct.unpack(">Q", recv_exact(self.chan, 8))
            if n > MAX_MESSAGE:
                raise WireError(f"a reply of {n} bytes")
            reply = decode(recv_exact(self.chan, n))
        except (EOFError, ConnectionError):
            self._lost()
        except socket.timeout:
            self._fail(CallTimedOut("timeout"))
        except WireError as exc:
            self._fail(AttemptCrashed(f"sent back a reply that does not decode ({exc}): did it write into a socket "
                                      f"of its process that is not its own?"))
        finally:
            if self.chan is not None:
                self.chan.settimeout(None)
        if not isinstance(reply, dict):
            self._fail(AttemptCrashed("sent back a reply that is not one"))
        refused = reply.pop("refused", None)
        if isinstance(refused, list):
            self.refused += [r for r in refused if isinstance(r, str) and r not in self.refused]
        return reply

    def _lost(self):
        """The worker's end closed: ask the reaper how it ended."""
        self._drain_output()
        code = None
        try:
            self.ctl.settimeout(2.0)
            code = struct.unpack(">i", recv_exact(self.ctl, 4))[0]
        except (OSError, EOFError, struct.error):
            pass
        message = describe_exit(code)
        if code is None and self.reaper and LINUX and reaper.state(self.reaper) in (None, "Z", "X"):
            message = ("was ended with the process that watches it (its parent, which it must not signal), "
                       "so nothing more could be graded")
        if code in (70, 71):  # the process's own failure: its traceback went to the output
            lines = [line for line in self.output.text().splitlines()
                     if line.strip() and not line.startswith("Traceback (most recent call last)")]
            message += f": {lines[-1].strip()}" if lines else ""
        self._fail(AttemptCrashed(message))

    def _fail(self, gone: AttemptGone):
        self.gone = gone
        self.close()
        raise gone

    def _drain_output(self) -> None:
        if self.out_fd is None:
            return
        for _ in range(256):  # at most 16 MiB a turn, so that a flood cannot hold us here
            try:
                data = os.read(self.out_fd, 65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            if not data:
                return
            self.output.feed(data)
