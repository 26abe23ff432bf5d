"""The attempt's side of grading: a process that loads the attempt and runs the calls it is sent.

Nothing here decides a verdict. The judge (graders.sandbox, graders.judge) sends requests
over a socket: load this source, call this function with these arguments, send back that
earlier result again. This process answers with what happened (the value returned, or the
exception raised, any argument the call changed (found by fingerprints the judge sends),
warnings, a memory peak) and the judge compares. Whatever the attempt does to this interpreter (NumPy's error
state, monkeypatches, `sys.modules`) stays here.

Three roles, one file, run as `python -I graders/worker.py template FD` (or forked from
the grading service before it loads any grader, graders/service.py):
- the template imports NumPy once and waits; each grading asks it for a fresh worker,
  which it forks (milliseconds instead of a new interpreter);
- the reaper, forked from the template, starts a new session, adopts orphans
  (PR_SET_CHILD_SUBREAPER on Linux) and, when the judge closes its control socket or
  dies, kills every process the attempt started;
- the worker, forked from the reaper, runs the attempt.
Requests (judge to worker) are pickled: the judge trusts itself. Replies (worker to judge)
use `encode`/`decode` below: JSON plus raw array bytes, so the judge never unpickles
anything the attempt produced.

Only the standard library and NumPy may be imported here (the file also runs with -I).
"""
from __future__ import annotations

import functools
import io
import json
import os
import pickle
import select
import signal
import socket
import struct
import sys
import time

# ----------------------------------------------------------------------------- the codec

MAX_MESSAGE = 1 << 31            # bytes in one message, either way
MAX_DEPTH = 40                   # nesting of lists, tuples and dicts
ARRAY_KINDS = "biufc"            # bool, integers, floats, complex: nothing else is decoded
GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")


class Opaque:
    """A value the codec does not carry (an object, a function, a tensor): its type and repr."""

    def __init__(self, type_name: str, text: str):
        self.type_name, self.text = type_name, text

    def __repr__(self) -> str:
        return f"<{self.type_name}>"


class WireError(ValueError):
    """A message that does not decode: damaged, or not made by encode()."""


# What the codec uses is bound here, before any attempt runs: an attempt that patches
# json.dumps or NumPy's functions changes its own results, never how they are carried.
_dumps, _loads, _pack, _unpack = json.dumps, json.loads, struct.pack, struct.unpack
_NUMPY = None


def _np():
    """NumPy's names the codec needs, taken once (the worker takes them before loading an attempt)."""
    global _NUMPY
    if _NUMPY is None:
        import types

        import numpy

        _NUMPY = types.SimpleNamespace(
            ndarray=numpy.ndarray, generic=numpy.generic, dtype=numpy.dtype, empty=numpy.empty,
            frombuffer=numpy.frombuffer, ascontiguousarray=numpy.ascontiguousarray, uint8=numpy.uint8,
            asarray=numpy.asarray, Generator=numpy.random.Generator,
            bit_generators={name: getattr(numpy.random, name) for name in GENERATORS})
    return _NUMPY


def _type_name(value) -> str:
    t = type(value)
    return t.__name__ if t.__module__ in ("builtins", None) else f"{t.__module__}.{t.__qualname__}"


def _safe_repr(value, limit: int = 200) -> str:
    try:
        text = repr(value)
    except BaseException:  # a __repr__ that raises is the attempt's business
        text = f"<{_type_name(value)}>"
    return text if len(text) <= limit else text[:limit] + "..."


def encode(value) -> bytes:
    """One message: 8-byte length, 4-byte header length, JSON header, then array bytes."""
    blobs: list[bytes] = []
    header = _dumps(_enc(value, blobs, 0), separators=(",", ":")).encode()
    body = b"".join(blobs)
    return _pack(">QI", 4 + len(header) + len(body), len(header)) + header + body


def _enc(v, blobs: list, depth: int):
    if v is None or isinstance(v, (bool, str)):
        return v
    if type(v) is int:
        return v
    if type(v) is float:
        return v
    if depth > MAX_DEPTH:
        return {"$": "opaque", "type": _type_name(v), "repr": "nested too deeply"}
    if type(v) is list:
        return [_enc(x, blobs, depth + 1) for x in v]
    if type(v) is tuple:
        return {"$": "tuple", "v": [_enc(x, blobs, depth + 1) for x in v]}
    if type(v) is dict:
        return {"$": "dict", "k": [_enc(k, blobs, depth + 1) for k in v],
                "v": [_enc(x, blobs, depth + 1) for x in v.values()]}
    if type(v) is complex:
        return {"$": "complex", "re": v.real, "im": v.imag}
    if type(v) is bytes:
        blobs.append(v)
        return {"$": "bytes", "n": len(v)}
    np = _np() if "numpy" in sys.modules else None
    if np is not None:
        if type(v) is np.ndarray and v.dtype.kind in ARRAY_KINDS and not v.dtype.fields:
            return _enc_array(np, v, blobs)
        if isinstance(v, np.generic) and v.dtype.kind in ARRAY_KINDS:
            data = np.asarray(v).tobytes()
            blobs.append(data)
            return {"$": "scalar", "dtype": v.dtype.str, "n": len(data)}
        if type(v) is np.Generator and type(v.bit_generator).__name__ in GENERATORS:
            return {"$": "rng", "bg": type(v.bit_generator).__name__,
                    "state": _enc(v.bit_generator.state, blobs, depth + 1)}
        if isinstance(v, np.ndarray):
            what = f"array of dtype {v.dtype}" if type(v) is np.ndarray else _type_name(v)
            return {"$": "opaque", "type": what, "repr": _safe_repr(v)}
    return {"$": "opaque", "type": _type_name(v), "repr": _safe_repr(v)}


def _span(a) -> tuple[int, int]:
    """(bytes below the first element that the view reaches, bytes the view spans in all)."""
    below = sum(-s * (n - 1) for s, n in zip(a.strides, a.shape) if s < 0)
    above = sum(s * (n - 1) for s, n in zip(a.strides, a.shape) if s > 0)
    return below, below + above + a.itemsize


def _view_like(np, shape, dtype, strides, offset: int, span: int):
    base = np.empty(int(span), dtype=np.uint8)
    return np.ndarray(shape, dtype=dtype, buffer=base, offset=int(offset), strides=tuple(strides))


def copy_with_layout(a):
    """A copy of array `a` laid out as `a` is in memory (order, strides, read-only flag)."""
    np = _np()
    if a.flags.c_contiguous or a.size <= 1:
        b = a.copy()
    else:
        below, span = _span(a)
        b = _view_like(np, a.shape, a.dtype, a.strides, below, span)
        b[...] = a
    if not a.flags.writeable:
        b.setflags(write=False)
    return b


def _enc_array(np, a, blobs: list) -> dict:
    """An array's dtype, shape and bytes (in C order: what it holds, not how it is laid out)."""
    data = np.ascontiguousarray(a).tobytes()
    blobs.append(data)
    return {"$": "array", "dtype": a.dtype.str, "shape": list(a.shape), "n": len(data)}


def decode(message: bytes):
    """The value in one message (without its 8-byte length). Never runs code from the
    message: JSON, and array bytes of whitelisted dtypes; arrays come out plain (C-ordered,
    writeable), whatever layout they had."""
    if len(message) < 4:
        raise WireError("message too short")
    (n,) = _unpack(">I", message[:4])
    try:
        header = _loads(message[4:4 + n].decode())
    except (UnicodeDecodeError, ValueError) as exc:
        raise WireError(f"bad header: {exc}") from None
    blobs = memoryview(message)[4 + n:]
    cursor = [0]

    def take(size) -> bytes:
        if not isinstance(size, int) or size < 0 or cursor[0] + size > len(blobs):
            raise WireError("array bytes missing")
        chunk = bytes(blobs[cursor[0]:cursor[0] + size])
        cursor[0] += size
        return chunk

    return _dec(header, take, 0)


def _dec(v, take, depth: int):
    if depth > MAX_DEPTH + 2:
        raise WireError("nested too deeply")
    if isinstance(v, list):
        return [_dec(x, take, depth + 1) for x in v]
    if not isinstance(v, dict):
        return v
    kind = v.get("$")
    if kind == "tuple":
        return tuple(_dec(x, take, depth + 1) for x in v["v"])
    if kind == "dict":
        keys = [_dec(k, take, depth + 1) for k in v["k"]]
        try:
            return dict(zip(keys, (_dec(x, take, depth + 1) for x in v["v"])))
        except TypeError:
            raise WireError("unhashable dict key") from None
    if kind == "complex":
        return complex(v["re"], v["im"])
    if kind == "bytes":
        return take(v["n"])
    if kind == "array":
        return _dec_array(v, take)
    if kind == "scalar":
        np = _np()
        dtype = _dtype(np, v["dtype"])
        data = take(v["n"])
        if len(data) != dtype.itemsize:
            raise WireError("scalar of the wrong size")
        return np.frombuffer(data, dtype=dtype)[0]
    if kind == "rng":
        np = _np()
        if v["bg"] not in GENERATORS:
            raise WireError(f"unknown bit generator {v['bg']!r}")
        bit_generator = np.bit_generators[v["bg"]]()
        try:
            bit_generator.state = _dec(v["state"], take, depth + 1)
        except (TypeError, ValueError, KeyError) as exc:
            raise WireError(f"bad generator state: {exc}") from None
        return np.Generator(bit_generator)
    if kind == "opaque":
        return Opaque(str(v.get("type")), str(v.get("repr")))
    raise WireError(f"unknown kind {kind!r}")


def _dtype(np, text):
    try:
        dtype = np.dtype(str(text))
    except TypeError:
        raise WireError(f"bad dtype {text!r}") from None
    if dtype.kind not in ARRAY_KINDS or dtype.fields or dtype.hasobject:
        raise WireError(f"dtype {dtype} is not carried")
    return dtype


def _dec_array(v, take):
    np = _np()
    dtype = _dtype(np, v["dtype"])
    shape = tuple(v["shape"])
    if not all(isinstance(s, int) and s >= 0 for s in shape):
        raise WireError("bad shape")
    size = 1
    for s in shape:
        size *= s
    data = take(v["n"])
    if len(data) != size * dtype.itemsize:
        raise WireError("array bytes do not fit the shape")
    return np.frombuffer(data, dtype=dtype).reshape(shape).copy()



# ----------------------------------------------------------------------------- requests

# Requests go from the judge to the attempt's process only, so they may be pickled (the
# judge trusts itself); an array whose layout pickle would not keep (a view, read-only)
# travels as its bytes and layout and is rebuilt as it was.

def encode_request(request: dict) -> bytes:
    if "args" in request:  # only a call's arguments hold arrays
        request = dict(request, args=_laid_out(request["args"]), kwargs=_laid_out(request["kwargs"]))
    data = pickle.dumps(request, protocol=5)
    return _pack(">Q", len(data)) + data


def _laid_out(v, depth: int = 0):
    """`v` with every array whose layout pickle would not keep (a view, a read-only array)
    wrapped so that it is rebuilt laid out as it is."""
    np = sys.modules.get("numpy")
    if depth > MAX_DEPTH:
        return v
    if np is not None and type(v) is np.ndarray:
        plain = v.flags.writeable and (v.flags.c_contiguous or v.flags.f_contiguous)
        return v if plain else _Laid(v)
    if type(v) is list:
        return [_laid_out(x, depth + 1) for x in v]
    if type(v) is tuple:
        return tuple(_laid_out(x, depth + 1) for x in v)
    if type(v) is dict:
        return {k: _laid_out(x, depth + 1) for k, x in v.items()}
    return v


class _Laid:
    """An array on its way to the attempt's process, with its strides and read-only flag."""

    def __init__(self, a):
        self.a = a

    def __reduce__(self):
        a, layout = self.a, {}
        if a.size > 1 and not (a.flags.c_contiguous or a.flags.f_contiguous):
            below, span = _span(a)
            layout = {"strides": a.strides, "offset": below, "span": span}
        order = "F" if a.flags.f_contiguous and not a.flags.c_contiguous else "C"
        return _rebuild_laid, (a.tobytes(order="C"), a.dtype.str, a.shape, order, layout, not a.flags.writeable)


def _rebuild_laid(data: bytes, dtype: str, shape: tuple, order: str, layout: dict, readonly: bool):
    np = _np()
    flat = np.frombuffer(data, dtype=np.dtype(dtype)).reshape(shape)
    if layout:
        arr = _view_like(np, shape, np.dtype(dtype), layout["strides"], layout["offset"], layout["span"])
        arr[...] = flat
    else:
        arr = flat.copy(order=order)
    if readonly:
        arr.setflags(write=False)
    return arr


class _RequestUnpickler(pickle.Unpickler):
    """The judge's pickles name this file as `graders.worker`; here it may be `__main__`."""

    def find_class(self, module, name):
        if module == "graders.worker":
            return globals()[name]
        return super().find_class(module, name)


def recv_request(sock: socket.socket):
    (n,) = _unpack(">Q", recv_exact(sock, 8))
    return _RequestUnpickler(io.BytesIO(recv_exact(sock, n))).load()


def digest(value) -> str:
    """A fingerprint of a value's contents (arrays by dtype, shape and bytes), the same in
    both processes: the judge sends the fingerprints of a call's arguments, and the
    attempt's process sends back any argument whose fingerprint the call changed."""
    import hashlib

    h = hashlib.blake2b(digest_size=16)
    _feed(h, value)
    return h.hexdigest()


def _feed(h, v) -> None:
    np = sys.modules.get("numpy")
    if np is not None and isinstance(v, np.ndarray):
        h.update(f"a{v.dtype.str}{v.shape}".encode())
        h.update(np.ascontiguousarray(v).tobytes() if v.dtype.kind in ARRAY_KINDS else repr(v).encode())
    elif isinstance(v, (list, tuple)):
        h.update(f"{type(v).__name__}{len(v)}(".encode())
        for x in v:
            _feed(h, x)
        h.update(b")")
    elif isinstance(v, dict):
        h.update(f"d{len(v)}(".encode())
        for k, x in v.items():
            h.update(repr(k).encode())
            _feed(h, x)
        h.update(b")")
    elif np is not None and isinstance(v, np.random.Generator):
        h.update(b"rng")  # its state is meant to move: sent back with every call instead
    else:
        h.update(f"{type(v).__name__}:{v!r}".encode())


def recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise EOFError("the other side closed the connection")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)



# ----------------------------------------------------------------------------- the worker

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
        self.kept: dict[int, object] = {}

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
        args, kwargs, opts = request["args"], request["kwargs"], request.get("opts", {})
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
            if opts.get("keep"):
                self.kept[request["id"]] = result
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
        return {"ok": None}

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


# ----------------------------------------------------------------------------- processes

_PRCTL = None


def _set_subreaper_function():
    """libc's prctl, looked up once (Linux only)."""
    global _PRCTL
    if _PRCTL is None and sys.platform.startswith("linux"):
        try:
            import ctypes

            _PRCTL = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            _PRCTL = False
    return _PRCTL


def _set_subreaper() -> bool:
    """Orphans of the attempt's processes come to us, not to init (Linux only)."""
    prctl = _set_subreaper_function()
    return bool(prctl) and prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER


def _descendants(root: int) -> list[int]:
    """Live processes below `root` (Linux; empty elsewhere). Read down the tree from each
    process's list of children, which costs a few reads however many processes the machine
    runs; where the kernel keeps no such lists, from every process's parent in /proc."""
    if not _children_listed():
        return _descendants_by_scan(root)
    found, todo = [], [root]
    while todo:
        kids = _children(todo.pop())
        found += kids
        todo += kids
    return [pid for pid in found if _state(pid) not in ("Z", "X", None)]


@functools.cache
def _children_listed() -> bool:
    """The kernel lists each task's children in /proc/PID/task/TID/children (asked once)."""
    return os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def _children(pid: int) -> list[int]:
    """The children of `pid`, from /proc/PID/task/*/children; [] for a process that is gone."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    kids = []
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                kids += [int(k) for k in f.read().split()]
        except OSError:  # the thread ended meanwhile
            pass
    return kids


def _state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().decode("ascii", "replace").rsplit(")", 1)[-1].split()
    except OSError:
        return None
    return fields[0] if fields else None


def _descendants_by_scan(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    live = set()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) < 2:
            continue
        pid, state, ppid = int(entry), fields[0], int(fields[1])
        children.setdefault(ppid, []).append(pid)
        if state not in ("Z", "X"):
            live.add(pid)
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return [p for p in found if p in live]


def _reap() -> list[tuple[int, int]]:
    done = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return done
        if pid == 0:
            return done
        done.append((pid, status))


def kill_tree(group: int) -> None:
    """Kill every process below this one: the worker's process group first (threads die
    with their process), then, on Linux, whatever left the group (a new session, a
    daemon) and was adopted here."""
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
    for _ in range(100):
        victims = _descendants(os.getpid())
        if not victims:
            break
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _reap()
        time.sleep(0.002)
    _reap()


def reaper(chan_w: socket.socket, out_w: int, ctl: socket.socket) -> None:
    """Start the worker; report how it ended; kill everything when the judge lets go."""
    os.setsid()
    _set_subreaper()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    pid = os.fork()
    if pid == 0:
        ctl.close()
        os.close(wake_r)
        os.close(wake_w)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        worker(chan_w, out_w)
    chan_w.close()
    os.close(out_w)
    reported = False
    while True:
        try:
            ready, _, _ = select.select([ctl, wake_r], [], [], 1.0)
        except InterruptedError:
            ready = []
        if wake_r in ready:
            os.read(wake_r, 512)
        for child, status in _reap():
            if child == pid and not reported:
                reported = True
                code = os.waitstatus_to_exitcode(status)
                try:
                    ctl.sendall(struct.pack(">i", code))
                except OSError:
                    pass
        if ctl in ready:
            try:
                data = ctl.recv(16)
            except OSError:
                data = b""
            if not data:  # the judge is done with us, or gone
                kill_tree(pid)
                os._exit(0)


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


def template(fd: int) -> None:
    """Import NumPy once, then fork a reaper (and through it a worker) per request."""
    sock = socket.socket(fileno=fd)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # reapers are reaped by the kernel
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        # Everything a reaper and a worker import, imported once here: each fork starts warm.
        import ctypes, linecache, resource, tokenize, tracemalloc, traceback, types, warnings  # noqa: F401,E401

        _np()
        _set_subreaper_function()
    except BaseException as exc:  # tell the judge why grading cannot start
        sock.sendall(b"E" + f"NumPy cannot be imported: {type(exc).__name__}: {exc}".encode())
        os._exit(1)
    while True:
        try:
            request = sock.recv(1)
        except OSError:
            request = b""
        if not request:
            os._exit(0)
        chan_j, chan_w = socket.socketpair()
        ctl_j, ctl_r = socket.socketpair()
        out_r, out_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            sock.close()
            chan_j.close()
            ctl_j.close()
            os.close(out_r)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            try:
                reaper(chan_w, out_w, ctl_r)
            finally:
                os._exit(71)
        chan_w.close()
        ctl_r.close()
        os.close(out_w)
        socket.send_fds(sock, [b"P" + struct.pack(">i", pid)], [chan_j.fileno(), out_r, ctl_j.fileno()])
        chan_j.close()
        ctl_j.close()
        os.close(out_r)


if __name__ == "__main__":
    if sys.argv[1:2] == ["template"]:
        template(int(sys.argv[2]))
