"""The wire between the judge and the attempt's process: what each side sends the other.

Replies (worker to judge) use `encode` / `decode`: JSON plus raw array bytes of
whitelisted dtypes, so the judge never unpickles anything the attempt produced. Requests
(judge to worker) are pickled (graders.engine.requests). `digest` fingerprints a value the
same way on both sides; `visible` and `kind_of` put what the attempt named into messages.

Only the standard library and NumPy may be imported here: the attempt's process uses it.
"""
from __future__ import annotations

import hashlib
import json
import socket
import struct
import sys

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


_CONTROL = None
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def visible(text: str) -> str:
    r"""`text` with every control character shown as its escape (`\x1b`, `\n`): text the
    attempt chose (a type's name, a repr) that a message quotes can then neither move the
    cursor nor start a line of its own."""
    global _CONTROL
    if _CONTROL is None:
        import re

        _CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
    return _CONTROL.sub(_escape, text)


def _escape(match) -> str:
    c = match.group()
    return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def kind_of(value) -> str:
    """The attempt's type, as it named it, with its article: "a list", "an OrderedDict"."""
    if isinstance(value, Opaque):
        name = value.type_name
    else:
        name = _ARRAY_NAMES.get(id(value), (None, None))
        name = name[1] if name[0] is not None and name[0]() is value else type(value).__name__
    return f"{'an' if _vowel_sound(name) else 'a'} {name}"


def _vowel_sound(word: str) -> bool:
    w = word.lower()
    if w.startswith(("uint", "uni", "use", "usu", "uti", "ufunc", "one")):
        return False
    return w[:1] in ("a", "e", "i", "o", "u") or w.startswith("nd")


class WireError(ValueError):
    """A message that does not decode: damaged, or not made by encode()."""


# What the codec uses is bound here, before any attempt runs: an attempt that patches
# json.dumps or NumPy's functions changes its own results, never how they are carried.
_dumps, _loads, _pack, _unpack = json.dumps, json.loads, struct.pack, struct.unpack
_json_text = json.JSONEncoder(separators=(",", ":")).encode
_sha1 = hashlib.sha1  # a fingerprint, not a secret: the fastest hash here (SHA instructions)
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
            asarray=numpy.asarray, Generator=numpy.random.Generator, copyto=numpy.copyto,
            may_share_memory=numpy.may_share_memory, shares_memory=numpy.shares_memory,
            bit_generators={name: getattr(numpy.random, name) for name in GENERATORS})
    return _NUMPY


def _type_name(value) -> str:
    """The name of the value's type as the attempt's code would write it (`deque`, `Cache`)."""
    try:
        name, module = type(value).__qualname__, type(value).__module__
        if name == module:  # array.array, datetime.datetime: the bare name reads as something else
            name = f"{module}.{name}"
    except BaseException:
        name = ""
    return visible(name if isinstance(name, str) and name else "object")[:100]


def _safe_repr(value, limit: int = 200) -> str:
    try:
        text = repr(value)
        text = text if isinstance(text, str) else "?"
    except BaseException:  # a __repr__ that raises is the attempt's business
        text = f"<{_type_name(value)}>"
    text = visible(text[:limit * 2])
    return text if len(text) <= limit else text[:limit] + "..."


def encode(value) -> bytes:
    """One message: 8-byte length, 4-byte header length, JSON header, then array bytes."""
    blobs: list[bytes] = []
    header = _json_text(_enc(value, blobs, 0)).encode()
    body = b"".join(blobs)
    return _pack(">QI", 4 + len(header) + len(body), len(header)) + header + body


def _enc(v, blobs: list, depth: int):
    kind = type(v)
    if v is None or kind is bool or kind is str or kind is int or kind is float:
        return v
    if depth > MAX_DEPTH:
        return {"$": "opaque", "type": _type_name(v), "repr": "nested too deeply"}
    if kind is list:
        return [_enc(x, blobs, depth + 1) for x in v]
    if kind is tuple:
        return {"$": "tuple", "v": [_enc(x, blobs, depth + 1) for x in v]}
    if kind is dict:
        if all(type(k) is str and k != "$" for k in v):  # a JSON object as it is (a reply, say)
            return {k: _enc(x, blobs, depth + 1) for k, x in v.items()}
        return {"$": "dict", "k": [_enc(k, blobs, depth + 1) for k in v],
                "v": [_enc(x, blobs, depth + 1) for x in v.values()]}
    if kind is complex:
        return {"$": "complex", "re": v.real, "im": v.imag}
    if kind is bytes:
        blobs.append(v)
        return {"$": "bytes", "n": len(v)}
    np = _np() if "numpy" in sys.modules or _NUMPY is not None else None
    if np is not None:
        if issubclass(kind, np.ndarray):
            return _enc_array(np, v, blobs)
        if issubclass(kind, np.generic) and v.dtype.kind in ARRAY_KINDS:
            data = np.asarray(v).tobytes()
            blobs.append(data)
            return {"$": "scalar", "dtype": v.dtype.str, "n": len(data)}
        if type(v) is np.Generator and type(v.bit_generator).__name__ in GENERATORS:
            return {"$": "rng", "bg": type(v.bit_generator).__name__,
                    "state": _enc(v.bit_generator.state, blobs, depth + 1)}
    return _enc_subclass(v, blobs, depth)


def _enc_subclass(v, blobs: list, depth: int):
    """A value of a subclass of a type the codec carries, carried as that type (read through
    the base type's own methods, whatever the subclass overrides) with its type's name."""
    name, kind = _type_name(v), type(v)
    if issubclass(kind, str):
        return str.__str__(v)
    if issubclass(kind, int):
        return int.__int__(v)
    if issubclass(kind, float):
        return float.__float__(v)
    if issubclass(kind, tuple):
        return {"$": "tuple", "type": name, "v": [_enc(x, blobs, depth + 1) for x in tuple.__iter__(v)]}
    if issubclass(kind, list):
        return {"$": "list", "type": name, "v": [_enc(x, blobs, depth + 1) for x in list.__iter__(v)]}
    if issubclass(kind, dict):
        items = list(dict.items(v))
        return {"$": "dict", "type": name, "k": [_enc(k, blobs, depth + 1) for k, _ in items],
                "v": [_enc(x, blobs, depth + 1) for _, x in items]}
    return {"$": "opaque", "type": name, "repr": _safe_repr(v)}


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
    """An array's dtype, shape and bytes (in C order: what it holds, not how it is laid out);
    a subclass (np.memmap, np.matrix) as the array it is, with its type's name."""
    name = None
    if type(a) is not np.ndarray:
        name, a = _type_name(a), np.ndarray.view(a, np.ndarray)
    if a.dtype.kind not in ARRAY_KINDS or a.dtype.fields:
        return {"$": "opaque", "type": f"array of dtype {a.dtype}", "repr": _safe_repr(a)}
    out = {"$": "array", "dtype": a.dtype.str, "shape": list(a.shape)}
    if name:
        out["type"] = name
    data = np.ascontiguousarray(a).tobytes()
    blobs.append(data)
    out["n"] = len(data)
    return out


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

    def take(size) -> memoryview:
        if not isinstance(size, int) or size < 0 or cursor[0] + size > len(blobs):
            raise WireError("array bytes missing")
        chunk = blobs[cursor[0]:cursor[0] + size]
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
    if kind is None:
        return {k: _dec(x, take, depth + 1) for k, x in v.items()}
    if kind in ("tuple", "list"):
        base = tuple if kind == "tuple" else list
        return _carried(base, v.get("type"))(_dec(x, take, depth + 1) for x in v["v"])
    if kind == "dict":
        keys = [_dec(k, take, depth + 1) for k in v["k"]]
        try:
            return _carried(dict, v.get("type"))(zip(keys, (_dec(x, take, depth + 1) for x in v["v"])))
        except TypeError:
            raise WireError("unhashable dict key") from None
    if kind == "complex":
        return complex(v["re"], v["im"])
    if kind == "bytes":
        return bytes(take(v["n"]))
    if kind == "array":
        return _named_array(_dec_array(v, take), v.get("type"))
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



def digest(value) -> str:
    """A fingerprint of a value's contents (arrays by dtype, shape and bytes), the same in
    both processes: the judge sends the fingerprints of a call's arguments, and the
    attempt's process sends back any argument whose fingerprint the call changed."""
    h = _sha1()
    _feed(h, value)
    return h.hexdigest()


_SCALARS = {int, float, bool, str, complex, type(None)}


def _feed(h, v) -> None:
    kind = type(v)
    if kind in _SCALARS:
        h.update(f"{kind.__name__}:{v!r}".encode())
        return
    np = _NUMPY if _NUMPY is not None else _np() if "numpy" in sys.modules else None
    if np is not None and issubclass(kind, np.ndarray):
        v = v if kind is np.ndarray else np.ndarray.view(v, np.ndarray)
        h.update(f"a{v.dtype.str}{v.shape}".encode())
        h.update(np.ascontiguousarray(v) if v.dtype.kind in ARRAY_KINDS else _safe_repr(v, 10**6).encode())
    elif issubclass(kind, (list, tuple)):
        h.update(f"{'l' if issubclass(kind, list) else 't'}{len(v)}(".encode())
        for x in (list.__iter__(v) if issubclass(kind, list) else tuple.__iter__(v)):
            _feed(h, x)
        h.update(b")")
    elif issubclass(kind, dict):
        h.update(f"d{len(v)}(".encode())
        for k, x in dict.items(v):
            h.update(_safe_repr(k, 10**4).encode())
            _feed(h, x)
        h.update(b")")
    elif np is not None and kind is np.Generator:
        h.update(b"rng")  # its state is meant to move: sent back with every call instead
    else:
        h.update(f"{_type_name(v)}:{_safe_repr(v, 10**6)}".encode())


def recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise EOFError("the other side closed the connection")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)
