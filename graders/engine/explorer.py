"""The explorer: from a kata's declared input domain, the checks that range over it.

A kata declares its domain once (graders/KATA/domain.py, see graders.engine.domain); the
explorer builds, the same way at every grading, cases along the dimensions where wrong
answers hide, and adds these checks to the kata's own:

    explored        agrees with the reference at every explored size, leading axes and
                    axis, value family, scalar at the ends of its range, and float32
                    (runs once the kata's plain `agrees` passes)
    invalid_calls   raises ValueError for the calls the contract rules out, at every size
    call_styles     gives the same answer however its arguments are passed
    layouts         gives the same answer for its inputs in any memory layout
    repeated_calls  gives the same answer in a sequence of calls as alone
    new_arrays      returns arrays that share no memory with its inputs or earlier results

The last four compare the attempt with itself on the plain call, so a wrong formula fails
"agrees with the reference", not a check about layouts or state. A failing case shrinks
within the valid domain (the domain's rule holds for every smaller case tried).
"""
from __future__ import annotations

import random
import zlib
from dataclasses import dataclass
from functools import lru_cache

from graders.engine import adversary, palettes, rules, state
from graders.engine import calls as make
from graders.engine.domain import Domain, Explore
from graders.engine.inputs import LAYOUT_CHECK as LAYOUTS
from graders.engine.inputs import Inputs
from graders.engine.runner import check

EXPLORED = "agrees with the reference across the input domain (sizes, leading axes, every axis, special values, float32)"
INVALID = "raises ValueError for every call the contract rules out, at every size (1 included)"
STYLES = "gives the same answer however its arguments are passed (positionally, by keyword, defaults left out)"

REPEATED = "calls do not affect each other (other sizes and dtypes, the same arrays with new values, results kept)"
NEW_ARRAYS = "returns new arrays (no result shares memory with an input or an earlier result)"
LOOKALIKES = ("calls that look alike get their own answers (the same shapes, sums and first entries, one argument "
              "changed, the same objects, read-only views rewritten, results passed back, sizes of 1)")


NUMBER_WORDS = {"python": "scalars as Python numbers", "numpy": "scalars as NumPy numbers",
                "int": "whole floats passed as ints", "float32": "floats passed as np.float32"}


# The ids of the explorer's checks, in the order they run: what a known bug or a hint may name
# besides a grader's own checks (practice.dev holds the catalogues to them).
CHECK_IDS = ("explored", "invalid_calls", "call_styles", "layouts", "repeated_calls", "lookalikes", "new_arrays",
             "memory_modes")


def checks(domain: Domain) -> dict:
    """The explorer's checks for `domain`, by id, in the order they run."""
    return _checks(domain)


@lru_cache(maxsize=None)
def _checks(domain: Domain) -> dict:
    fns = {ex.function: ex for ex in domain.functions}
    explored = [c for ex in domain.functions for c in explored_cases(ex)]
    invalid = [c for ex in domain.functions for c in invalid_cases(ex)]
    plain = [dict(base_case(ex, 0), fn=ex.function) for ex in domain.functions]
    sequences = [c for c in plain if fns[c["fn"]].sequence]
    out = {}

    def valid(case):
        return fns[case["fn"]].allows(case)

    frozen = ("axis",) + tuple(p for ex in domain.functions for p in ex.scalars)  # what a case is about

    def planned(want_refused: bool):
        """The calls the cases of `explored` (or `invalid_calls`) will make, to send ahead."""
        def calls(impl, ref, cases):
            out = []
            for case in cases:
                ex = fns[case["fn"]]
                args, kwargs = make.arguments(ex, Inputs(case.get("seed", 0)), case, ref)
                refused = make.expected(ref, ex.function, args, kwargs) is make.REFUSED
                if refused == want_refused and (want_refused or ex.determined is None or ex.determined(case)):
                    out.append((ex.function, args, kwargs))
            return out
        return calls

    @check(EXPLORED, explored, valid=valid, after=("agrees",), frozen=frozen, describe=describe,
           ahead=planned(False), rules=rules.enforce)
    def explored_(impl, new, ref, **case):
        ex = fns[case["fn"]]
        args, kwargs = make.arguments(ex, new, case, ref)
        want = make.expected(ref, ex.function, args, kwargs)
        if want is make.REFUSED or (ex.determined is not None and not ex.determined(case)):
            return  # not a call whose answer the reference fixes
        got = getattr(impl, ex.function)(*args, **kwargs)
        # a scalar passed as np.float32 is known to float32's accuracy: the answer is held to that
        dtype = "float32" if case.get("numbers") == "float32" else case.get("dtype", "float64")
        make.expect_same(got, want, impl.last_call(), dtype, extreme=case.get("values") in ex.extreme,
                         data=make.scale_of(args, kwargs))

    out["explored"] = explored_
    if invalid:
        @check(INVALID, invalid, valid=lambda c: True, frozen=frozen, describe=describe, ahead=planned(True),
               rules=rules.enforce)
        def invalid_calls(impl, new, ref, why, **case):
            ex = fns[case["fn"]]
            args, kwargs = make.arguments(ex, new, case, ref)
            if make.expected(ref, ex.function, args, kwargs) is not make.REFUSED:
                return  # the reference takes it: not a call the contract rules out after all
            make.expect_value_error(getattr(impl, ex.function), args, kwargs, why)

        out["invalid_calls"] = invalid_calls

    @check(STYLES, plain, shrink=False, describe=describe, rules=rules.enforce)
    def call_styles(impl, new, ref, **case):
        make.expect_styles(impl, fns[case["fn"]], new, case, ref)

    @check(LAYOUTS, [dict(c, layout=l) for c in plain for l in make.LAYOUTS], shrink=False, describe=describe,
           rules=rules.enforce)
    def layouts(impl, new, ref, layout, **case):
        make.expect_layout(impl, fns[case["fn"]], new, case, ref, layout)

    out["call_styles"], out["layouts"] = call_styles, layouts
    if sequences:
        @check(REPEATED, sequences, shrink=False, describe=describe, rules=rules.enforce)
        def repeated_calls(impl, new, ref, **case):
            state.expect_sequence(impl, fns[case["fn"]], new, case, ref, other_case(fns[case["fn"]], case))
            state.expect_first_float32(impl, fns[case["fn"]], new, case, ref)

        out["repeated_calls"] = repeated_calls

        randomized = [dict(c, **fns[c["fn"]].random, randomness=True) for c in sequences if fns[c["fn"]].random]

        @check(LOOKALIKES, sequences + randomized, shrink=False, describe=describe, rules=rules.enforce)
        def lookalikes(impl, new, ref, randomness=False, **case):
            if randomness:
                adversary.expect_fresh_randomness(impl, fns[case["fn"]], new, case, ref)
            else:
                adversary.expect_lookalikes(impl, fns[case["fn"]], new, case, ref)

        out["lookalikes"] = lookalikes

    @check(NEW_ARRAYS, plain, shrink=False, describe=describe, rules=rules.enforce)
    def new_arrays(impl, new, ref, **case):
        state.expect_new_arrays(impl, fns[case["fn"]], new, case, ref)

    out["new_arrays"] = new_arrays
    measured = [dict(fn=ex.function, mode=m.name) for ex in domain.functions if ex.memory is not None
                for m in ex.memory.modes]
    if measured:
        @check(MEMORY_MODES + " (" + "; ".join(c["mode"] for c in measured) + ")", measured, shrink=False,
               timeout=60, slow="calls at the sizes the contract measures memory at",
               describe=lambda c: f"{c['fn']}, {c['mode']}")
        def memory_modes(impl, new, ref, fn, mode):
            expect_memory_in_mode(impl, new, fns[fn], mode, ref)

        out["memory_modes"] = memory_modes
    for name, fn in out.items():
        fn.__name__ = fn.__qualname__ = name
    assert list(out) == [i for i in CHECK_IDS if i in out], "CHECK_IDS names every check, in order"
    return out


MEMORY_MODES = "keeps the memory rule in every mode"


def expect_memory_in_mode(impl, new, ex: Explore, mode: str, ref) -> None:
    """The contract's memory rule (Explore.memory) at its sizes, in one of its modes."""
    from graders.engine.vocabulary import expect_memory_below

    rule = ex.memory
    made = next(m for m in rule.modes if m.name == mode).make(dict(base_case(ex, 0), **rule.case))
    t_q, t_k = rule.pairs(made)
    args, kwargs = make.split(make.drawn(ex, new, made), make.parameters(ref, ex.function))
    fn = getattr(impl, ex.function)
    expect_memory_below(impl, lambda: fn(*args, **kwargs), t_q, t_k)


@dataclass
class Figures:
    """What the explorer as an adversary makes of a domain (the table of tests/test_katas.py)."""

    pairs: int = 0              # pairs of factors declared to interact
    pair_cases: int = 0         # the cases that vary them on the plain case
    covering_rows: int = 0      # the covering array of the pairs not declared
    sequences: int = 0          # the cache adversary's sequences
    modes: int = 0              # the modes the ValueErrors are asked for in
    memory_modes: int = 0       # the modes a memory rule is measured in
    rules: int = len(rules.RULES)   # the contract's rules held on every call


def figures(domain: Domain, ref) -> Figures:
    """What the explorer as an adversary makes of `domain`: the declared pairs and the cases
    varying them on the plain case, the covering array's rows, the cache adversary's sequences,
    the modes, and the rules held on every call."""
    out = Figures()
    for ex in domain.functions:
        plain = lambda i, ex=ex: dict(base_case(ex, 0), seed=700 + i)  # noqa: E731
        out.pairs += len(ex.pairs)
        out.pair_cases += len(palettes.pair_cases(ex, plain))
        out.covering_rows += len(palettes.covering(ex, plain, f"{ex.function}:covering"))
        if ex.sequence:
            out.sequences += len(adversary.plan(ex, ref, dict(base_case(ex, 0), fn=ex.function)))
        out.modes += len(ex.modes)
        out.memory_modes += len(ex.memory.modes) if ex.memory is not None else 0
    return out


# ----------------------------------------------------------------------------- cases

def _rng(ex: Explore, salt: str) -> random.Random:
    return random.Random(zlib.crc32(f"{ex.function}:{salt}".encode()))


def base_case(ex: Explore, seed: int) -> dict:
    """Small sizes, all different where their palettes allow (so that two formulas that
    differ do not give the same number by chance), two leading axes where the function
    takes them (flattening them copies an array in another layout), plain values, float64."""
    rng = _rng(ex, f"base{seed}")
    for _ in range(50):
        case, used = {}, set()
        for name, dim in ex.dims.items():
            choices = [v for v in dim.base if v not in used and v >= dim.minimum] or list(dim.base)
            case[name] = rng.choice(choices)
            used.add(case[name])
        case.update(lead=min(2, ex.lead), values="normal", dtype="float64", seed=seed, fn=ex.function)
        case.update(ex.fixed)  # the domain's own plain values win
        if ex.allows(case):
            return case
    raise ValueError(f"the domain of {ex.function} declares no valid small case")


def explored_cases(ex: Explore) -> list[dict]:
    """The cases of `explored`: each size one at a time, leading axes, every axis, each value
    family, each scalar at its ends, float32, random mixes of all, and the large cases."""
    rng, out, n = _rng(ex, "explore"), [], [0]

    def add(**changes):
        n[0] += 1
        case = dict(base_case(ex, n[0] % 7), **changes, seed=100 + n[0])
        if ex.allows(case):
            out.append(case)

    for name, dim in ex.dims.items():
        for v in dim.small:
            add(**{name: v})
    for lead in range(1, ex.lead + 1):
        add(lead=lead)
    if ex.axis is not None:
        for axis in range(-(ex.axis[1] + ex.lead), ex.axis[1] + ex.lead):
            add(lead=ex.lead, axis=axis)
    for family in ex.families:
        add(values=family)
        if ex.float32:
            add(values=family, dtype="float32", lead=min(1, ex.lead))
    for param, values in ex.scalars.items():
        for v in values:
            add(**{param: v})
    for family in ex.families:  # each family with each scalar's values (ties at a temperature of 1e-6)
        for param, values in ex.scalars.items():
            for v in values:
                add(values=family, **{param: v})
    for _ in range(8 if ex.float32 else 6):
        add(**_mixed(ex, rng))
    for big in ex.big:
        add(**big)
    # a sampler's case whose answer the contract does not fix makes no call: not one of these
    return _unique([c for c in out + adversarial_cases(ex) if ex.determined is None or ex.determined(c)])


def adversarial_cases(ex: Explore) -> list[dict]:
    """The contract's whole range, after the cases one dimension at a time: each scalar argument
    typed every way the contract allows, each unbounded parameter at 2**31 and 10**12, the sizes
    of real models with every value family, each declared pair of factors varied together on the
    plain case, and a covering array of the pairs not declared (graders.engine.palettes)."""
    out, n = [], [0]

    def add(**changes):
        n[0] += 1
        case = dict(base_case(ex, 0), **changes, seed=500 + n[0])
        if ex.allows(case):
            out.append(case)

    for numbers in palettes.NUMBERS[1:]:
        add(numbers=numbers)
    table = palettes.palettes(ex)
    for param in ex.counts:
        for v in palettes.UNBOUNDED:
            if v in table.get(param, ()):
                add(**{param: v})
    for real in ex.real:
        for family in ("normal",) + ex.families:
            add(**{"values": family, **real})
    plain = lambda i: dict(base_case(ex, 0), seed=700 + i)  # noqa: E731
    out += palettes.pair_cases(ex, plain)
    out += palettes.covering(ex, lambda i: dict(base_case(ex, 0), seed=900 + i), f"{ex.function}:covering")
    return out


def _mixed(ex: Explore, rng: random.Random) -> dict:
    """A case with every choice drawn: sizes, leading axes, axis, family, scalars, dtype."""
    case = {name: rng.choice([v for v in dim.small + dim.base if v >= dim.minimum]) for name, dim in ex.dims.items()}
    case["lead"] = rng.randint(0, ex.lead)
    if ex.axis is not None:
        ndim = ex.axis[1] + case["lead"]
        case["axis"] = rng.randrange(-ndim, ndim)
    case["values"] = rng.choice(("normal",) + ex.families)
    for param, values in ex.scalars.items():
        if rng.random() < 0.5:
            case[param] = rng.choice(values)
    case["dtype"] = rng.choice(("float64", "float32")) if ex.float32 else "float64"
    return case


def other_case(ex: Explore, case: dict) -> dict:
    """Another valid case with larger sizes, for a sequence of calls."""
    for grow in (2, 1):
        other = dict(case, **{k: case[k] + grow + i for i, k in enumerate(ex.dims)})
        if ex.allows(other):
            return other
    return dict(case)


def invalid_cases(ex: Explore) -> list[dict]:
    """Each invalid call at the smallest sizes and at ordinary ones."""
    out = []
    smallest = dict(base_case(ex, 1), **{k: d.minimum for k, d in ex.dims.items()})
    starts = [c for c in (smallest, base_case(ex, 2), base_case(ex, 3)) if ex.allows(c)]
    for mode in ex.modes:  # every mode the signature allows: causal and not, a decoding step, ...
        made = mode.make(dict(base_case(ex, 4)))
        if made is not None and ex.allows(made):
            starts.append(made)
    for bad in ex.invalid:
        for start in starts:
            made = bad.make(dict(start))
            if made is not None:
                out.append(dict(made, why=bad.why))
    return _unique(out)


def _unique(cases: list[dict]) -> list[dict]:
    seen, out = set(), []
    for c in cases:
        key = repr(sorted((k, v) for k, v in c.items() if k != "seed"))
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def describe(case: dict) -> str:
    """The words for a case in a message: 'n=5, 2 leading axes, axis=0, values: offsets, float32'."""
    parts = []
    for k, v in case.items():
        if k in ("seed", "fn", "why", "layout", "randomness") or (k == "lead" and not v) or (k == "values" and v == "normal"):
            continue
        if k == "lead":
            parts.append(f"{v} leading ax{'is' if v == 1 else 'es'}")
        elif k == "values":
            parts.append(f"values: {v}")
        elif k == "numbers":
            parts.append(NUMBER_WORDS.get(v, f"numbers: {v}"))
        elif k == "dtype":
            parts.append(v)
        else:
            parts.append(f"{k}={v}")
    return ", ".join(parts)

