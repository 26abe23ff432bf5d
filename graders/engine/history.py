"""History as a dimension of a failure: a call wrong after other calls and right alone.

The failing call is made again as the first call of a new process of the attempt. When it is
right there, what went wrong was left behind by the calls before it, and the history is
shrunk to the one earlier call that matters: a few candidates (the call whose argument
objects it reuses, the last call of its function with its shapes, the last and the first of
its function, the first with one shape in common, the first of its process, the one just
before it), each made in a new process of its own
right before the failing call, until the failing call goes wrong again. The explanation then
says what the two calls share (the same objects with new values, the same shapes, the same
bytes in another shape) and what the later one returns (the earlier one's answer, the
reference's answer to the earlier call's inputs), and the repro makes both calls, then the
same call on a fresh copy of the file, with the expected value.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

import numpy as np

from graders.engine import calls as make
from graders.engine.call_text import plain
from graders.engine.contrast import error_ratio
from graders.engine.failures import AttemptRaised, CheckFailed
from graders.engine.inputs import literal
from graders.engine.recorder import Call, Raised, clone
from graders.engine.repros import expected_lines, history_repro
from graders.engine.sandbox import AttemptGone
from graders.engine.wording import shape_text

CANDIDATES = 6      # earlier calls tried at most, each in a new process
ARRAY_ENTRIES = 64  # arrays written out in a history repro up to this many entries


@dataclass
class History:
    """A failing call that needs an earlier one: the two, what they share, what the later
    returns after the earlier, and a repro of both."""

    earlier: Call | None
    call: Call
    share: str          # the kind of thing shared: objects, shape, dtype, bytes, size, function, order
    text: str
    repro: str | None


def wrong(call: Call, ref) -> Any:
    """The reference's answer to `call` when the attempt's is wrong (it raised where the
    reference answers, or differs); None when it is right or cannot be told."""
    if not call.recorded or not call.kept:
        return None
    want = make.expected(ref, call.function, *clone((call.args, call.kwargs)))
    if want is make.REFUSED:
        return None
    if isinstance(call.outcome, Raised):
        return want
    return want if error_ratio(call.outcome, want, _dtype(call)) > 1 else None


def right_alone(call: Call, fresh, ref) -> bool:
    """`call`, made as the first call of the process `fresh`, gives the reference's answer."""
    want = make.expected(ref, call.function, *clone((call.args, call.kwargs)))
    out = _made(fresh, call)
    return not isinstance(out, BaseException) and error_ratio(out, want, _dtype(call)) <= 1


def shrink(call: Call, record: list[Call], candidate, ref) -> Call | None:
    """The one earlier call of `call`'s process after which `call` goes wrong again, made first
    in a new process; None when no one of a few candidates does it alone."""
    for earlier in candidates(call, record):
        try:
            fresh = candidate.fresh()
        except AttemptGone:
            return None
        try:
            first = _made(fresh, earlier, keep=True)
            if earlier.poked is not None and earlier.poked[1] < call.id and not isinstance(first, BaseException):
                fresh.poke(fresh.grading.calls[-1], earlier.poked[0])
            again = _made(fresh, call, after=fresh.grading.calls[-1] if call.args_from == earlier.id else None)
            want = make.expected(ref, call.function, *clone((call.args, call.kwargs)))
            if isinstance(again, BaseException) or error_ratio(again, want, _dtype(call)) > 1:
                return earlier
        except (AttemptGone, CheckFailed):
            continue
        finally:
            fresh.box.close()
    return None


def candidates(call: Call, record: list[Call]) -> list[Call]:
    """The earlier calls of `call`'s process most likely to matter, at most CANDIDATES."""
    before = [c for c in record if c.process == call.process and c.id < call.id and c.recorded]
    if not before:
        return []
    mine = [c for c in before if c.function == call.function]
    picks = [c for c in before if c.id == call.args_from]
    picks += [c for c in reversed(mine) if _shapes(c) == _shapes(call)][:1]
    picks += mine[-1:] + mine[:1]
    picks += [c for c in mine if set(_shapes(c)) & set(_shapes(call))][:1]   # the first with one shape in common
    picks += before[:1] + before[-1:]
    out = []
    for c in picks:
        if c not in out:
            out.append(c)
    return out[:CANDIDATES]


def _made(on, call: Call, keep: bool = False, after: Call | None = None):
    """`call` made again in the process `on` (on the argument objects of `after`, a call made
    there with them kept, when the original reused an earlier call's objects): what it returned,
    or the AttemptRaised."""
    fn = getattr(on, call.function)
    try:
        with on.options(keep=keep, keep_args=keep):
            if after is not None and call.assigned:
                return on.again(after, {k: (call.args[k] if isinstance(k, int) else call.kwargs[k])
                                        for k in call.assigned})
            return fn(*clone(call.args), **clone(call.kwargs))
    except AttemptRaised as exc:
        return exc


def _dtype(call: Call):
    return next((a.dtype for a in (*call.args, *call.kwargs.values()) if isinstance(a, np.ndarray)
                 and a.dtype.kind == "f"), np.float64)


def _arrays(call: Call) -> list[np.ndarray]:
    return [a for a in (*call.args, *call.kwargs.values()) if isinstance(a, np.ndarray)]


def _shapes(call: Call) -> list[tuple]:
    return [a.shape for a in _arrays(call)]


def shared(earlier: Call, call: Call, params: list[str] = ()) -> tuple[str, str]:
    """What the two calls share, (kind, words): the same objects, shapes, bytes, one argument's shape."""
    if call.args_from == earlier.id:
        return "objects", "the same argument objects, with new values written into them"
    mine, theirs = _arrays(call), _arrays(earlier)
    same_fn = call.function == earlier.function
    if same_fn and [a.shape for a in mine] == [a.shape for a in theirs]:
        if [a.dtype for a in mine] == [a.dtype for a in theirs]:
            return "shape", "the same shapes and dtypes (other values)"
        return "dtype", "the same shapes, in another dtype"
    for a in mine:
        for b in theirs:
            if a.shape != b.shape and a.dtype == b.dtype and a.size == b.size and a.tobytes() == b.tobytes():
                return "bytes", f"the same bytes in another shape ({shape_text(b.shape)} then {shape_text(a.shape)})"
    if same_fn and [a.size for a in mine] == [a.size for a in theirs]:
        return "size", "the same numbers of entries in other shapes"
    if same_fn:
        both = [key for key, a in _keyed(call) if isinstance(_arg(earlier, key), np.ndarray)
                and a.shape == _arg(earlier, key).shape]
        if both:
            names = [params[k] if isinstance(k, int) and k < len(params) else str(k) for k in both]
            shapes = ", ".join(f"{n} {shape_text(_arg(call, k).shape)}" for n, k in zip(names, both))
            return "argument", f"the shape of {shapes}, with other values, and other shapes of the rest"
    if same_fn:
        return "function", "the function only, at other sizes"
    return "order", f"the process: {earlier.function} is called first"


def _keyed(call: Call) -> list[tuple[Any, np.ndarray]]:
    return [(k, a) for k, a in [*enumerate(call.args), *call.kwargs.items()] if isinstance(a, np.ndarray)]


def _arg(call: Call, key) -> Any:
    if isinstance(key, int):
        return call.args[key] if key < len(call.args) else None
    return call.kwargs.get(key)


def returned(call: Call, earlier: Call | None, ref) -> str:
    """What the failing call gives after the earlier one, in words."""
    if isinstance(call.outcome, Raised):
        return f"it raises {call.outcome.type_name}"
    if earlier is not None and earlier.kept and not isinstance(earlier.outcome, Raised):
        if error_ratio(call.outcome, earlier.outcome, _dtype(call)) <= 1:
            return "it returns what the earlier call returned"
        theirs = make.expected(ref, earlier.function, *clone((earlier.args, earlier.kwargs))) \
            if earlier.function == call.function else make.REFUSED
        if theirs is not make.REFUSED and error_ratio(call.outcome, theirs, _dtype(call)) <= 1:
            return "it returns the right answer for the earlier call's inputs, not for its own"
    return "it returns something else"


def explained(call: Call, earlier: Call | None, ref, path: str | None) -> History:
    """The sentence and the repro for a failing call that is right alone."""
    if earlier is None:
        text = (f"{_plain(call)} is right when made alone, as the first call of a new process, and wrong after the "
                f"calls made before it in the grading: what they leave behind (a cache, a buffer) changes its answer")
        return History(None, call, "calls", text, None)
    try:
        params = list(inspect.signature(getattr(ref, call.function)).parameters)
    except (TypeError, ValueError, AttributeError):
        params = []
    kind, words = shared(earlier, call, params)
    names_e, lines_e, src_e = _written(earlier, ref, "1")
    if call.args_from == earlier.id:
        lines_f = [f"np.copyto({names_e[k]}, {literal(v)})" for k, v in _assigned(call)]
        src_f = src_e
    else:
        _, lines_f, src_f = _written(call, ref, "2")
    text = (f"{src_f} is right when made alone, as the first call of a new process, and wrong right after {src_e}: "
            f"{returned(call, earlier, ref)}; the two calls share {words}, so something the function keeps from the "
            f"earlier call (a cache or a buffer keyed on too little) decides the later answer")
    repro = None
    if path is not None and lines_e is not None and lines_f is not None:
        want = make.expected(ref, call.function, *clone((call.args, call.kwargs)))
        got = call.outcome if not isinstance(call.outcome, Raised) else None
        alone = src_f.replace(f"{call.function}(", f"run_path({path!r})[{call.function!r}](", 1)
        lines = lines_e + [f"print({src_e})  # the earlier call"] + lines_f + [
            f"print({src_f})  # wrong right after the call above"]
        lines += expected_lines(want, got) + [f"print({alone})  # the same call in a fresh copy of the file: right"]
        repro = history_repro(path, [earlier.function, call.function], lines)
    return History(earlier, call, kind, text, repro)


def _assigned(call: Call) -> list[tuple[Any, Any]]:
    return [(k, call.args[k] if isinstance(k, int) else call.kwargs[k]) for k in call.assigned]


def _written(call: Call, ref, suffix: str) -> tuple[dict, list[str] | None, str]:
    """(names by argument key, lines that build the call's arrays, the call's source), the
    arrays written out under their parameter's name and `suffix` (None: one is too large)."""
    try:
        params = list(inspect.signature(getattr(ref, call.function)).parameters)
    except (TypeError, ValueError, AttributeError):
        params = [f"a{i}" for i in range(len(call.args))]
    names, lines, parts = {}, [], []
    ok = True
    for key, value in [*enumerate(call.args), *call.kwargs.items()]:
        label = params[key] if isinstance(key, int) and key < len(params) else str(key)
        if isinstance(value, np.ndarray):
            name = f"{label}_{suffix}"
            names[key] = name
            ok = ok and value.size <= ARRAY_ENTRIES
            lines.append(f"{name} = {literal(value)}")
            shown = name
        else:
            shown = literal(value) if not isinstance(value, (tuple, list, dict)) else f"<{type(value).__name__}>"
            ok = ok and not isinstance(value, (tuple, list, dict))
        parts.append(shown if isinstance(key, int) else f"{key}={shown}")
    return names, (lines if ok else None), f"{call.function}({', '.join(parts)})"


def _plain(call: Call) -> str:
    return plain(call.source)
