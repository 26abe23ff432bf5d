"""Replaying a call of the attempt here, with a known bug (or the reference) in its place.

`Replayer(module).agrees(call)` says whether `module` gives what the attempt gave on a
recorded call: the same values within the contract's tolerance, the same kind of
exception, the same writes into the inputs. `agrees_in_order(calls)` replays a whole
sequence on one fresh module, for a bug that keeps state: calls made on an earlier call's
argument objects reuse them, results the caller wrote into are written into here too, and
answers fetched again after later calls must be the same again.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from graders.engine import keeping
from graders.engine.recorder import Call, Raised, clone, value_differs
from graders.engine.vocabulary import tolerance


def _dtype_of(call: Call) -> np.dtype:
    """The float dtype a call was made in (its first float array), which sets the tolerance."""
    if call.dtype is None:
        call.dtype = next((a.dtype for a in (*call.args, *call.kwargs.values())
                           if isinstance(a, np.ndarray) and a.dtype.kind == "f"), np.dtype(np.float64))
    return call.dtype


def _same(a: Any, b: Any, dtype: np.dtype) -> bool:
    """`a` (what the attempt gave, decoded) and `b` (what a bug gave here) are the same answer."""
    if isinstance(a, Raised) or isinstance(b, BaseException):
        return isinstance(a, Raised) and isinstance(b, BaseException) and a.same_as(b)
    if a is None or b is None or isinstance(a, (str, bytes)) or isinstance(b, (str, bytes)):
        return type(a) is type(b) and a == b
    if _whole(a) and _whole(b):
        return int(a) == int(b)  # exactly, however large (past 2**64 NumPy has no integer type)
    if isinstance(a, np.random.Generator) or isinstance(b, np.random.Generator):
        return isinstance(a, np.random.Generator) and isinstance(b, np.random.Generator)
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k], dtype) for k in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y, dtype) for x, y in zip(a, b))
    if isinstance(a, (dict, tuple, list)) or isinstance(b, (dict, tuple, list)):
        return False
    try:
        x, y = np.asarray(a), np.asarray(b)
    except Exception:
        return False
    if x.dtype == object or y.dtype == object or x.shape != y.shape:
        return False
    if (x.dtype.kind in "iu") != (y.dtype.kind in "iu"):
        return False  # an integer answer (a count, a sampled index) is not the same as a float one
    if x.dtype.kind in "iu":
        return bool(np.array_equal(x, y))  # counts are exact
    if x.dtype == np.bool_ or y.dtype == np.bool_:
        # a mask's dtype is graded: a float or int 0/1 array is not the same answer as a bool one
        return x.dtype == y.dtype and bool(np.array_equal(x, y))
    if x.dtype == y.dtype and x.tobytes() == y.tobytes():
        return True  # the same bits: the common case when a bug is the attempt
    rtol, atol = tolerance(dtype, extreme=True)
    try:
        return bool(np.allclose(x.astype(np.float64), y.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True))
    except (TypeError, ValueError):
        return False


def _whole(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


# Replays of modules that keep no state, by (module, function, fingerprints of the arguments):
# checks draw the same seeded inputs in every grading, so a process that grades again (kata
# watch, the project's tests) mostly replays calls it has replayed before.
_REPLAYS: dict[tuple, tuple[Any, Any]] = {}
REPLAYS_KEPT = 50_000


def _layout(values) -> list:
    """How each array is laid out (a fingerprint tells values, not strides or a read-only flag)."""
    out = []
    for v in values:
        if isinstance(v, np.ndarray):
            out.append((v.strides, v.flags.writeable))
        elif isinstance(v, (list, tuple)):
            out.append(tuple(_layout(v)))
        elif isinstance(v, dict):
            out.append(tuple(_layout(v.values())))
    return out


class Replayer:
    """Calls a known bug (or the reference) here, the way the attempt was called. `cache`:
    the module keeps no state between calls, so its answers may be remembered."""

    def __init__(self, module, cache: bool = False):
        self.module, self.cache = module, cache

    def outcome(self, call: Call) -> tuple[Any, Any]:
        """(what it returned or raised, the arguments as it left them if it wrote into them, else None)."""
        if not self.cache or len(call.digests) != len(call.args) + len(call.kwargs):  # a Generator moves
            return self._replay(call)
        key = (id(self.module), call.function, tuple(sorted(call.digests.items(), key=repr)),
               tuple(_layout((*call.args, *call.kwargs.values()))))
        if key not in _REPLAYS:
            if len(_REPLAYS) >= REPLAYS_KEPT:
                _REPLAYS.clear()
            _REPLAYS[key] = self._replay(call)
        return _REPLAYS[key]

    def _replay(self, call: Call) -> tuple[Any, Any]:
        return self._call(call, *clone((call.args, call.kwargs)))

    def _call(self, call: Call, args: tuple, kwargs: dict, sent: tuple | None = None) -> tuple[Any, Any]:
        """`sent`: what the caller believes it passed (else the arguments as they are now), which
        whether the call wrote into them is judged against."""
        fn = getattr(self.module, call.function, None)
        if fn is None:
            return NotImplementedError(), None
        before, held = sent if sent is not None else clone((args, kwargs)), keeping.entries(args, kwargs)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                out = fn(*args, **kwargs)
            except Exception as exc:
                out = exc
        wrote = any(value_differs(old, new) for old, new in zip((*before[0], *before[1].values()),
                                                           (*args, *kwargs.values())))
        wrote = wrote or bool(held and keeping.replaced(args, kwargs, held))  # an entry replaced, equal or not
        return out, ((args, kwargs) if wrote else None)

    def agrees(self, call: Call) -> bool:
        """The same answer as the attempt gave on `call`, alone (no earlier calls replayed)."""
        if call.later_seen and not _same(call.outcome, call.later, _dtype_of(call)):
            return False  # the attempt's answer changed after later calls; a fresh replay's cannot
        out, wrote = self.outcome(call)
        return self._matches(call, out, wrote)

    @staticmethod
    def _matches(call: Call, out, written) -> bool:
        # writing into the inputs is part of the behaviour: an in-place bug, whose return value is
        # right, must not explain every failure whose values are right, nor miss the one it causes;
        # and what it wrote must be what the attempt wrote
        if (written is not None) != bool(call.mutated):
            return False
        if written is not None and call.after is not None and not _same(call.after, written, _dtype_of(call)):
            return False
        return _same(call.outcome, out, _dtype_of(call))

    def agrees_in_order(self, history: list[Call], judged=lambda call: True) -> bool:
        """The same answers as the attempt on every call that `judged` accepts, every call replayed
        in order on this (fresh) module: a call made on an earlier call's argument objects is
        replayed on the same objects, a result the caller wrote into is written into here too,
        and the answers fetched again after later calls are the same."""
        returned, fetched, poked, objects = {}, {}, {}, {}
        for c in history:
            if c.later_seen:
                fetched.setdefault(c.later_after, []).append(c)
            if c.poked is not None:
                poked.setdefault(c.poked[1], []).append(c)
        for c in history:
            sent = None
            if c.args_from in objects:
                args, kwargs = objects[c.args_from]
                for key in c.assigned:
                    _write_as_caller(args[key] if isinstance(key, int) else kwargs[key],
                                     c.args[key] if isinstance(key, int) else c.kwargs[key])
                sent = (c.args, c.kwargs)  # what the caller passed, whatever an earlier call made of the objects
            else:
                args, kwargs = clone((c.args, c.kwargs))
            if c.passed:  # a result passed back by reference: what the replayed call returned, itself
                args, kwargs = _passed_back(c, args, kwargs, returned)
            objects[c.id] = (args, kwargs)
            out, wrote = self._call(c, args, kwargs, sent)
            if judged(c) and not self._matches(c, out, wrote):
                return False
            returned[c.id] = out
            for earlier in fetched.get(c.id, ()):
                if earlier.id in returned and judged(earlier) and \
                        not _same(earlier.later, returned[earlier.id], _dtype_of(earlier)):
                    return False
            for earlier in poked.get(c.id, ()):
                _poke(returned.get(earlier.id), earlier.poked[0])
        return True


def _passed_back(c: Call, args: tuple, kwargs: dict, returned: dict) -> tuple[tuple, dict]:
    """`c`'s arguments with each result it was passed back by reference taken from what the
    replayed module returned for that call (when it returned one)."""
    args, kwargs = list(args), dict(kwargs)
    for key, (cid, path) in c.passed.items():
        value = returned.get(cid)
        try:
            for step in path:
                value = value[step]
        except (TypeError, KeyError, IndexError):
            continue
        if value is None or isinstance(value, BaseException):
            continue
        if isinstance(key, int):
            args[key] = value
        else:
            kwargs[key] = value
    return tuple(args), kwargs


def _write_as_caller(target: np.ndarray, values: np.ndarray) -> None:
    """Write `values` into the memory of `target` as the caller wrote them into its own array: an
    object the earlier call reshaped in place sees the same numbers in its own shape."""
    if target.shape != values.shape and target.size == values.size:
        values = values.reshape(target.shape)
    if target.flags.writeable:
        np.copyto(target, values)
        return
    target.setflags(write=True)  # the caller writes into the buffer under a read-only array it passed
    try:
        np.copyto(target, values)
    finally:
        target.setflags(write=False)


def _poke(value: Any, fill: float) -> None:
    """Write `fill` into every writeable array of `value`, as the caller did to the attempt's."""
    if isinstance(value, np.ndarray):
        if value.flags.writeable:
            value[...] = fill
    elif isinstance(value, (tuple, list)):
        for v in value:
            _poke(v, fill)
    elif isinstance(value, dict):
        for v in value.values():
            _poke(v, fill)


