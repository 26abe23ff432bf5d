"""The one format of every message between the judge and the attempt's process, both ways.

A message is an 8-byte length, a 4-byte header length, a JSON header, then raw bytes: the
bytes of the arrays and bytes objects the header names, in order. Nothing in a message is
code: decoding builds plain data, arrays of whitelisted dtypes (bool, integers, floats,
complex), NumPy scalars and Generators, so the judge never runs anything the attempt sent.

The judge's requests carry their arrays in shared memory (graders.engine.arena) when it
gives `encode` an arena: the header then says where each array lies and how (strides,
read-only), and the attempt's process views it there, so that the judge reads what a call
left in its arguments from outside the attempt's interpreter. Without an arena, an array
travels in the message, with its layout. An attempt's results always travel in the
message, as plain C-ordered bytes.

`digest` fingerprints a value; `visible` and `kind_of` put what the attempt named into
messages. What the codec uses is bound here, before any attempt runs: an attempt that
patches json.dumps or NumPy's functions changes its own results, never how they are carried.

Only the standard library and NumPy may be imported here: the attempt's process uses it.
"""
from __future__ import annotations

import json
import operator
import struct
import sys

from graders.engine import grammar

MAX_MESSAGE = 1 << 31            # bytes in one message, either way
MAX_DEPTH = 40                   # nesting of lists, tuples and dicts
ARRAY_KINDS = "biufc"            # bool, integers, floats, complex: nothing else is decoded
GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")


class Opaque:
    """A value the codec does not carry (an object, a function, a tensor): its type and repr,
    and `note`, why it is not carried when that is not plain from its type."""

    def __init__(self, type_name: str, text: str, note: str = ""):
        self.type_name, self.text, self.note = type_name, text, note

    def __repr__(self) -> str:
        return f"<{self.type_name}: {self.note}>" if self.note else f"<{self.type_name}>"


class Kept:
    """In a request: the object an earlier call returned (`call` its id), still held by the
    attempt's process, passed back by reference (`path` into it: tuple indices, dict keys)."""

    def __init__(self, call: int, path: tuple = ()):
        self.call, self.path = call, tuple(path)


# Every character that can move a terminal's cursor, start a line or reorder text: C0, DEL, C1,
# and Unicode's direction marks and line separators.
_CONTROL_CLASS = "\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_PATTERNS: dict = {}
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def control_characters(kept: str = ""):
    """The pattern of every control character but those in `kept` (a terminal's output keeps
    its newlines and tabs, say)."""
    pattern = _PATTERNS.get(kept)
    if pattern is None:
        import re

        keep = f"(?![{re.escape(kept)}])" if kept else ""
        pattern = _PATTERNS[kept] = re.compile(f"{keep}[{_CONTROL_CLASS}]")
    return pattern


def escaped(match) -> str:
    """The escape that shows a control character matched by `control_characters`: \\x1b, \\n."""
    c = match.group()
    return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def visible(text: str) -> str:
    r"""`text` with every control character shown as its escape (`\x1b`, `\n`): text the
    attempt chose (a type's name, a repr) that a message quotes can then neither move the
    cursor nor start a line of its own."""
    return control_characters().sub(escaped, text)


def kind_of(value) -> str:
    """The attempt's type, as it named it, with its article: "a list", "an OrderedDict"."""
    if isinstance(value, Opaque):
        name = value.type_name
    else:
        name = _ARRAY_NAMES.get(id(value), (None, None))
        name = name[1] if name[0] is not None and name[0]() is value else type(value).__name__
    return grammar.a(name)


class WireError(ValueError):
    """A message that does not decode: damaged, or not made by encode()."""


_dumps, _loads, _pack, _unpack = json.dumps, json.loads, struct.pack, struct.unpack
_json_text = json.JSONEncoder(separators=(",", ":")).encode
_index = operator.index
_NUMPY = None


def numpy_names():
    """NumPy's names the codec needs, taken once (the attempt's process takes them before it
    loads an attempt)."""
    global _NUMPY
    if _NUMPY is None:
        import types

        import numpy

        _NUMPY = types.SimpleNamespace(
            ndarray=numpy.ndarray, generic=numpy.generic, dtype=numpy.dtype, empty=numpy.empty,
            frombuffer=numpy.frombuffer, ascontiguousarray=numpy.ascontiguousarray, uint8=numpy.uint8,
            asarray=numpy.asarray, Generator=numpy.random.Generator, copyto=numpy.copyto,
            may_share_memory=numpy.may_share_memory, shares_memory=numpy.shares_memory,
            integer=numpy.integer, floating=numpy.floating, bool_=numpy.bool_,
            bit_generators={name: getattr(numpy.random, name) for name in GENERATORS})
        _EXACT_SCALARS.update(t for t in numpy.sctypeDict.values() if isinstance(t, type) and t.__module__ == "numpy")
    return _NUMPY


def type_name(value) -> str:
    """The name of the value's type as the attempt's code would write it (`deque`, `Cache`)."""
    try:
        name, module = type(value).__qualname__, type(value).__module__
        if name == module:  # array.array, datetime.datetime: the bare name reads as something else
            name = f"{module}.{name}"
    except BaseException:
        name = ""
    return visible(name if isinstance(name, str) and name else "object")[:100]


def safe_repr(value, limit: int = 200) -> str:
    try:
        text = repr(value)
        text = text if isinstance(text, str) else "?"
    except BaseException:  # a __repr__ that raises is the attempt's business
        text = f"<{type_name(value)}>"
    text = visible(text[:limit * 2])
    return text if len(text) <= limit else text[:limit] + "..."


# ----------------------------------------------------------------------------- layouts

def span(a) -> tuple[int, int]:
    """(bytes below the first element that the view reaches, bytes the view spans in all)."""
    below = sum(-s * (n - 1) for s, n in zip(a.strides, a.shape) if s < 0)
    above = sum(s * (n - 1) for s, n in zip(a.strides, a.shape) if s > 0)
    return below, below + above + a.itemsize


def _view_like(np, shape, dtype, strides, offset: int, size: int):
    base = np.empty(int(size), dtype=np.uint8)
    return np.ndarray(shape, dtype=dtype, buffer=base, offset=int(offset), strides=tuple(strides))


def copy_with_layout(a):
    """A copy of array `a` laid out as `a` is in memory (order, strides, read-only flag)."""
    np = numpy_names()
    if a.flags.c_contiguous or a.size <= 1:
        b = a.copy()
    else:
        below, size = span(a)
        b = _view_like(np, a.shape, a.dtype, a.strides, below, size)
        b[...] = a
    if not a.flags.writeable:
        b.setflags(write=False)
    return b


# ----------------------------------------------------------------------------- encoding

def encode(value, arena=None, placed: dict | None = None) -> bytes:
    """One message. `arena` (the judge's, for a request): where its arrays are placed;
    `placed`, when given, gets where each (by id) went, and the judge's view of it there."""
    blobs: list[bytes] = []
    header = _json_text(_Encoder(blobs, arena, placed).enc(value, 0)).encode()
    body = b"".join(blobs)
    return _pack(">QI", 4 + len(header) + len(body), len(header)) + header + body


class _Encoder:
    def __init__(self, blobs: list, arena, placed: dict | None):
        self.blobs, self.arena = blobs, arena
        self.placed = {} if placed is None else placed  # one array passed twice is placed once: one object there

    def enc(self, v, depth: int):
        kind = type(v)
        if v is None or kind is bool or kind is str or kind is int or kind is float:
            return v
        if depth > MAX_DEPTH:
            return {"$": "opaque", "type": type_name(v), "repr": "nested too deeply"}
        if kind is list:
            return [self.enc(x, depth + 1) for x in v]
        if kind is tuple:
            return {"$": "tuple", "v": [self.enc(x, depth + 1) for x in v]}
        if kind is dict:
            if all(type(k) is str and k != "$" for k in v):  # a JSON object as it is (a reply, say)
                return {k: self.enc(x, depth + 1) for k, x in v.items()}
            return {"$": "dict", "k": [self.enc(k, depth + 1) for k in v], "v": [self.enc(x, depth + 1) for x in v.values()]}
        if kind is complex:
            return {"$": "complex", "re": v.real, "im": v.imag}
        if kind is bytes:
            self.blobs.append(v)
            return {"$": "bytes", "n": len(v)}
        if kind is slice:
            return {"$": "slice", "v": [self.enc(x, depth + 1) for x in (v.start, v.stop, v.step)]}
        if kind is Kept:
            return {"$": "kept", "call": v.call, "path": [self.enc(x, depth + 1) for x in v.path]}
        np = numpy_names() if "numpy" in sys.modules or _NUMPY is not None else None
        if np is not None:
            if issubclass(kind, np.ndarray):
                return self.array(np, v)
            if issubclass(kind, np.generic) and v.dtype.kind in ARRAY_KINDS:
                return self.scalar(np, v)
            if kind is np.Generator and type(v.bit_generator).__name__ in GENERATORS:
                return {"$": "rng", "bg": type(v.bit_generator).__name__,
                        "state": self.enc(v.bit_generator.state, depth + 1)}
            if kind is np.dtype:
                return {"$": "dtype", "v": v.str} if v.kind in ARRAY_KINDS and not v.fields else \
                    {"$": "opaque", "type": "dtype", "repr": safe_repr(v)}
        return self.subclass(v, depth)

    def scalar(self, np, v) -> dict:
        if type(v) not in _EXACT_SCALARS and not _reads_alike(np, v):
            return {"$": "opaque", "type": type_name(v), "repr": safe_repr(v), "note": _READS_APART}
        data = np.asarray(v).tobytes()
        self.blobs.append(data)
        return {"$": "scalar", "dtype": v.dtype.str, "n": len(data)}

    def subclass(self, v, depth: int):
        """A value of a subclass of a type the codec carries, carried as that type (read through
        the base type's own methods, whatever the subclass overrides) with its type's name."""
        name, kind = type_name(v), type(v)
        if issubclass(kind, str):
            return str.__str__(v)
        if issubclass(kind, int):
            if not _int_reads_alike(v):
                return {"$": "opaque", "type": name, "repr": safe_repr(v), "note": _READS_APART}
            return int.__int__(v)
        if issubclass(kind, float):
            return float.__float__(v)
        if issubclass(kind, tuple):
            return {"$": "tuple", "type": name, "v": [self.enc(x, depth + 1) for x in tuple.__iter__(v)]}
        if issubclass(kind, list):
            return {"$": "list", "type": name, "v": [self.enc(x, depth + 1) for x in list.__iter__(v)]}
        if issubclass(kind, dict):
            items = list(dict.items(v))
            return {"$": "dict", "type": name, "k": [self.enc(k, depth + 1) for k, _ in items],
                    "v": [self.enc(x, depth + 1) for _, x in items]}
        return {"$": "opaque", "type": name, "repr": safe_repr(v)}

    def array(self, np, a) -> dict:
        """An array's dtype, shape and bytes; placed in the arena when there is one (a request),
        else in the message: with its layout when it has one that a plain copy would lose (a
        request), as C-ordered bytes otherwise. A subclass (np.memmap, np.matrix) goes as the
        array it is, with its type's name."""
        name = None
        if type(a) is not np.ndarray:
            name, a = type_name(a), np.ndarray.view(a, np.ndarray)
        if a.dtype.kind not in ARRAY_KINDS or a.dtype.fields:
            return {"$": "opaque", "type": f"array of dtype {a.dtype}", "repr": safe_repr(a)}
        if self.arena is not None:
            placed = self.placed.get(id(a))
            if placed is None:
                placed = self.placed[id(a)] = self.arena.place(a)
            return placed[0]
        out = {"$": "array", "dtype": a.dtype.str, "shape": list(a.shape)}
        if name:
            out["type"] = name
        data = np.ascontiguousarray(a).tobytes()
        self.blobs.append(data)
        out["n"] = len(data)
        return out


_READS_APART = "a number whose value depends on how it is read (int(), float() and operator.index() disagree)"
_EXACT_SCALARS: set = set()  # NumPy's own scalar types, which read alike by construction


def _reads_alike(np, v) -> bool:
    """A NumPy scalar of a subclass reads the same however it is read."""
    try:
        base = np.asarray(v)[()]
        if isinstance(v, np.integer):
            return int(v) == _index(v) == int(base)
        if isinstance(v, (np.floating, np.bool_)):
            return float(v) == float(base) or (float(v) != float(v) and float(base) != float(base))
        return True
    except BaseException:
        return False


def _int_reads_alike(v) -> bool:
    try:
        return int(v) == _index(v) == int.__int__(v)
    except BaseException:
        return False


# ----------------------------------------------------------------------------- decoding

# A tuple, list or dict of the attempt's own subclass (a namedtuple, an OrderedDict) is
# rebuilt here as an instance of a plain subclass of the same name, so that it is what it
# was for every check (any tuple, any dict) and messages name it as the attempt did; an
# array of a subclass (np.memmap) is a plain array whose type's name is kept aside.
_CARRIED: dict = {}
_ARRAY_NAMES: dict = {}


def _carried(base: type, name) -> type:
    if not isinstance(name, str) or not name:
        return base
    name = visible(name)[:100]
    cls = _CARRIED.get((base, name))
    if cls is None:
        if len(_CARRIED) >= 256:
            return base
        cls = _CARRIED[(base, name)] = type(name, (base,), {"__slots__": ()})
    return cls


def _named_array(a, name):
    if isinstance(name, str) and name:
        import weakref

        key = id(a)
        _ARRAY_NAMES[key] = (weakref.ref(a, lambda _, k=key: _ARRAY_NAMES.pop(k, None)), visible(name)[:100])
    return a


def decode(message: bytes, arenas=None, kept=None):
    """The value in one message (without its 8-byte length). Never runs code from the
    message. `arenas` (the attempt's process's graders.engine.arena.Mappings) hold the arrays
    a request placed in shared memory; `kept(call, path)` finds what a `Kept` names."""
    if len(message) < 4:
        raise WireError("message too short")
    (n,) = _unpack(">I", message[:4])
    try:
        header = _loads(message[4:4 + n].decode())
    except (UnicodeDecodeError, ValueError) as exc:
        raise WireError(f"bad header: {exc}") from None
    return _Decoder(memoryview(message)[4 + n:], arenas, kept).dec(header, 0)


class _Decoder:
    def __init__(self, blobs: memoryview, arenas, kept):
        self.blobs, self.cursor, self.arenas, self.kept = blobs, 0, arenas, kept
        self.views: dict[tuple, object] = {}  # one array placed once is one object here too

    def take(self, size) -> memoryview:
        if not isinstance(size, int) or size < 0 or self.cursor + size > len(self.blobs):
            raise WireError("array bytes missing")
        chunk = self.blobs[self.cursor:self.cursor + size]
        self.cursor += size
        return chunk

    def dec(self, v, depth: int):
        if depth > MAX_DEPTH + 2:
            raise WireError("nested too deeply")
        if isinstance(v, list):
            return [self.dec(x, depth + 1) for x in v]
        if not isinstance(v, dict):
            return v
        kind = v.get("$")
        if kind is None:
            return {k: self.dec(x, depth + 1) for k, x in v.items()}
        if kind in ("tuple", "list"):
            base = tuple if kind == "tuple" else list
            return _carried(base, v.get("type"))(self.dec(x, depth + 1) for x in v["v"])
        if kind == "dict":
            keys = [self.dec(k, depth + 1) for k in v["k"]]
            try:
                return _carried(dict, v.get("type"))(zip(keys, (self.dec(x, depth + 1) for x in v["v"])))
            except TypeError:
                raise WireError("unhashable dict key") from None
        if kind == "complex":
            return complex(v["re"], v["im"])
        if kind == "bytes":
            return bytes(self.take(v["n"]))
        if kind == "slice":
            return slice(*(self.dec(x, depth + 1) for x in v["v"]))
        if kind == "array":
            return _named_array(self.array(v), v.get("type"))
        if kind == "shm":
            if self.arenas is None:
                raise WireError("an array in shared memory, where none is mapped")
            key = (v.get("a"), v.get("off"), str(v.get("shape")), str(v.get("strides")), v.get("dtype"), v.get("ro"))
            if key not in self.views:
                self.views[key] = self.arenas.view(v)
            return self.views[key]
        if kind == "scalar":
            np = numpy_names()
            dtype = _dtype(np, v["dtype"])
            data = self.take(v["n"])
            if len(data) != dtype.itemsize:
                raise WireError("scalar of the wrong size")
            return np.frombuffer(data, dtype=dtype)[0]
        if kind == "dtype":
            return _dtype(numpy_names(), v["v"])
        if kind == "rng":
            np = numpy_names()
            if v["bg"] not in GENERATORS:
                raise WireError(f"unknown bit generator {v['bg']!r}")
            bit_generator = np.bit_generators[v["bg"]]()
            try:
                bit_generator.state = self.dec(v["state"], depth + 1)
            except (TypeError, ValueError, KeyError) as exc:
                raise WireError(f"bad generator state: {exc}") from None
            return np.Generator(bit_generator)
        if kind == "kept":
            if self.kept is None:
                raise WireError("a kept result, where none is kept")
            return self.kept(v["call"], tuple(self.dec(x, depth + 1) for x in v["path"]))
        if kind == "opaque":
            note = v.get("note")
            return Opaque(str(v.get("type")), str(v.get("repr")), visible(note)[:200] if isinstance(note, str) else "")
        raise WireError(f"unknown kind {kind!r}")

    def array(self, v):
        np = numpy_names()
        dtype = _dtype(np, v["dtype"])
        shape = tuple(v["shape"])
        if not all(isinstance(s, int) and s >= 0 for s in shape):
            raise WireError("bad shape")
        size = 1
        for s in shape:
            size *= s
        data = self.take(v["n"])
        if len(data) != size * dtype.itemsize:
            raise WireError("array bytes do not fit the shape")
        return np.frombuffer(data, dtype=dtype).reshape(shape).copy()


_DTYPES: dict = {}


def _dtype(np, text):
    dtype = _DTYPES.get(text) if isinstance(text, str) else None
    if dtype is not None:
        return dtype
    try:
        dtype = np.dtype(str(text))
    except TypeError:
        raise WireError(f"bad dtype {text!r}") from None
    if dtype.kind not in ARRAY_KINDS or dtype.fields or dtype.hasobject:
        raise WireError(f"dtype {dtype} is not carried")
    if isinstance(text, str) and len(_DTYPES) < 64:
        _DTYPES[text] = dtype
    return dtype


def dtype_of(text):
    """The NumPy dtype a header names (checked against the carried kinds)."""
    return _dtype(numpy_names(), text)


# ----------------------------------------------------------------------------- fingerprints

def digest(value) -> str:
    """A fingerprint of a value's contents (arrays by dtype, shape and bytes): the judge takes
    it of each argument before a call and after, from the shared memory the call saw."""
    import hashlib  # here: `kata` imports this module and never fingerprints anything

    h = hashlib.sha1()  # a fingerprint, not a secret: the fastest hash here (SHA instructions)
    _feed(h, value)
    return h.hexdigest()


_SCALARS = {int, float, bool, str, complex, type(None)}


def _feed(h, v) -> None:
    kind = type(v)
    if kind in _SCALARS:
        h.update(f"{kind.__name__}:{v!r}".encode())
        return
    np = _NUMPY if _NUMPY is not None else numpy_names() if "numpy" in sys.modules else None
    if np is not None and issubclass(kind, np.ndarray):
        v = v if kind is np.ndarray else np.ndarray.view(v, np.ndarray)
        h.update(f"a{v.dtype.str}{v.shape}".encode())
        h.update(np.ascontiguousarray(v) if v.dtype.kind in ARRAY_KINDS else safe_repr(v, 10**6).encode())
    elif issubclass(kind, (list, tuple)):
        h.update(f"{'l' if issubclass(kind, list) else 't'}{len(v)}(".encode())
        for x in (list.__iter__(v) if issubclass(kind, list) else tuple.__iter__(v)):
            _feed(h, x)
        h.update(b")")
    elif issubclass(kind, dict):
        h.update(f"d{len(v)}(".encode())
        for k, x in dict.items(v):
            h.update(safe_repr(k, 10**4).encode())
            _feed(h, x)
        h.update(b")")
    elif np is not None and kind is np.Generator:
        h.update(b"rng")  # its state is meant to move: sent back with every call instead
    else:
        h.update(f"{type_name(v)}:{safe_repr(v, 10**6)}".encode())
