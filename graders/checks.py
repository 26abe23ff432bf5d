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
import os
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

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

    def __init__(self, message: str, *, kind: str | None = None, bug: str | None = None):
        super().__init__(message)
        self.message = message
        if kind:
            self.kind = kind
        # a check that can tell the cause from what it measured names the known bug itself
        self.bug = bug
        self.repro: str | None = None
        self.calls: list[Call] = []
        self.case: dict | None = None


class AttemptRaised(CheckFailed):
    """The attempt raised an exception where it should have returned."""

    kind = "raised"

    def __init__(self, message: str, original: BaseException):
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
        self.rng = np.random.default_rng(seed)
        self.lines: list[str] = []
        self.names: dict[int, str] = {}
        self._keep: list[Any] = []  # keep registered objects alive so ids stay unique

    def _register(self, name: str, value: Any, line: str) -> Any:
        self.lines.append(line)
        self.names[id(value)] = name
        self._keep.append(value)
        return value

    def normal(self, name: str, shape: tuple, scale: float = 1.0, dtype: Any = np.float64):
        """Standard normal entries times `scale`, drawn from this case's generator."""
        if not any("rng = " in line for line in self.lines):
            self.lines.append(f"rng = np.random.default_rng({self.seed})")
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


LAYOUTS = ("fortran", "swapped", "strided", "read-only")


def laid_out(new: Inputs, name: str, src: np.ndarray, src_name: str, layout: str) -> np.ndarray:
    """`src`'s numbers registered as `name` in another memory layout: Fortran order, axes 0 and 1
    swapped in memory (neither C nor Fortran order), every other number of a larger buffer, or a
    read-only copy. `src_name` is how the repro already calls `src`."""
    if layout == "fortran":
        value, expr = np.asfortranarray(src), f"np.asfortranarray({src_name})"
    elif layout == "swapped":
        value = np.ascontiguousarray(src.swapaxes(0, 1)).swapaxes(0, 1)
        expr = f"np.ascontiguousarray({src_name}.swapaxes(0, 1)).swapaxes(0, 1)"
    elif layout == "strided":
        value = np.stack([src, np.zeros_like(src)], axis=-1)[..., 0]
        expr = f"np.stack([{src_name}, np.zeros_like({src_name})], axis=-1)[..., 0]"
    elif layout == "read-only":
        value = src.copy()
        value.flags.writeable = False
        expr = f"{src_name}.copy(); {name}.flags.writeable = False"
    else:
        raise ValueError(f"unknown layout {layout!r}; one of {LAYOUTS}")
    return new.let(name, value, expr)


# ----------------------------------------------------------------------------- calls

@dataclass
class Call:
    """One call of the attempt: how it was made and what came of it."""

    function: str
    args: tuple
    kwargs: dict
    source: str                 # e.g. "softmax(z, axis=0)"
    outcome: Any = None         # the return value, or the exception raised
    mutated: list[str] = field(default_factory=list)
    recorded: bool = True       # False when the arguments were too large to keep


class _Log:
    """The calls of the case being run now."""

    def __init__(self):
        self.calls: list[Call] = []
        self.inputs: Inputs | None = None
        self.record = True


LOG = _Log()
# Every recorded call of the run, passing or failing, for diagnosis.
HISTORY: list["Call"] = []


def _nbytes(obj: Any) -> int:
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (list, tuple)):
        return sum(_nbytes(o) for o in obj)
    if isinstance(obj, dict):
        return sum(_nbytes(o) for o in obj.values())
    return 0


def _attempt_frame(exc: BaseException, path: str | None) -> str:
    """' (line 12 of your file: `return e / s`)' for the deepest frame in the attempt."""
    if not path:
        return ""
    where = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(frame.filename) == os.path.abspath(path):
            code = (frame.line or "").strip()
            where = f" (line {frame.lineno} of your file" + (f": `{code}`" if code else "") + ")"
    return where


def copy_args(value: Any) -> Any:
    """A deep copy of a call's arguments in which read-only arrays stay read-only, so that a
    replay of the call meets the inputs the attempt met."""
    copied = copy.deepcopy(value)
    _keep_read_only(value, copied)
    return copied


def _keep_read_only(a: Any, b: Any) -> None:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if not a.flags.writeable:
            b.flags.writeable = False
    elif isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        for x, y in zip(a, b):
            _keep_read_only(x, y)
    elif isinstance(a, dict) and isinstance(b, dict):
        for k in a.keys() & b.keys():
            _keep_read_only(a[k], b[k])


def _differs(a: Any, b: Any) -> bool:
    """True when an argument was written into: an array, or a tuple, list or dict holding arrays."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.shape != b.shape or not np.array_equal(a, b, equal_nan=True)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) != len(b) or any(_differs(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() != b.keys() or any(_differs(a[k], b[k]) for k in a)
    return False


class Recorded:
    """A function of the attempt, called through the recorder."""

    def __init__(self, name: str, fn: Callable, path: str | None):
        self.name, self.fn, self.path = name, fn, path

    def __call__(self, *args, **kwargs):
        inputs = LOG.inputs
        source = f"{self.name}({_render_args(args, kwargs, inputs)})"
        small = LOG.record and _nbytes((args, kwargs)) <= RECORD_LIMIT_BYTES
        before = copy_args((args, kwargs)) if small else None
        call = Call(self.name, *(before if small else ((), {})), source=source, recorded=small)
        LOG.calls.append(call)
        try:
            out = self.fn(*args, **kwargs)
        except NotImplementedError as exc:
            call.outcome = exc
            raise NotImplementedYet(self.name) from None
        except SystemExit as exc:
            call.outcome = exc
            message = f"{source} called sys.exit({exc.code!r}){_attempt_frame(exc, self.path)}: return a result instead"
            raise AttemptRaised(message, exc) from None
        except Exception as exc:  # the attempt's own error, explained in one line
            call.outcome = exc
            what = "ran out of memory:" if isinstance(exc, MemoryError) else "raised"
            message = f"{source} {what} {type(exc).__name__}: {_first_line(exc)}{_attempt_frame(exc, self.path)}"
            raise AttemptRaised(message, exc) from None
        if small:
            for name, old, new in _named_arrays(before, (args, kwargs), inputs):
                if _differs(old, new):
                    call.mutated.append(name)
            call.outcome = copy.deepcopy(out) if _nbytes(out) <= RECORD_LIMIT_BYTES else None
        return out


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else "(no message)"


def _named_arrays(before, after, inputs):
    (bargs, bkw), (aargs, akw) = before, after
    for i, (old, new) in enumerate(zip(bargs, aargs)):
        yield (inputs.name_of(new) if inputs else None) or f"argument {i + 1}", old, new
    for k in akw:
        yield k, bkw[k], akw[k]


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


class Attempt:
    """The candidate's module, seen through the recorder."""

    def __init__(self, module: Any, path: str | None = None):
        self._module = module
        self._path = path

    def __getattr__(self, name: str) -> Recorded:
        fn = getattr(self._module, name, None)
        if not callable(fn):
            raise CheckFailed(f"your file defines no function `{name}`", kind="missing")
        return Recorded(name, fn, self._path)


@contextlib.contextmanager
def unrecorded():
    """Calls made inside keep no copies: for large inputs, and while memory is being measured."""
    LOG.record = False
    try:
        yield
    finally:
        LOG.record = True


def repro_for(calls: list[Call], inputs: Inputs | None, path: str | None) -> str:
    """A few lines of Python that rebuild the inputs and make the failing calls."""
    functions = sorted({c.function for c in calls})
    where = path or "your_file.py"
    lines = ["import numpy as np", "from runpy import run_path", f"attempt = run_path({where!r})"]
    lines += [f"{f} = attempt[{f!r}]" for f in functions]
    if inputs is not None:
        lines += inputs.lines
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
    raise CheckFailed(f"{what} is a {type(value).__name__}, expected a NumPy array", kind="type")


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
                 extreme: bool = False, rtol: float | None = None, atol: float | None = None) -> np.ndarray:
    """Agreement with the reference within the contract's tolerance for `dtype`."""
    expected = np.asarray(expected)
    arr = expect_shape(value, expected.shape, what)
    r, a = tolerance(dtype, extreme)
    r, a = rtol if rtol is not None else r, atol if atol is not None else a
    got = arr.astype(np.float64) if arr.dtype != np.bool_ else arr
    want = expected.astype(np.float64) if expected.dtype != np.bool_ else expected
    ok = np.isclose(got, want, rtol=r, atol=a, equal_nan=True)
    if not np.all(ok):
        with np.errstate(invalid="ignore"):
            diff = np.where(ok, 0.0, np.abs(got - want))
            diff = np.where(np.isnan(diff), np.inf, diff)
        idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(diff)), diff.shape)) if diff.ndim else ()
        n_bad = int((~ok).sum())
        gap = "NaN" if np.isnan(got[idx]) or np.isnan(want[idx]) else _fmt(float(np.abs(got[idx] - want[idx])))
        raise CheckFailed(
            f"{what} differs from the reference in {n_bad} of {ok.size} entries, by up to {gap}: "
            f"at index {list(idx)} it is {_fmt(got[idx])}, expected {_fmt(want[idx])}",
            kind="close",
        )
    return arr


def expect_rows_sum_to_one(weights: Any, what: str = "the weights") -> None:
    w = as_array(weights, what)
    sums = w.sum(axis=-1)
    bad = ~np.isclose(sums, 1.0, rtol=1e-5, atol=1e-6)
    if np.any(bad):
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        row = idx[-1] if idx else 0
        where = f"row {row}" if len(idx) <= 1 else f"row {row} (at {list(idx[:-1])})"
        raise CheckFailed(f"{where} of {what} sums to {_fmt(float(sums[idx]))}, not 1", kind="rowsum")


def expect_causal(weights: Any, t_k: int | None = None, what: str = "the weights") -> None:
    """Nothing attends to the future: blocked entries are exactly 0."""
    w = as_array(weights, what)
    t_q, tk = w.shape[-2], w.shape[-1]
    blocked = np.arange(tk)[None, :] > (tk - t_q + np.arange(t_q))[:, None]
    leak = (w != 0) & blocked
    if np.any(leak):
        idx = tuple(int(i) for i in np.argwhere(leak)[0])
        lead = f" (at {list(idx[:-2])})" if len(idx) > 2 else ""
        raise CheckFailed(
            f"position {idx[-2]} attends to position {idx[-1]} (weight {_fmt(float(w[idx]))}){lead}: "
            f"the future must get weight exactly 0",
            kind="causal",
        )


def expect_raises(error: type, fn: Callable, *args, why: str, **kwargs) -> None:
    """The call raises `error` (the contract names the ValueErrors)."""
    try:
        fn(*args, **kwargs)
    except AttemptRaised as exc:
        if isinstance(exc.original, error):
            return
        call = LOG.calls[-1].source if LOG.calls else "the call"
        raise CheckFailed(
            f"{call} raised {type(exc.original).__name__}, expected {error.__name__} ({why})",
            kind="raises") from None
    call = LOG.calls[-1].source if LOG.calls else "the call"
    raise CheckFailed(f"{call} returned normally, expected {error.__name__} ({why})", kind="raises")


def expect_inputs_unchanged() -> None:
    """No call of this case wrote into its arguments."""
    for c in LOG.calls:
        if c.mutated:
            raise CheckFailed(
                f"{c.source} modified its input {', '.join('`%s`' % m for m in c.mutated)}: "
                f"work on a copy or build a new array",
                kind="mutated",
            )


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
          timeout: float | None = None):
    """Declare a property. `name` is what the candidate reads; each case runs in turn.

    The body is `body(impl, x, **case)` (or with `ref` too), where `x` is a fresh
    `Inputs` seeded by the case's `seed` (default 0). On the first failing case the
    sizes in the case are shrunk while the same kind of failure persists, and the
    failure carries the smallest case, its calls and a repro.
    """
    cases = cases or [{}]
    minimum = minimum or {}

    def decorate(body: Callable) -> Callable:
        wants_ref = "ref" in inspect.signature(body).parameters

        def run_case(impl, ref, case):
            x = Inputs(case.get("seed", 0))
            LOG.calls, LOG.inputs = [], x
            params = {k: v for k, v in case.items() if k != "seed"}
            kwargs = {"ref": ref} if wants_ref else {}
            body(impl, x, **kwargs, **params)

        def attempt_case(impl, ref, case):
            """None if the case passes, else the failure with its calls and inputs."""
            try:
                run_case(impl, ref, case)
            except CheckFailed as exc:
                exc.calls, exc.case = list(LOG.calls), case
                exc.repro = repro_for(LOG.calls, LOG.inputs, getattr(impl, "_path", None))
                return exc
            finally:
                HISTORY.extend(c for c in LOG.calls if c.recorded)
            return None

        def same_kind(a: CheckFailed, b: CheckFailed) -> bool:
            if a.kind != b.kind:
                return False
            if isinstance(a, AttemptRaised):
                return type(a.original) is type(b.original)
            return True

        def test(impl, ref):
            for case in cases:
                failure = attempt_case(impl, ref, case)
                if failure is None:
                    continue
                if shrink and not isinstance(failure, NotImplementedYet):
                    failure = _shrink(impl, ref, failure, attempt_case, same_kind, minimum, valid)
                if failure.case and _describe_case(failure.case):
                    failure.message = f"{failure.message} [{_describe_case(failure.case)}]"
                    failure.args = (failure.message,)
                raise failure

        # pytest reads the wrapper's own signature (impl, ref), so copy names by hand
        test.__name__, test.__qualname__ = body.__name__, body.__qualname__
        test.__module__, test.__doc__ = body.__module__, body.__doc__ or name
        test.check_name = name
        test.timeout = timeout  # seconds, when this check needs longer than the default
        return test

    return decorate


def _shrink(impl, ref, failure, attempt_case, same_kind, minimum, valid):
    deadline = time.perf_counter() + SHRINK_SECONDS
    improved = True
    while improved and time.perf_counter() < deadline:
        improved = False
        for smaller in sorted(_smaller(failure.case, minimum), key=_size):
            if valid is not None and not valid(smaller):
                continue
            if time.perf_counter() > deadline:
                break
            again = attempt_case(impl, ref, smaller)
            if again is not None and same_kind(again, failure):
                failure, improved = again, True
                break
    return failure
