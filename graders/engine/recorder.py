"""The judge's side of each call: the attempt's functions as the grader calls them, and the record.

A grader reaches the attempt through a `Candidate` (`impl` in a check). Each call is
sent to the attempt's process (sandbox.Sandbox) and recorded as a `Call` in the
`Grading` that the candidate belongs to: how it was made (its arguments, and the Python
that rebuilds them), what came back (a value, or a `Raised`), what it wrote into its
arguments. A failure is then one line, a repro, a case to shrink, and calls for the
diagnosis to replay.
"""
from __future__ import annotations

import collections
import contextlib
import copy
import functools
import itertools
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graders.engine import call_text, protocol
from graders.engine.failures import AttemptRaised, CheckFailed, NotImplementedYet
from graders.engine.protocol import CallRequest, Options
from graders.engine.wire import Kept, Opaque, copy_with_layout, digest  # noqa: F401  (Opaque: for graders)

# Arrays recorded for diagnosis and repro are kept only below this size.
RECORD_LIMIT_BYTES = 4 << 20


class Raised:
    """An exception raised in the attempt's process, as the judge sees it: its names, not the object."""

    def __init__(self, described):
        if isinstance(described, dict):
            described = protocol.Raised.read(described)
        self.type_name = described.type
        self.bases = list(described.bases)   # the builtin classes in its MRO
        self.message = described.message
        self.where = described.where
        self.exit_code = described.code

    def is_a(self, cls: type) -> bool:
        """isinstance for builtin exception classes: the builtin class itself is in its MRO (a class
        of the attempt's own that is merely named ValueError is not a ValueError)."""
        return cls.__name__ in self.bases

    @property
    def builtin(self) -> str:
        return self.bases[0] if self.bases else "Exception"

    def same_as(self, exc: BaseException) -> bool:
        """The same kind of exception as `exc`, raised by a known bug in the judge."""
        return type(exc).__qualname__ == self.type_name and \
            next((c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins"), "") == self.builtin

    def location(self) -> str:
        """' (line 12 of your file: `return e / s`)', or nothing."""
        if not self.where or not self.where.get("line"):
            return ""
        code = self.where.get("code") or ""
        return f" (line {self.where['line']} of your file" + (f": `{code}`" if code else "") + ")"

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"Raised({self.type_name}: {self.message})"


@dataclass(eq=False)
class Call:
    """One call of the attempt: how it was made and what came of it."""

    function: str
    args: tuple
    kwargs: dict
    written: Any                # its source, or what writes it when first read (see `source`)
    outcome: Any = None         # the return value, or a Raised
    mutated: list[str] = field(default_factory=list)
    recorded: bool = True       # False when the arguments were too large to keep
    kept: bool = False          # True when `outcome` holds what came back (returned or raised)
    id: int = 0                 # the attempt's process keeps results by this number when asked
    peak: int | None = None     # bytes, when the memory was traced (options(memory=True))
    warnings: list = field(default_factory=list)  # when watched (options(warnings=True))
    check: str = ""             # the check it was made in
    later: Any = None           # what it returned, fetched again after later calls (expect_repeatable)
    later_seen: bool = False
    later_after: int = 0        # the id of the last call made before that fetch
    after: Any = None           # the arguments as the call left them, when it wrote into them
    dtype: Any = None           # the float dtype it was made in (set by the diagnosis)
    repro: tuple = ([], 0)      # (the case's repro lines, how many of them rebuild its inputs)
    digests: dict = field(default_factory=dict)  # fingerprints of its arguments as sent
    shares: list = field(default_factory=list)   # [result path, where] of result arrays sharing memory
    returned: bool = False      # it returned (rather than raised or stopped)
    args_from: int | None = None   # made on the argument objects of this earlier call ...
    assigned: tuple = ()        # ... after writing new values into these of them
    poked: tuple | None = None  # (value, id of the last call before): the caller wrote value into the result
    process: int = 0            # the attempt's process it was made in (graders.engine.sandbox.Sandbox.process)
    views: tuple = ((), {})     # its arguments as the attempt's process saw them: views of the shared memory
    shapes: Any = ""            # its arrays, by name, shape and dtype (or what writes that, for a small call)
    passed: dict = field(default_factory=dict)  # argument -> (call id, path): a kept result passed back by reference
    form: Any = None            # what it returned with every array emptied (its types), when `outcome` is not kept

    @property
    def source(self) -> str:
        """The Python that makes the call, e.g. "softmax(z, axis=0)": written when first read,
        since most calls pass and are never shown."""
        if callable(self.written):
            self.written = self.written()
        return self.written

    @source.setter
    def source(self, text: str) -> None:
        self.written = text


class Grading:
    """Everything one grading accumulates and how its next calls are made: the calls of the
    case being run, every recorded call (for the diagnosis), every call that wrote into its
    arguments. The judge makes one per grading and hands it to the checks through the
    candidate (`impl.grading`), and to the diagnosis."""

    def __init__(self):
        self.calls: list[Call] = []         # the case being run now
        self.inputs = None                  # its Inputs
        self.record = True                  # False: calls keep no copies (large inputs, memory)
        self.repeatable = True              # False: outcomes depend on fresh randomness (rng=None)
        self.deadline = float("inf")        # time.monotonic() by which the current check must end
        self.opts: dict = {}                # how the attempt's process watches the next calls
        self.check = ""                     # the check being run
        self.history: list[Call] = []       # every recorded call, passing or failing
        self.mutations: list[Call] = []     # every call that wrote into its arguments, whatever its size
        self.shared: list[Call] = []        # every call whose result shares memory with an input or a kept result
        self.failed = False                 # a check of this grading has failed
        self.explanation: list = []         # what the report says was observed (graders.engine.said.Said)
        self.sent = 0                       # calls sent to the attempt's processes so far
        self.passed: dict[int, tuple] = {}  # id -> (value, name): the judge's copies of results passed back
        self._ids = itertools.count(1)

    def next_id(self) -> int:
        return next(self._ids)

    def last_call(self) -> str:
        """How the latest call was made, e.g. "softmax(z, axis=0)"."""
        return self.calls[-1].source if self.calls else "the call"

    @contextlib.contextmanager
    def unrecorded(self):
        """Calls made inside keep no copies: for large inputs, and while memory is being measured."""
        saved, self.record = self.record, False
        try:
            yield
        finally:
            self.record = saved

    @contextlib.contextmanager
    def unrepeatable(self):
        """Calls made inside draw fresh randomness (rng=None): what they return cannot be replayed,
        so the diagnosis does not compare it."""
        saved, self.repeatable = self.repeatable, False
        try:
            yield
        finally:
            self.repeatable = saved

    @contextlib.contextmanager
    def options(self, **opts):
        """How the attempt's process watches the calls made inside: memory=True traces the peak
        (Call.peak), warnings=True records warnings (Call.warnings), keep=True keeps the result
        for Candidate.fetch, global_seed=N seeds NumPy's global random state before each call."""
        saved = dict(self.opts)
        self.opts.update(opts)
        try:
            yield
        finally:
            self.opts = saved


def _nbytes(obj: Any) -> int:
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (list, tuple)):
        return sum(_nbytes(o) for o in obj)
    if isinstance(obj, dict):
        return sum(_nbytes(o) for o in obj.values())
    return 0


def form(value: Any, depth: int = 0) -> Any:
    """`value` with every array replaced by an empty one of its dtype: its types, for the rules
    (graders.engine.rules), at no cost in memory."""
    if isinstance(value, np.ndarray):
        return np.empty(0, value.dtype)
    if depth < 8 and isinstance(value, (tuple, list)):
        return type(value)(form(v, depth + 1) for v in value)
    if depth < 8 and isinstance(value, dict):
        return type(value)((k, form(v, depth + 1)) for k, v in value.items())
    return value


def _held(value: Any) -> Any:
    """What a recorded call keeps of its arguments: the arrays themselves (the check must not
    change them afterwards: see intact), fresh containers, and a copy of any Generator, whose
    state moves on as the attempt draws."""
    kind = type(value)
    if kind is tuple:  # a tuple cannot change: itself, when its parts are kept as they are (a repro names it)
        parts = [_held(v) for v in value]
        return value if all(p is v for p, v in zip(parts, value)) else tuple(parts)
    if kind is list:
        return [_held(v) for v in value]
    if kind is dict:
        return {k: _held(v) for k, v in value.items()}
    if isinstance(value, np.random.Generator):
        return copy.deepcopy(value)
    return value


def intact(call: Call) -> bool:
    """The arguments a recorded call keeps are still as they were sent."""
    sent = [*enumerate(call.args), *call.kwargs.items()]
    return all(digest(v) == call.digests[key] for key, v in sent if key in call.digests)


def clone(value: Any) -> Any:
    """A deep copy in which every array keeps its memory layout and read-only flag, so that a
    replay gets what the attempt got (copy.deepcopy makes read-only arrays writeable)."""
    kind = type(value)
    if kind is np.ndarray:
        return copy_with_layout(value)
    if kind is tuple:
        return tuple([clone(v) for v in value])
    if kind is list:
        return [clone(v) for v in value]
    if kind is dict:
        return {k: clone(v) for k, v in value.items()}
    if kind in (int, float, bool, str, type(None)) or isinstance(value, np.generic):
        return value  # immutable
    return copy.deepcopy(value)


def value_differs(a: Any, b: Any) -> bool:
    """True when `b` is not the same value as `a`: arrays by shape, dtype and content,
    containers part by part. Anything else counts as unchanged: a number or a string cannot
    be changed in place, and an object the attempt returned is decoded afresh each time."""
    if isinstance(a, np.ndarray):
        if not isinstance(b, np.ndarray) or a.shape != b.shape or a.dtype != b.dtype:
            return True
        if a.tobytes() == b.tobytes():  # the common case, and quick
            return False
        return not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, np.random.Generator):
        return False  # a Generator's state is meant to move
    if isinstance(a, (list, tuple)):
        return type(a) is not type(b) or len(a) != len(b) or any(value_differs(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return not isinstance(b, dict) or list(a) != list(b) or any(value_differs(a[k], b[k]) for k in a)
    return False



def _changed_parts(name: str, old: Any, new: Any) -> list[str]:
    """The names of the parts of an argument that the call changed: `x`, `params['W_q']`, `cache[0]`."""
    if isinstance(old, dict) and isinstance(new, dict) and list(old) == list(new):
        return [p for k in old for p in _changed_parts(f"{name}[{k!r}]", old[k], new[k])]
    if isinstance(old, (list, tuple)) and type(old) is type(new) and len(old) == len(new):
        return [p for i, (o, n) in enumerate(zip(old, new)) for p in _changed_parts(f"{name}[{i}]", o, n)]
    return [name] if value_differs(old, new) else []


def _move_generators(sent: Any, after: Any) -> None:
    """A Generator passed to the attempt advances as it draws: so does ours."""
    if isinstance(sent, np.random.Generator) and isinstance(after, np.random.Generator):
        sent.bit_generator.state = after.bit_generator.state
    elif isinstance(sent, (list, tuple)) and isinstance(after, (list, tuple)):
        for s, a in zip(sent, after):
            _move_generators(s, a)
    elif isinstance(sent, dict) and isinstance(after, dict):
        for k in sent:
            if k in after:
                _move_generators(sent[k], after[k])


class Recorded:
    """A function of the attempt: each call is sent to the attempt's process and recorded."""

    def __init__(self, name: str, candidate: "Candidate"):
        self.name, self.candidate = name, candidate

    def __call__(self, *args, **kwargs):
        return self.send(args, kwargs)

    def send(self, args: tuple, kwargs: dict, args_from: int | None = None, source: str | None = None):
        """Make one call of the attempt and record it as a call with `args` and `kwargs` (what
        the attempt's arguments hold when it starts); `args_from`: made on the argument objects
        that earlier call kept (Candidate.again); `source`: the Python that makes the same
        call, when it is not plain."""
        g, cand = self.candidate.grading, self.candidate
        sent_args, sent_kwargs = args, kwargs
        passed = {key: v for key, v in [*enumerate(args), *kwargs.items()] if type(v) is Kept}
        if passed:  # what the attempt's process passes back by reference, as the judge last saw it
            args, kwargs = cand.resolved(args, kwargs)
        digests = fingerprints(args, kwargs)
        ahead = cand.take_ahead(self.name, digests, laid_out((args, kwargs)), args_from, by_reference=bool(passed))
        inputs = g.inputs
        small = g.record and _nbytes((args, kwargs)) <= RECORD_LIMIT_BYTES
        if source is None:  # small arguments: written when read, with the names the inputs have now
            names = dict(inputs.names) if inputs is not None else {}
            for key, kept in passed.items():  # a result passed back is named as the repro keeps it: out1[1]
                value = args[key] if isinstance(key, int) else kwargs[key]
                g.passed[id(value)] = (value, cand.kept_name(kept))
            names.update({i: name for i, (_, name) in g.passed.items()})
            source = functools.partial(call_text.written_call, self.name, args, kwargs, names)
            source = source if small and not passed else source()  # large ones are not kept for it
        # the judge's arrays never reach the attempt (it gets copies), so the call keeps the arrays
        # themselves; the end of the case checks by fingerprint that the check left them as sent
        call = Call(self.name, *(_held((args, kwargs)) if small else ((), {})), written=source,
                    recorded=small, id=ahead.id if ahead else g.next_id(), check=g.check, digests=digests,
                    repro=(inputs.lines, len(inputs.lines)) if inputs is not None else ([], 0))
        call.process = cand.box.process
        call.passed = {key: (kept.call, kept.path) for key, kept in passed.items()}
        call.shapes = functools.partial(call_text.shapes, (args, kwargs), dict(inputs.names) if inputs else {}) \
            if small else call_text.shapes((args, kwargs), inputs.names if inputs is not None else {})
        g.calls.append(call)
        g.sent += 1
        if ahead is not None:  # sent with arrays of the same values: the views are of those
            sent, placed = (ahead.args, ahead.kwargs), ahead.placed
        else:
            sent = (args, kwargs)
            placed = cand.box.send([CallRequest(call.id, self.name, [] if args_from else list(sent_args),
                                                {} if args_from else dict(sent_kwargs), Options(**g.opts), args_from)],
                                   g.deadline)
        call.views = cand.earlier_views(args_from) if args_from else _views(sent, placed)
        done = cand.box.next_done(g.deadline)
        if done.missing:
            raise CheckFailed(f"your file defines no function `{self.name}`", kind="missing")
        if done.error is not None:
            call.outcome = Raised({"type": "GradingError", "message": done.error})
            raise AttemptRaised(f"{call.source}: {done.error}", call.outcome)
        self._after(g, call, args, kwargs, done, {key: cand.kept_name(kept) for key, kept in passed.items()})
        call.peak, call.warnings = done.peak, done.warnings
        call.shares = done.shares
        if call.shares:
            g.shared.append(call)
        if done.raised is not None:
            call.outcome, call.kept = Raised(done.raised), True
            raise _failure_of(call.outcome, self.name, call.source)
        out = done.value
        call.kept = small and g.repeatable and _nbytes(out) <= RECORD_LIMIT_BYTES
        call.outcome = copy.deepcopy(out) if call.kept else None
        call.form = None if call.kept else form(out)
        call.returned = True
        if g.opts.get("keep"):  # the attempt's process holds it: a later call may pass it back (Kept)
            cand.returned[call.id] = clone(out)
        return out

    @staticmethod
    def _after(g: Grading, call: Call, args: tuple, kwargs: dict, done: protocol.Done, kept_names: dict) -> None:
        """What the call changed in its arguments (read by the judge from the shared memory the
        attempt's process saw them in, and named part by part here; for a result passed back by
        reference, as the attempt's process reported it, under `kept_names`), and the new state of
        each Generator it was given."""
        inputs = g.inputs
        seen_args, seen_kwargs = call.views
        changed = {}
        for key, now in [*enumerate(seen_args), *seen_kwargs.items()]:
            now = done.changed.get(key, now)  # replaced entries, reshaped arrays: as the attempt's process sent them
            sent = args[key] if isinstance(key, int) else kwargs[key]
            if key in call.digests and value_differs(sent, now):
                changed[key] = clone(now)
        for key, now in changed.items():
            sent = args[key] if isinstance(key, int) and 0 <= key < len(args) else kwargs.get(key)
            name = (inputs.name_of(sent) if inputs else None) or (
                f"argument {key + 1}" if isinstance(key, int) else str(key))
            call.mutated += _changed_parts(name, sent, now)
        for key, entry in done.replaced:
            sent = args[key] if isinstance(key, int) and 0 <= key < len(args) else kwargs.get(key)
            name = (inputs.name_of(sent) if inputs else None) or (
                f"argument {key + 1}" if isinstance(key, int) else str(key))
            call.mutated.append(f"{name}[{entry!r}] (replaced)")
        for key, path in done.kept_written:  # a result passed back by reference, which the judge cannot read
            name = kept_names.get(key) or (f"argument {key + 1}" if isinstance(key, int) else str(key))
            call.mutated.append(name + "".join(f"[{p!r}]" for p in path))
        for key, now in done.rngs.items():
            key = int(key) if isinstance(key, str) and key.isdigit() else key
            _move_generators(args[key] if isinstance(key, int) and 0 <= key < len(args) else kwargs.get(key), now)
        if call.mutated:
            g.mutations.append(call)
            if call.recorded and not done.kept_written:  # what it left in a result passed back is not known here
                call.after = (tuple(changed.get(i, a) for i, a in enumerate(call.args)),
                              {k: changed.get(k, v) for k, v in call.kwargs.items()})


def _views(value, placed: dict):
    """`value` (a call's (args, kwargs)) with each array the request placed in shared memory
    replaced by the judge's view of it: what the attempt's process sees there."""
    kind = type(value)
    if kind is np.ndarray:
        where = placed.get(id(value))
        return where[1] if where is not None else value
    if kind is tuple:
        return tuple([_views(v, placed) for v in value])
    if kind is list:
        return [_views(v, placed) for v in value]
    if kind is dict:
        return {k: _views(v, placed) for k, v in value.items()}
    return value


def _failure_of(raised: Raised, function: str, source: str) -> CheckFailed:
    """The one line that says what the attempt raised, and where."""
    where = raised.location()
    if raised.is_a(NotImplementedError):
        return NotImplementedYet(function)
    if raised.is_a(SystemExit):
        return AttemptRaised(f"{source} called sys.exit({raised.exit_code!r}){where}: return a result instead", raised)
    text = f"{raised.type_name}: {raised.message}" if raised.message else raised.type_name
    if raised.is_a(MemoryError):
        return AttemptRaised(f"{source} ran out of memory: {text}{where}", raised)
    if "Exception" not in raised.bases:
        return AttemptRaised(f"{source} raised {text}{where}: a BaseException that is not an Exception "
                             f"(it escapes `except Exception`)", raised)
    return AttemptRaised(f"{source} raised {text}{where}", raised)


def laid_out(value) -> tuple:
    """How the arrays in a call's (args, kwargs) are laid out in memory (strides, read-only)
    and which of them are one object: what a fingerprint of their values does not tell."""
    seen: dict[int, int] = {}
    out = []

    def walk(v, depth: int = 0) -> None:
        if type(v) is np.ndarray:
            out.append((v.strides, v.flags.writeable, seen.setdefault(id(v), len(seen))))
        elif depth < 4 and isinstance(v, (tuple, list)):
            for x in v:
                walk(x, depth + 1)
        elif depth < 4 and isinstance(v, dict):
            for x in v.values():
                walk(x, depth + 1)

    walk(value)
    return tuple(out)


def fingerprints(args: tuple, kwargs: dict) -> dict:
    """The fingerprint of each argument (a Generator's state is meant to move: none)."""
    return {key: digest(v) for key, v in [*enumerate(args), *kwargs.items()] if not isinstance(v, np.random.Generator)}


class Candidate:
    """The candidate's module as the judge reaches it: through the attempt's process."""

    def __init__(self, box, functions: list[str], path: str | None = None, grading: Grading | None = None):
        self.box, self.functions, self._path = box, set(functions), path
        self.grading = grading if grading is not None else Grading()
        self.ahead: collections.deque = collections.deque()   # calls sent ahead, not made yet (Ahead)
        self.settling = False
        self.twin: Candidate | None = None    # the twin of its process, made before its first call
        self.returned: dict[int, Any] = {}    # what calls made with keep=True returned, by call id (Kept)

    @property
    def path(self) -> str | None:
        """The attempt's file, as a repro names it."""
        return self._path

    def __getattr__(self, name: str) -> Recorded:
        if name.startswith("__") or name not in self.functions:
            if name.startswith("__"):
                raise AttributeError(name)
            raise CheckFailed(f"your file defines no function `{name}`", kind="missing")
        return Recorded(name, self)

    def fetch(self, call: Call):
        """The value `call` returned, as it stands now in the attempt's process (the call must
        have been made with options(keep=True)): a result that later calls overwrote shows."""
        self.settle()
        done = self.box.fetch(call.id, self.grading.deadline)
        return done.value

    def again(self, call: Call, assign: dict, through: dict | None = None):
        """Call `call`'s function once more on the very objects `call` was given (it must have
        been made with options(keep_args=True)), after writing new contents into some of them:
        `assign` maps a positional index or keyword to the new values of that array. The new
        values are written into the memory the attempt's process sees them in, as a caller
        writes into its own arrays. `through` (key -> (buffer, argument)): for the repro, the
        caller's writable buffer under a read-only argument, and the Python that passes it."""
        self.settle()
        args = tuple(assign.get(i, a) for i, a in enumerate(call.args))
        kwargs = {k: assign.get(k, v) for k, v in call.kwargs.items()}
        seen_args, seen_kwargs = call.views
        for key, values in assign.items():
            target = seen_args[key] if isinstance(key, int) else seen_kwargs[key]
            np.copyto(target, values)
        inputs = self.grading.inputs

        def shown(key, old):  # the repro writes the new values into the old array, then passes it
            names = inputs.names if inputs else {}
            name = call_text.arguments_text((old,), {}, names)
            buffer, passed = (through or {}).get(key, (name, name))
            return f"(np.copyto({buffer}, {call_text.arguments_text((assign[key],), {}, names)}), {passed})[1]" \
                if key in assign else name

        parts = [shown(i, a) for i, a in enumerate(call.args)] + [f"{k}={shown(k, v)}" for k, v in call.kwargs.items()]
        calls = self.grading.calls
        before = len(calls)
        try:
            return Recorded(call.function, self).send(args, kwargs, call.id, f"{call.function}({', '.join(parts)})")
        finally:  # a call that raised was made on those objects too
            if len(calls) > before:
                calls[-1].args_from, calls[-1].assigned = call.id, tuple(assign)

    def resolved(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """`args` and `kwargs` with each `Kept` (a result passed back by reference) replaced by a
        copy of what that call returned, as the judge received it."""
        def one(v):
            if type(v) is not Kept:
                return v
            value = self.returned[v.call]
            for step in v.path:
                value = value[step]
            return clone(value)

        return tuple(one(a) for a in args), {k: one(v) for k, v in kwargs.items()}

    def kept_name(self, kept: Kept) -> str:
        """The name a repro gives a result passed back, `out1[1]`: the call that returned it is
        written as `(out1 := f(...))`, numbered by its place in the case (else by its id)."""
        earlier = next((c for c in self.grading.calls if c.id == kept.call), None)
        n = self.grading.calls.index(earlier) + 1 if earlier is not None else kept.call
        if earlier is not None:
            found = call_text.kept_as(earlier.source)
            if found is None:
                earlier.source = f"(out{n} := {earlier.source})"
            else:
                n = found
        return f"out{n}" + "".join(f"[{p!r}]" for p in kept.path)

    def earlier_views(self, call_id: int) -> tuple:
        """The shared-memory views of the arguments an earlier call kept (keep_args)."""
        for c in reversed(self.grading.calls + self.grading.history):
            if c.id == call_id:
                return c.views
        return ((), {})

    def poke(self, call: Call, value: float) -> list:
        """Write `value` into the arrays `call` returned, in the attempt's process, as a caller may
        change what it was given (the result must have been kept: options(keep=True)); the
        paths of the arrays that refused (read-only)."""
        self.settle()
        done = self.box.poke(call.id, value, self.grading.deadline)
        call.poked = (value, self.grading.calls[-1].id if self.grading.calls else 0)
        return done.value or []

    def fresh(self, loaded: bool = False) -> "Candidate":
        """The same attempt in a new process of its own, with nothing of earlier calls: its calls
        join this grading's record. A copy of the twin (forked by it, while it has not been
        called: graders.engine.sandbox.Sandbox.twin), else a new process; `loaded`: always a new
        process that runs the attempt's file itself (what its top-level code drew, a Generator
        made at import, is its own, not a copy of the twin's). The caller closes it
        (`.box.close()`)."""
        twin = self.twin
        box = None
        if not loaded and twin is not None and twin.box.chan is not None and twin.pristine():
            box = twin.box.twin(min(self.grading.deadline, time.monotonic() + 10.0))
        if box is None:
            box = self.box.copy()
            box.start()
            box.wait_loaded(min(self.grading.deadline, time.monotonic() + 10.0))
        fresh = Candidate(box, box.functions, self._path, self.grading)
        fresh.twin = twin  # its own fresh processes come from the same twin
        return fresh

    def pristine(self) -> bool:
        """No call was made in this candidate's process."""
        return not any(c.process == self.box.process for c in (*self.grading.history, *self.grading.calls))

    def untouched(self, function: str) -> "Candidate":
        """A candidate whose process has not called `function` yet: the twin itself, while the
        grading has failed nothing (a copy of it would be a process more), else a copy of it
        or a new process (the caller closes one that is not `self.twin`)."""
        twin = self.twin
        if twin is not None and twin.box.chan is not None and not self.grading.failed and not any(
                c.function == function and c.process == twin.box.process for c in self.grading.history):
            return twin
        return self.fresh()

    def release_twin(self) -> None:
        """The twin is not needed any more (before calls whose memory is measured)."""
        if self.twin is not None:
            self.twin.box.close()
            self.twin = None

    def send_ahead(self, calls: list[tuple[str, tuple, dict]]) -> None:
        """Send (function, args, kwargs) calls to the attempt's process in one request, before
        they are made: the calls made next, in the same order, with the same arguments, take
        their answers from these, read as each is made while the attempt's process runs the
        next. When a call goes another way (a failure is shrunk), the rest are made first, as
        the attempt's process already made them: every call it ran is in the record, in its order."""
        if self.ahead or not calls:
            return
        g = self.grading
        requests = [CallRequest(g.next_id(), fn, list(args), dict(kwargs), Options(**g.opts)) for fn, args, kwargs in calls]
        try:
            placed = self.box.send(requests, g.deadline)
        except Exception:
            return  # the process is gone: each call, made as it comes, says so
        self.ahead.extend(Ahead(r.id, r.fn, fingerprints(args, kwargs), laid_out((args, kwargs)), args, kwargs,
                                placed) for r, (_, args, kwargs) in zip(requests, calls))

    def take_ahead(self, fn: str, digests: dict, layout: tuple, args_from: int | None,
                   by_reference: bool = False) -> "Ahead | None":
        """Before a call is made: the call sent ahead that it is (the next one, if it matches:
        the same function, values and memory layouts), or None, once the calls sent ahead that
        it is not are made first (a call on earlier objects, or passing a result back by
        reference, is never one sent ahead)."""
        if not self.ahead or self.settling:
            return self.ahead.popleft() if self.settling and self.ahead else None
        head = self.ahead[0]
        if head.fn == fn and head.digests == digests and head.layout == layout and args_from is None \
                and not by_reference:
            return self.ahead.popleft()
        self.settle()
        return None

    def settle(self) -> None:
        """Make the calls sent ahead that no case made yet (the attempt's process ran them): each
        is recorded as it came. Nothing, when the process they were sent to is gone."""
        if not self.ahead or self.settling:
            return
        self.settling = True
        g = self.grading
        try:
            while self.ahead:
                head = self.ahead[0]
                try:
                    Recorded(head.fn, self).send(head.args, head.kwargs)
                except CheckFailed:
                    pass  # recorded as it came; the case it belonged to is not being judged now
                finally:
                    made = g.calls.pop()  # not a call of the case being run: straight into the record
                    if made.recorded:
                        g.history.append(made)
        finally:
            self.ahead.clear()
            self.settling = False

    def forget(self) -> None:
        """The attempt's process drops the results it keeps for fetch()."""
        self.settle()
        self.returned.clear()
        self.box.forget(self.grading.deadline)

    def last_call(self) -> str:
        """How the latest call was made, e.g. "softmax(z, axis=0)"."""
        return self.grading.last_call()

    def unrecorded(self):
        return self.grading.unrecorded()

    def unrepeatable(self):
        return self.grading.unrepeatable()

    def options(self, **opts):
        return self.grading.options(**opts)


@dataclass
class Ahead:
    """A call sent to the attempt's process before a check makes it."""

    id: int
    fn: str
    digests: dict
    layout: tuple   # how its arrays are laid out, and which of them are one object (laid_out)
    args: tuple
    kwargs: dict
    placed: dict    # id of each argument array -> where it lies in shared memory
