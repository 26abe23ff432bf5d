"""What the attempt's process keeps between calls, for the checks about state and aliasing.

A call made with `keep_args` leaves its argument objects here; a later call may be made
on those same objects (`args_from`), after new contents are written into them
(`assign`): a cache keyed by `id()` or by shape shows. A result kept for `fetch` may be
changed in place (`poke`), as a caller may change what it was given: a function that
hands out its own buffer shows. And after every call, the arrays of its result are
compared with the arrays of its arguments and of every result still kept: a result that
shares memory with either is reported (`shares`), by where it sits in each; so is one that
shares memory with an earlier result whose memory the attempt still holds (`Recent`: a
buffer it hands out again), whether or not that result was kept. And an entry of
a list or dict argument that the call replaced, even by an equal value, is reported
(`replaced`): the caller's containers are not the function's to change.

Only the standard library and NumPy may be imported here: the attempt's process uses it.
"""
from __future__ import annotations

from graders.engine.wire import numpy_names as _np

MAX_ARRAYS = 64         # arrays looked at in one result, one argument list, the kept results
SHARE_WORK = 100_000    # np.shares_memory's budget: a layout too hard to decide counts as not shared


def arrays(value, path: tuple = (), depth: int = 0):
    """(path, array) for every ndarray in `value` (tuples, lists and dict values walked)."""
    np = _np()
    if isinstance(value, np.ndarray):
        yield path, value
    elif depth < 4 and isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            yield from arrays(v, path + (i,), depth + 1)
    elif depth < 4 and isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, (str, int)):
                yield from arrays(v, path + (k,), depth + 1)


def _first(pairs, n: int = MAX_ARRAYS) -> list:
    out = []
    for pair in pairs:
        if len(out) >= n:
            break
        out.append(pair)
    return out


def _share(a, b) -> bool:
    np = _np()
    if a.size == 0 or b.size == 0 or not np.may_share_memory(a, b):
        return False
    try:
        return bool(np.shares_memory(a, b, max_work=SHARE_WORK))
    except Exception:  # too hard to decide: say nothing rather than guess
        return False


def shares(result, args: tuple, kwargs: dict, kept: dict, recent: "Recent | None" = None) -> list:
    """[(path in the result, ("argument", key, path) or ("result", call id, path))] for every
    result array that shares memory with an argument's array, a kept result's, or the memory
    of an earlier result that is still held (`recent`)."""
    out = []
    mine = _first(arrays(result))
    if not mine:
        return out
    theirs = [(("argument", key, p), a) for key, v in [*enumerate(args), *kwargs.items()]
              for p, a in _first(arrays(v))]
    theirs += [(("result", cid, p), a) for cid, v in list(kept.items())[-MAX_ARRAYS:]
               for p, a in _first(arrays(v), 8)]
    if recent is not None:
        theirs += recent.alive()
    for path, a in mine:
        for where, b in theirs:
            if _share(a, b):
                out.append([list(path), [where[0], where[1], list(where[2])]])
                break
    return out


def root(a):
    """The array that owns the memory `a` views (itself, when it owns it)."""
    np = _np()
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


class Recent:
    """The memory of the last few results, held weakly: an entry stays only while something else
    (the attempt: a buffer, a cache) keeps that memory alive after the call returned it."""

    SIZE = 16

    def __init__(self):
        import weakref

        self.ref, self.entries = weakref.ref, []     # (call id, path, weak reference to the owner)

    def add(self, call: int, result) -> None:
        for path, a in _first(arrays(result), 8):
            try:
                self.entries.append((call, path, self.ref(root(a))))
            except TypeError:  # an owner that takes no weak reference: nothing to watch
                continue
        del self.entries[:-self.SIZE]

    def alive(self) -> list:
        out = []
        for call, path, ref in self.entries:
            a = ref()
            if a is not None:
                out.append((("result", call, path), a))
        return out


def snapshot(args: tuple, kwargs: dict, passed: set) -> list:
    """(argument, path, array, its bytes) for every array of the arguments that is an object
    passed back by reference (its id in `passed`): what the judge cannot read after the call."""
    return [(key, p, a, a.tobytes()) for key, v in [*enumerate(args), *kwargs.items()]
            for p, a in _first(arrays(v)) if id(a) in passed]


def written(snap: list) -> list:
    """[argument, path] of each array in `snap` whose bytes the call changed."""
    return [[key, list(p)] for key, p, a, before in snap if a.tobytes() != before]


def fresh_views(value, depth: int = 0):
    """`value` with each of its arrays a new array object viewing the same memory (read-only
    stays read-only): what a caller passes when it makes new views of buffers it keeps."""
    np = _np()
    if isinstance(value, np.ndarray):
        return value.view()
    if depth < 3 and type(value) in (tuple, list):
        return type(value)(fresh_views(v, depth + 1) for v in value)
    if depth < 3 and type(value) is dict:
        return {k: fresh_views(v, depth + 1) for k, v in value.items()}
    return value


def arguments(request: dict, kept_args: dict):
    """The call's (args, kwargs): those sent, or the objects of an earlier call kept with
    `keep_args`, with new contents written into them first (`assign`: key -> array)."""
    source = request.get("args_from")
    if source is None:
        return request["args"], request["kwargs"]
    args, kwargs = kept_args[source]
    np = _np()
    for key, new in (request.get("assign") or {}).items():
        target = args[key] if isinstance(key, int) else kwargs[key]
        np.copyto(target, new)
    return args, kwargs


def poke(result, value: float) -> list:
    """Write `value` into every array of a kept result, in place, as a caller may; the paths
    of the arrays that could not be written (read-only)."""
    refused = []
    for path, a in _first(arrays(result)):
        try:
            a[...] = value
        except (ValueError, TypeError):
            refused.append(list(path))
    return refused


def layouts(args: tuple, kwargs: dict) -> dict:
    """For every argument, how each of its arrays is laid out (shape, strides, dtype): what a
    call can change in the caller's array objects without writing a byte (`x.shape = ...`)."""
    return {key: [(path, a.shape, a.strides, a.dtype.str) for path, a in _first(arrays(v))]
            for key, v in [*enumerate(args), *kwargs.items()]}


def relaid(args: tuple, kwargs: dict, before: dict) -> list:
    """The arguments whose arrays the call reshaped, restrided or retyped in place."""
    now = layouts(args, kwargs)
    return [key for key, seen in before.items() if now.get(key) != seen]


def entries(args: tuple, kwargs: dict) -> dict:
    """For every list or dict argument, the identity of each of its entries, by argument."""
    out = {}
    for key, v in [*enumerate(args), *kwargs.items()]:
        if isinstance(v, list):
            out[key] = (len(v), [id(x) for x in v])
        elif isinstance(v, dict):
            out[key] = (len(v), {k: id(x) for k, x in v.items()})
    return out


def replaced(args: tuple, kwargs: dict, before: dict) -> list:
    """[argument key, entry key] for each entry of a list or dict argument that is no longer the
    object it was (replaced, removed or added)."""
    out = []
    for key, (n, ids) in before.items():
        v = args[key] if isinstance(key, int) else kwargs.get(key)
        if isinstance(ids, list):
            now = [id(x) for x in v] if isinstance(v, list) else []
            out += [[key, i] for i in range(max(n, len(now))) if i >= len(now) or i >= n or ids[i] != now[i]]
        else:
            now = {k: id(x) for k, x in v.items()} if isinstance(v, dict) else {}
            out += [[key, k] for k in {*ids, *now} if ids.get(k) != now.get(k)]
    return out[:16]
