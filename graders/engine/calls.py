"""How the explorer makes its calls and compares what comes back (graders.engine.explorer).

The arguments come from the kata's `draw` and the reference's signature: parameters with
no default are passed positionally, the others by keyword. The reference is called here on
float64 copies; the attempt through `impl`. Every comparison states what was observed:
which call, which entry, what came back and what was expected.
"""
from __future__ import annotations

import copy
import functools
import inspect
from typing import Any

import numpy as np

from graders.engine import grammar, palettes
from graders.engine.domain import Explore
from graders.engine.failures import AttemptRaised, CheckFailed, NotApplicable, NotImplementedYet
from graders.engine.inputs import Inputs, laid_out, laid_out_expr
from graders.engine.vocabulary import expect_close, expect_raises, tolerance
from graders.engine.wire import digest

REFUSED = object()      # what the reference does with a call the contract rules out: ValueError
LAYOUTS = ("fortran", "transposed", "strided", "readonly", "broadcast", "aliased")
LAYOUT_WORDS = {"fortran": "in Fortran order", "transposed": "as transposed views", "strided": "as strided views",
                "readonly": "read-only", "broadcast": "as zero-stride broadcast views",
                "aliased": "with one array passed for every argument of its shape"}


# ----------------------------------------------------------------------------- calls

def parameters(ref, function: str) -> list[inspect.Parameter]:
    return list(_parameters(getattr(ref, function)))


@functools.lru_cache(maxsize=256)
def _parameters(fn) -> tuple[inspect.Parameter, ...]:
    """The reference's parameters (its functions live as long as the grader: read once)."""
    return tuple(inspect.signature(fn).parameters.values())


def arguments(ex: Explore, new: Inputs, case: dict, ref) -> tuple[tuple, dict]:
    """The call `case` describes: its required arguments positionally, the rest by keyword."""
    values = drawn(ex, new, case)
    return split(values, parameters(ref, ex.function))


def drawn(ex: Explore, new: Inputs, case: dict) -> dict:
    """The arguments of `case` by name: the kata's `draw`, then the engine's whole-array family
    and the typing of the scalar arguments the case asks for (graders.engine.palettes)."""
    values = ex.draw(new, case)
    if case.get("values") in palettes.ENGINE_FAMILIES:
        axis = case.get(ex.axis[0], -1) if ex.axis is not None else -1
        values = palettes.whole_array(new, values, case["values"], ex.scaled, axis)
    return palettes.numbered(new, values, case.get("numbers"))


def split(values: dict, params: list) -> tuple[tuple, dict]:
    args = tuple(values[p.name] for p in params if p.default is inspect.Parameter.empty)
    kwargs = {p.name: values[p.name] for p in params if p.default is not inspect.Parameter.empty and p.name in values}
    return args, kwargs


def _float64(value: Any) -> Any:
    """`value` with every float array in float64, containers copied, Generators copied."""
    if isinstance(value, np.ndarray):
        return value.astype(np.float64) if value.dtype.kind == "f" else value.copy()
    if isinstance(value, tuple):
        return tuple(_float64(v) for v in value)
    if isinstance(value, list):
        return [_float64(v) for v in value]
    if isinstance(value, dict):
        return {k: _float64(v) for k, v in value.items()}
    if isinstance(value, np.random.Generator):
        return copy.deepcopy(value)
    return value


# The reference's answers by (module, function, fingerprints of the arguments, the state of each
# Generator among them): the explorer draws the same seeded cases at every grading, so a process
# that grades many files (kata watch, the project's tests) asks the same questions again, and a
# grading asks some twice (a case sent ahead, then made; its rules held after).
_ANSWERS: dict[tuple, Any] = {}
ANSWERS_KEPT = 20_000


def expected(ref, function: str, args: tuple, kwargs: dict, digests: dict | None = None) -> Any:
    """The reference's answer on float64 copies of the arguments, or REFUSED (a ValueError).
    The answer is shared: callers read it, never write into it. `digests`: the arguments'
    fingerprints when already taken (a recorded call's, graders.engine.recorder.fingerprints)."""
    values = (*args, *kwargs.values())
    states = tuple(digest(v.bit_generator.state) for v in values if isinstance(v, np.random.Generator))

    def one(key, v):
        found = digests.get(key) if digests is not None else None
        return found if found is not None else digest(v)

    key = (id(ref), function, tuple(one(i, v) for i, v in enumerate(args)),
           tuple((k, one(k, v)) for k, v in kwargs.items()), states)
    if key in _ANSWERS:
        return _ANSWERS[key]
    try:
        answer = getattr(ref, function)(*_float64(args), **_float64(kwargs))
    except ValueError:
        answer = REFUSED
    if len(_ANSWERS) >= ANSWERS_KEPT:
        _ANSWERS.clear()
    _ANSWERS[key] = answer
    return answer


def fresh_generators(values: Any) -> Any:
    """`values` with each Generator copied, so that two calls draw the same numbers (a container
    that holds none is itself: a repro names it)."""
    if isinstance(values, np.random.Generator):
        return copy.deepcopy(values)
    if isinstance(values, tuple):
        made = tuple(fresh_generators(v) for v in values)
        return values if all(m is v for m, v in zip(made, values)) else made
    if isinstance(values, dict):
        made = {k: fresh_generators(v) for k, v in values.items()}
        return values if all(made[k] is v for k, v in values.items()) else made
    return values


# ----------------------------------------------------------------------------- comparing

# Below this scale of the data, the contract's atol (set for data of order 1) would pass any answer:
# the comparison is then relative to the answer's own scale (scale_of).
SCALE_FLOOR = 1e-3


def scale_of(args: tuple, kwargs: dict) -> float | None:
    """The scale of a call's data: the largest finite magnitude of its first float array (None
    when it takes none: an answer computed from integers)."""
    data = next((v for v in (*args, *kwargs.values()) if isinstance(v, np.ndarray) and v.dtype.kind == "f"
                 and v.size), None)
    if data is None:
        return None
    finite = np.abs(data[np.isfinite(data)])
    return float(finite.max()) if finite.size else 0.0


def expect_same(got: Any, want: Any, what: str, dtype: Any = "float64", extreme: bool = False,
                against: str = "the reference", data: float | None = 1.0) -> None:
    """`got` is `want`: tuples part by part, dicts key by key, arrays entry by entry within the
    contract's tolerance for `dtype`, integers exactly. `data` (scale_of the call's arguments):
    where the data lie far below 1 (or the answer comes from integers alone) and so does an
    answer, its atol is taken relative to that answer's largest magnitude, not the contract's
    absolute one, which would pass anything there."""
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            raise CheckFailed(f"{what} returned {_kind(got)}, expected a tuple of {len(want)}", kind="type")
        for i, (g, w) in enumerate(zip(got, want)):
            expect_same(g, w, f"result [{i}] of {what}", dtype, extreme, against, data)
    elif isinstance(want, dict):
        if not isinstance(got, dict) or set(got) != set(want):
            keys = sorted(map(str, got)) if isinstance(got, dict) else _kind(got)
            raise CheckFailed(f"{what} returned {keys}, expected a dict with keys {sorted(map(str, want))}", kind="type")
        for k in want:
            expect_same(got[k], want[k], f"{what}[{k!r}]", dtype, extreme, against, data)
    elif _integer(want):
        if not _integer(got) or np.shape(got) != np.shape(want) or not np.array_equal(got, want):
            raise CheckFailed(f"{what} is {_short(got)}, expected {_short(want)} (from {against})", kind="close")
    elif want is None:
        if got is not None:
            raise CheckFailed(f"{what} is {_kind(got)}, expected None", kind="type")
    else:
        want = np.asarray(want)
        expect_close(got, want, what, dtype, extreme=extreme, against=against, atol=_relative_atol(want, dtype, data))


def _relative_atol(want: np.ndarray, dtype, data: float | None) -> float | None:
    """The atol for `want` when the data and the answer both lie below SCALE_FLOOR: the contract's
    atol times the answer's largest magnitude; else None (the contract's own)."""
    if data is not None and data >= SCALE_FLOOR:
        return None
    if want.dtype.kind not in "fc" or not want.size:
        return None
    finite = np.abs(want[np.isfinite(want)])
    top = float(finite.max()) if finite.size else 0.0
    if not 0 < top < SCALE_FLOOR:
        return None
    return tolerance(dtype)[1] * top


def _integer(v: Any) -> bool:
    if isinstance(v, bool) or isinstance(v, np.bool_):
        return False
    if isinstance(v, (int, np.integer)):
        return True
    return isinstance(v, np.ndarray) and v.dtype.kind in "iu"


def _kind(v: Any) -> str:
    return grammar.a(getattr(v, "type_name", None) or type(v).__name__)


def _short(v: Any) -> str:
    text = repr(v.tolist() if isinstance(v, np.ndarray) else v)
    return text if len(text) < 80 else text[:77] + "..."


def expect_value_error(fn, args: tuple, kwargs: dict, why: str) -> None:
    expect_raises(ValueError, fn, *args, why=why, **kwargs)


def _outcome(fn, args: tuple, kwargs: dict):
    """(what the call returned, None) or (None, the AttemptRaised)."""
    try:
        return fn(*args, **kwargs), None
    except NotImplementedYet:
        raise
    except AttemptRaised as exc:
        return None, exc


# ----------------------------------------------------------------------------- call styles

def expect_styles(impl, ex: Explore, new: Inputs, case: dict, ref) -> None:
    """Positionally, by keyword, defaults left out: the same answer as the plain call, which
    passes every optional parameter by keyword, at the contract's default where the case
    gives none."""
    params = parameters(ref, ex.function)
    values = drawn(ex, new, case)
    fn = getattr(impl, ex.function)
    dtype = case.get("dtype", "float64")
    defaults = [p for p in params if p.default is not inspect.Parameter.empty and not _fresh_randomness(p, values)]
    full = dict(values, **{p.name: p.default for p in defaults if p.name not in values})
    full = {p.name: full[p.name] for p in params if p.name in full}
    plain, raised = _outcome(fn, *split(fresh_generators(full), params))
    source = impl.last_call()
    if raised is not None:  # the kata's own checks say why; here there is no answer to compare with
        raise NotApplicable(_no_answer(source, raised))
    ordered = [full[p.name] for p in params if p.name in full]
    variants = [("every argument passed positionally", tuple(fresh_generators(ordered)), {}),
                ("every argument passed by keyword", (), fresh_generators(dict(full)))]
    left = [p.name for p in defaults if full[p.name] is p.default or equal(full[p.name], p.default)]
    if left:
        variants.append((f"{_listed(left)} left out, so the default{'s apply' if len(left) > 1 else ' applies'}",
                         *split(fresh_generators({k: v for k, v in full.items() if k not in left}), params)))
    for label, vargs, vkwargs in variants:
        _same_call(fn, vargs, vkwargs, plain, source, label, dtype, ex, params)


def _no_answer(source: str, raised: AttemptRaised) -> str:
    return f"{source} raised {raised.original.type_name}, so there is no answer to compare the other calls with"


def equal(a, b) -> bool:
    """The same value, of the same type (a scalar, a string: what `==` says of them)."""
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def _fresh_randomness(p: inspect.Parameter, values: dict) -> bool:
    """A parameter whose default draws fresh randomness (rng=None): left out, no two calls agree."""
    return p.default is None and isinstance(values.get(p.name), np.random.Generator)


def _same_call(fn, args, kwargs, plain, source: str, label: str, dtype, ex: Explore, params) -> None:
    got, raised = _outcome(fn, args, kwargs)
    shown = f"def {ex.function}({', '.join(str(p) for p in params)})"
    if raised is not None:
        raise CheckFailed(f"{fn.candidate.last_call()} ({label}) raised {raised.original.type_name}: "
                          f"{raised.original.message}, where {source} returned; the contract's signature is "
                          f"`{shown}`", kind="raised")
    expect_same(got, plain, f"{fn.candidate.last_call()} ({label})", dtype, against=source)


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# ----------------------------------------------------------------------------- layouts

def relaid(new: Inputs, values: dict, layout: str) -> dict | None:
    """`values` with every array (in containers too) laid out as `layout`, each under a name of
    its own (`z_fortran`); None when the layout does not apply (nothing to broadcast, no two
    arguments of one shape)."""
    if layout == "aliased":
        return _aliased(values)
    out, changed = {}, False
    for name, v in values.items():
        shown = new.name_of(v) or name
        if layout == "broadcast":
            laid = np.broadcast_to(v[:1], v.shape) if isinstance(v, np.ndarray) and v.ndim and v.shape[0] > 1 else None
            expr = f"np.broadcast_to({shown}[:1], {shown}.shape)"
        else:
            laid = laid_out(v, layout)
            expr = laid_out_expr(v, layout, shown) if laid is not None else ""
        out[name] = v if laid is None else new.let(f"{shown}_{layout}", laid, expr)
        changed = changed or laid is not None
    return out if changed else None


def _aliased(values: dict) -> dict | None:
    """Float arrays of one shape and dtype all given the first of them (q, k and v as one)."""
    firsts, out = {}, dict(values)
    for name, v in values.items():
        if isinstance(v, np.ndarray) and v.ndim and v.dtype.kind == "f":
            out[name] = firsts.setdefault((v.shape, v.dtype), v)
    return out if any(out[k] is not values[k] for k in values) else None


def _apart(new: Inputs, variant: dict, values: dict) -> dict:
    """The plain call for a variant that changed values (broadcast) or shares them (aliased):
    the variant's values, each changed argument a C-ordered array of its own."""
    out = {}
    for k, v in variant.items():
        if isinstance(v, np.ndarray) and v is not values[k]:
            out[k] = new.let(f"{k}_apart", np.array(v), f"np.array({new.name_of(v) or k})")
        else:
            out[k] = v
    return out


def expect_layout(impl, ex: Explore, new: Inputs, case: dict, ref, layout: str) -> None:
    """The same values in another layout give the same answer as the plain call."""
    params = parameters(ref, ex.function)
    values = drawn(ex, new, case)
    variant = relaid(new, values, layout)
    if variant is None:
        raise NotApplicable(f"{ex.function} takes no argument that can be laid out {LAYOUT_WORDS[layout]}")
    if layout in ("broadcast", "aliased"):
        values = _apart(new, variant, values)
    fn = getattr(impl, ex.function)
    plain, raised = _outcome(fn, *split(fresh_generators(values), params))
    source = impl.last_call()
    if raised is not None:  # the kata's own checks say why; here there is no answer to compare with
        raise NotApplicable(_no_answer(source, raised))
    got, raised = _outcome(fn, *split(fresh_generators(variant), params))
    what = f"{impl.last_call()}, its inputs {LAYOUT_WORDS[layout]},"
    if raised is not None:
        raise CheckFailed(f"{what} raised {raised.original.type_name}: {raised.original.message}"
                          f"{raised.original.location()}, where {source} with the same values returned", kind="raised")
    expect_same(got, plain, what, case.get("dtype", "float64"), against=f"{source} (the same values, C-ordered)")
