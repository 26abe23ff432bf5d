"""The judge's handle on the attempt's process: start it, send it calls, read what came of
them, end it.

    box = Sandbox(source, "work/softmax.py", "softmax")
    box.start()
    loaded = box.wait_loaded(deadline)       # a protocol.Loaded
    box.send(calls)                           # a batch: one request ...
    done = box.next_done(deadline)            # ... and a protocol.Done for each call, in order

Every wait has a deadline; an attempt's process that overstays it is asked where it is
(SIGUSR1: its Python stack, written by faulthandler), then ended with everything it
started, and the wait raises `CallTimedOut` with that place. A process that dies raises
`AttemptCrashed` with how it ended. Both are BaseExceptions, so a grader's `except
Exception` never swallows them, and the sandbox remembers them (`box.gone`): the judge
starts a new process before the next check. What the attempt prints (stdout and stderr,
one pipe) is read while waiting; only the last few kilobytes are kept.

Where the attempts' processes come from (graders.engine.boot): the grading service hands
over the one it forked before loading any grader (`first`); after that, a zygote, started
when first needed, forks one for each. A process in which the attempt has not been called
yet is a twin (`Sandbox.twin`), forked by the attempt's own process before its first call.
"""
from __future__ import annotations

import atexit
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
from dataclasses import dataclass

import graders
from graders.engine import boot, memory, tree
from graders.engine.arena import Arena
from graders.engine.protocol import Channel, Done, Fetch, Forget, Go, Load, Loaded, Poke, Run, Twin, request_bytes
from graders.engine.whitelist import environment
from graders.engine.wire import WireError, decode, encode, visible
from graders.engine.worker import decode_source

KEEP_OUTPUT = 8000          # bytes of printed output kept (the tail)
LINUX = sys.platform.startswith("linux")
CRASHES = ("SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT", "SIGSYS", "SIGTRAP")
STACK_WAIT = 0.5            # seconds a stopped call's stack may take to arrive


class AttemptGone(BaseException):
    """The attempt's process stopped in the middle of a request; `message` says how, in plain words."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class CallTimedOut(AttemptGone):
    """`where`: (line, code) in the attempt's file that it was running when stopped, if known."""

    def __init__(self, message: str, where: tuple[int, str] | None = None):
        super().__init__(message)
        self.where = where


class AttemptCrashed(AttemptGone):
    pass


class GradingUnavailable(RuntimeError):
    """No attempt's process can be started at all (not the attempt's fault); the message says why."""


def describe_exit(code: int | None) -> str:
    """How an attempt's process ended, from its exit code (negative: a signal)."""
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


# ----------------------------------------------------------------------------- where processes come from

@dataclass
class Settings:
    """What every attempt's process is started with."""

    megabytes: int = 6144       # its address space (KATA_MEMORY_LIMIT_MB)
    landlock: bool = True       # KATA_LANDLOCK=0 turns Landlock off

    @classmethod
    def from_environment(cls, env=None) -> "Settings":
        env = os.environ if env is None else env
        return cls(int(env.get("KATA_MEMORY_LIMIT_MB", "6144")), env.get("KATA_LANDLOCK", "1") != "0")


@dataclass
class Process:
    """An attempt's process as the judge holds it."""

    pid: int
    chan: Channel
    out: int
    stack: int
    folder: str | None
    ours: bool          # a child of this process (else the zygote's)


class Zygote:
    """A Python of its own that imports NumPy once and forks the attempts' processes
    (graders.engine.boot.zygote), started with nothing of this process's environment but
    the whitelist."""

    def __init__(self, settings: Settings):
        import json

        import numpy

        mine, theirs = socket.socketpair()
        numpy_parent = os.path.dirname(os.path.dirname(numpy.__file__))
        import tempfile

        options = json.dumps({"megabytes": settings.megabytes, "landlock": settings.landlock,
                              "tempdir": tempfile.gettempdir()})
        env = environment(os.environ)
        self.proc = subprocess.Popen(
            [sys.executable, "-S", "-s", "-c", boot.BOOT, graders.ROOT, numpy_parent, str(theirs.fileno()), options],
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, env=env, start_new_session=True, cwd="/")
        theirs.close()
        self.chan = Channel(mine)

    def _ask(self, op: str, fds: bool = False) -> dict:
        """Ask the zygote (a wire message each way); its answer, or {"error": ...}."""
        try:
            self.chan.send(encode({"op": op}))
            self.chan.sock.settimeout(60.0)  # it may still be importing NumPy
            while not self.chan.complete():
                if not self.chan.fill(fds):
                    return {"error": ""}
            reply = decode(self.chan.take())
        except (OSError, WireError) as exc:
            return {"error": str(exc)}
        finally:
            self.chan.sock.settimeout(None)
        return reply if isinstance(reply, dict) else {"error": "an answer that is not one"}

    def take(self) -> Process:
        reply = self._ask("fork", fds=True)
        fds, self.chan.fds = self.chan.fds, []
        pid, folder = reply.get("pid"), reply.get("folder")
        if "error" in reply or not isinstance(pid, int) or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            raise GradingUnavailable(self._failure(str(reply.get("error") or "")))
        for fd in fds:
            os.set_inheritable(fd, False)
        os.set_blocking(fds[1], False)
        os.set_blocking(fds[2], False)
        return Process(pid, Channel(socket.socket(fileno=fds[0])), fds[1], fds[2],
                       folder if isinstance(folder, str) and folder else None, ours=False)

    def sweep(self) -> None:
        """The zygote reaps the attempts that ended and kills what they left behind."""
        self._ask("sweep")

    def _failure(self, reason: str) -> str:
        code = self.proc.poll()
        err = ""
        if code is not None and self.proc.stderr:
            lines = self.proc.stderr.read().decode("utf-8", "replace").strip().splitlines()
            err = lines[-1] if lines else ""
        why = reason or err or (f"it exited with code {code}" if code is not None else "no answer")
        return f"the grading process could not start: {why}"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        """Let go: the zygote kills what is left of its attempts, removes their folders and ends."""
        try:
            self.chan.close()
        finally:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            if self.proc.stderr:
                self.proc.stderr.close()


class Spawner:
    """Where the next attempt's process comes from (see the module's docstring)."""

    def __init__(self):
        self.first: Process | None = None   # forked by the grading service before it loaded any grader
        self.zygote: Zygote | None = None
        self.lock = threading.Lock()
        self.settings = Settings.from_environment()

    def take(self) -> Process:
        with self.lock:
            if self.first is not None:
                first, self.first = self.first, None
                return first
            if self.zygote is None or not self.zygote.alive():
                self.zygote = Zygote(self.settings)
            return self.zygote.take()

    def sweep(self) -> None:
        """After an attempt of the zygote's ended: what it left behind is killed."""
        with self.lock:
            if self.zygote is not None and self.zygote.alive():
                self.zygote.sweep()

    def warm(self) -> None:
        """Start the zygote now, so that it imports NumPy while this process does other work."""
        with self.lock:
            if self.first is None and (self.zygote is None or not self.zygote.alive()):
                self.zygote = Zygote(self.settings)

    def close(self) -> None:
        if self.zygote is not None:
            self.zygote.close()
            self.zygote = None


SPAWNER = Spawner()
atexit.register(SPAWNER.close)


def warm_up() -> None:
    """Start what forks the attempts' processes now, while the caller does other work."""
    SPAWNER.warm()


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


class Sandbox:
    """One attempt's process, restartable; the judge's only way to reach the attempt."""

    started = 0     # processes started by any sandbox of this judge
    process = 0

    def __init__(self, source: bytes, filename: str, module: str, setup: tuple[str, ...] = ()):
        self.source, self.filename, self.module, self.setup = source, filename, module, tuple(setup)
        self.output = Output()
        self.gone: AttemptGone | None = None
        self.proc: Process | None = None
        self.arena: Arena | None = None
        self.loaded = Loaded()
        self.pending = 0            # replies still due for the requests sent
        self.caps: list = []        # the memory cap of each call sent whose reply is due
        self.threads = 1            # threads the process ran once its attempt had loaded
        self.refused: list[str] = []  # imports the attempt's process refused (graders.engine.imports)

    # -- life cycle ---------------------------------------------------------------------
    @property
    def chan(self):
        return self.proc.chan if self.proc is not None else None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def copy(self) -> "Sandbox":
        """Another sandbox for the same attempt (not started)."""
        return Sandbox(self.source, self.filename, self.module, self.setup)

    def start(self) -> None:
        """A new attempt's process, sent the attempt; returns without waiting."""
        self.close()
        self.proc = SPAWNER.take()
        _RUNNING.add(self)
        self.arena = Arena()
        self.gone, self.loaded, self.pending, self.caps = None, Loaded(), 0, []
        Sandbox.started += 1
        self.process = Sandbox.started   # which process of the attempt: calls in one share its state
        self._send(Load(self.source, self.filename, self.module, list(self.setup)), time.monotonic() + 60, 1)

    def wait_loaded(self, deadline: float) -> Loaded:
        """The attempt's top-level code ran (or raised): the functions it defines."""
        self.loaded = Loaded.read(self._reply(deadline))
        self.pending -= 1
        self._note(self.loaded.refused)
        self.threads = max(1, tree.threads(self.proc.pid)) if LINUX and self.proc else 1
        return self.loaded

    def twin(self, deadline: float) -> "Sandbox | None":
        """A twin of the attempt's process as it stands, forked by it (asked before any call, a
        process in which the attempt has not been called yet), with a sandbox of its own; None
        when the process cannot make one. Its output goes where this process's goes."""
        self._send(Twin(), deadline, 1)
        reply = self._reply(deadline, fds=True)
        self.pending -= 1
        fds, self.proc.chan.fds = self.proc.chan.fds, []
        pid = reply.get("twin")
        if not isinstance(pid, int) or len(fds) != 1 or tree.parent(pid) != self.proc.pid:
            for fd in fds:
                os.close(fd)
            return None
        twin = self.copy()
        twin.proc = Process(pid, Channel(socket.socket(fileno=fds[0])), os.dup(self.proc.out),
                            os.dup(self.proc.stack), None, ours=False)
        twin.arena, twin.loaded, twin.threads = Arena(), self.loaded, self.threads
        twin.output = self.output
        twin.process = Sandbox.started = Sandbox.started + 1
        _RUNNING.add(twin)
        return twin

    @property
    def functions(self) -> list[str]:
        """The names of the callables the attempt defines (once loaded)."""
        return list(self.loaded.functions or [])

    def close(self) -> None:
        """End the attempt's process and everything it started, and remove its folder."""
        proc, self.proc = self.proc, None
        _RUNNING.discard(self)
        if proc is None:
            return
        self._drain_output(proc)
        if LINUX:
            tree.end_tree(proc.pid)
        else:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
        if proc.ours:
            tree.wait_gone(proc.pid)
        elif proc.folder is not None:  # the zygote's child (a twin's parent reaps it)
            SPAWNER.sweep()
        proc.chan.close()
        for fd in (proc.out, proc.stack):
            try:
                os.close(fd)
            except OSError:
                pass
        tree.remove_folder(proc.folder)
        if self.arena is not None:
            self.arena.close()
            self.arena = None
        self.pending = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- requests -----------------------------------------------------------------------
    def send(self, calls: list, deadline: float) -> dict:
        """Send a batch of calls (protocol.CallRequest) in one request; next_done() reads what
        came of each, in order. Returns where each argument array was placed (by its id)."""
        placed: dict = {}
        self._send(Run(calls), deadline, len(calls), placed)
        self.caps += [c.opts.memory_cap for c in calls]
        return placed

    def next_done(self, deadline: float) -> Done:
        """What came of the next call sent. A call whose memory is measured is measured here,
        from outside; once no reply is due, a thread the calls left running fails the last."""
        done = Done.read(self._reply(deadline))
        cap = self.caps.pop(0) if self.caps else None
        if done.measuring is not None:
            done = self._measured(done.measuring, cap, deadline)
        self.pending = max(0, self.pending - 1)
        self._note(done.refused)
        if self.pending == 0 and LINUX and done.error is None and tree.threads(self.proc.pid) > self.threads:
            done.error = self._threads_left()
        return done

    def request(self, message, deadline: float) -> dict:
        """A single request (Fetch, Poke, Forget) and its reply."""
        self._send(message, deadline, 1)
        reply = self._reply(deadline)
        self.pending -= 1
        return reply

    def fetch(self, call: int, deadline: float) -> Done:
        return Done.read(self.request(Fetch(call), deadline))

    def poke(self, call: int, value: float, deadline: float) -> Done:
        return Done.read(self.request(Poke(call, value), deadline))

    def forget(self, deadline: float) -> None:
        self.request(Forget(), deadline)

    def view(self, ref: dict):
        """The judge's view of an argument it placed in shared memory: what the attempt left there."""
        return self.arena.view(ref)

    def _send(self, message, deadline: float, replies: int, placed: dict | None = None) -> None:
        if self.gone is not None:
            raise self.gone
        if self.proc is None:
            raise AttemptCrashed("the attempt's process is not running")
        while self.pending:  # replies of an earlier batch nobody asked for: read and dropped
            self.next_done(deadline)
        data = request_bytes(message, self.arena, placed)
        try:
            self.proc.chan.send(data, self.arena.take_unsent())
        except OSError:
            self._lost()
        self.pending += replies

    def _reply(self, deadline: float, fds: bool = False) -> dict:
        """The next message of the attempt's process (`fds`: descriptors may come with it)."""
        if self.gone is not None:
            raise self.gone
        chan = self.proc.chan
        while not chan.complete():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._timed_out()
            readable, _, _ = select.select([chan, self.proc.out], [], [], remaining)
            if self.proc.out in readable:
                self._drain_output(self.proc)
            if chan in readable:
                try:
                    more = chan.fill(fds)
                except OSError:
                    more = False
                if not more:
                    self._lost()
        try:
            reply = decode(chan.take())
        except WireError as exc:
            self._fail(AttemptCrashed(f"sent back a reply that does not decode ({exc}): did it write into a socket "
                                      f"of its process that is not its own?"))
        if not isinstance(reply, dict):
            self._fail(AttemptCrashed("sent back a reply that is not one"))
        return reply

    def _note(self, refused: list[str]) -> None:
        self.refused += [r for r in refused if r not in self.refused]

    def _measured(self, child: int, cap: int | None, deadline: float) -> Done:
        """A call made in a child of the attempt's process: capped and measured from outside."""
        if tree.parent(child) != self.proc.pid:
            self._fail(AttemptCrashed("named a process that is not its own child for its memory to be measured"))
        measure = memory.Measure(child, cap)
        try:
            self.proc.chan.send(request_bytes(Go()))  # no reply of its own: the call's Done is the one due
        except OSError:
            measure.end()
            self._lost()
        try:
            done = Done.read(self._reply(deadline))
        finally:
            grown = measure.end()
        if done.returned:
            if grown is None:
                done.error = ("its memory could not be measured: the process it ran in did not wait to be read "
                              "(it ended, or was stopped, by the call)")
            else:
                done.peak = memory.peak(done.peak, grown)
        return done

    def _threads_left(self) -> str | None:
        """Why a call fails that left threads running (a second look first: a thread it joined
        may take a moment to leave /proc)."""
        for _ in range(20):
            now = tree.threads(self.proc.pid)
            if now <= self.threads:
                return None
            time.sleep(0.001)
        extra = now - self.threads
        return (f"left {extra} thread{'s' if extra > 1 else ''} running after it returned: what a call starts must "
                f"end before it returns (a thread still running can change its result or its inputs later)")

    def _timed_out(self) -> None:
        where = self._stack() if self.proc is not None else None
        self._fail(CallTimedOut("timeout", where))

    def _stack(self) -> tuple[int, str] | None:
        """Ask the attempt's process what it is running (faulthandler, on SIGUSR1): the innermost
        line of the attempt's own file, and that line's code."""
        try:
            os.kill(self.proc.pid, boot.STACK_SIGNAL)
        except OSError:
            return None
        text, end, quiet = b"", time.monotonic() + STACK_WAIT, STACK_WAIT
        while time.monotonic() < end:
            ready, _, _ = select.select([self.proc.stack], [], [], min(quiet, max(0.0, end - time.monotonic())))
            if not ready:
                break
            try:
                chunk = os.read(self.proc.stack, 65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                break
            if not chunk:
                break
            text, quiet = text + chunk, 0.02  # the dump is written at once: a pause ends it
        own = os.path.join(self.proc.folder, "work", os.path.basename(self.filename)) if self.proc.folder else None
        return where_in(text.decode("utf-8", "replace"), own, self.source)

    def _lost(self):
        """The attempt's process closed its end: say how it ended."""
        proc = self.proc
        self._drain_output(proc)
        code = _exit_code(proc)
        message = describe_exit(code)
        if code in (70, 71):  # the process's own failure: its traceback went to the output
            lines = [line for line in self.output.text().splitlines()
                     if line.strip() and not line.startswith("Traceback (most recent call last)")]
            message += f": {lines[-1].strip()}" if lines else ""
        self._fail(AttemptCrashed(message))

    def _fail(self, gone: AttemptGone):
        self.gone = gone
        self.close()
        raise gone

    def _drain_output(self, proc: Process | None) -> None:
        if proc is None:
            return
        for _ in range(256):  # at most 16 MiB a turn, so that a flood cannot hold us here
            try:
                data = os.read(proc.out, 65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            if not data:
                return
            self.output.feed(data)


_RUNNING: "weakref.WeakSet[Sandbox]" = weakref.WeakSet()


def running() -> list[Process]:
    """The attempts' processes the sandboxes of this judge hold now."""
    return [box.proc for box in list(_RUNNING) if box.proc is not None]


def _exit_code(proc: Process) -> int | None:
    """How the attempt's process ended (a negative code: the signal), waiting briefly for it."""
    end = time.monotonic() + 2.0
    while time.monotonic() < end:
        if proc.ours:
            try:
                pid, status = os.waitpid(proc.pid, os.WNOHANG)
            except ChildProcessError:
                return None
            if pid:
                return os.waitstatus_to_exitcode(status)
        else:  # the zygote's child: read how it ended before the zygote reaps it
            code = _zombie_code(proc.pid)
            if code is not None or tree.state(proc.pid) is None:
                return code
        time.sleep(0.002)
    return None


def _zombie_code(pid: int) -> int | None:
    """The exit code of a process that has ended and is not yet reaped (from /proc/PID/stat's exit_code)."""
    fields = tree.stat_fields(pid)
    if not fields or fields[0] != "Z" or len(fields) < 50:
        return None
    status = int(fields[49])
    return os.waitstatus_to_exitcode(status)


_FRAME = re.compile(r'File "(?P<file>[^"]*)", line (?P<line>\d+) in (?P<function>\S+)')


def where_in(dump: str, filename: str | None, source: bytes) -> tuple[int, str] | None:
    """(line, code) of the innermost frame of the attempt's file (`filename`, as its process
    named it) in a faulthandler dump, the code quoted from the bytes graded."""
    if filename is None:
        return None
    for match in _FRAME.finditer(dump):
        if match["file"] == filename:
            line = int(match["line"])
            lines = decode_source(source).splitlines()
            code = lines[line - 1].strip() if 0 < line <= len(lines) else ""
            return line, visible(code)[:200]
    return None
