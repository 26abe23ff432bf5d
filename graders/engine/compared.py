"""One failing call beside the reference's answer to it, with everything the relation finder
needs to word what it finds: the call's arrays, the case's numbers a factor may be, the names
of the outputs and of their axes, and the contract's tolerance for the call's dtype."""
from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graders.engine.recorder import Call, Raised, clone
from graders.engine.replay import Replayer
from graders.engine.vocabulary import tolerance

SKIPPED = ("seed", "lead", "axis")   # entries of a case that are not quantities a factor may be
MAX_SIZES = 8                        # sizes whose products two by two may name a number, at most


@dataclass
class Compared:
    """A call of the attempt and the reference's answer to the same arguments."""

    call: Call
    got: Any                       # what the attempt returned
    want: Any                      # what the reference returns
    inputs: dict                   # the call's float arrays, by parameter name
    constants: dict                # the case's numbers a factor may be, by name
    what: str                      # "the result of softmax(z)"
    names: tuple = ()              # the outputs' names, when there are several
    axes: Any = None               # the outputs' axes' names
    masks: tuple = ()              # the outputs whose blocked entries are a mask
    want32: Any = None             # the reference's answer computed in float32, for a float64 call
    eps: dict = field(default_factory=dict)   # the call's eps-like numbers, given or by default
    rtol: float = 1e-6
    atol: float = 1e-9
    case: dict = field(default_factory=dict)

    def relation_args(self) -> dict:
        """The keywords graders.engine.relations.findings takes."""
        return {"inputs": self.inputs, "constants": self.constants, "what": self.what, "axes": self.axes,
                "rtol": self.rtol, "atol": self.atol, "names": self.names, "masks": self.masks}


def comparable(call: Call) -> bool:
    """A call whose answer was kept and is an answer (it returned)."""
    return call.recorded and call.kept and call.returned and not isinstance(call.outcome, Raised)


def compare(ref, domain, call: Call, case: dict, every_size: bool = False) -> Compared | None:
    """`call` beside the reference's answer, or None when there is nothing to compare: the
    reference has no such function, or raises. `every_size`: every whole number of the case
    may name a factor too, besides the domain's own constants."""
    fn = getattr(ref, call.function, None)
    if fn is None or not comparable(call):
        return None
    want, _ = Replayer(ref).outcome(call)
    if isinstance(want, BaseException):
        return None
    ex = explored(domain, call.function)
    named = arguments(ref, call)
    inputs = {k: v for k, v in named.items() if isinstance(v, np.ndarray) and v.dtype.kind == "f"}
    rtol, atol = tolerance(next((v.dtype for v in inputs.values()), np.float64))
    constants = case_constants(ex, case, named)
    if every_size:
        whole = sizes(case, named)
        items = list(whole.items())[:MAX_SIZES]
        products = {f"{a}*{b}": x * y for i, (a, x) in enumerate(items) for b, y in items[i + 1:]}
        constants = {**whole, **{f"{k}**2": v * v for k, v in whole.items()}, **products, **constants}
    return Compared(call, call.outcome, want, inputs, constants, f"the result of {call.source}",
                    ex.outputs if ex else (), ex.axes if ex else None, ex.masks if ex else (),
                    _in_float32(fn, call) if rtol <= 1e-6 else None, _eps(fn, named), rtol, atol, dict(case))


def _in_float32(fn, call: Call) -> Any:
    """The reference's answer with every float64 array of the call in float32 (None if it raises)."""
    def cast(v):
        if isinstance(v, np.ndarray) and v.dtype == np.float64:
            return v.astype(np.float32)
        if isinstance(v, (tuple, list)):
            return type(v)(cast(x) for x in v)
        if isinstance(v, dict):
            return {k: cast(x) for k, x in v.items()}
        return v
    try:
        with np.errstate(all="ignore"):
            return fn(*cast(clone(call.args)), **cast(clone(call.kwargs)))
    except Exception:  # noqa: BLE001  (a reference that refuses float32 has no float32 answer)
        return None


def _eps(fn, named: dict) -> dict:
    """The call's eps-like numbers (a parameter named eps...), as given or by default."""
    out = {}
    for name, p in inspect.signature(fn).parameters.items():
        if "eps" not in name:
            continue
        v = named.get(name, p.default)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
            out[name] = float(v)
    return out


def explored(domain, function: str):
    """The domain's declaration of `function` (graders.engine.domain.Explore), or None."""
    return next((e for e in (domain.functions if domain else ()) if e.function == function), None)


def arguments(ref, call: Call) -> dict:
    """The call's arguments by the reference's parameter names."""
    try:
        params = list(inspect.signature(getattr(ref, call.function)).parameters)
    except (TypeError, ValueError, AttributeError):
        params = []
    return {**dict(zip(params, call.args)), **call.kwargs}


def case_constants(ex, case: dict, named: dict) -> dict:
    """Numbers of the case a wrong factor may be: the domain's own, else every whole-number size
    of the case and argument, and its square root."""
    if ex is not None and ex.constants is not None:
        try:
            return dict(ex.constants({**case, **named}))
        except (KeyError, TypeError, ValueError, ZeroDivisionError):
            pass
    out = {}
    for name, value in sizes(case, named).items():
        out[name] = value
        out[f"sqrt({name})"] = math.sqrt(value)
    return out


def sizes(case: dict, named: dict) -> dict:
    """Every whole number above 1 of the case and of the call's arguments, by name."""
    out = {}
    for name, value in {**case, **named}.items():
        if name in SKIPPED or isinstance(value, (bool, np.bool_)):
            continue
        if isinstance(value, (int, np.integer)) and value > 1:
            out[name] = int(value)
        elif isinstance(value, tuple) and len(value) <= 8:
            out.update({f"{name}[{i}]": int(v) for i, v in enumerate(value)
                        if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 1})
    return out
