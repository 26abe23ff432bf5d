"""The grading service: a process of its own that grades the files the `kata` command sends it.

    service = Service()                       # started early: it imports NumPy meanwhile
    report = service.grade("softmax", path, source)

`kata` itself never imports NumPy or a grader: the service does, in parallel with
`kata`'s own start-up, and forks the attempt's template from itself before it loads any
grader, so the attempt's processes hold nothing of the judge (graders/engine/worker.py). One
service grades any number of files in turn (`kata watch` keeps it warm). When `kata`
ends it kills the service (`close`); when `kata` dies, the service reads the end of its
input and exits at once; either way everything the attempt started goes with it (the
reaper kills the tree when the service lets go). A service found stopped (SIGSTOP) while
`kata` waits for it is continued, and killed at the end all the same.

Messages both ways: 8-byte length, then JSON; a job carries the attempt's bytes in base64.
A job that asks for progress gets a message `{"progress": check}` as each check ends,
before its report.
"""
from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys

# pathlib, json and base64 are imported where used: `kata` starts this service before
# anything else, and every millisecond before the spawn is a millisecond of waiting
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class ServiceFailed(RuntimeError):
    """The service could not grade: `kind` is "setting" (a usage error), "grader" or "unavailable"."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


# ----------------------------------------------------------------------------- the client

class Service:
    """The `kata` side: starts the service and sends it jobs."""

    def __init__(self, hints: list[str] = ()):
        """`hints`: words that may name the kata about to be graded (the command line's):
        its grader is loaded ahead of the job."""
        # -S: no site module (its start-up work is this process's to have done); the service
        # finds NumPy and the project on this process's own path instead
        path = os.pathsep.join(p for p in sys.path if p)
        env = dict(os.environ, KATA_SERVICE_HINTS=" ".join(hints), KATA_SERVICE_PATH=path)
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = "1"  # see graders/sandbox.py: small matrices, and forks to come
        env["PYTHONHASHSEED"] = "0"  # the same file, the same verdict: sets and dicts of str in the same order
        self.proc = subprocess.Popen([sys.executable, "-S", os.path.abspath(__file__)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                     start_new_session=True)  # the terminal's Ctrl-C is kata's to handle

    def grade(self, kata: str, path, source: bytes, progress=None) -> dict:
        """The report's JSON; `progress`, when given, is called with each check's JSON as
        the service reports it, before the report comes."""
        import base64

        job = {"kata": kata, "path": str(path), "source": base64.b64encode(source).decode(),
               "progress": progress is not None}
        reply = self._exchange(job)
        while reply is not None and "progress" in reply:
            progress(reply["progress"])  # outside _exchange: what the caller raises is the caller's
            reply = self._exchange(None)
        if reply is None:
            raise ServiceFailed("unavailable", f"the grading process stopped: {self._stderr() or 'no reason given'}")
        if "error" in reply:
            raise ServiceFailed(reply["error"], reply.get("message", ""))
        return reply["report"]

    def _exchange(self, job: dict | None) -> dict | None:
        """Send `job` (if any), then read the next message; None when the service is gone."""
        try:
            if job is not None:
                _send(self.proc.stdin, job)
            _wait_readable(self.proc)
            return _receive(self.proc.stdout)
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
        """Let go of the service and kill it (stopped or not: SIGKILL ends a stopped process too)."""
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass
        try:
            self.proc.kill()  # not waited for: the kernel reaps it once this process is gone
        except OSError:
            pass


def _wait_readable(proc: subprocess.Popen) -> None:
    """Wait until the service has something to say, continuing it whenever it is found
    stopped (Linux: an attempt that could signal it must not hang `kata`)."""
    import select

    while True:
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if ready or proc.poll() is not None:
            return
        try:
            with open(f"/proc/{proc.pid}/stat", "rb") as f:
                stopped = f.read().rsplit(b")", 1)[-1].split()[0] in (b"T", b"t")
        except (OSError, IndexError):
            stopped = False
        if stopped:
            os.kill(proc.pid, signal.SIGCONT)


def _send(stream, message: dict) -> None:
    import json

    data = json.dumps(message).encode()
    stream.write(struct.pack(">Q", len(data)) + data)
    stream.flush()


def _receive(stream) -> dict | None:
    head = stream.read(8)
    if len(head) < 8:
        return None
    import json

    (n,) = struct.unpack(">Q", head)
    data = stream.read(n)
    return json.loads(data) if len(data) == n else None


# ----------------------------------------------------------------------------- the service

def serve() -> None:
    """Import what grading needs, fork a clean template, then grade each job read from stdin."""
    import warnings

    warnings.simplefilter("ignore")  # stderr is read only when this process fails: keep it for that
    import numpy  # noqa: F401  (before the fork: the template and the judge both need it)

    from graders.engine import sandbox

    sandbox.fork_template()  # nothing of the judge has been imported yet: the template is clean
    # loaded while kata parses its command line; the diagnosis only when an attempt fails
    # (graders.engine.harness imports it then): a passing attempt's grading waits for none of it
    from graders.engine import harness, judge, vocabulary  # noqa: F401

    _load_ahead(os.environ.get("KATA_SERVICE_HINTS", "").split())
    sandbox.template().prefork()  # the attempt's process, ready before the job comes

    jobs: list[dict] = []
    import threading

    ready = threading.Condition()

    def read_jobs():
        while True:
            job = _receive(sys.stdin.buffer)
            if job is None:  # kata is done, or gone: so are we, and all we started
                os._exit(0)
            with ready:
                jobs.append(job)
                ready.notify()

    threading.Thread(target=read_jobs, daemon=True).start()
    while True:
        with ready:
            ready.wait_for(lambda: jobs)
            job = jobs.pop(0)
        _send(sys.stdout.buffer, _grade(harness, job))


def _progress(job: dict):
    """What sends each check's result as it ends, when the job asks for it (`kata watch`)."""
    if not job.get("progress"):
        return None
    return lambda result: _send(sys.stdout.buffer, {"progress": result.to_dict()})


def _load_ahead(hints: list[str]) -> None:
    """Load the grader and the reference of each kata the hints name (a name, or a file NAME.py)."""
    from graders.engine import files, judge

    for hint in hints:
        name = os.path.splitext(os.path.basename(hint))[0]
        if files.has_grader(name):
            try:
                judge.grader(name)
                files.reference(name)
            except Exception:
                pass  # the job itself will say what is wrong


def _grade(harness, job: dict) -> dict:
    import base64

    try:
        report = harness.grade(job["kata"], job["path"], base64.b64decode(job["source"]), _progress(job))
    except harness.SettingError as exc:
        return {"error": "setting", "message": str(exc)}
    except Exception as exc:  # a fault of a grader, not of the attempt
        import traceback

        from graders.engine.wire import visible  # the message may quote what the attempt returned

        return {"error": "grader", "message": visible(f"{type(exc).__name__}: {exc}"),
                "traceback": traceback.format_exc()}
    return {"report": report}


if __name__ == "__main__":
    # the project first, then what the command that started us could import
    sys.path[:] = [ROOT] + [p for p in os.environ.get("KATA_SERVICE_PATH", "").split(os.pathsep) if p]
    from graders.engine.service import serve as run

    run()
