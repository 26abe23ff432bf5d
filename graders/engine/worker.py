"""The attempt's process: it loads the attempt and runs the calls it is sent.

Nothing here decides a verdict. The judge (graders.engine.sandbox, graders.engine.judge)
sends requests over a socket: load this source, call this function with these
arguments, send back that earlier result again. This process answers with what happened
(the value returned, or the exception raised, any argument the call changed (found by
fingerprints the judge sends), warnings, a memory peak, imports refused) and the judge
compares. Whatever the attempt does to this interpreter (NumPy's error state,
monkeypatches, `sys.modules`) stays here. It is forked by the reaper
(graders.engine.reaper) and confined before it waits for the attempt
(graders.engine.confine). Only this process talks to the judge: a process the attempt
forks loses the channel at once, and one that comes back here ends quietly.

Only the standard library and NumPy may be imported here.
"""
from __future__ import annotations

import builtins
import io
import os
import signal
import socket
import sys
import time

from graders.engine import confine, imports, keeping, memory
from graders.engine.requests import recv_request
from graders.engine.wire import MAX_MESSAGE, _np, _safe_repr, _type_name, digest, encode, visible

# Signals a fresh Python interpreter ignores (the reaper ignores every signal it can)
PYTHON_IGNORES = ("SIGPIPE", "SIGXFSZ")
_BUILTIN_CLASSES = {name: value for name, value in vars(builtins).items() if isinstance(value, type)}


class GlobalRandomState(RuntimeError):
    """Raised by NumPy's module-level samplers when a grader asks for them to be refused."""


class Worker:
    """Loads the attempt and answers the judge's requests, one at a time."""

    def __init__(self, chan: socket.socket, guard: imports.Refuser):
        import linecache
        import traceback
        import warnings

        import numpy as np

        # Taken now, before the attempt runs, so that what it rebinds does not reach them.
        _np()
        self.np, self.chan, self.guard = np, chan, guard
        self.extract_tb, self.linecache, self.warnings = traceback.extract_tb, linecache, warnings
        self.errstate, self.seed = np.errstate, np.random.seed
        self.perf_counter, self.enc, self.digest = time.perf_counter, encode, digest
        self.getpid, self.exit, self.fork, self.modules = os.getpid, os._exit, os.fork, sys.modules
        self.pid, self.pipe, self.forking = os.getpid(), None, False
        self.module = None
        self.filename = None
        self.kept: dict[int, object] = {}       # results kept for fetch, by call id
        self.kept_args: dict[int, tuple] = {}   # argument objects kept for a later call, by call id
        self.shares = keeping.shares            # bound before the attempt runs, as the codec is
        self.reported, self.n_modules, self.own = 0, 0, {"__main__"}
        os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        """In any process forked from this one: the channel to the judge (and the pipe of a
        memory measure) stay with us."""
        try:
            self.chan.close()
        except OSError:
            pass
        if self.pipe is not None and not self.forking:
            try:
                os.close(self.pipe)
            except OSError:
                pass
            self.pipe = None

    def fork_keeping(self, fd: int) -> int:
        """Fork a child that keeps `fd` (a memory measure's pipe); the children it forks lose it."""
        self.forking = True
        try:
            pid = self.fork()
        finally:
            self.forking = False
        if pid == 0:
            self.pid, self.pipe = self.getpid(), fd
        return pid

    def serve(self) -> None:
        while True:
            try:
                self.chan.setblocking(True)  # whatever the attempt made of the descriptor's flags
                request = recv_request(self.chan)
            except (EOFError, OSError):
                self.exit(0)
            try:
                reply = getattr(self, "op_" + request["op"])(request)
            except BaseException as exc:  # the attempt broke something this process needs
                reply = {"error": f"the grading process failed: {_type_name(exc)}: {_text(exc)}"}
            if self.getpid() != self.pid:
                self.exit(0)  # a process the attempt forked came back here: only we answer
            self._flush()
            self.chan.sendall(reply if isinstance(reply, bytes) else self.encode_reply(reply))

    def encode_reply(self, reply: dict) -> bytes:
        self._note_refusals(reply)
        try:
            data = self.enc(reply)
        except BaseException as exc:  # a result whose encoding failed (a broken __len__, say)
            data = self.enc({"error": f"the result could not be sent back: {_type_name(exc)}: {_text(exc)}"})
        if len(data) > MAX_MESSAGE:
            data = self.enc({"error": f"the result is {len(data) / 2**20:.0f} MiB: far too large to compare"})
        return data

    def _note_refusals(self, reply: dict) -> None:
        """Imports refused since the last reply; a module that got past the guard counts too."""
        if self.module is not None and len(self.modules) != self.n_modules:
            names = [n for n, m in list(self.modules.items()) if n not in self.own and self.guard.got_past(n, m)]
            for name in names:
                message = imports.refusal(name.partition(".")[0], None)
                if message not in self.guard.refused:
                    self.guard.refused.append(message)
            self.n_modules = len(self.modules)
        if len(self.guard.refused) > self.reported:
            reply["refused"] = self.guard.refused[self.reported:]
            self.reported = len(self.guard.refused)

    @staticmethod
    def _flush() -> None:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass

    # -- requests ---------------------------------------------------------------------
    def op_load(self, request) -> dict:
        import types

        # The attempt runs as a file of its own folder: its name, not where the user keeps it.
        source = request["source"]
        self.filename = os.path.join(os.getcwd(), os.path.basename(request["filename"]) or "attempt.py")
        self.guard.filename = self.filename
        for step in request.get("setup", ()):
            getattr(self, "setup_" + step)()
        self._cache_lines(source)
        module = types.ModuleType(request["module"])
        module.__file__ = self.filename
        sys.modules[request["module"]] = module
        self.own.add(request["module"])
        self.n_modules = len(sys.modules)  # what the attempt imports from here on is looked at
        started = self.perf_counter()
        try:
            code = compile(source, self.filename, "exec", dont_inherit=True)
            exec(code, module.__dict__)
        except BaseException as exc:
            return {"raised": self._describe(exc), "seconds": self.perf_counter() - started}
        finally:
            self.module = module
        functions = [name for name, value in vars(module).items() if callable(value)]
        return {"ok": functions, "seconds": self.perf_counter() - started}

    def op_call(self, request):
        fn = getattr(self.module, request["fn"], None)
        if not callable(fn):
            return {"missing": True}
        opts = request.get("opts", {})
        if opts.get("memory"):
            return memory.in_child(self, lambda: self._call(fn, request, opts))
        return self._call(fn, request, opts)

    def _call(self, fn, request, opts) -> dict:
        args, kwargs = keeping.arguments(request, self.kept_args)
        if "global_seed" in opts:
            self.seed(opts["global_seed"])
        reply: dict = {}
        held = keeping.entries(args, kwargs)
        started = self.perf_counter()
        try:
            if opts.get("memory"):
                result = memory.traced(lambda: fn(*args, **kwargs), reply, opts.get("memory_cap"))
            elif opts.get("warnings"):
                result = self._warned(fn, args, kwargs, reply)
            else:
                result = fn(*args, **kwargs)
        except BaseException as exc:
            reply["raised"] = self._describe(exc)
        else:
            reply["ok"] = result
            shared = self.shares(result, args, kwargs, self.kept)
            if shared:
                reply["shares"] = shared
            if opts.get("keep"):
                self.kept[request["id"]] = result
        if opts.get("keep_args"):
            self.kept_args[request["id"]] = (args, kwargs)
        if held:
            swapped = keeping.replaced(args, kwargs, held)
            if swapped:
                reply["replaced"] = swapped
        if reply.pop("tracer", None):
            reply.pop("ok", None)
            reply["raised"] = memory.tracer_stopped()
        reply["seconds"] = self.perf_counter() - started
        self._changes(request, args, kwargs, reply)
        return reply

    def _changes(self, request, args, kwargs, reply) -> None:
        """The arguments the call changed (by their fingerprints), and every Generator's state."""
        sent = request.get("digests") or {}
        changed, rngs = {}, {}
        generator = _np().Generator
        for key, value in [*enumerate(args), *kwargs.items()]:
            if type(value) is generator:
                rngs[key] = value
            elif key in sent and self.digest(value) != sent[key]:
                changed[key] = value
        reply["changed"], reply["rngs"] = changed, rngs

    def op_fetch(self, request) -> dict:
        if request["id"] not in self.kept:
            return {"error": "no such result"}
        return {"ok": self.kept[request["id"]]}

    def op_forget(self, request) -> dict:
        self.kept.clear()
        self.kept_args.clear()
        return {"ok": None}

    def op_poke(self, request) -> dict:
        """Change a kept result in place, as the caller may change what it was given."""
        if request["id"] not in self.kept:
            return {"error": "no such result"}
        return {"ok": keeping.poke(self.kept[request["id"]], request["value"])}

    # -- how a call is watched ----------------------------------------------------------
    def _warned(self, fn, args, kwargs, reply):
        with self.warnings.catch_warnings(record=True) as caught, \
                self.errstate(over="warn", invalid="warn", divide="warn", under="ignore"):
            self.warnings.simplefilter("always")
            try:
                return fn(*args, **kwargs)
            finally:
                reply["warnings"] = [self._warning(w) for w in caught[:20]]

    def _warning(self, w) -> dict:
        mine = os.path.abspath(str(w.filename)) == os.path.abspath(self.filename)
        return {"category": visible(str(getattr(w.category, "__name__", "Warning")))[:100],
                "message": _text(w.message), "line": w.lineno if mine else None,
                "code": self._line(w.lineno) if mine else None}

    # -- describing what went wrong --------------------------------------------------------
    def _describe(self, exc: BaseException) -> dict:
        mro = type(exc).__mro__
        bases = [c.__name__ for c in mro if _BUILTIN_CLASSES.get(c.__name__) is c]
        where = None
        for frame in self.extract_tb(exc.__traceback__):
            if os.path.abspath(frame.filename) == os.path.abspath(self.filename):
                where = {"line": frame.lineno, "code": visible((frame.line or "").strip())}
        out = {"type": _type_name(exc), "module": visible(str(type(exc).__module__))[:100], "bases": bases,
               "message": _text(exc), "where": where}
        if isinstance(exc, SyntaxError):
            out["where"] = {"line": exc.lineno, "code": visible((exc.text or "").strip())}
            out["message"] = _text(exc.msg)
        if isinstance(exc, SystemExit):
            code = exc.code
            out["code"] = code if type(code) in (int, type(None)) else visible(code) if type(code) is str \
                else _safe_repr(code)
        return out

    def _cache_lines(self, source: bytes) -> None:
        """The graded bytes are the lines tracebacks show, whatever the file holds now."""
        text = decode_source(source)
        lines = text.splitlines(keepends=True)
        self.linecache.cache[self.filename] = (len(text), None, lines, self.filename)

    def _line(self, lineno) -> str:
        return visible(self.linecache.getline(self.filename, lineno).strip()) if lineno else ""

    # -- set-up steps a grader may ask for ---------------------------------------------------
    def setup_refuse_global_random(self) -> None:
        """NumPy's module-level samplers raise: the attempt must draw with the Generator it is given."""
        refusing_global_random(self.np).__enter__()


class refusing_global_random:
    """While active, NumPy's module-level samplers (np.random.choice, np.random.rand, ...) raise
    GlobalRandomState. The worker turns it on for good before loading an attempt whose grader
    asks for it; the judge turns it on while it replays known bugs, so both behave alike."""

    KEEP = {"seed", "get_state", "set_state", "RandomState", "default_rng", "Generator",
            "get_bit_generator", "set_bit_generator"}

    def __init__(self, np):
        self.np, self.saved = np, {}

    def __enter__(self):
        np = self.np
        for name in np.random.mtrand.__all__:
            original = getattr(np.random, name, None)
            if name in self.KEEP or name[0].isupper() or not callable(original):
                continue
            self.saved[name] = original
            setattr(np.random, name, _refusal(name))
        return self

    def __exit__(self, *exc):
        for name, original in self.saved.items():
            setattr(self.np.random, name, original)
        self.saved.clear()


def _refusal(name: str):
    def sampler(*args, **kwargs):
        raise GlobalRandomState(f"np.random.{name} draws from NumPy's global random state, not from the "
                                f"Generator passed as `rng`")

    sampler.__name__ = name
    return sampler


def _text(obj) -> str:
    """An exception's message (or a warning's), its first line, with control characters visible."""
    try:
        text = str(obj)
        if type(text) is not str:
            text = str.__str__(text)
    except BaseException as exc:
        return f"(its message could not be read: {_type_name(exc)} in __str__)"
    return visible(text.strip().splitlines()[0][:500]) if text.strip() else ""


def decode_source(source: bytes) -> str:
    """Python source bytes as Python reads them: BOM and coding line honoured."""
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        return source.decode(encoding, "replace")
    except (SyntaxError, LookupError):
        return source.decode("utf-8", "replace")


def worker(chan: socket.socket, out_w: int, folder: str | None = None) -> None:
    """The attempt's process: its own process group, output to the judge, confined."""
    try:
        os.setpgid(0, 0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out_w, 1)
        os.dup2(out_w, 2)
        for fd in {out_w, null} - {0, 1, 2}:
            os.close(fd)
        sys.stdout = sys.__stdout__ = _text_stream(1)
        sys.stderr = sys.__stderr__ = _text_stream(2)
        _as_python_starts()
        guard = confine.confine(folder)
        Worker(_out_of_the_way(chan), guard).serve()
    except BaseException:
        import traceback

        traceback.print_exc()  # to the judge's output pipe: shown with what the attempt printed
    finally:
        os._exit(70)


def _out_of_the_way(chan: socket.socket) -> socket.socket:
    """The channel on a descriptor far above the ones files get (an attempt that writes to
    descriptors 0 to 20, say, does not write into it by chance)."""
    import fcntl

    try:
        high = fcntl.fcntl(chan.fileno(), fcntl.F_DUPFD_CLOEXEC, 200)
    except OSError:
        return chan
    chan.close()
    return socket.socket(fileno=high)


def _as_python_starts() -> None:
    """Signal handling as a fresh Python interpreter has it (the reaper ignored every signal)."""
    for sig in signal.valid_signals():
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            try:
                signal.signal(sig, signal.SIG_DFL)
            except (ValueError, OSError):
                pass
    for name in PYTHON_IGNORES:
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _text_stream(fd: int) -> io.TextIOWrapper:
    return io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), encoding="utf-8", errors="replace",
                            line_buffering=True)
