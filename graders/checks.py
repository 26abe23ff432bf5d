"""The vocabulary the grader suites are written in.

A grader is a list of properties. Each property is a function decorated with `@check`,
run on a few small cases (dicts of sizes, seeds and dtypes). The candidate's module is
reached through `impl`, which records every call (its arguments, the outcome, and how
to rebuild it) so that a failure can be explained in one line, reproduced in a few lines
of Python, shrunk to the smallest case that still fails, and matched against the
catalogue of known bugs.
"""
from __future__ import annotations

import contextlib
import copy
import inspect
import itertools
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from graders.sandbox import AttemptGone
from graders.worker import Opaque, copy_with_layout, digest

TOLERANCE = {np.dtype(np.float64): (1e-6, 1e-9), np.dtype(np.float32): (1e-4, 1e-5)}
# A float32 logit near 1e4 carries only about three significant digits of its own.
EXTREME_FLOAT32_RTOL = 1e-3
# Arrays recorded for diagnosis and repro are kept only below this size.
RECORD_LIMIT_BYTES = 4 << 20
SHRINK_SECONDS = 2.0


# ----------------------------------------------------------------------------- failures

class CheckFailed(AssertionError):
    """A property does not hold. `str()` is the one line shown to the candidate."""

    kind = "property"

    def __init__(self, message: str, *, kind: str | None = None, bug: str | None = None,
                 picture: dict | None = None):
        super().__init__(message)
        self.message = message
        if kind:
            self.kind = kind
        # a check that can tell the cause from what it measured names the known bug itself
        self.bug = bug
        # weights worth drawing as a grid (see graders.report.CheckResult.picture)
        self.picture = picture
        self.repro: str | None = None
        self.calls: list[Call] = []
        self.case: dict | None = None


class AttemptRaised(CheckFailed):
    """The attempt raised an exception where it should have returned."""

    kind = "raised"

    def __init__(self, message: str, original: "Raised"):
        super().__init__(message)
        self.original = original


class NotImplementedYet(CheckFailed):
    """The attempt still raises NotImplementedError: the stub is untouched."""

    kind = "not_implemented"

    def __init__(self, function: str):
        super().__init__(f"not implemented yet: `{function}` still raises NotImplementedError")
        self.function = function


# ----------------------------------------------------------------------------- inputs

def _literal(value: Any) -> str:
    """Python source that rebuilds a small value."""
    if isinstance(value, np.ndarray):
        body = np.array2string(value, separator=", ", threshold=10**6, floatmode="unique")
        body = body.replace("\n", "")
        dtype = "" if value.dtype in (np.float64, np.int64, np.bool_) else f", dtype=np.{value.dtype}"
        return f"np.array({body}{dtype})"
    if isinstance(value, np.generic):
        return f"np.{value.dtype}({value.item()!r})"
    if isinstance(value, float) and not np.isfinite(value):
        return {True: "float('inf')", False: "float('-inf')"}[value > 0] if not np.isnan(value) else "float('nan')"
    if isinstance(value, np.random.Generator):
        return "np.random.default_rng(0)"
    return repr(value)


class Inputs:
    """Seeded inputs that remember how to rebuild themselves in a repro."""

    def __init__(self, seed: int = 0):
        self.seed = seed
        self._rng = None                # made on first use: many cases draw nothing
        self.lines: list[str] = []
        self.names: dict[int, str] = {}
        self._keep: list[Any] = []  # keep registered objects alive so ids stay unique

    @property
    def rng(self) -> np.random.Generator:
        """The case's generator; the repro makes the same one, once, before its first draw."""
        if self._rng is None:
            self._rng = np.random.default_rng(self.seed)
            self.lines.append(f"rng = np.random.default_rng({self.seed})")
        return self._rng

    def _register(self, name: str, value: Any, line: str) -> Any:
        self.lines.append(line)
        self.names[id(value)] = name
        self._keep.append(value)
        return value

    def normal(self, name: str, shape: tuple, scale: float = 1.0, dtype: Any = np.float64):
        """Standard normal entries times `scale`, drawn from this case's generator."""
        shape = tuple(int(s) for s in shape)
        value = self.rng.standard_normal(shape) * scale
        expr = f"rng.standard_normal({shape})" + (f" * {scale!r}" if scale != 1 else "")
        dtype = np.dtype(dtype)
        if dtype != np.float64:
            value = value.astype(dtype)
            expr = f"({expr}).astype(np.{dtype})"
        return self._register(name, value, f"{name} = {expr}")

    def array(self, name: str, values: Any, dtype: Any = None):
        """A literal array, written out in full in the repro."""
        value = np.array(values, dtype=dtype)
        return self._register(name, value, f"{name} = {_literal(value)}")

    def let(self, name: str, value: Any, expr: str):
        """An input computed from earlier ones; `expr` is the Python that computes it."""
        return self._register(name, value, f"{name} = {expr}")

    def name_of(self, value: Any) -> str | None:
        return self.names.get(id(value))

    def relayout(self, layout: str, *arrays: np.ndarray) -> list[np.ndarray]:
        """The same values in another memory layout (see LAYOUTS), under the same names: the
        repro rebuilds each array, then lays it out the same way."""
        out = []
        for a in arrays:
            name = self.name_of(a) or "a"
            value, expr = _laid_out(a, layout, name)
            line = f"{name} = {expr}" if layout != "readonly" else f"{name} = {name}.copy(); {expr}"
            out.append(self._register(name, value, line))
        return out


# The layouts callers pass: NumPy gives views, slices, Fortran-ordered and read-only arrays
# as readily as fresh C-ordered ones, and code that writes through a reshape, or assumes
# contiguity or a writeable input, works only on the latter.
LAYOUTS = ("fortran", "transposed", "strided", "readonly")
LAYOUT_CHECK = "gives the same answers for inputs in any memory layout (Fortran order, views, read-only)"


def _laid_out(a: np.ndarray, layout: str, name: str) -> tuple[np.ndarray, str]:
    """(array equal to `a` in `layout`, the Python that makes it from `name`)."""
    if layout == "fortran":
        return np.asfortranarray(a), f"np.asfortranarray({name})"
    if layout == "transposed":  # a view of the transpose of a contiguous array
        if a.ndim < 2:
            return np.ascontiguousarray(a[::-1])[::-1], f"np.ascontiguousarray({name}[::-1])[::-1]"
        return (np.swapaxes(np.ascontiguousarray(np.swapaxes(a, -1, -2)), -1, -2),
                f"np.swapaxes(np.ascontiguousarray(np.swapaxes({name}, -1, -2)), -1, -2)")
    if layout == "strided":  # every other entry of a wider array
        return np.repeat(a, 2, axis=-1)[..., ::2], f"np.repeat({name}, 2, axis=-1)[..., ::2]"
    if layout == "readonly":
        b = a.copy()
        b.setflags(write=False)
        return b, f"{name}.setflags(write=False)"
    raise ValueError(f"unknown layout {layout!r}")


def layout_cases(cases: list[dict]) -> list[dict]:
    """Each case once per layout in LAYOUTS."""
    return [dict(c, layout=layout) for layout in LAYOUTS for c in cases]


def with_dtypes(cases: list[dict], dtypes: tuple[str, ...] = ("float64", "float32")) -> list[dict]:
    """Each case once per dtype (the contract grades float64 and float32 alike)."""
    return [dict(c, dtype=d) for c in cases for d in dtypes]


# ----------------------------------------------------------------------------- calls

class Raised:
    """An exception raised in the attempt's process, as the judge sees it: its names, not the object."""

    def __init__(self, described: dict):
        self.type_name = str(described.get("type", "Exception"))
        self.bases = [str(b) for b in described.get("bases", ())]   # the builtin classes in its MRO
        self.message = str(described.get("message", ""))
        self.where = described.get("where")
        self.exit_code = described.get("code")

    def is_a(self, cls: type) -> bool:
        """isinstance for builtin exception classes (the attempt's own classes have no twin here)."""
        return cls.__name__ in self.bases or cls.__name__ == self.type_name

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
    source: str                 # e.g. "softmax(z, axis=0)"
    outcome: Any = None         # the return value, or a Raised
    mutated: list[str] = field(default_factory=list)
    recorded: bool = True       # False when the arguments were too large to keep
    kept: bool = False          # True when `outcome` holds what came back (returned or raised)
    id: int = 0                 # the attempt's process keeps results by this number when asked
    peak: int | None = None     # bytes, when the memory was traced (call_options(memory=True))
    warnings: list = field(default_factory=list)  # when watched (call_options(warnings=True))
    check: str = ""             # the check it was made in
    later: Any = None           # what it returned, fetched again after later calls (expect_repeatable)
    later_seen: bool = False
    later_after: int = 0        # the id of the last call made before that fetch
    after: Any = None           # the arguments as the call left them, when it wrote into them
    dtype: Any = None           # the float dtype it was made in (set by the diagnosis)
    repro: tuple = ([], 0)      # (the case's repro lines, how many of them rebuild its inputs)
    digests: dict = field(default_factory=dict)  # fingerprints of its arguments as sent


class _Log:
    """The calls of the case being run now, and how calls are made."""

    def __init__(self):
        self.calls: list[Call] = []
        self.inputs: Inputs | None = None
        self.record = True
        self.repeatable = True          # False: outcomes depend on fresh randomness (rng=None)
        self.deadline = float("inf")    # time.monotonic() by which the current check must end
        self.opts: dict = {}            # how the attempt's process watches the next calls
        self.check = ""


LOG = _Log()
# Every recorded call of the grading, passing or failing, for diagnosis.
HISTORY: list["Call"] = []
# Every call of the grading that wrote into its arguments, whatever its size.
MUTATIONS: list["Call"] = []
_IDS = itertools.count(1)


def begin_grading() -> None:
    """Forget the calls of an earlier grading (the judge may grade many files in one process)."""
    HISTORY.clear()
    MUTATIONS.clear()
    LOG.calls, LOG.inputs, LOG.record, LOG.repeatable, LOG.opts = [], None, True, True, {}
    LOG.deadline = float("inf")


def last_call() -> str:
    """How the latest call was made, e.g. "softmax(z, axis=0)"."""
    return LOG.calls[-1].source if LOG.calls else "the call"


def _nbytes(obj: Any) -> int:
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (list, tuple)):
        return sum(_nbytes(o) for o in obj)
    if isinstance(obj, dict):
        return sum(_nbytes(o) for o in obj.values())
    return 0


def _held(value: Any) -> Any:
    """What a recorded call keeps of its arguments: the arrays themselves (the check must not
    change them afterwards: see _intact), fresh containers, and a copy of any Generator, whose
    state moves on as the attempt draws."""
    kind = type(value)
    if kind is tuple:
        return tuple([_held(v) for v in value])
    if kind is list:
        return [_held(v) for v in value]
    if kind is dict:
        return {k: _held(v) for k, v in value.items()}
    if isinstance(value, np.random.Generator):
        return copy.deepcopy(value)
    return value


def _intact(call: Call) -> bool:
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


def _differs(a: Any, b: Any) -> bool:
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
        return type(a) is not type(b) or len(a) != len(b) or any(_differs(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return not isinstance(b, dict) or list(a) != list(b) or any(_differs(a[k], b[k]) for k in a)
    return False


def _changed_parts(name: str, old: Any, new: Any) -> list[str]:
    """The names of the parts of an argument that the call changed: `x`, `params['W_q']`, `cache[0]`."""
    if isinstance(old, dict) and isinstance(new, dict) and list(old) == list(new):
        return [p for k in old for p in _changed_parts(f"{name}[{k!r}]", old[k], new[k])]
    if isinstance(old, (list, tuple)) and type(old) is type(new) and len(old) == len(new):
        return [p for i, (o, n) in enumerate(zip(old, new)) for p in _changed_parts(f"{name}[{i}]", o, n)]
    return [name] if _differs(old, new) else []


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
        inputs = LOG.inputs
        source = f"{self.name}({_render_args(args, kwargs, inputs)})"
        small = LOG.record and _nbytes((args, kwargs)) <= RECORD_LIMIT_BYTES
        digests = {key: digest(v) for key, v in [*enumerate(args), *kwargs.items()]
                   if not isinstance(v, np.random.Generator)}
        # the judge's arrays never reach the attempt (it gets copies), so the call keeps the arrays
        # themselves; the end of the case checks by fingerprint that the check left them as sent
        call = Call(self.name, *(_held((args, kwargs)) if small else ((), {})), source=source,
                    recorded=small, id=next(_IDS), check=LOG.check, digests=digests,
                    repro=(inputs.lines, len(inputs.lines)) if inputs is not None else ([], 0))
        LOG.calls.append(call)
        reply = self.candidate.box.request(
            {"op": "call", "id": call.id, "fn": self.name, "args": list(args), "kwargs": kwargs,
             "opts": dict(LOG.opts), "digests": digests}, LOG.deadline)
        if reply.get("missing"):
            raise CheckFailed(f"your file defines no function `{self.name}`", kind="missing")
        if "error" in reply:
            call.outcome = Raised({"type": "GradingError", "message": reply["error"]})
            raise AttemptRaised(f"{source}: {reply['error']}", call.outcome)
        self._after(call, args, kwargs, reply)
        call.peak, call.warnings = reply.get("peak"), reply.get("warnings") or []
        if "raised" in reply:
            call.outcome, call.kept = Raised(reply["raised"]), True
            raise _failure_of(call.outcome, self.name, source)
        out = reply.get("ok")
        call.kept = small and LOG.repeatable and _nbytes(out) <= RECORD_LIMIT_BYTES
        call.outcome = copy.deepcopy(out) if call.kept else None
        return out

    @staticmethod
    def _after(call: Call, args: tuple, kwargs: dict, reply: dict) -> None:
        """What the call changed in its arguments (the attempt's process sends back every argument
        whose fingerprint changed; the comparison that names the parts is made here), and the
        new state of each Generator it was given."""
        inputs = LOG.inputs
        changed = reply.get("changed") if isinstance(reply.get("changed"), dict) else {}
        for key, now in changed.items():
            sent = args[key] if isinstance(key, int) and 0 <= key < len(args) else kwargs.get(key)
            name = (inputs.name_of(sent) if inputs else None) or (
                f"argument {key + 1}" if isinstance(key, int) else str(key))
            call.mutated += _changed_parts(name, sent, now)
        rngs = reply.get("rngs") if isinstance(reply.get("rngs"), dict) else {}
        for key, now in rngs.items():
            _move_generators(args[key] if isinstance(key, int) and 0 <= key < len(args) else kwargs.get(key), now)
        if call.mutated:
            MUTATIONS.append(call)
            if call.recorded:
                call.after = (tuple(changed.get(i, a) for i, a in enumerate(call.args)),
                              {k: changed.get(k, v) for k, v in call.kwargs.items()})


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


def _render_args(args, kwargs, inputs: Inputs | None) -> str:
    def one(v):
        name = inputs.name_of(v) if inputs else None
        if name:
            return name
        if isinstance(v, np.ndarray) and v.size > 64:
            return f"<array of shape {v.shape}>"
        return _literal(v)

    parts = [one(a) for a in args] + [f"{k}={one(v)}" for k, v in kwargs.items()]
    return ", ".join(parts)


class Candidate:
    """The candidate's module as the judge reaches it: through the attempt's process."""

    def __init__(self, box, functions: list[str], path: str | None = None):
        self.box, self.functions, self._path = box, set(functions), path

    def __getattr__(self, name: str) -> Recorded:
        if name.startswith("__") or name not in self.functions:
            if name.startswith("__"):
                raise AttributeError(name)
            raise CheckFailed(f"your file defines no function `{name}`", kind="missing")
        return Recorded(name, self)

    def fetch(self, call: Call):
        """The value `call` returned, as it stands now in the attempt's process (the call must
        have been made with call_options(keep=True)): a result that later calls overwrote shows."""
        reply = self.box.request({"op": "fetch", "id": call.id}, LOG.deadline)
        return reply.get("ok")


@contextlib.contextmanager
def unrecorded():
    """Calls made inside keep no copies: for large inputs, and while memory is being measured."""
    LOG.record = False
    try:
        yield
    finally:
        LOG.record = True


@contextlib.contextmanager
def unrepeatable():
    """Calls made inside draw fresh randomness (rng=None): what they return cannot be replayed,
    so the diagnosis does not compare it."""
    LOG.repeatable = False
    try:
        yield
    finally:
        LOG.repeatable = True


@contextlib.contextmanager
def call_options(**opts):
    """How the attempt's process watches the calls made inside: memory=True traces the peak
    (Call.peak), warnings=True records warnings (Call.warnings), keep=True keeps the result
    for Candidate.fetch, global_seed=N seeds NumPy's global random state before each call."""
    saved = dict(LOG.opts)
    LOG.opts.update(opts)
    try:
        yield
    finally:
        LOG.opts = saved


def repro_for(calls: list[Call], inputs: Inputs | None, path: str | None,
              input_lines: list[str] | None = None) -> str:
    """A few lines of Python that rebuild the inputs and make the failing calls."""
    functions = sorted({c.function for c in calls})
    where = path or "your_file.py"
    lines = ["import numpy as np", "from runpy import run_path", f"attempt = run_path({where!r})"]
    lines += [f"{f} = attempt[{f!r}]" for f in functions]
    lines += input_lines if input_lines is not None else inputs.lines if inputs is not None else []
    for c in calls:
        lines.append(f"print({c.source})")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- expectations

def tolerance(dtype: Any, extreme: bool = False) -> tuple[float, float]:
    rtol, atol = TOLERANCE.get(np.dtype(dtype), TOLERANCE[np.dtype(np.float32)])
    if extreme and np.dtype(dtype) == np.float32:
        rtol = EXTREME_FLOAT32_RTOL
    return rtol, atol


def as_array(value: Any, what: str) -> np.ndarray:
    """The attempt's result as an array, or a one-line failure if it is not one."""
    if value is None:
        raise CheckFailed(f"{what} is None: did the function forget to `return`?", kind="type")
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (list, tuple, float, int, np.generic, bool)):
        try:
            arr = np.asarray(value)
            if arr.dtype != object:
                return arr
        except Exception:
            pass
    kind = value.type_name if isinstance(value, Opaque) else type(value).__name__  # as the attempt named it
    raise CheckFailed(f"{what} is a {kind}, expected a NumPy array", kind="type")


def expect_tuple(value: Any, n: int, what: str) -> tuple:
    if not isinstance(value, (tuple, list)) or len(value) != n:
        got = f"a {type(value).__name__}" + (f" of length {len(value)}" if isinstance(value, (tuple, list)) else "")
        raise CheckFailed(f"{what} returned {got}, expected a tuple of {n} arrays", kind="type")
    return tuple(value)


def expect_shape(value: Any, shape: tuple, what: str) -> np.ndarray:
    arr = as_array(value, what)
    if arr.shape != tuple(shape):
        raise CheckFailed(f"{what} has shape {arr.shape}, expected {tuple(shape)}", kind="shape")
    return arr


def expect_finite(value: Any, what: str) -> np.ndarray:
    arr = as_array(value, what)
    if np.issubdtype(arr.dtype, np.number) and not np.all(np.isfinite(arr)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise CheckFailed(f"{what} contains {arr[bad]} at index {list(bad)}", kind="finite")
    return arr


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def expect_close(value: Any, expected: np.ndarray, what: str, dtype: Any = np.float64,
                 extreme: bool = False, rtol: float | None = None, atol: float | None = None,
                 against: str = "the reference", hint: str | None = None) -> np.ndarray:
    """Agreement with `expected` within the contract's tolerance for `dtype`. The message
    says "{what} differs from {against} ..."; `hint` adds what the observation points to."""
    expected = np.asarray(expected)
    arr = expect_shape(value, expected.shape, what)
    r, a = tolerance(dtype, extreme)
    r, a = rtol if rtol is not None else r, atol if atol is not None else a
    if arr.dtype == np.bool_ or expected.dtype == np.bool_:  # a mask: the same entries, exactly
        ok = (arr == expected) if arr.dtype == expected.dtype else np.zeros(arr.shape, dtype=bool)
        got, want = arr.astype(np.float64), expected.astype(np.float64)
    else:
        got, want = arr.astype(np.float64), expected.astype(np.float64)
        ok = np.isclose(got, want, rtol=r, atol=a, equal_nan=True)
    if not np.all(ok):
        with np.errstate(invalid="ignore"):
            diff = np.where(ok, 0.0, np.abs(got - want))
            diff = np.where(np.isnan(diff), np.inf, diff)
            if not np.any(diff):  # the dtypes differ (bool against numbers): any entry will do
                diff = (~ok).astype(np.float64)
        idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(diff)), diff.shape)) if diff.ndim else ()
        n_bad = int((~ok).sum())
        gap = "NaN" if np.isnan(got[idx]) or np.isnan(want[idx]) else _fmt(float(np.abs(got[idx] - want[idx])))
        shown_got, shown_want = _apart(got[idx], want[idx])
        kind = f" (a {arr.dtype} array, expected {expected.dtype})" if (arr.dtype == np.bool_) != (
            expected.dtype == np.bool_) else ""
        raise CheckFailed(
            f"{what}{kind} differs from {against} in {n_bad} of {ok.size} entries, by up to {gap}: "
            f"at index {list(idx)} it is {shown_got}, expected {shown_want}"
            + (f" ({hint})" if hint else ""),
            kind="close",
        )
    return arr


def mismatch(got: Any, want: Any, rtol: float, atol: float):
    """None when `got` is close to `want`, else (how many entries differ, the index of the
    largest gap, the value there, the value wanted) for a message of a check's own."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    ok = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    if np.all(ok):
        return None
    with np.errstate(invalid="ignore"):
        gap = np.where(ok, 0.0, np.abs(got - want))
    gap = np.where(np.isnan(gap), np.inf, gap)
    idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(gap)), gap.shape))
    return int((~ok).sum()), idx, float(got[idx]), float(want[idx])


def _apart(a: float, b: float) -> tuple[str, str]:
    """Two numbers with as many digits as it takes for them to read differently (up to 17)."""
    for digits in (6, 9, 12, 17):
        x, y = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if x != y:
            return x, y
    return x, y


def expect_rows_sum_to_one(weights: Any, what: str = "the weights") -> None:
    w = as_array(weights, what)
    sums = w.sum(axis=-1)
    bad = ~np.isclose(sums, 1.0, rtol=1e-5, atol=1e-6)
    if np.any(bad):
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        row = idx[-1] if idx else 0
        where = f"row {row}" if len(idx) <= 1 else f"row {row} (at {list(idx[:-1])})"
        raise CheckFailed(f"{where} of {what} sums to {_fmt(float(sums[idx]))}, not 1", kind="rowsum")


def weights_picture(w: Any, marked, title: str) -> dict | None:
    """A (T_q, T_k) slice of weights as a picture for the report (see report.CheckResult),
    with the entries the message is about marked; None when it is too large to draw."""
    w = np.asarray(w, dtype=np.float64)
    if w.ndim != 2 or not 0 < w.shape[0] <= 40 or not 0 < w.shape[1] <= 40:
        return None
    values = [[None if not np.isfinite(v) else round(float(v), 4) for v in row] for row in w]
    return {"title": title, "values": values, "marked": [[int(i), int(j)] for i, j in marked],
            "rows": "query", "cols": "key"}


def expect_causal(weights: Any, t_k: int | None = None, what: str = "the weights") -> None:
    """Nothing attends to the future: blocked entries (bottom-right alignment) are exactly 0."""
    w = as_array(weights, what)
    t_q, tk = w.shape[-2], w.shape[-1]
    blocked = np.arange(tk)[None, :] > (tk - t_q + np.arange(t_q))[:, None]
    leak = (w != 0) & blocked       # NaN != 0 counts as a leak
    if np.any(leak):
        idx = tuple(int(i) for i in np.argwhere(leak)[0])
        lead = f" (at {list(idx[:-2])})" if len(idx) > 2 else ""
        plane = w[idx[:-2]]
        raise CheckFailed(
            f"in {what}{lead}, position {idx[-2]} attends to the later position {idx[-1]} (weight "
            f"{_fmt(float(w[idx]))}; {_not_zero(int(leak.sum()))} in the future): the future must get "
            f"weight exactly 0", kind="causal",
            picture=weights_picture(plane, np.argwhere(leak[idx[:-2]]), f"{what}{lead}: later positions marked"))


def _not_zero(n: int) -> str:
    return "1 entry is not 0" if n == 1 else f"{n} entries are not 0"


def _entries(n: int) -> str:
    return f"{n} entr{'y' if n == 1 else 'ies'}"


def expect_prefix_invariant(pairs: list[tuple[str, Any, Any]], t: int, total: int, dtype: Any = np.float64) -> None:
    """Cutting the input to its first t of `total` positions leaves those positions' outputs as
    they were. `pairs` holds (what, output for the first t positions alone, the same part of
    the output for all positions)."""
    rtol, atol = tolerance(dtype)
    for what, short, full in pairs:
        short, full = as_array(short, what).astype(np.float64), as_array(full, what).astype(np.float64)
        if short.shape != full.shape:
            raise CheckFailed(f"{what} of the first {t} positions alone has shape {short.shape}, but "
                              f"{full.shape} within all {total}", kind="prefix")
        ok = np.isclose(short, full, rtol=rtol, atol=atol, equal_nan=True)
        if not np.all(ok):
            idx = tuple(int(i) for i in np.argwhere(~ok)[0])
            raise CheckFailed(f"cutting the input to its first {t} of {total} positions changes {what} of those "
                              f"positions ({_entries(int((~ok).sum()))}): at index {list(idx)} it is "
                              f"{_fmt(short[idx])} with the first {t} alone and {_fmt(full[idx])} with all "
                              f"{total}; the past must not depend on the future", kind="prefix")


def expect_close_all(value: Any, expected: Any, what: str, dtype: Any = np.float64,
                     names: tuple[str, ...] = (), **kw) -> None:
    """expect_close through tuples, lists and dicts of results (e.g. (y, weights)), each part
    named in the message by `names` ("weights from <what>"), else by its index."""
    if isinstance(expected, (tuple, list)):
        got = expect_tuple(value, len(expected), what)
        for i, (g, e) in enumerate(zip(got, expected)):
            part = f"{names[i]} from {what}" if i < len(names) else f"result [{i}] of {what}"
            expect_close_all(g, e, part, dtype, **kw)
    elif isinstance(expected, dict):
        if not isinstance(value, dict) or set(value) != set(expected):
            raise CheckFailed(f"{what} has keys {sorted(value) if isinstance(value, dict) else type(value).__name__}, "
                              f"expected {sorted(expected)}", kind="type")
        for k in expected:
            expect_close_all(value[k], expected[k], f"{what}[{k!r}]", dtype, **kw)
    else:
        expect_close(value, expected, what, dtype, **kw)


def expect_repeatable(impl: "Candidate", calls: list[tuple[Callable[[], Any], Any]], dtype: Any = np.float64,
                      names: tuple[str, ...] = ()) -> None:
    """Calls do not leak into each other. `calls` holds (a function that makes one call of the
    attempt, the reference answer for it), in order: typically a first size, the same shape
    with other values, a larger size than any before, a smaller one again. Each answer is
    compared with its reference as it comes back (or judged by the reference, when that is a
    function `judge(answer, what)` that raises CheckFailed: for a large call whose answer is
    checked in part); after the last call, every earlier answer is fetched again from the
    attempt's process and must be what it was (a buffer reused by a later call shows here)."""
    made = []
    with call_options(keep=True):
        for n, (make, expected) in enumerate(calls, 1):
            out = make()
            call = LOG.calls[-1]
            what = f"call {n} of {len(calls)}, {call.source}"
            if callable(expected):
                expected(out, what)
            else:
                expect_close_all(out, expected, what, dtype, names)
            made.append((n, call, out))
    try:
        last = made[-1][1].id
        for n, call, out in made[:-1]:
            now = impl.fetch(call)
            call.later, call.later_seen, call.later_after = now, True, last
            if _differs(out, now):
                where = _first_difference(out, now, names)
                raise CheckFailed(f"what call {n}, {call.source}, returned was changed by the calls made after "
                                  f"it{where}: a result must stay as it was returned", kind="stale")
    finally:
        impl.box.request({"op": "forget"}, LOG.deadline)




def _first_difference(a: Any, b: Any, names: tuple[str, ...] = (), what: str = "the result") -> str:
    """' (the weights at [0, 1] was 0.25 when returned, 0.5 now)' for the first entry that changed."""
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        for i, (x, y) in enumerate(zip(a, b)):
            if _differs(x, y):
                return _first_difference(x, y, (), names[i] if i < len(names) else f"{what}[{i}]")
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and a.size:
        same = (a == b) | (np.isnan(a) & np.isnan(b)) if a.dtype.kind in "fc" else a == b
        idx = tuple(int(i) for i in np.argwhere(~same)[0])
        return f" ({what} at {list(idx)} was {_fmt(float(a[idx]))} when returned, {_fmt(float(b[idx]))} now)"
    return f" ({what})"


def expect_memory_below(make_call: Callable[[], Any], t: int) -> Any:
    """The contract's memory rule for blockwise attention: during `make_call()` (a call at
    T = t), the peak that tracemalloc sees stays below t * t bytes, one boolean (T, T) array.
    An allocation of four bytes a (query, key) pair or more fails at once in the attempt's
    process rather than being computed. Names `full_boolean_mask` (under four bytes a pair:
    a boolean or byte array, with the temporaries that build it) or `full_score_matrix` (four
    or more: float32 or float64 scores) as the cause."""
    budget, cap = t * t, 4 * t * t
    try:
        with unrecorded(), call_options(memory=True, memory_cap=cap):
            out = make_call()
    except AttemptRaised as exc:
        if not exc.original.is_a(MemoryError):
            raise
        raise CheckFailed(f"{last_call()} asked for more than {cap / 2**20:.0f} MiB beyond what it began with, "
                          f"4 bytes or more for each of the T x T (query, key) pairs at T={t}; the budget is "
                          f"{budget / 2**20:.0f} MiB, one byte a pair (one boolean T x T array)",
                          kind="memory", bug="full_score_matrix") from None
    peak = LOG.calls[-1].peak or 0
    if peak >= budget:
        per_pair = peak / budget
        named = "full_boolean_mask" if per_pair < 4 else "full_score_matrix"
        raise CheckFailed(f"the peak memory during {last_call()} was {peak / 2**20:.0f} MiB, {per_pair:.2g} bytes for "
                          f"each of the T x T (query, key) pairs at T={t}; the budget is {budget / 2**20:.0f} MiB, "
                          f"one byte a pair (one boolean T x T array)", kind="memory", bug=named)
    return out


def expect_raises(error: type, fn: Callable, *args, why: str, **kwargs) -> None:
    """The call raises `error` (the contract names the ValueErrors)."""
    try:
        fn(*args, **kwargs)
    except AttemptRaised as exc:
        if exc.original.is_a(error):
            return
        raise CheckFailed(f"{last_call()} raised {exc.original.type_name}, expected {error.__name__} ({why})",
                          kind="raises") from None
    raise CheckFailed(f"{last_call()} returned normally, expected {error.__name__} ({why})", kind="raises")


def expect_inputs_unchanged() -> None:
    """No call wrote into its arguments: neither in this case nor in any earlier check of the
    grading (every call's arguments are compared after it, whatever their dtype or size)."""
    for c in LOG.calls:
        if c.mutated:
            raise CheckFailed(f"{c.source} modified its input {_listed(c.mutated)}: the caller's arrays "
                              f"are not the function's to change", kind="mutated")
    earlier = next((c for c in MUTATIONS if c not in LOG.calls), None)
    if earlier is not None:
        failure = CheckFailed(f"{earlier.source} modified its input {_listed(earlier.mutated)} (a call made in "
                              f"the check '{earlier.check}'): the caller's arrays are not the function's to "
                              f"change", kind="mutated")
        failure.calls, failure.earlier = [earlier], earlier
        raise failure


def _listed(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in dict.fromkeys(names))


# ----------------------------------------------------------------------------- @check

def _describe_case(case: dict) -> str:
    return ", ".join(v if k == "dtype" else f"{k}={v}" for k, v in case.items() if k != "seed")


def _smaller(case: dict, minimum: dict) -> list[dict]:
    """Cases one step smaller than `case`: each size to its minimum, halved, or minus one."""
    out = []
    for k, v in case.items():
        if k == "seed" or isinstance(v, bool):
            continue
        if isinstance(v, int):
            lo = minimum.get(k, 1)
            for nv in (lo, v // 2, v - 1):
                if lo <= nv < v:
                    out.append({**case, k: nv})
        elif isinstance(v, tuple) and all(isinstance(s, int) for s in v):
            lo = minimum.get(k, 1)
            for i, s in enumerate(v):
                for ns in (lo, s // 2, s - 1):
                    if lo <= ns < s:
                        out.append({**case, k: v[:i] + (ns,) + v[i + 1:]})
    seen, unique = set(), []
    for c in out:
        key = repr(sorted(c.items()))
        if key not in seen:
            seen.add(key)
            unique.append(c)
    return unique


def _size(case: dict) -> int:
    total = 0
    for k, v in case.items():
        if k == "seed" or isinstance(v, bool):
            continue
        if isinstance(v, int):
            total += v
        elif isinstance(v, tuple):
            total += sum(s for s in v if isinstance(s, int))
    return total


def check(name: str, cases: list[dict] | None = None, *, shrink: bool = True,
          minimum: dict | None = None, valid: Callable[[dict], bool] | None = None,
          timeout: float | None = None, slow: str | None = None):
    """Declare a property. `name` is what the candidate reads; each case runs in turn.

    The body is `body(impl, x, **case)` (or with `ref` too), where `x` is a fresh
    `Inputs` seeded by the case's `seed` (default 0). On the first failing case the
    sizes in the case are shrunk while the same kind of failure persists, and the
    failure carries the smallest case, its calls and a repro.

    `slow` marks a check that costs far more than the others (a call at T = 8192, say) and
    says why: the judge runs it once every other check passes, and reports it as not run
    yet until then, so a failing attempt is not made to wait for it.
    """
    cases = cases or [{}]
    minimum = minimum or {}

    def decorate(body: Callable) -> Callable:
        attempt_case = _case_runner(body)

        def test(impl, ref):
            LOG.check = name
            for case in cases:
                failure = attempt_case(impl, ref, case)
                if failure is None:
                    continue
                if shrink and not isinstance(failure, NotImplementedYet) and failure.case is not None:
                    failure = _shrink(impl, ref, failure, attempt_case, _same_kind, minimum, valid)
                if failure.case and _describe_case(failure.case):
                    failure.message = f"{failure.message} [{_describe_case(failure.case)}]"
                    failure.args = (failure.message,)
                raise failure

        # pytest reads the wrapper's own signature (impl, ref), so copy names by hand
        test.__name__, test.__qualname__ = body.__name__, body.__qualname__
        test.__module__, test.__doc__ = body.__module__, body.__doc__ or name
        test.check_name = name
        test.timeout = timeout  # seconds, when this check needs longer than the default
        test.slow = slow
        return test

    return decorate


def _case_runner(body: Callable) -> Callable:
    """attempt_case(impl, ref, case): None if the case passes, else the failure with its calls,
    its case and a repro. Every recorded call joins HISTORY, passing or failing."""
    wants_ref = "ref" in inspect.signature(body).parameters

    def attempt_case(impl, ref, case):
        x = Inputs(case.get("seed", 0))
        LOG.calls, LOG.inputs = [], x
        try:
            params = {k: v for k, v in case.items() if k != "seed"}
            body(impl, x, **({"ref": ref} if wants_ref else {}), **params)
        except CheckFailed as exc:
            earlier = getattr(exc, "earlier", None)
            if earlier is not None:  # the failing call was made in another check
                lines, count = earlier.repro
                exc.repro = repro_for([earlier], None, getattr(impl, "_path", None), lines[:count])
                return exc
            exc.calls, exc.case = list(LOG.calls), case
            exc.repro = repro_for(LOG.calls, LOG.inputs, getattr(impl, "_path", None))
            return exc
        finally:
            for c in LOG.calls:  # a call whose arguments the check changed since cannot be replayed
                c.recorded = c.recorded and _intact(c)
            HISTORY.extend(c for c in LOG.calls if c.recorded)
        return None

    return attempt_case


def _same_kind(a: CheckFailed, b: CheckFailed) -> bool:
    """Two failures of one check are the same kind: what the shrinker keeps while it shrinks."""
    if a.kind != b.kind:
        return False
    if isinstance(a, AttemptRaised):
        return a.original.type_name == b.original.type_name
    return True


def _shrink(impl, ref, failure, attempt_case, same_kind, minimum, valid):
    """The smallest case that fails the same way, found within SHRINK_SECONDS. A call that
    hangs or crashes while shrinking ends the search (the judge restarts the attempt's
    process before the next check) and the failure found so far stands."""
    deadline = time.monotonic() + SHRINK_SECONDS
    check_deadline, LOG.deadline = LOG.deadline, min(LOG.deadline, deadline + 1.0)
    improved = True
    try:
        while improved and time.monotonic() < deadline:
            improved = False
            for smaller in sorted(_smaller(failure.case, minimum), key=_size):
                if valid is not None and not valid(smaller):
                    continue
                if time.monotonic() > deadline:
                    break
                again = attempt_case(impl, ref, smaller)
                if again is not None and again.case is not None and same_kind(again, failure):
                    failure, improved = again, True
                    break
    except AttemptGone:
        pass
    finally:
        LOG.deadline = check_deadline
    return failure
