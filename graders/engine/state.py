"""The explorer's checks about state: a sequence of calls, and results that share memory.

A sequence (expect_sequence) makes, in one process of the attempt:
  1. a plain call, float64;
  2. the same call again on the very same argument objects, new values written into them
     (a cache keyed by `id()` or by shape shows, and so does one buffer for every call);
  3. a call at larger sizes in float32;
  4. the sizes of step 1 in another order, float64 (a buffer kept by number of entries shows);
  5. a call with step 1's shapes in float32 (a cache that ignores the dtype shows);
then fetches every result again (a buffer that later calls overwrite shows), and makes
  6. step 1's values again in new objects, after the caller wrote into what step 1 returned
     (a function that hands out an array it keeps shows).
And in a new process, whose first call is float32 (expect_first_float32): the same values in
float32, then in float64 (a buffer or a cache made in the first call's dtype shows).
A result that differs from the reference counts against the sequence only when the same call
made alone, in a new process, gives something else: a wrong formula is not a state problem.
"""
from __future__ import annotations

from graders.engine import calls as make
from graders.engine import rules
from graders.engine.domain import Explore
from graders.engine.failures import AttemptRaised, CheckFailed, NotApplicable, NotImplementedYet
from graders.engine.inputs import Inputs
from graders.engine.recorder import Raised, value_differs
from graders.engine.vocabulary import first_difference

POKED = 7.0   # what the caller writes into a result it was given


def expect_sequence(impl, ex: Explore, new: Inputs, case: dict, ref, other: dict) -> None:
    if ex.determined is not None and not ex.determined(case):
        return
    params = make.parameters(ref, ex.function)
    fn = getattr(impl, ex.function)
    steps = []                       # (call, what it returned, what the reference gives, dtype)
    with impl.options(keep=True, keep_args=True):
        first = _step(impl, ex, new, dict(case), ref, params, steps, "1")
        if first is None:
            return
        single = "float32" if ex.float32 else "float64"
        _again(impl, ex, new, dict(case), ref, params, steps, first)
        _step(impl, ex, new, dict(other, dtype=single), ref, params, steps, "3")
        _step(impl, ex, new, swapped_axes(ex, case), ref, params, steps, "4")
        _step(impl, ex, new, dict(case, dtype=single), ref, params, steps, "5")
        try:
            changed = fetched(impl, steps)
            refused = impl.poke(first[0], POKED)
            plain = first[0].source
            first[0].source = f"(out1 := {plain})"  # the repro keeps what call 1 returned, to write into it
            write = (f"[a.__setitem__(Ellipsis, {POKED}) for a in (out1 if isinstance(out1, tuple) else [out1]) "
                     f"if isinstance(a, np.ndarray)]")
            again = made(lambda: fn.send(first[3], first[4], source=f"({write}, {plain})[1]"), (), {})
            steps.append((impl.grading.calls[-1], again, first[2], case.get("dtype", "float64")))
            _judge(impl, ex, steps, params, refused)
            every_call_raised(steps)
            if changed:
                n, call, out, now = changed[0]
                raise CheckFailed(f"what call {n} of {len(steps)}, {call.source}, returned was changed by the calls "
                                  f"made after it{first_difference(out, now)}: a result must stay as it was returned",
                                  kind="stale")
        finally:
            impl.forget()


def expect_first_float32(impl, ex: Explore, new: Inputs, case: dict, ref) -> None:
    """In a process that has not called the function yet (the twin of the attempt's, forked
    before its first call; else a new one): a call in float32 first, then the same values in
    float64. Each must
    agree with the reference; the float64 one is blamed on the float32 one only if it agrees
    when made alone."""
    if not ex.float32 or (ex.determined is not None and not ex.determined(case)):
        return
    params = make.parameters(ref, ex.function)
    fresh = impl.untouched(ex.function)
    try:
        steps = []
        for n, family in enumerate(("normal",) + ex.families):  # each family's values, float32 then float64
            twin = dict(case, dtype="float32", values=family)
            if not ex.allows(twin):
                continue
            first = _step(fresh, ex, new, twin, ref, params, steps, f"{2 * n + 1}")
            if first is None:
                continue
            args, kwargs = _as_float64(new, first[3]), _as_float64(new, first[4])
            want = make.expected(ref, ex.function, args, kwargs)
            out = made(getattr(fresh, ex.function), args, kwargs)
            steps.append((fresh.grading.calls[-1], out, want, "float64"))
        _judge(fresh, ex, steps, params, [], n_of=lambda n: 7 if n % 2 == 0 else 8)
        every_call_raised(steps)
    finally:
        if fresh is not impl.twin:
            fresh.box.close()


def every_call_raised(steps: list) -> None:
    """A sequence in which every call raised, each as it does alone, says nothing about state."""
    if steps and all(isinstance(out, Raised) for _, out, _, _ in steps):
        raise NotApplicable(f"every call of the sequence raised ({steps[0][1].type_name} first), "
                            f"as each does alone: there are no answers to compare")


def _as_float64(new: Inputs, value):
    """`value` with its float32 arrays in float64 (new arrays, the same numbers)."""
    import numpy as np

    if isinstance(value, np.ndarray) and value.dtype == np.float32:
        shown = new.name_of(value)
        cast = value.astype(np.float64)
        return new.let(f"{shown}_64", cast, f"{shown}.astype(np.float64)") if shown else cast
    if isinstance(value, tuple):
        return tuple(_as_float64(new, v) for v in value)
    if isinstance(value, list):
        return [_as_float64(new, v) for v in value]
    if isinstance(value, dict):
        return {k: _as_float64(new, v) for k, v in value.items()}
    return value


def fetched(impl, steps: list) -> list:
    """Every result fetched again from the attempt's process after the last call: (n, call,
    what it returned, what it holds now) for each that changed."""
    changed, last = [], steps[-1][0].id
    for n, (call, out, _, _) in enumerate(steps, 1):
        if isinstance(out, Raised):
            continue  # it raised: nothing was returned to keep
        now = impl.fetch(call)
        call.later, call.later_seen, call.later_after = now, True, last
        if value_differs(out, now):
            changed.append((n, call, out, now))
    return changed


def _step(impl, ex, new, case, ref, params, steps, suffix):
    """One call of the sequence, on inputs named with `suffix`; (call, out, want, args, kwargs)."""
    new.suffix = suffix
    try:
        args, kwargs = make.split(make.drawn(ex, new, case), params)
    finally:
        new.suffix = ""
    want = make.expected(ref, ex.function, args, kwargs)
    if want is make.REFUSED:
        return None
    out = made(getattr(impl, ex.function), args, kwargs)
    call = impl.grading.calls[-1]
    steps.append((call, out, want, case.get("dtype", "float64")))
    return call, out, want, args, kwargs


def made(fn, args: tuple, kwargs: dict):
    """What a call of the sequence returned, or what it raised (a Raised): a call that raises is
    judged like one that returns something wrong, against the same call made alone."""
    try:
        return fn(*args, **kwargs)
    except NotImplementedYet:
        raise
    except AttemptRaised as exc:
        return exc.original


def _again(impl, ex, new, case, ref, params, steps, first) -> None:
    """Step 1's call once more on its own argument objects, new values written into its arrays."""
    call = first[0]
    new.suffix = "2"
    try:
        args, kwargs = make.split(make.drawn(ex, new, case), params)
    finally:
        new.suffix = ""
    assign = {k: v for k, v in [*enumerate(args), *kwargs.items()]
              if _plain_array(v) and _plain_array(_arg(call, k)) and v.shape == _arg(call, k).shape}
    if not assign:
        return
    args = tuple(assign.get(i, a) for i, a in enumerate(call.args))
    kwargs = {k: assign.get(k, v) for k, v in call.kwargs.items()}
    want = make.expected(ref, ex.function, args, kwargs)
    if want is make.REFUSED:
        return
    out = made(lambda: impl.again(call, assign), (), {})
    steps.append((impl.grading.calls[-1], out, want, case.get("dtype", "float64")))


def swapped_axes(ex: Explore, case: dict) -> dict:
    """Step 1's case with two of its sizes exchanged (the same numbers in another order)."""
    names = [k for k in ex.dims if case.get(k) is not None]
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if case[a] != case[b]:
                other = dict(case, **{a: case[b], b: case[a]})
                if ex.allows(other):
                    return other
    return dict(case)


def _arg(call, key):
    return call.args[key] if isinstance(key, int) else call.kwargs.get(key)


def _plain_array(v) -> bool:
    import numpy as np

    return isinstance(v, np.ndarray) and v.dtype.kind == "f" and v.ndim > 0


def _judge(impl, ex: Explore, steps: list, params, refused: list, n_of=lambda n: n) -> None:
    """Each step agrees with the reference, or gives what the same call gives alone (`n_of`:
    which step of the sequence each is, for the words that say why)."""
    alone = None
    try:
        for n, (call, out, want, dtype) in enumerate(steps, 1):
            try:
                make.expect_same(out, want, f"call {n} of {len(steps)}, {call.source}", dtype)
                continue
            except CheckFailed as failure:
                differs = failure
            if alone is None:
                alone = impl.fresh()
            if same_alone(alone, call, out, dtype):
                continue  # a wrong answer, but not one that the earlier calls caused
            why = _why(n_of(n), refused)
            raise CheckFailed(f"{differs.message}; the same call made first, in a new process, gives something "
                              f"else: {why}", kind="stale")
    finally:
        if alone is not None:
            alone.box.close()


def same_alone(alone, call, out, dtype) -> bool:
    try:
        by_itself = getattr(alone, call.function)(*call.args, **call.kwargs)
    except AttemptRaised as exc:  # the same exception alone: not the earlier calls' doing
        return isinstance(out, Raised) and out.type_name == exc.original.type_name
    if isinstance(out, Raised):
        return False
    try:
        make.expect_same(out, by_itself, "", dtype)
        return True
    except CheckFailed:
        return False


def _why(n: int, refused: list) -> str:
    if n == 2:
        return "the answer depends on the argument objects, not on their values (a cache keyed by id() or shape?)"
    if n == 5:
        return "the answer depends on the calls before it (a cache that ignores the dtype?)"
    if n == 7:
        return ("the float64 call, made after a float32 call on the same values, gives something else: what the "
                "float32 call made (a buffer, a cache in its dtype) serves the later one")
    if n == 8:
        return "the answer depends on the calls before it, in a process whose first call was float32"
    if n == 6:
        return (f"the caller wrote {POKED:g} into what call 1 returned, and this call gave it back (a result that "
                f"the function keeps and returns again?)")
    return "the answer depends on the calls before it"


def expect_new_arrays(impl, ex: Explore, new: Inputs, case: dict, ref) -> None:
    """No result of this check's two calls, or of any call of the grading so far, shares memory
    with its inputs or with a result of an earlier call that is still held."""
    params = make.parameters(ref, ex.function)
    fn = getattr(impl, ex.function)
    with impl.options(keep=True):
        for suffix, seed in (("1", new.seed), ("2", new.seed + 3)):
            new.suffix = suffix
            try:
                args, kwargs = make.split(make.fresh_generators(make.drawn(ex, new, dict(case, seed=seed))), params)
            finally:
                new.suffix = ""
            fn(*args, **kwargs)
    impl.forget()
    shared = next((c for c in impl.grading.shared if c.function == ex.function), None)
    if shared is not None:
        raise _shared(impl, shared, [p.name for p in params])


def _shared(impl, call, names: list[str]) -> CheckFailed:
    return rules.shared(impl, call, names)
