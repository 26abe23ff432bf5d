"""The wire between the judge and the attempt's process: what each side sends the other.

Requests (judge to worker) are pickled: the judge trusts itself; an array whose layout
pickle would not keep (a view, a read-only array) travels as its bytes and layout and is
rebuilt as it was. Replies (worker to judge) use `encode` / `decode`: JSON plus raw array
bytes of whitelisted dtypes, so the judge never unpickles anything the attempt produced.
`digest` fingerprints a value the same way on both sides.

Only the standard library and NumPy may be imported here: the attempt's process uses it.
"""
from __future__ import annotations

import io
import json
import pickle
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
            asarray=numpy.asarray, Generator=numpy.random.Generator, copyto=numpy.copyto,
            may_share_memory=numpy.may_share_memory, shares_memory=numpy.shares_memory,
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
    """Rebuilds only what the judge's requests hold: plain data, NumPy's arrays and dtypes, and
    this module's laid-out arrays, whatever the attempt has done to the import system."""

    def find_class(self, module, name):
        if module == __name__ and name in ("_rebuild_laid",):
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
