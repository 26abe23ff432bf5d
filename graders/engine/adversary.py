"""The explorer's adversary for caches: calls that agree with an earlier one on every cheap
summary and differ elsewhere.

A cache or a buffer keyed on anything cheaper than the whole input (a shape, a dtype, an
object's identity, a sum, the first entries, one argument of several, a key built from
parts of the arguments) serves a stale answer only to a later call that agrees with an
earlier one on that key and differs elsewhere: random new values never do. In one process
of the attempt (expect_lookalikes), on the plain case, with entries on a grid of 1/1024 (so
that every sum, mean and norm of a permutation of them is the same number, bit for bit):

  1. the plain call;
  2. its lookalike: every array a new object of the same shape and dtype whose entries are
     the same numbers, two of them (in the middle of a row, not the first) swapped: the same
     sums, extremes and leading entries, another answer;
  3. one argument at a time the lookalike, the others the same values in new objects;
  4. the lookalikes written into the very objects of call 1 (a key on id() shows);
  5. read-only views over buffers the caller rewrites: the plain values read-only, then the
     lookalikes written into the memory under them, then new read-only views of that memory
     with the plain values written back (a key on "read-only, so it never changes", on the
     data pointer, shows);
  6. results passed back by reference: a part of what call 1 returned that fits an argument
     (a result of the same shape, a returned cache), passed back as the object the attempt's
     process holds (graders.engine.wire.Kept), twice, then what that call returned in turn;
  7. one size or scalar changed: each size one larger, each scalar at another of its values,
     the rest of call 1 as it was (a key built from some of the arguments, not all, shows);
  8. sizes of 1: each size at 1, then the plain shapes again with other values;
then every result is fetched again (a buffer a later call overwrote shows). A result that
differs from the reference counts only when the same call made alone, in a new process,
gives something else: a wrong formula is not a matter of state.

And for a function with a random default (rng=None, expect_fresh_randomness): the call with
it left out, made in two new processes that each run the file (not copies of one that did),
twice in one, must draw differently each time (a Generator seeded with a constant draws
alike; one made once at import, from fresh entropy, does not).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

import numpy as np

from graders.engine import call_text, state
from graders.engine import calls as make
from graders.engine.domain import Explore
from graders.engine.failures import CheckFailed, NotApplicable, changed_inputs
from graders.engine.inputs import Inputs
from graders.engine.recorder import Raised, value_differs
from graders.engine.vocabulary import first_difference
from graders.engine.wire import Kept

GRID = 1024                 # entries are multiples of 1/GRID: sums of a few thousand are exact
ONE_AT_A_TIME = 4           # arguments made lookalikes one at a time, at most
PASSED_BACK = 2             # (argument, part of a result) pairs passed back, at most
SIZES_OF_ONE = 4            # sizes set to 1 in turn, at most
ONE_CHANGED = 6             # sizes and scalars changed alone, at most
SEQUENCES = ("lookalikes (the same shapes, sums and first entries)", "one argument at a time",
             "the same objects rewritten", "read-only views of rewritten buffers", "results passed back, twice",
             "sizes of 1", "one size or scalar changed")


class OnGrid(Inputs):
    """Inputs whose normal entries lie on a grid of 1/GRID (the repro rounds them the same way)."""

    def normal(self, name: str, shape: tuple, scale: float = 1.0, dtype: Any = np.float64):
        name += self.suffix
        shape = tuple(int(s) for s in shape)
        value = np.round(self.rng.standard_normal(shape) * scale * GRID) / GRID
        expr = f"np.round(rng.standard_normal({shape})" + (f" * {scale!r}" if scale != 1 else "") + f" * {GRID}) / {GRID}"
        dtype = np.dtype(dtype)
        if dtype != np.float64:
            value = value.astype(dtype)
            expr = f"({expr}).astype(np.{dtype})"
        return self._register(name, value, f"{name} = {expr}")


@dataclass
class Step:
    """One call of a sequence: what it returned, the reference's answer, and what it tries."""

    call: Any
    out: Any
    want: Any
    dtype: str
    tries: str


# ----------------------------------------------------------------------------- lookalikes

def swap_positions(a: np.ndarray) -> tuple[int, int] | None:
    """Two flat (C order) positions of `a` with different entries, in the middle of a row and
    never its first entry where the row allows it; None when every entry is the same."""
    if a.size < 2:
        return None
    flat = a.reshape(-1)
    n = a.shape[-1] if a.ndim else 1
    rows = a.size // max(n, 1)
    start = (rows // 2) * n
    inside = list(range(start + 1, start + n)) if n >= 3 else []
    spots = inside + [i for i in range(a.size // 2, a.size) if i not in inside] + list(range(a.size // 2))
    for x, i in enumerate(spots):
        for j in spots[x + 1:]:
            if flat[i] != flat[j]:
                return (i, j) if i < j else (j, i)
    return None


def lookalike(new: Inputs, value: Any, name: str) -> Any:
    """`value` with every array replaced by a new one holding the same entries with two swapped
    (swap_positions): the same shape, dtype, sums and leading entries; None when no array of it
    can change."""
    if isinstance(value, np.ndarray):
        where = swap_positions(value)
        if where is None:
            return None
        i, j = where
        flat = value.reshape(-1).copy()
        flat[[i, j]] = flat[[j, i]]
        shown = new.name_of(value) or name
        order = f"np.r_[0:{i}, {j}, {i + 1}:{j}, {i}, {j + 1}:{value.size}]"
        return new.let(f"{name}_alike", flat.reshape(value.shape),
                       f"{shown}.reshape(-1)[{order}].reshape({value.shape})")
    if type(value) in (tuple, list) and value:
        parts = [lookalike(new, v, f"{name}_{i}") for i, v in enumerate(value)]
        if all(p is None for p in parts):
            return None
        made = [v if p is None else p for v, p in zip(value, parts)]
        names = ", ".join(new.name_of(v) or repr(v) for v in made)
        text = f"({names}{',' if len(made) == 1 else ''})" if type(value) is tuple else f"[{names}]"
        return new.let(f"{name}_alike", type(value)(made), text)
    if type(value) is dict and value:
        parts = {k: lookalike(new, v, f"{name}_{k}") for k, v in value.items()}
        if all(p is None for p in parts.values()):
            return None
        made = {k: v if parts[k] is None else parts[k] for k, v in value.items()}
        text = "{" + ", ".join(f"{k!r}: {new.name_of(v) or repr(v)}" for k, v in made.items()) + "}"
        return new.let(f"{name}_alike", made, text)
    return None


def _copied(new: Inputs, value: Any, name: str) -> Any:
    """The same values in new objects (a number, or a Generator the caller goes on drawing from,
    as it is)."""
    if isinstance(value, (np.ndarray, tuple, list, dict)):
        import copy

        return new.let(f"{name}_again", copy.deepcopy(value), _copy_expr(value, new.name_of(value) or name))
    return value


def _copy_expr(value: Any, name: str, depth: int = 0) -> str:
    """The Python that copies `value` (named `name`) as copy.deepcopy does, arrays and containers."""
    if isinstance(value, np.ndarray):
        return f"{name}.copy()"
    var = f"v{depth}"
    items = list(value.values()) if isinstance(value, dict) else list(value) if isinstance(value, (tuple, list)) else []
    if depth > 2 or not items:
        return name
    sample = next((v for v in items if isinstance(v, (np.ndarray, tuple, list, dict))), None)
    inner = var if sample is None else _copy_expr(sample, var, depth + 1)
    if not all(type(v) is type(sample) for v in items):
        inner = f"({inner} if isinstance({var}, {type(sample).__name__ if not isinstance(sample, np.ndarray) else 'np.ndarray'}) else {var})"
    if isinstance(value, dict):
        return f"{{k: {inner} for k, {var} in {name}.items()}}"
    return f"[{inner} for {var} in {name}]" if isinstance(value, list) else f"tuple({inner} for {var} in {name})"


class Sequence:
    """The calls of one sequence in one process of the attempt, each judged once all are made."""

    def __init__(self, impl, ex: Explore, new: Inputs, ref, dtype: str):
        self.impl, self.ex, self.new, self.ref, self.dtype = impl, ex, new, ref, dtype
        self.params = make.parameters(ref, ex.function)
        self.names = [p.name for p in self.params]
        self.fn = getattr(impl, ex.function)
        self.steps: list[Step] = []

    def call(self, values: dict, tries: str, on=None, assign: dict | None = None, through: dict | None = None):
        """One call (on `on`'s argument objects, with `assign` written into them, when given;
        `through`: see Candidate.again); its record, or None when the reference refuses it (not
        a call the contract allows)."""
        if on is None:  # a Generator is passed on as the caller has it (the repro draws from the same one)
            args, kwargs = make.split(values, self.params)
        else:  # what `on`'s objects hold once `assign` is written into them
            args = tuple(assign.get(i, a) for i, a in enumerate(on.args))
            kwargs = {k: assign.get(k, v) for k, v in on.kwargs.items()}
        want = make.expected(self.ref, self.ex.function, *self.impl.resolved(args, kwargs))
        if want is make.REFUSED:
            return None
        if on is None:
            out = state.made(self.fn, args, kwargs)
        else:
            out = state.made(lambda: self.impl.again(on, assign, through), (), {})
        made = self.impl.grading.calls[-1]
        self.steps.append(Step(made, out, want, self.dtype, tries))
        return made

    def key(self, name: str):
        """How a call keeps an argument: its index when it is passed positionally, else its name."""
        return self.names.index(name) if name in self.names and self._positional(name) else name

    def _positional(self, name: str) -> bool:
        p = self.params[self.names.index(name)]
        return p.default is inspect.Parameter.empty

    def assignable(self, made, twins: dict) -> dict:
        """{argument key: lookalike} for each array argument of `made` a lookalike can be written into."""
        out = {}
        for name, twin in twins.items():
            key = self.key(name)
            held = made.args[key] if isinstance(key, int) and key < len(made.args) else \
                made.kwargs.get(key) if isinstance(key, str) else None
            if isinstance(held, np.ndarray) and isinstance(twin, np.ndarray) and held.shape == twin.shape \
                    and held.dtype == twin.dtype:
                out[key] = twin
        return out

    def named(self, key) -> str:
        return self.names[key] if isinstance(key, int) else key


def expect_lookalikes(impl, ex: Explore, new: Inputs, case: dict, ref) -> None:
    """The sequences of the module docstring, on the plain `case`."""
    if ex.determined is not None and not ex.determined(case):
        return
    new = OnGrid(new.seed)
    impl.grading.inputs = new  # the repro rebuilds the entries on the grid
    seq = Sequence(impl, ex, new, ref, case.get("dtype", "float64"))
    try:
        _made_all(seq, case)
    finally:
        impl.forget()


def _made_all(seq: "Sequence", case: dict) -> None:
    impl, ex, new = seq.impl, seq.ex, seq.new
    with impl.options(keep=True, keep_args=True):
        new.suffix = "1"
        try:
            plain = make.drawn(ex, new, case)
        finally:
            new.suffix = ""
        first = seq.call(plain, "the plain call")
        if first is None or isinstance(seq.steps[-1].out, Raised):
            raise NotApplicable(f"{ex.function} raised on the plain call: there is nothing to compare later calls with")
        twins = {k: lookalike(new, v, k) for k, v in plain.items()}
        twins = {k: v for k, v in twins.items() if v is not None}
        if twins:
            seq.call({k: twins.get(k, v) for k, v in plain.items()},
                     "every argument a lookalike of call 1's (the same shapes, dtypes, sums and first entries; "
                     "two entries swapped)")
            if len(twins) > 1 or len(plain) > 1:
                for k in list(twins)[:ONE_AT_A_TIME]:
                    seq.call({n: twins[n] if n == k else _copied(new, v, n) for n, v in plain.items()},
                             f"{k} a lookalike of call 1's, every other argument the same values")
            assign = seq.assignable(first, twins)
            if assign:
                seq.call({}, "the lookalikes written into call 1's own argument objects", on=first, assign=assign)
            _read_only(seq, plain, twins)
        _passed_back(seq, plain, twins, first)
        _one_changed(seq, case)
        _sizes_of_one(seq, case)
        rows = [(s.call, s.out, s.want, s.dtype) for s in seq.steps]
        written = {cid for s in seq.steps if s.call.mutated for cid, _ in s.call.passed.values()}
        # a result a later call wrote into, passed back to it, changed by that call: the rule on
        # inputs says so, not this fetch
        changed = state.fetched(impl, [r for r in rows if r[0].id not in written])
        _judge(impl, seq.steps)
        state.every_call_raised(rows)
        if changed:
            n, made, out, now = changed[0]
            raise CheckFailed(f"what call {n} of {len(seq.steps)}, {made.source}, returned was changed by the "
                              f"calls made after it{first_difference(out, now)}: a result must stay as it was "
                              f"returned (a buffer that later calls write into?)", kind="stale")


def _read_only(seq: Sequence, plain: dict, twins: dict) -> None:
    """The plain values as read-only views of buffers the caller keeps, then the lookalikes
    written into those buffers, then new read-only views of them with the plain values written
    back."""
    new, laid, buffers = seq.new, dict(plain), {}
    for name, value in plain.items():
        if isinstance(value, np.ndarray) and value.ndim and name in twins:
            shown = new.name_of(value) or name
            buffer = new.let(f"{shown}_buffer", value.copy(), f"{shown}.copy()")
            view = buffer.view()
            view.setflags(write=False)
            buffers[name] = new.name_of(buffer)
            laid[name] = new.let(f"{shown}_readonly", view,
                                 f"np.lib.stride_tricks.as_strided({buffers[name]}, writeable=False)")
    if not buffers:
        return
    made = seq.call(laid, "call 1's values as read-only views of the caller's buffers")
    if made is None:
        return
    assign = {k: v for k, v in seq.assignable(made, twins).items() if seq.named(k) in buffers}
    if not assign:
        return
    through = {k: (buffers[seq.named(k)], new.name_of(laid[seq.named(k)])) for k in assign}
    seq.call({}, "the caller wrote the lookalikes into the buffers under those read-only views", on=made,
             assign=assign, through=through)
    back = {key: plain[seq.named(key)] for key in assign}
    fresh = {k: (b, f"np.lib.stride_tricks.as_strided({b}, writeable=False)") for k, (b, _) in through.items()}
    with seq.impl.options(fresh_views=True):
        seq.call({}, "new read-only views of those buffers, call 1's values written back into them", on=made,
                 assign=back, through=fresh)


def _fits(value: Any, part: Any) -> bool:
    """A part of a result can stand for an argument: an array of the same shape and kind, or a
    tuple of as many arrays of the same number of axes (a returned cache for the given one)."""
    if isinstance(value, np.ndarray):
        return isinstance(part, np.ndarray) and part.shape == value.shape and part.dtype.kind == value.dtype.kind \
            and value.dtype.kind == "f"
    if type(value) is tuple and value and all(isinstance(v, np.ndarray) for v in value):
        return isinstance(part, tuple) and len(part) == len(value) and all(
            isinstance(p, np.ndarray) and p.ndim == v.ndim and p.dtype.kind == "f" for p, v in zip(part, value))
    return False


def _parts(value: Any, path: tuple = (), depth: int = 0):
    """(path, part) for `value` and each tuple entry inside it."""
    yield path, value
    if depth < 2 and isinstance(value, tuple):
        for i, v in enumerate(value):
            yield from _parts(v, path + (i,), depth + 1)


def _passed_back(seq: Sequence, plain: dict, twins: dict, first) -> None:
    """For each part of call 1's result that fits an argument: the plain call again (a result
    just returned, as a decoding loop has it), then that part passed back by reference; passed
    back a second time, the other arguments lookalikes (the same cache fed to two branches);
    then what the first of those returned, passed on in turn."""
    returned = seq.impl.returned.get(first.id)
    if returned is None or isinstance(seq.steps[0].out, Raised):
        return
    done = 0
    for name, value in plain.items():
        for path, part in _parts(returned):
            if done >= PASSED_BACK or not _fits(value, part):
                continue
            want = make.expected(seq.ref, seq.ex.function, *make.split(
                {**plain, name: seq.impl.resolved((Kept(first.id, path),), {})[0][0]}, seq.params))
            if want is make.REFUSED:
                continue  # a result that does not fit this argument after all
            done += 1
            head = seq.call({n: _copied(seq.new, v, n) for n, v in plain.items()},
                            f"call 1's values again, before {name} is given what it returns")
            if head is None or not head.returned:
                continue
            kept = Kept(head.id, path)
            made = seq.call({**plain, name: kept}, f"{name}: what the call before returned, passed back as the "
                                                   f"object itself")
            seq.call({**{n: twins.get(n, v) for n, v in plain.items()}, name: kept},
                     f"{name}: the same object passed back a second time, the other arguments lookalikes")
            if made is not None and made.returned:
                seq.call({**plain, name: Kept(made.id, path)},
                         f"{name}: what the first of those two calls returned, passed back in turn")


def _one_changed(seq: Sequence, case: dict) -> None:
    """Each size one larger and each scalar at another of its values, the rest of call 1 as it
    was (the same seed: arrays that keep their shape keep their values): a key built from some of
    the arguments, not all, shows."""
    ex, n = seq.ex, 0
    changes = [{name: case[name] + 1} for name in ex.dims if isinstance(case.get(name), int)]
    for name, values in ex.scalars.items():
        other = next((v for v in values if v != case.get(name) and not isinstance(v, str)), None)
        if other is not None or (None in values and case.get(name) is not None):
            changes.append({name: other})
    for change in changes:
        one = dict(case, **change)
        if n >= ONE_CHANGED or not ex.allows(one) or (ex.determined is not None and not ex.determined(one)):
            continue  # a sampler's case whose answer the contract does not fix compares nothing
        n += 1
        name, value = next(iter(change.items()))
        seq.new.suffix = f"_{name}"
        try:
            values = make.drawn(ex, seq.new, one)
        finally:
            seq.new.suffix = ""
        seq.call(values, f"{name} = {value!r}, everything else as in call 1")


def _sizes_of_one(seq: Sequence, case: dict) -> None:
    """Each size at 1 (one at a time), then the plain shapes again with other values."""
    ex, n = seq.ex, 0
    for name, dim in ex.dims.items():
        if n >= SIZES_OF_ONE or case.get(name, 1) <= 1 or dim.minimum > 1:
            continue
        one = dict(case, **{name: 1}, seed=case.get("seed", 0) + 11 + n)
        if not ex.allows(one) or (ex.determined is not None and not ex.determined(one)):
            continue
        n += 1
        seq.new.suffix = f"_{name}1"
        try:
            small = make.drawn(ex, seq.new, one)
            seq.new.suffix = f"_after_{name}1"
            again = make.drawn(ex, seq.new, dict(case, seed=case.get("seed", 0) + 31 + n))
        finally:
            seq.new.suffix = ""
        seq.call(small, f"{name} = 1")
        seq.call(again, f"call 1's sizes again, with other values, after a call with {name} = 1")


def _judge(impl, steps: list[Step]) -> None:
    """Each step agrees with the reference, or gives what the same call gives alone (its
    arguments laid out as it got them: a call on read-only objects, alone, on read-only copies)."""
    alone = None
    by_id = {s.call.id: s.call for s in steps}
    try:
        for n, step in enumerate(steps, 1):
            what = f"call {n} of {len(steps)}, {step.call.source}"
            if step.call.mutated:  # what it wrote into (a result passed back, say) changes what later calls get
                failure = CheckFailed(f"{what} {changed_inputs(step.call.mutated)}", kind="mutated")
                failure.calls = [step.call]
                raise failure
            try:
                if isinstance(step.out, Raised):
                    raise CheckFailed(f"{what} raised {step.out.type_name}: {step.out.message}{step.out.location()}, "
                                      f"where the reference returns", kind="raised")
                make.expect_same(step.out, step.want, what, step.dtype)
                continue
            except CheckFailed as failure:
                differs = failure
            if alone is None:
                alone = impl.fresh()
            if state.same_alone(alone, _laid_as_made(step.call, by_id), step.out, step.dtype):
                continue  # a wrong answer, but not one the earlier calls caused
            raise CheckFailed(f"{differs.message} ({step.tries}); the same call made first, in a new process, gives "
                              f"something else: {_depends(step.tries)} (a cache or a buffer keyed on too little?)",
                              kind="stale")
    finally:
        if alone is not None:
            alone.box.close()


def _laid_as_made(call, by_id: dict):
    """A stand-in for `call`: its arguments with each Generator copied, or for a call made on an
    earlier call's objects copies of those objects (their layout, read-only included) holding
    the values it was made with."""
    from graders.engine.recorder import Call, clone

    earlier = by_id.get(call.args_from) if call.args_from is not None else None
    if earlier is None:  # its Generators copied: the record keeps the state the call was made with
        return Call(call.function, make.fresh_generators(call.args), make.fresh_generators(call.kwargs), call.source)

    def laid(key, value):
        held = earlier.args[key] if isinstance(key, int) else earlier.kwargs.get(key)
        if not isinstance(held, np.ndarray) or not isinstance(value, np.ndarray) or held.shape != value.shape:
            return make.fresh_generators(value)
        out = clone(held)
        writeable = out.flags.writeable
        out.setflags(write=True)
        np.copyto(out, value)
        out.setflags(write=writeable)
        return out

    args = tuple(laid(i, a) for i, a in enumerate(call.args))
    kwargs = {k: laid(k, v) for k, v in call.kwargs.items()}
    return Call(call.function, args, kwargs, call.source)


def _depends(tries: str) -> str:
    """What a stale answer to a call that `tries` this depends on, in words."""
    if tries == "the plain call":
        return "the answer depends on the calls made before it in the grading"
    if "lookalike" in tries:
        what = "the shapes, dtypes, sums and first entries"
    elif "read-only" in tries:
        what = "the memory its arguments lie in"
    elif "passed back" in tries:
        what = "an object it returned"
    elif "everything else as in call 1" in tries:
        what = "every argument but one"
    elif "= 1" in tries:
        what = "all its sizes but one"
    else:
        what = "its shapes"
    return f"the answer depends on an earlier call that agrees with this one on {what}"


def plan(ex: Explore, ref, case: dict) -> tuple[str, ...]:
    """The sequences the adversary makes for `ex` on the plain `case`, each by its kind
    (SEQUENCES), once for every time it is made: for the table of what a kata's explorer ranges
    over."""
    new = OnGrid(case.get("seed", 0))
    plain = make.drawn(ex, new, case)
    twins = {k: v for k, v in ((k, lookalike(new, v, k)) for k, v in plain.items()) if v is not None}
    arrays = [k for k, v in twins.items() if isinstance(v, np.ndarray)]
    args, kwargs = make.split(make.fresh_generators(plain), make.parameters(ref, ex.function))
    want = make.expected(ref, ex.function, args, kwargs)
    fits = 0 if want is make.REFUSED else sum(
        1 for v in plain.values() for _, part in _parts(want) if _fits(v, part))
    sizes = sum(1 for k, d in ex.dims.items() if case.get(k, 1) > 1 and d.minimum <= 1)
    counts = (int(bool(twins)), min(len(twins), ONE_AT_A_TIME) if len(plain) > 1 else 0, int(bool(arrays)),
              int(bool(arrays)), min(fits, PASSED_BACK), min(sizes, SIZES_OF_ONE),
              min(len(ex.dims) + len(ex.scalars), ONE_CHANGED))
    randomness = ("a random default in two new processes",) * int(
        bool(ex.random) and random_default(ref, ex.function) is not None)
    return tuple(kind for kind, n in zip(SEQUENCES, counts) for _ in range(n)) + randomness


# ----------------------------------------------------------------------------- fresh randomness

def random_default(ref, function: str) -> str | None:
    """The parameter of `function` whose default draws fresh randomness (rng=None), if any."""
    for p in make.parameters(ref, function):
        if p.default is None and p.name in ("rng", "generator", "random_state", "seed"):
            return p.name
    return None


def expect_fresh_randomness(impl, ex: Explore, new: Inputs, case: dict, ref) -> None:
    """With its random default, a call draws differently in two new processes, and twice in one."""
    name = random_default(ref, ex.function)
    if name is None or not ex.random:
        return
    params = make.parameters(ref, ex.function)
    new = impl.grading.inputs if impl.grading.inputs is not None else new  # the inputs the repro rebuilds
    wide = dict(case, **ex.random)
    new.suffix = "_many"
    try:
        values = {k: v for k, v in make.drawn(ex, new, wide).items() if k != name}
    finally:
        new.suffix = ""
    args, kwargs = make.split(values, params)
    names = dict(new.names)
    plain = call_text.written_call(ex.function, args, kwargs, names)
    # the repro loads the file anew for the other process, as that process ran it
    anew = f"run_path({impl.path!r})[{ex.function!r}]" + plain[len(ex.function):]
    one, other = impl.fresh(loaded=True), None  # each runs the file itself: a Generator made at import is its own
    try:
        other = impl.fresh(loaded=True)
        with impl.unrepeatable():
            a = getattr(one, ex.function).send(args, kwargs, source=plain)
            b = getattr(one, ex.function).send(args, kwargs, source=plain)
            c = getattr(other, ex.function).send(args, kwargs, source=anew)
    finally:
        one.box.close()
        if other is not None:
            other.box.close()
    source = plain
    draws = int(np.size(a))
    if not value_differs(a, c):
        raise CheckFailed(f"{source}, with {name} left out, drew the same {draws} numbers in two new processes: the "
                          f"default must be a fresh Generator (np.random.default_rng()), not one seeded with a "
                          f"constant", kind="random")
    if not value_differs(a, b):
        raise CheckFailed(f"{source}, with {name} left out, drew the same {draws} numbers twice in one process: each "
                          f"call must draw afresh (a Generator made with a constant seed at every call?)",
                          kind="random")
