"""Requests from the judge to the attempt's process: pickled, and unpickled there from a table.

The judge trusts itself, so its requests are pickled; an array whose layout pickle would
not keep (a view, a read-only array) travels as its bytes and layout and is rebuilt as it
was. The attempt's process unpickles them through the names `request_names()` found before
any attempt ran, never through sys.modules, which the attempt may change and which no
longer holds the engine's modules there (graders.engine.confine).

Only the standard library and NumPy may be imported here: the attempt's process uses it.
"""
from __future__ import annotations

import io
import pickle
import socket
import sys

from graders.engine.wire import GENERATORS, MAX_DEPTH, _np, _pack, _span, _unpack, _view_like, recv_exact

_BytesIO = io.BytesIO


def encode_request(request: dict) -> bytes:
    if "args" in request:  # only a call's arguments hold arrays
        request = dict(request, args=_laid_out(request["args"]), kwargs=_laid_out(request["kwargs"]))
    data = pickle.dumps(request, protocol=5)
    return _pack(">Q", len(data)) + data


def _laid_out(v, depth: int = 0):
    """`v` with every array whose layout pickle would not keep (a view, a read-only array)
    wrapped so that it is rebuilt laid out as it is; a tuple, list or dict of a subclass (one
    the attempt returned, fed back) goes as the plain container."""
    np = sys.modules.get("numpy")
    if depth > MAX_DEPTH:
        return v
    if np is not None and type(v) is np.ndarray:
        plain = v.flags.writeable and (v.flags.c_contiguous or v.flags.f_contiguous)
        return v if plain else _Laid(v)
    if isinstance(v, list):
        return [_laid_out(x, depth + 1) for x in v]
    if isinstance(v, tuple):
        return tuple(_laid_out(x, depth + 1) for x in v)
    if isinstance(v, dict):
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
    """Rebuilds only what the judge's requests hold (plain data, NumPy's arrays, dtypes,
    scalars and Generators, this module's laid-out arrays) from the names request_names()
    found before any attempt ran: nothing is imported or looked up in sys.modules, which the
    attempt may have changed, and which no longer holds this module."""

    def find_class(self, module, name):
        found = request_names().get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"a request may not name {module}.{name}")
        return found


_REQUEST_NAMES: dict = {}


def request_names() -> dict:
    """(module, name) -> the object, for every class and function that a pickled request
    names, found once (the template calls this before it forks any worker) by pickling
    requests that hold every kind of value the judge sends."""
    if not _REQUEST_NAMES:
        import numpy as np

        a = np.ones((2, 3), dtype=np.float32)
        readonly = np.ones(3, dtype=bool)
        readonly.setflags(write=False)
        sample = [a, a.T, a[:, ::2], readonly, np.dtype("f8"), np.float64(1.0), np.int64(1), complex(1, 2),
                  slice(1, 2), *[np.random.Generator(getattr(np.random, g)()) for g in GENERATORS]]

        class Recording(pickle.Unpickler):
            def find_class(self, module, name):
                _REQUEST_NAMES[(module, name)] = found = super().find_class(module, name)
                return found

        Recording(_BytesIO(encode_request({"op": "call", "args": sample, "kwargs": {}})[8:])).load()
    return _REQUEST_NAMES


def recv_request(sock: socket.socket):
    (n,) = _unpack(">Q", recv_exact(sock, 8))
    return _RequestUnpickler(_BytesIO(recv_exact(sock, n))).load()
