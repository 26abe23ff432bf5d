"""The attempt's process: it loads the attempt and runs the calls it is sent.

Nothing here decides a verdict. The judge (graders.engine.sandbox) sends requests on one
channel (graders.engine.protocol): load this source, run these calls, send back that earlier
result again. This process answers each with what happened: the value returned or the
exception raised, warnings, the entries of list and dict arguments the call replaced, the
result arrays that share memory with an input, imports refused. The arrays of a call's
arguments are views of memory shared with the judge (graders.engine.arena), which reads
from outside whether the call wrote into them. Whatever the attempt does to this
interpreter (NumPy's error state, monkeypatches, `sys.modules`) stays here. Only this
process talks to the judge: a process the attempt forks loses the channel at once, and
one that comes back here ends quietly.

Only the standard library and NumPy may be imported here.
"""
from __future__ import annotations

import builtins
import io
import os
import sys
import time

from graders.engine import counting, imports, keeping, memory
from graders.engine.arena import Mappings
from graders.engine.protocol import Channel
from graders.engine.wire import MAX_MESSAGE, WireError, encode, numpy_names, safe_repr, type_name, visible

_BUILTIN_CLASSES = {name: value for name, value in vars(builtins).items() if isinstance(value, type)}


class GlobalRandomState(RuntimeError):
    """Raised by NumPy's module-level samplers when a grader asks for them to be refused."""


class Worker:
    """Loads the attempt and answers the judge's requests, one at a time."""

    def __init__(self, chan: Channel, guard: imports.Refuser):
        import linecache
        import traceback
        import warnings

        import numpy as np

        # Taken now, before the attempt runs, so that what it rebinds does not reach them.
        numpy_names()
        self.np, self.chan, self.guard = np, chan, guard
        self.extract_tb, self.linecache, self.warnings = traceback.extract_tb, linecache, warnings
        self.errstate, self.seed = np.errstate, np.random.seed
        self.perf_counter, self.enc = time.perf_counter, encode
        self.getpid, self.exit, self.fork, self.modules = os.getpid, os._exit, os.fork, sys.modules
        self.generator = np.random.Generator
        self.pid = os.getpid()
        self.module = None
        self.filename = None
        self.arenas = Mappings()                 # shared memory the judge places arguments in
        self.kept: dict[int, object] = {}        # results kept for Fetch, Poke and Kept, by call id
        self.kept_args: dict[int, tuple] = {}    # argument objects kept for a later call, by call id
        self.shares = keeping.shares             # bound before the attempt runs, as the codec is
        self.recent = keeping.Recent()           # the memory of the last results, while the attempt holds it
        self.snapshot, self.written, self.fresh_views = keeping.snapshot, keeping.written, keeping.fresh_views
        self.arrays = keeping.arrays
        self.passed: set[int] = set()            # ids of the arrays of kept results a request passes back
        self.reported, self.n_modules, self.own = 0, 0, {"__main__"}
        # the requests answered with one reply (protocol.Load, Fetch, Poke, Forget)
        self.answers = {"load": self.op_load, "fetch": self.op_fetch, "poke": self.op_poke, "forget": self.op_forget}
        os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        """In any process forked from this one: the channel to the judge stays with us."""
        self.chan.close()

    def serve(self) -> None:
        while True:
            try:
                self.chan.sock.setblocking(True)  # whatever the attempt made of the descriptor's flags
                self.passed = set()
                request = self.chan.receive(self.arenas, self.kept_object)
            except (EOFError, OSError):
                self.exit(0)
            except (WireError, KeyError, TypeError) as exc:
                self.send({"op": "error", "error": f"a request could not be read: {exc}"})
                continue
            op = request["op"]
            if op == "twin":
                self.twin()
            elif op == "run":
                for call in request.get("calls", []):
                    self.send(self.answer(lambda: self.op_call(call), call.get("id", 0)))
            elif op in self.answers:
                self.send(self.answer(lambda: self.answers[op](request), 0))
            else:
                self.send({"error": f"an unknown request {visible(op)[:40]!r}"})

    def twin(self) -> None:
        """Fork a twin of this process as it stands (loaded, no call made yet, if the judge asks
        at once), which serves the judge on a channel of its own: a process in which the
        attempt has not been called, without starting Python anew."""
        import socket

        mine, theirs = socket.socketpair()
        pid = self.fork()
        if pid == 0:  # the twin: its parent's channel is closed (_forked); this one is its own
            mine.close()
            self.chan, self.pid = Channel(theirs), self.getpid()
            return
        theirs.close()
        self._flush()
        self.chan.send(self.enc({"twin": pid}), [mine.fileno()])
        mine.close()

    def answer(self, make, call_id: int) -> dict | bytes:
        try:
            return make()
        except BaseException as exc:  # the attempt broke something this process needs
            return {"id": call_id, "error": f"the grading process failed: {type_name(exc)}: {_text(exc)}"}

    def send(self, reply) -> None:
        if reply is None:  # already sent (a measured call sends its own)
            return
        if self.getpid() != self.pid:
            self.exit(0)  # a process the attempt forked came back here: only we answer
        self._flush()
        self.chan.sock.sendall(reply if isinstance(reply, bytes) else self.encode_reply(reply))

    def encode_reply(self, reply: dict) -> bytes:
        self._note_refusals(reply)
        try:
            data = self.enc(reply)
        except BaseException as exc:  # a result whose encoding failed (a broken __len__, say)
            data = self.enc({"id": reply.get("id", 0),
                             "error": f"the result could not be sent back: {type_name(exc)}: {_text(exc)}"})
        if len(data) > MAX_MESSAGE:
            data = self.enc({"id": reply.get("id", 0),
                             "error": f"the result is {len(data) / 2**20:.0f} MiB: far too large to compare"})
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

    def kept_object(self, call: int, path: tuple):
        """What an earlier call returned (kept), passed back by reference, or a part of it."""
        value = self.kept[call]
        for step in path:
            value = value[step]
        self.passed.update(id(a) for _, a in self.arrays(value))
        return value

    # -- requests ---------------------------------------------------------------------
    def op_load(self, request) -> dict:
        import types

        # The attempt runs as a file of its own folder: its name, not where the user keeps it.
        source = request["source"]
        self.filename = os.path.join(os.getcwd(), os.path.basename(request["filename"]) or "attempt.py")
        self.guard.filename = self.filename
        zeroed_empty(self.np).__enter__()
        for step in request.get("setup", ()):
            getattr(self, "setup_" + step)()
        self._cache_lines(source)
        try:  # its own file is there too, for an attempt that reads its __file__
            with open(self.filename, "wb") as f:
                f.write(source)
        except OSError:
            pass
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
        return {"functions": functions, "seconds": self.perf_counter() - started}

    def op_call(self, call: dict):
        fn = getattr(self.module, call["fn"], None)
        if not callable(fn):
            return {"id": call["id"], "missing": True}
        opts = call.get("opts") or {}
        if opts.get("memory"):
            return memory.in_child(self, call["id"], opts.get("memory_cap"), lambda: self._call(fn, call, opts))
        return self._call(fn, call, opts)

    def _call(self, fn, call: dict, opts: dict) -> dict:
        if call.get("args_from") is not None:  # the objects an earlier call got, laid out as they came
            args, kwargs, laid = self.kept_args[call["args_from"]]
            if opts.get("fresh_views"):  # new array objects over the same memory, as a caller's new views
                args, kwargs = self.fresh_views(args), self.fresh_views(kwargs)
        else:
            args, kwargs = call["args"], call["kwargs"]
            laid = keeping.layouts(args, kwargs)
        if "global_seed" in opts:
            self.seed(opts["global_seed"])
        reply: dict = {"id": call["id"]}
        held = keeping.entries(args, kwargs)
        snap = self.snapshot(args, kwargs, self.passed) if self.passed else []
        started = self.perf_counter()
        try:
            if opts.get("memory"):
                result = memory.traced(lambda: fn(*args, **kwargs), reply)
            elif opts.get("warnings"):
                result = self._warned(fn, args, kwargs, reply)
            elif opts.get("lines"):
                result = counting.lines(lambda: fn(*args, **kwargs), self.filename, reply)
            elif opts.get("peak"):
                result = counting.peak(lambda: fn(*args, **kwargs), reply)
            elif opts.get("timed"):
                result = counting.timed(lambda: fn(*args, **kwargs), reply)
            else:
                result = fn(*args, **kwargs)
        except BaseException as exc:
            reply["raised"] = self._describe(exc)
        else:
            reply["value"] = result
            shared = self.shares(result, args, kwargs, self.kept, self.recent)
            if shared:
                reply["shares"] = shared
            if opts.get("keep"):
                self.kept[call["id"]] = result
            self.recent.add(call["id"], result)
        if snap:
            wrote = self.written(snap)
            if wrote:
                reply["kept_written"] = wrote
        if opts.get("keep_args"):
            self.kept_args[call["id"]] = (args, kwargs, laid)
        swapped = keeping.replaced(args, kwargs, held) if held else []
        if swapped:
            reply["replaced"] = swapped
        # what the judge cannot see in the shared memory: an argument whose entries were replaced,
        # or whose arrays are no longer laid out as they came (reshaped in place), is sent back as it is now
        changed = {key for key, _ in swapped} | set(keeping.relaid(args, kwargs, laid))
        if changed:
            reply["changed"] = {key: args[key] if isinstance(key, int) else kwargs[key] for key in changed}
        if reply.get("tracer_stopped"):
            reply.pop("value", None)
            reply["raised"] = memory.tracer_stopped()
        reply["seconds"] = self.perf_counter() - started
        rngs = {key: value for key, value in [*enumerate(args), *kwargs.items()] if type(value) is self.generator}
        if rngs:
            reply["rngs"] = rngs
        return reply

    def op_fetch(self, request) -> dict:
        if request["call"] not in self.kept:
            return {"error": "no such result"}
        return {"value": self.kept[request["call"]]}

    def op_forget(self, request) -> dict:
        self.kept.clear()
        self.kept_args.clear()
        return {"value": None}

    def op_poke(self, request) -> dict:
        """Change a kept result in place, as the caller may change what it was given."""
        if request["call"] not in self.kept:
            return {"error": "no such result"}
        return {"value": keeping.poke(self.kept[request["call"]], request["value"])}

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
        out = {"type": type_name(exc), "module": visible(str(type(exc).__module__))[:100], "bases": bases,
               "message": _text(exc), "where": where}
        if isinstance(exc, SyntaxError):
            out["where"] = {"line": exc.lineno, "code": visible((exc.text or "").strip())}
            out["message"] = _text(exc.msg)
        if isinstance(exc, SystemExit):
            code = exc.code
            out["code"] = code if type(code) in (int, type(None)) else visible(code) if type(code) is str \
                else safe_repr(code)
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


class zeroed_empty:
    """While active, np.empty and np.empty_like give zeros: an attempt that reads memory it
    never wrote (an output allocated with np.empty and filled only in part, or written through
    a copy) reads the same numbers in every process, on every machine, and a known bug
    replayed in the judge reads what the attempt read. The worker turns it on for good before
    loading an attempt; the judge turns it on while it replays known bugs."""

    def __init__(self, np):
        self.np, self.saved = np, None

    def __enter__(self):
        np = self.np
        self.saved = (np.empty, np.empty_like)
        np.empty, np.empty_like = np.zeros, np.zeros_like
        return self

    def __exit__(self, *exc):
        self.np.empty, self.np.empty_like = self.saved


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
        return f"(its message could not be read: {type_name(exc)} in __str__)"
    return visible(text.strip().splitlines()[0][:500]) if text.strip() else ""


def decode_source(source: bytes) -> str:
    """Python source bytes as Python reads them: BOM and coding line honoured."""
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        return source.decode(encoding, "replace")
    except (SyntaxError, LookupError):
        return source.decode("utf-8", "replace")
