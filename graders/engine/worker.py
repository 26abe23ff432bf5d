"""The attempt's process: it loads the attempt and runs the calls it is sent.

Nothing here decides a verdict. The judge (graders.engine.sandbox, graders.engine.judge)
sends requests over a socket: load this source, call this function with these
arguments, send back that earlier result again. This process answers with what happened
(the value returned, or the exception raised, any argument the call changed (found by
fingerprints the judge sends), warnings, a memory peak) and the judge compares. Whatever
the attempt does to this interpreter (NumPy's error state, monkeypatches, `sys.modules`)
stays here. It is forked by the reaper (graders.engine.reaper).

Only the standard library and NumPy may be imported here.
"""
from __future__ import annotations

import io
import os
import signal
import socket
import sys
import time

from graders.engine import keeping
from graders.engine.wire import MAX_MESSAGE, _np, _safe_repr, digest, encode, recv_request

class GlobalRandomState(RuntimeError):
    """Raised by NumPy's module-level samplers when a grader asks for them to be refused."""


class Worker:
    """Loads the attempt and answers the judge's requests, one at a time."""

    def __init__(self, chan: socket.socket):
        import linecache
        import tracemalloc
        import traceback
        import warnings

        import numpy as np

        # Taken now, before the attempt runs, so that what it rebinds does not reach them.
        _np()
        self.np, self.chan = np, chan
        self.trace_start, self.trace_peak, self.trace_stop = (tracemalloc.start, tracemalloc.get_traced_memory,
                                                              tracemalloc.stop)
        self.extract_tb, self.linecache, self.warnings = traceback.extract_tb, linecache, warnings
        self.errstate, self.seed = np.errstate, np.random.seed
        self.perf_counter, self.enc, self.digest = time.perf_counter, encode, digest
        self.module = None
        self.filename = None
        self.kept: dict[int, object] = {}       # results kept for fetch, by call id
        self.kept_args: dict[int, tuple] = {}   # argument objects kept for a later call, by call id
        self.shares = keeping.shares            # bound before the attempt runs, as the codec is

    def serve(self) -> None:
        while True:
            try:
                request = recv_request(self.chan)
            except (EOFError, OSError):
                os._exit(0)
            try:
                reply = getattr(self, "op_" + request["op"])(request)
            except BaseException as exc:  # the attempt broke something this process needs
                reply = {"error": f"the grading process failed: {type(exc).__name__}: {_text(exc)}"}
            self._flush()
            self.chan.sendall(self._encode(reply))

    def _encode(self, reply) -> bytes:
        try:
            data = self.enc(reply)
        except BaseException as exc:  # a result whose encoding failed (a broken __len__, say)
            data = self.enc({"error": f"the result could not be sent back: {type(exc).__name__}: {exc}"})
        if len(data) > MAX_MESSAGE:
            data = self.enc({"error": f"the result is {len(data) / 2**20:.0f} MiB: far too large to compare"})
        return data

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

        source, self.filename = request["source"], request["filename"]
        for step in request.get("setup", ()):
            getattr(self, "setup_" + step)()
        self._cache_lines(source)
        module = types.ModuleType(request["module"])
        module.__file__ = self.filename
        sys.modules[request["module"]] = module
        started = self.perf_counter()
        try:
            code = compile(source, self.filename, "exec", dont_inherit=True)
            exec(code, module.__dict__)
        except BaseException as exc:
            return {"raised": self._describe(exc), "seconds": self.perf_counter() - started}
        self.module = module
        functions = [name for name, value in vars(module).items() if callable(value)]
        return {"ok": functions, "seconds": self.perf_counter() - started}

    def op_call(self, request) -> dict:
        fn = getattr(self.module, request["fn"], None)
        if not callable(fn):
            return {"missing": True}
        args, kwargs = keeping.arguments(request, self.kept_args)
        opts = request.get("opts", {})
        if "global_seed" in opts:
            self.seed(opts["global_seed"])
        reply: dict = {}
        started = self.perf_counter()
        try:
            if opts.get("memory"):
                result = self._traced(fn, args, kwargs, reply, opts.get("memory_cap"))
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
        reply["seconds"] = self.perf_counter() - started
        self._changes(request, args, kwargs, reply)
        return reply

    def _changes(self, request, args, kwargs, reply) -> None:
        """The arguments the call changed (by their fingerprints), and every Generator's state."""
        sent = request.get("digests") or {}
        changed, rngs = {}, {}
        for key, value in [*enumerate(args), *kwargs.items()]:
            if type(value) is self.np.random.Generator:
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
    def _traced(self, fn, args, kwargs, reply, cap=None):
        """The call with its peak traced; with `cap` (bytes), an allocation that would take the
        process that far past its size fails at once (MemoryError) rather than being computed."""
        restore = _cap_memory(cap) if cap else None
        self.trace_start()
        try:
            return fn(*args, **kwargs)
        finally:
            reply["peak"] = self.trace_peak()[1]
            self.trace_stop()
            if restore:
                restore()

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
        return {"category": getattr(w.category, "__name__", "Warning"), "message": _text(w.message),
                "line": w.lineno if mine else None, "code": self._line(w.lineno) if mine else None}

    # -- describing what went wrong --------------------------------------------------------
    def _describe(self, exc: BaseException) -> dict:
        bases = [c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins"]
        where = None
        for frame in self.extract_tb(exc.__traceback__):
            if os.path.abspath(frame.filename) == os.path.abspath(self.filename):
                where = {"line": frame.lineno, "code": (frame.line or "").strip()}
        out = {"type": type(exc).__qualname__, "module": type(exc).__module__, "bases": bases,
               "message": _text(exc), "where": where}
        if isinstance(exc, SyntaxError):
            out["where"] = {"line": exc.lineno, "code": (exc.text or "").strip()}
            out["message"] = _text(exc.msg)
        if isinstance(exc, SystemExit):
            out["code"] = exc.code if isinstance(exc.code, (int, str, type(None))) else _safe_repr(exc.code)
        return out

    def _cache_lines(self, source: bytes) -> None:
        """The graded bytes are the lines tracebacks show, whatever the file holds now."""
        text = decode_source(source)
        lines = text.splitlines(keepends=True)
        self.linecache.cache[self.filename] = (len(text), None, lines, self.filename)

    def _line(self, lineno) -> str:
        return self.linecache.getline(self.filename, lineno).strip() if lineno else ""

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
    try:
        text = str(obj)
    except BaseException as exc:
        return f"(its message could not be read: {type(exc).__name__} in __str__)"
    return text.strip().splitlines()[0][:500] if text.strip() else ""


def decode_source(source: bytes) -> str:
    """Python source bytes as Python reads them: BOM and coding line honoured."""
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        return source.decode(encoding, "replace")
    except (SyntaxError, LookupError):
        return source.decode("utf-8", "replace")


def worker(chan: socket.socket, out_w: int) -> None:
    """The attempt's process: its own process group, output to the judge, limits set."""
    try:
        os.setpgid(0, 0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out_w, 1)
        os.dup2(out_w, 2)
        os.close(out_w)
        sys.stdout = sys.__stdout__ = _text_stream(1)
        sys.stderr = sys.__stderr__ = _text_stream(2)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _limit_resources()
        Worker(chan).serve()
    except BaseException:
        import traceback

        traceback.print_exc()  # to the judge's output pipe: shown with what the attempt printed
    finally:
        os._exit(70)


def _cap_memory(extra: int):
    """Lower the address-space limit to the process's size now plus `extra` bytes (Linux);
    returns what puts the limit back, or None where the size cannot be read."""
    import resource

    try:
        with open("/proc/self/statm") as f:
            size = int(f.read().split()[0]) * resource.getpagesize()
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = size + int(extra)
        if soft != resource.RLIM_INFINITY:
            limit = min(limit, soft)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (OSError, ValueError):
        return None
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _text_stream(fd: int) -> io.TextIOWrapper:
    return io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), encoding="utf-8", errors="replace",
                            line_buffering=True)


def _limit_resources() -> None:
    import resource

    megabytes = int(os.environ.get("KATA_MEMORY_LIMIT_MB", "6144"))
    for limit, value in ((resource.RLIMIT_AS, megabytes << 20), (resource.RLIMIT_CORE, 0),
                         (resource.RLIMIT_FSIZE, 256 << 20)):
        try:
            soft, hard = resource.getrlimit(limit)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(limit, (value, hard))
        except (ValueError, OSError):
            pass
