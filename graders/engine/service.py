"""The grading service: the judge's own process, which grades the files the `kata` command sends it.

    service = Service(["softmax"])            # started early: it imports NumPy meanwhile
    report = service.grade("softmax", path, source)

The processes of a `kata check` (at most four, the fourth only while a memory rule is measured):

    kata (click; never NumPy)
     └─ judge: this module's `serve`, a Python started from a whitelisted environment
         │   imports NumPy, forks the attempt's process, then imports the graders
         └─ the attempt's process (graders.engine.boot, confined by graders.engine.confine)
             └─ a child for a call whose memory is measured (graders.engine.memory)

`kata` itself never imports NumPy or a grader: the judge does, in parallel with `kata`'s
own start-up. It forks the attempt's process from itself before it loads any grader, so
that process holds nothing of the judge; an attempt that has to be started again (after a
crash), and every attempt of a service that grades more than one file (`kata watch`),
comes from a zygote (graders.engine.sandbox). The judge is a child subreaper: what an
attempt's process left behind when it died comes to it, and is killed after each grading.
When `kata` ends it closes the judge's input; the judge then ends everything it started
and exits (and `kata` kills it if it has not within a second, stopped or not). When `kata`
dies, the judge reads the end of its input and does the same.

Messages both ways are `graders.engine.wire` messages: `Hello` and `Job` one way, and
`{"op": "progress", "check": ...}`, `{"op": "report", ...}`, `{"op": "error", ...}` the other.
A job that asks for progress gets a progress message as each check ends, before its report.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import TypedDict

from graders import ROOT

# The judge's start: the project and NumPy's folder on sys.path (given on its command line),
# then serve(). Nothing else of the environment `kata` runs in reaches it (see `environment`).
BOOT = "import sys; sys.path[:0] = sys.argv[1:]; from graders.engine.service import serve; serve()"
SETTINGS = ("KATA_CHECK_SECONDS", "KATA_MEMORY_LIMIT_MB", "KATA_LANDLOCK", "KATA_DEBUG")


class ServiceFailed(RuntimeError):
    """The service could not grade: `kind` is "setting" (a usage error), "grader" or "unavailable"."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


# ----------------------------------------------------------------------------- the client

class Hello(TypedDict):
    """`kata` to the judge, first: the words that may name the kata to grade (its grader is
    loaded ahead) and the settings it reads (KATA_CHECK_SECONDS..., and where the temporary
    folder is, TMPDIR and its kin)."""

    op: str         # "hello"
    hints: list
    settings: dict


class Job(TypedDict):
    """`kata` to the judge: grade these bytes against this kata's grader."""

    op: str         # "grade"
    kata: str
    path: str
    source: bytes
    progress: bool  # send each check's result as it ends


class Service:
    """The `kata` side: starts the judge and sends it jobs."""

    def __init__(self, hints: list[str] = ()):
        """`hints`: words that may name the kata about to be graded (the command line's):
        its grader is loaded ahead of the job."""
        paths = [ROOT] + [p for p in sys.path if p and os.path.isdir(p) and p != ROOT]  # the project first
        # -S: no site module; the judge finds NumPy and the project on the path it is given.
        # Started before anything else is imported here: it imports NumPy meanwhile.
        # Unbuffered: a message read from the pipe is read whole, so that select() tells what remains.
        self.proc = subprocess.Popen([sys.executable, "-S", "-c", BOOT, *paths], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment(),
                                     start_new_session=True, cwd="/", bufsize=0)  # Ctrl-C is kata's to handle
        settings = {k: os.environ[k] for k in (*SETTINGS, "TMPDIR", "TEMP", "TMP") if k in os.environ}
        self._send(Hello(op="hello", hints=[str(h) for h in hints], settings=settings))

    def grade(self, kata: str, path, source: bytes, progress=None) -> dict:
        """The report's JSON; `progress`, when given, is called with each check's JSON as
        the service reports it, before the report comes."""
        self._send(Job(op="grade", kata=kata, path=str(path), source=source, progress=progress is not None))
        reply = self._receive()
        while reply is not None and reply.get("op") == "progress":
            progress(reply["check"])  # outside _receive: what the caller raises is the caller's
            reply = self._receive()
        if reply is None:
            raise ServiceFailed("unavailable", f"the grading process stopped: {self._stderr() or 'no reason given'}")
        if reply.get("op") == "error":
            raise ServiceFailed(str(reply.get("kind")), str(reply.get("message", "")))
        return reply["report"]

    def _send(self, message: dict) -> None:
        from graders.engine.wire import encode

        try:
            self.proc.stdin.write(encode(message))
            self.proc.stdin.flush()
        except (OSError, ValueError):
            pass  # the judge is gone: the next read says so

    def _receive(self) -> dict | None:
        """The next message; None when the judge is gone."""
        try:
            _wait_readable(self.proc)
            return read_message(self.proc.stdout)
        except (OSError, EOFError, ValueError):
            return None

    def _stderr(self) -> str:
        try:
            self.proc.wait(timeout=2)
            lines = self.proc.stderr.read().decode("utf-8", "replace").strip().splitlines()
        except (subprocess.TimeoutExpired, OSError, ValueError):
            return ""
        return lines[-1] if lines else ""

    def close(self) -> None:
        """Let go of the judge: it ends what it started and exits; killed if it has not within a
        second (SIGKILL ends a stopped process too)."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            if _stopped(self.proc.pid):
                os.kill(self.proc.pid, signal.SIGCONT)
            self.proc.wait(timeout=1.0)
        except (subprocess.TimeoutExpired, OSError, KeyboardInterrupt):  # Ctrl-C here: it is killed at once
            try:
                self.proc.kill()
            except OSError:
                pass
        for stream in (self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass


def environment() -> dict:
    """The judge's environment: the whitelist (graders.engine.whitelist), nothing else of
    `kata`'s (the attempt's process is forked from the judge: /proc/self/environ)."""
    from graders.engine.whitelist import environment as whitelisted

    return whitelisted(os.environ)


def _stopped(pid: int) -> bool:
    from graders.engine import tree

    return tree.state(pid) in ("T", "t")


def _wait_readable(proc: subprocess.Popen) -> None:
    """Wait until the judge has something to say, continuing it whenever it is found stopped
    (an attempt that could signal it must not hang `kata`)."""
    import select

    while True:
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if ready or proc.poll() is not None:
            return
        if _stopped(proc.pid):
            os.kill(proc.pid, signal.SIGCONT)


def read_message(stream) -> dict | None:
    """One wire message from a file (buffered or not); None at its end."""
    import struct

    from graders.engine.wire import MAX_MESSAGE, decode

    head = _read_exactly(stream, 8)
    if head is None:
        return None
    (n,) = struct.unpack(">Q", head)
    if n > MAX_MESSAGE:
        raise ValueError("a message too large")
    data = _read_exactly(stream, n)
    if data is None:
        return None
    message = decode(data)
    return message if isinstance(message, dict) else None


def _read_exactly(stream, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = stream.read(n - got)
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


# ----------------------------------------------------------------------------- the judge

def serve() -> None:
    """Import NumPy and what the attempt's process runs, read `kata`'s hello (the settings),
    fork the first attempt's process, import the graders, then grade each job read from
    stdin until it ends."""
    import warnings

    warnings.simplefilter("ignore")  # stderr is read only when this process fails: keep it for that
    from graders.engine import boot

    boot.warm()  # NumPy and what the attempt's process runs, imported once, before the fork (and the hello)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    hello = read_message(stdin)
    if hello is None:
        return
    for name, value in (hello.get("settings") or {}).items():
        if name in (*SETTINGS, "TMPDIR", "TEMP", "TMP") and isinstance(value, str):
            os.environ[name] = value
    from graders.engine import confine, sandbox

    settings = sandbox.Settings.from_environment()
    confine.prepare(settings.landlock)
    if confine.PLAN.libc is not None:
        confine.PLAN.libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: what a dead attempt leaves comes here
    try:
        pid, opened = boot.fork_attempt(settings.megabytes)
        sandbox.SPAWNER.first = sandbox.Process(pid, sandbox.Channel(opened.chan), opened.out, opened.stack,
                                                opened.folder, ours=True)
        for fd in (opened.out, opened.stack):
            os.set_blocking(fd, False)
    except OSError:
        pass  # the spawner starts one when it is needed, and says why if it cannot
    # loaded while kata parses its command line; the diagnosis only when an attempt fails
    from graders.engine import harness  # noqa: F401

    _load_ahead(hello.get("hints") or [])
    import queue
    import threading

    jobs: queue.Queue = queue.Queue()

    def read_jobs():  # the end of the input ends the judge at once, whatever it is doing
        while True:
            job = read_message(stdin)
            if job is None or job.get("op") != "grade":
                _end(sandbox)
                os._exit(0)
            jobs.put(job)

    threading.Thread(target=read_jobs, daemon=True).start()
    while True:
        _write(stdout, _grade(jobs.get()))
        _sweep(sandbox)


def _write(stream, message: dict) -> None:
    from graders.engine.wire import encode

    stream.write(encode(message))
    stream.flush()


def _progress(job: dict):
    """What sends each check's result as it ends, when the job asks for it (`kata watch`)."""
    if not job.get("progress"):
        return None
    return lambda result: _write(sys.stdout.buffer, {"op": "progress", "check": result.to_dict()})


def _load_ahead(hints: list) -> None:
    """Load the grader and the reference of each kata the hints name (a name, or a file NAME.py)."""
    from graders.engine import files, judge

    for hint in hints:
        name = os.path.splitext(os.path.basename(str(hint)))[0]
        if files.has_grader(name):
            try:
                judge.checks_of(judge.grader(name))  # the explorer's cases are worked out now too
                files.reference(name)
            except Exception:
                pass  # the job itself will say what is wrong


def _grade(job: dict) -> dict:
    from graders.engine import harness

    try:
        source = job["source"]
        report = harness.grade(str(job["kata"]), str(job["path"]), source if isinstance(source, bytes) else b"",
                               _progress(job))
    except harness.SettingError as exc:
        return {"op": "error", "kind": "setting", "message": str(exc)}
    except Exception as exc:  # a fault of a grader, not of the attempt
        import traceback

        from graders.engine.wire import visible  # the message may quote what the attempt returned

        return {"op": "error", "kind": "grader", "message": visible(f"{type(exc).__name__}: {exc}"),
                "traceback": traceback.format_exc()}
    return {"op": "report", "report": report}


def _sweep(sandbox) -> None:
    """Kill what came to this process from an attempt's process that died (its orphans), and
    reap whatever ended."""
    from graders.engine import tree

    zygote = sandbox.SPAWNER.zygote
    keep = {zygote.proc.pid} if zygote is not None else set()
    first = sandbox.SPAWNER.first
    if first is not None:
        keep.add(first.pid)
    for pid in tree.children(os.getpid()):
        if pid not in keep and tree.alive(pid):
            tree.end_tree(pid)
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _end(sandbox) -> None:
    """Before the judge exits: its attempts' processes and what they started end, their folders go."""
    from graders.engine import tree

    first, sandbox.SPAWNER.first = sandbox.SPAWNER.first, None
    ends = [(p.pid, p.folder) for p in [first, *sandbox.running()] if p is not None]
    for pid, _ in ends:
        tree.end_tree(pid)
    sandbox.SPAWNER.close()
    for pid, folder in ends:
        tree.wait_gone(pid)
        tree.remove_folder(folder)
    _sweep(sandbox)
