"""Grader for attend_with_cache(x, W_q, W_k, W_v, W_o, n_heads, cache=None): attention over a KV cache.

Sizes are given per case as B, t_past, t_new, n_heads and d_head (d_model = n_heads * d_head), so
a shrunk failing case is always a valid call; t_past None means cache=None. Most given caches are
the projected keys and values of an earlier stretch of the sequence (`x_past`), as in decoding;
the agreement check also gives random ones, since the function must take any cache as it is.
"""
import numpy as np

from graders.engine import grammar
from graders.engine.vocabulary import (
    CheckFailed,
    check,
    expect_close,
    expect_inputs_unchanged,
    expect_raises,
    expect_repeatable,
    expect_shape,
    expect_tuple,
    kind_of,
    mismatch,
    tolerance,
)

FUNCTION = "attend_with_cache"
SHAPES = "returns y (B, t_new, d_model) and the cache (k, v), each (B, n_heads, t_past + t_new, d_head)"
AGREES = "agrees with the reference"
CHUNKS = "any split of a sequence into chunks gives causal attention on the whole sequence"
CONTENTS = "the returned cache is the given one followed by x @ W_k and x @ W_v split into heads"
EMPTY = "a cache with t_past = 0 gives what cache=None gives"
STATE = "earlier results stay right across later calls, two sequences decoded in turn"
LONG = "works with caches longer than 4096 positions"
HUGE = "stays finite and correct for scores of 1e4 and more"
ZERO = "a zero row of x (scores exactly 0) gets the same answer as the reference"
NEGATIVE = "rows whose scores are all near -800 get the same answer as the reference"
TINY = "weights down to exp(-30) stay exact, and later keys get exactly 0"
# checks of one regime (large scores, zero rows, long caches, two sequences in turn) run once the
# plain agreement holds: a formula error fails "agrees with the reference" alone
AFTER = ("agrees",)
UNCHANGED = "leaves its inputs unchanged, the cache pair included"

CASES = [
    {"B": 2, "t_past": 4, "t_new": 3, "n_heads": 2, "d_head": 3, "seed": 0},
    {"B": 1, "t_past": None, "t_new": 5, "n_heads": 3, "d_head": 2, "seed": 1},
    {"B": 3, "t_past": 6, "t_new": 1, "n_heads": 1, "d_head": 5, "seed": 2},
    {"B": 2, "t_past": 1, "t_new": 4, "n_heads": 4, "d_head": 1, "seed": 3},
    {"B": 1, "t_past": 7, "t_new": 2, "n_heads": 2, "d_head": 4, "seed": 4},
    {"B": 2, "t_past": None, "t_new": 1, "n_heads": 3, "d_head": 2, "seed": 5},
]
DTYPES = [dict(c, dtype=d) for c in CASES for d in ("float64", "float32")]
W_NAMES = ("W_q", "W_k", "W_v", "W_o")


# ----------------------------------------------------------------------------- inputs

def _inputs(new, B, t_new, n_heads, d_head, dtype="float64", x_scale=1.0, w_scale=0.5, name="x"):
    """x and the four projections, registered so that a repro rebuilds them."""
    d_model = n_heads * d_head
    x = new.normal(name, (B, t_new, d_model), scale=x_scale, dtype=dtype)
    Ws = [new.normal(n, (d_model, d_model), scale=w_scale, dtype=dtype) for n in W_NAMES]
    return x, Ws


def _heads(t, n_heads):
    """(B, T, d_model) -> (B, n_heads, T, d_head), head h = feature columns h*d_head:(h+1)*d_head."""
    B, T, d_model = t.shape
    return t.reshape(B, T, n_heads, d_model // n_heads).transpose(0, 2, 1, 3)


def _projected_cache(new, x_past, Ws, n_heads, name="cache", past="x_past"):
    """The cache an earlier call would hold: x_past's keys and values, split into heads."""
    B, t, d_model = x_past.shape
    pair = (_heads(x_past @ Ws[1], n_heads), _heads(x_past @ Ws[2], n_heads))
    split = f".reshape({B}, {t}, {n_heads}, {d_model // n_heads}).transpose(0, 2, 1, 3)"
    return new.let(name, pair, f"(({past} @ W_k){split}, ({past} @ W_v){split})")


def _random_cache(new, B, t_past, n_heads, d_head, dtype="float64"):
    """Any cache at all: random keys and values (None when t_past is None)."""
    if t_past is None:
        return None
    k = new.normal("k_past", (B, n_heads, t_past, d_head), dtype=dtype)
    v = new.normal("v_past", (B, n_heads, t_past, d_head), dtype=dtype)
    return new.let("cache", (k, v), "(k_past, v_past)")


# ----------------------------------------------------------------------------- calls

def _call(impl, x, Ws, n_heads, cache=None, names=("x", "cache")):
    """The attempt's y, k and v, their types and shapes checked."""
    B, t_new, d_model = x.shape
    d_head = d_model // n_heads
    t_all = t_new + (0 if cache is None else np.shape(cache[0])[2])
    given = () if cache is None else (cache,)
    what = f"{FUNCTION}({names[0]}, W_q, W_k, W_v, W_o, {n_heads}{', ' + names[1] if given else ''})"
    y, grown = expect_tuple(getattr(impl, FUNCTION)(x, *Ws, n_heads, *given), 2, what)
    if not isinstance(grown, (tuple, list)) or len(grown) != 2:
        raise CheckFailed(f"the cache returned by {what} is {kind_of(grown)}, expected a pair (k, v)",
                          kind="type")
    y = expect_shape(y, (B, t_new, d_model), f"y from {what}")
    k = expect_shape(grown[0], (B, n_heads, t_all, d_head), f"the returned k from {what}")
    v = expect_shape(grown[1], (B, n_heads, t_all, d_head), f"the returned v from {what}")
    return y, k, v


def _expected(ref, x, Ws, n_heads, cache=None):
    """The reference's y, k and v in float64, on the same (possibly float32) values."""
    f64 = [np.asarray(a, dtype=np.float64) for a in (x, *Ws)]
    given = () if cache is None else (tuple(np.asarray(a, dtype=np.float64) for a in cache),)
    y, (k, v) = ref.attend_with_cache(*f64, n_heads, *given)
    return y, k, v


def _expect_all(got, want, what, dtype, extreme=False, hint=None):
    """y, k and v each close to the reference."""
    for name, g, w in zip(("y", "the returned k", "the returned v"), got, want):
        expect_close(g, w, f"{name} from {what}", dtype, extreme=extreme, hint=hint)


def _g(v):
    return f"{v:.6g}"


# ----------------------------------------------------------------------------- shapes and values

@check(SHAPES, CASES)
def shapes(impl, new, B, t_past, t_new, n_heads, d_head):
    x, Ws = _inputs(new, B, t_new, n_heads, d_head)
    _call(impl, x, Ws, n_heads, _random_cache(new, B, t_past, n_heads, d_head))


@check(AGREES, DTYPES)
def agrees(impl, new, ref, B, t_past, t_new, n_heads, d_head, dtype):
    x, Ws = _inputs(new, B, t_new, n_heads, d_head, dtype)
    cache = _random_cache(new, B, t_past, n_heads, d_head, dtype)
    want = _expected(ref, x, Ws, n_heads, cache)   # first, in case the attempt writes into its inputs
    _expect_all(_call(impl, x, Ws, n_heads, cache), want, "the call", dtype)


# ----------------------------------------------------------------------------- chunks

def _chunk_sizes(split, T, rng):
    """How a sequence of T positions is cut: a list of chunk lengths that sum to T."""
    if split == "all at once":
        return [T]
    if split == "one token at a time":
        return [1] * T
    if split == "a prompt, then one token at a time":
        prompt = (T + 1) // 2
        return [prompt] + [1] * (T - prompt)
    cuts = np.sort(rng.choice(np.arange(1, T), size=int(rng.integers(1, T)), replace=False)) if T > 1 else []
    return [int(n) for n in np.diff([0, *cuts, T])]


def _expect_whole(got, want, what, start, rtol, atol):
    """A chunk's result against the same positions of attention on the whole sequence."""
    for name, g, w, axis in zip(("y", "the returned k", "the returned v"), got, want, (1, 2, 2)):
        found = mismatch(g, w, rtol, atol)
        if found:
            n, idx, a, b = found
            pos = idx[axis] + (start if axis == 1 else 0)
            gap = "" if np.isnan(a) or np.isnan(b) else f", by up to {_g(abs(a - b))}"
            raise CheckFailed(f"{what} gives {name} that differs from causal attention on the whole sequence "
                              f"in {grammar.of(n, np.size(g), 'entry', 'its')}{gap}: at position {pos} "
                              f"(index {list(idx)}) it is {_g(a)}, expected {_g(b)}", kind="close")


@check(CHUNKS, [
    {"B": 2, "T": 5, "n_heads": 2, "d_head": 3, "split": "one token at a time", "seed": 0},
    {"B": 1, "T": 7, "n_heads": 3, "d_head": 2, "split": "a prompt, then one token at a time", "seed": 1},
    {"B": 2, "T": 6, "n_heads": 2, "d_head": 2, "split": "all at once", "seed": 2},
    {"B": 2, "T": 9, "n_heads": 2, "d_head": 3, "split": "random chunks", "seed": 3},
    {"B": 1, "T": 7, "n_heads": 1, "d_head": 4, "split": "random chunks", "seed": 4, "dtype": "float32"},
    {"B": 3, "T": 6, "n_heads": 4, "d_head": 1, "split": "random chunks", "seed": 5},
], minimum={"T": 2})
def chunks(impl, new, ref, B, T, n_heads, d_head, split, dtype="float64"):
    x, Ws = _inputs(new, B, T, n_heads, d_head, dtype)
    whole = _expected(ref, x, Ws, n_heads)          # cache=None: causal attention on all of x
    sizes = _chunk_sizes(split, T, new.rng)
    rtol, atol = tolerance(dtype)
    cache, start = None, 0
    for c, n in enumerate(sizes):
        end = start + n
        xc = new.let(f"x{c}", x[:, start:end].copy(), f"x[:, {start}:{end}].copy()")
        got = _call(impl, xc, Ws, n_heads, cache, (f"x{c}", f"cache{c}"))
        expect_inputs_unchanged(impl)  # else the later chunks would see other inputs
        what = (f"fed x ({T} positions) in chunks of {sizes}, each with the cache the previous call returned, "
                f"chunk {c} (positions {start}..{end - 1}, t_past = {start})")
        _expect_whole(got, (whole[0][:, start:end], whole[1][:, :, :end], whole[2][:, :, :end]),
                      what, start, rtol, atol)
        previous = f", cache{c}" if c else ""
        cache = new.let(f"cache{c + 1}", got[1:], f"{FUNCTION}(x{c}, W_q, W_k, W_v, W_o, {n_heads}{previous})[1]")
        start = end


# ----------------------------------------------------------------------------- the cache

def _cache_findings(k_new, x, W_k, W_v, n_heads, rtol, atol):
    """What the new part of a returned k matches, when not x @ W_k split into heads."""
    B, t, d_model = x.shape
    d_head = d_model // n_heads
    x64 = x.astype(np.float64)
    keys, values = x64 @ W_k.astype(np.float64), x64 @ W_v.astype(np.float64)
    strided = keys.reshape(B, t, d_head, n_heads).transpose(0, 3, 1, 2)
    for label, other in (("the values, x @ W_v split into heads", _heads(values, n_heads)),
                         ("x @ W_k with head h taken from the strided columns h::n_heads", strided),
                         ("x @ W_k split into heads and divided by sqrt(d_head)",
                          _heads(keys, n_heads) / d_head ** 0.5)):
        if other.shape == k_new.shape and mismatch(k_new, other, rtol, atol) is None:
            return f"; they equal {label}"
    return ""


@check(CONTENTS, [
    {"B": 2, "t_past": 3, "t_new": 2, "n_heads": 2, "d_head": 3, "seed": 0},
    {"B": 1, "t_past": None, "t_new": 4, "n_heads": 3, "d_head": 2, "seed": 1},
    {"B": 2, "t_past": 5, "t_new": 1, "n_heads": 2, "d_head": 2, "seed": 2},
    {"B": 1, "t_past": 2, "t_new": 3, "n_heads": 1, "d_head": 3, "dtype": "float32", "seed": 3},
])
def cache_contents(impl, new, B, t_past, t_new, n_heads, d_head, dtype="float64"):
    x, Ws = _inputs(new, B, t_new, n_heads, d_head, dtype)
    cache = None
    if t_past is not None:
        x_past = new.normal("x_past", (B, t_past, n_heads * d_head), dtype=dtype)
        cache = _projected_cache(new, x_past, Ws, n_heads)
    given = (None, None) if cache is None else cache
    _, k, v = _call(impl, x, Ws, n_heads, cache)
    rtol, atol = tolerance(dtype)
    past = 0 if cache is None else t_past
    for name, got, before, W in (("k", k, given[0], Ws[1]), ("v", v, given[1], Ws[2])):
        found = None if before is None else mismatch(got[:, :, :past], before, rtol, atol)
        if found:
            n, idx, a, b = found
            raise CheckFailed(f"positions 0..{past - 1} of the returned {name} are not the given cache's {name} "
                              f"({grammar.count(n, 'entry')} {grammar.verb(n, 'differs', 'differ')}): at index "
                              f"{list(idx)} it is {_g(a)}, the cache held {_g(b)}")
        want = _heads(x.astype(np.float64) @ W.astype(np.float64), n_heads)
        found = mismatch(got[:, :, past:], want, rtol, atol)
        if found:
            n, (b, h, i, j), a, e = found
            extra = _cache_findings(got[:, :, past:], x, Ws[1], Ws[2], n_heads, rtol, atol) if name == "k" else ""
            raise CheckFailed(f"positions {past}.. of the returned {name} are not x @ W_{name} split into heads "
                              f"({grammar.count(n, 'entry')} {grammar.verb(n, 'differs', 'differ')}): at batch {b}, "
                              f"head {h}, position {past + i}, feature {j} it "
                              f"is {_g(a)}, expected {_g(e)}{extra}")


@check(EMPTY, [
    {"B": 2, "t_new": 3, "n_heads": 2, "d_head": 2, "seed": 0},
    {"B": 1, "t_new": 1, "n_heads": 3, "d_head": 1, "seed": 1},
    {"B": 1, "t_new": 4, "n_heads": 1, "d_head": 3, "dtype": "float32", "seed": 2},
])
def empty_cache(impl, new, B, t_new, n_heads, d_head, dtype="float64"):
    # the attempt against itself: a wrong formula fails `agrees`, not this
    x, Ws = _inputs(new, B, t_new, n_heads, d_head, dtype)
    shape = (B, n_heads, 0, d_head)
    empty = new.let("empty", (np.zeros(shape, dtype), np.zeros(shape, dtype)),
                    f"(np.zeros({shape}, np.{dtype}), np.zeros({shape}, np.{dtype}))")
    with_none = _call(impl, x, Ws, n_heads)
    source = impl.last_call()
    expect_inputs_unchanged(impl)  # else the second call would see other inputs
    with_empty = _call(impl, x, Ws, n_heads, empty, ("x", "empty"))
    for name, got, want in zip(("y", "the returned k", "the returned v"), with_empty, with_none):
        expect_close(got, want, f"{name} from {impl.last_call()} with t_past = 0", dtype,
                     against=f"{source} (cache=None)")


# ----------------------------------------------------------------------------- many calls, sizes

# two sequences decoded in turn: (sequence, first position, end) per call, each call given the
# cache that the previous call on the same sequence returned
TURNS = [("a", 0, 2), ("b", 0, 2), ("a", 2, 3), ("b", 2, 3), ("a", 3, 6), ("b", 3, 4), ("a", 6, 7)]


def _used_previous_cache(ref, got, x, Ws, n_heads, previous, rtol, atol):
    """Whether the attempt's y is what the cache returned by the call before (the other sequence) gives."""
    if previous is None:
        return False
    with np.errstate(all="ignore"):
        try:
            y_other = _expected(ref, x, Ws, n_heads, previous)[0]
        except ValueError:
            return False
    return mismatch(got[0], y_other, rtol, atol) is None


class _Turns:
    """Two sequences decoded in turn: each call continues its sequence from the cache that
    sequence's previous call returned (and remembers the cache the call before it returned)."""

    def __init__(self, impl, new, ref, xs, Ws, n_heads, dtype):
        self.impl, self.new, self.ref, self.xs, self.Ws, self.n_heads = impl, new, ref, xs, Ws, n_heads
        self.whole = {s: _expected(ref, xs[s], Ws, n_heads) for s in xs}
        self.caches, self.previous, self.tol = {"a": None, "b": None}, None, tolerance(dtype)

    def call(self, n, s, start, end):
        """Make the call (the function that expect_repeatable runs)."""
        self.x = self.new.let(f"x{n}", self.xs[s][:, start:end].copy(), f"x_{s}[:, {start}:{end}].copy()")
        cache = self.caches[s]
        out = getattr(self.impl, FUNCTION)(self.x, *self.Ws, self.n_heads, *(() if cache is None else (cache,)))
        expect_inputs_unchanged(self.impl)  # else the later calls would see other inputs
        self.previous_now = self.previous
        if isinstance(out, (tuple, list)) and len(out) == 2:
            self.previous = self.caches[s] = self.new.let(
                f"cache_{s}", out[1], f"{FUNCTION}(x{n}, W_q, W_k, W_v, W_o, {self.n_heads}"
                                      f"{', cache_' + s if start else ''})[1]")
        return out

    def judge(self, n, s, start, end, answer, what):
        """The answer against attention on sequence s alone (what expect_repeatable asks of it)."""
        B, _, d_model = self.x.shape
        t_all, d_head = end, d_model // self.n_heads
        y, grown = expect_tuple(answer, 2, what)
        got = (expect_shape(y, (B, end - start, d_model), f"y from {what}"),
               *(expect_shape(a, (B, self.n_heads, t_all, d_head), f"the returned {name} from {what}")
                 for name, a in zip("kv", expect_tuple(grown, 2, f"the cache from {what}"))))
        whole = self.whole[s]
        want = (whole[0][:, start:end], whole[1][:, :, :end], whole[2][:, :, :end])
        what = (f"{what} (sequence {s}, positions {start}..{end - 1}, given the cache its previous call "
                f"returned; the calls alternate between sequences a and b)")
        try:
            _expect_whole(got, want, what, start, *self.tol)
        except CheckFailed as exc:
            if start and _used_previous_cache(self.ref, got, self.x, self.Ws, self.n_heads, self.previous_now,
                                              *self.tol):
                raise CheckFailed(f"{exc.message}; that y is what the cache returned by call {n} (the other "
                                  f"sequence) gives, not the cache passed in", kind=exc.kind) from None
            raise


@check(STATE, [
    {"B": 2, "n_heads": 2, "d_head": 3, "seed": 0},
    {"B": 1, "n_heads": 3, "d_head": 2, "dtype": "float32", "seed": 1},
], shrink=False, after=AFTER)
def state(impl, new, ref, B, n_heads, d_head, dtype="float64"):
    d_model = n_heads * d_head
    xs = {"a": new.normal("x_a", (B, 7, d_model), dtype=dtype), "b": new.normal("x_b", (B, 4, d_model), dtype=dtype)}
    Ws = [new.normal(n, (d_model, d_model), scale=0.5, dtype=dtype) for n in W_NAMES]
    turns = _Turns(impl, new, ref, xs, Ws, n_heads, dtype)
    expect_repeatable(impl, [(lambda n=n, t=t: turns.call(n, *t), lambda answer, what, n=n, t=t: turns.judge(
        n, *t, answer, what)) for n, t in enumerate(TURNS)], dtype)


@check(LONG, [
    {"B": 1, "t_past": 4200, "t_new": 3, "n_heads": 2, "d_head": 2, "seed": 0},
    {"B": 2, "t_past": 2100, "t_new": 1, "n_heads": 1, "d_head": 3, "dtype": "float32", "seed": 1},
], shrink=False, after=AFTER)
def long_cache(impl, new, ref, B, t_past, t_new, n_heads, d_head, dtype="float64"):
    x, Ws = _inputs(new, B, t_new, n_heads, d_head, dtype)
    x_past = new.normal("x_past", (B, t_past, n_heads * d_head), dtype=dtype)
    cache = _projected_cache(new, x_past, Ws, n_heads)
    want = _expected(ref, x, Ws, n_heads, cache)
    _expect_all(_call(impl, x, Ws, n_heads, cache), want, f"the call with t_past = {t_past}", dtype)


# ----------------------------------------------------------------------------- special values

def _score_range(x, Ws, cache, n_heads):
    """(lowest, highest) visible score per head, in float64, for messages."""
    x64, W_q, W_k = (np.asarray(a, dtype=np.float64) for a in (x, Ws[0], Ws[1]))
    q, k = _heads(x64 @ W_q, n_heads), _heads(x64 @ W_k, n_heads)
    if cache is not None:
        k = np.concatenate([np.asarray(cache[0], dtype=np.float64), k], axis=2)
    t_new, t_all = q.shape[2], k.shape[2]
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])            # (B, n_heads, t_new, t_all)
    seen = np.arange(t_all)[None, :] <= (t_all - t_new + np.arange(t_new))[:, None]
    s = s[:, :, seen]                                                # (B, n_heads, visible pairs)
    return s.min(axis=(0, 2)), s.max(axis=(0, 2))


@check(HUGE, [
    {"B": 2, "t_past": 3, "t_new": 3, "n_heads": 2, "d_head": 3, "dtype": "float64", "x_scale": 25.0, "seed": 0},
    {"B": 2, "t_past": 2, "t_new": 3, "n_heads": 2, "d_head": 3, "dtype": "float32", "x_scale": 25.0, "seed": 1},
    {"B": 1, "t_past": 4, "t_new": 1, "n_heads": 3, "d_head": 2, "dtype": "float64", "x_scale": 40.0, "seed": 2},
], shrink=False, after=AFTER)
def huge_scores(impl, new, ref, B, t_past, t_new, n_heads, d_head, dtype, x_scale):
    # |x| ~ 25 and unit-variance weights put the largest scores near 1e4, |x| ~ 40 near 3e4
    x, Ws = _inputs(new, B, t_new, n_heads, d_head, dtype, x_scale=x_scale, w_scale=1.0)
    x_past = new.normal("x_past", (B, t_past, n_heads * d_head), scale=x_scale, dtype=dtype)
    cache = _projected_cache(new, x_past, Ws, n_heads)
    want, (low, high) = _expected(ref, x, Ws, n_heads, cache), _score_range(x, Ws, cache, n_heads)
    _expect_all(_call(impl, x, Ws, n_heads, cache), want, "the call", dtype, extreme=True,
                hint=f"the scores here run from {low.min():.3g} to {high.max():.3g}")


@check(ZERO, [
    {"B": 2, "t_past": 3, "t_new": 4, "n_heads": 2, "d_head": 3, "dtype": "float64", "seed": 0},
    {"B": 1, "t_past": 2, "t_new": 3, "n_heads": 3, "d_head": 2, "dtype": "float32", "seed": 1},
    {"B": 2, "t_past": 1, "t_new": 1, "n_heads": 1, "d_head": 2, "dtype": "float64", "seed": 2},
], after=AFTER)
def zero_rows(impl, new, ref, B, t_past, t_new, n_heads, d_head, dtype):
    d_model = n_heads * d_head
    x0, Ws = _inputs(new, B, t_new, n_heads, d_head, dtype, name="x0")
    x = x0.copy()
    x[:, ::2] = 0
    x = new.let("x", x, "x0.copy(); x[:, ::2] = 0")
    past0 = new.normal("x_past0", (B, t_past, d_model), dtype=dtype)
    past = past0.copy()
    past[:, -1] = 0
    past = new.let("x_past", past, "x_past0.copy(); x_past[:, -1] = 0")
    cache = _projected_cache(new, past, Ws, n_heads)
    want = _expected(ref, x, Ws, n_heads, cache)
    _expect_all(_call(impl, x, Ws, n_heads, cache), want, "the call", dtype, extreme=True,
                hint="x is 0 at new positions 0, 2, ... and x_past at its last position, so those rows and "
                     "columns of the scores are exactly 0")


@check(NEGATIVE, [
    {"B": 2, "t_past": 3, "t_new": 3, "dtype": "float64", "seed": 0},
    {"B": 1, "t_past": 2, "t_new": 4, "dtype": "float32", "seed": 1},
    {"B": 1, "t_past": 1, "t_new": 1, "dtype": "float64", "seed": 2},
], after=AFTER)
def far_below_zero(impl, new, ref, B, t_past, t_new, dtype):
    # W_q = -s I and W_k = I make head 0's scores -s x.x' / sqrt(2), all near -800, while
    # head 1's stay near 0
    s = 800.0 * np.sqrt(2.0)
    shift = np.array([1.0, 0.0, 0.0, 0.0])
    parts = []
    for name, t in (("x", t_new), ("x_past", t_past)):
        noise = new.normal(name + "0", (B, t, 4), scale=0.1, dtype=dtype)
        parts.append(new.let(name, (noise + shift).astype(dtype),
                             f"({name}0 + np.array([1.0, 0, 0, 0])).astype(np.{dtype})"))
    x, x_past = parts
    W_q = new.let("W_q", (-s * np.eye(4)).astype(dtype), f"(-{s!r} * np.eye(4)).astype(np.{dtype})")
    W_k = new.let("W_k", np.eye(4, dtype=dtype), f"np.eye(4, dtype=np.{dtype})")
    Ws = [W_q, W_k] + [new.normal(n, (4, 4), scale=0.5, dtype=dtype) for n in ("W_v", "W_o")]
    cache = _projected_cache(new, x_past, Ws, 2)
    want, (low, high) = _expected(ref, x, Ws, 2, cache), _score_range(x, Ws, cache, 2)
    _expect_all(_call(impl, x, Ws, 2, cache), want, "the call", dtype, extreme=True,
                hint=f"every score of head 0 lies between {low[0]:.4g} and {high[0]:.4g}, those of head 1 "
                     f"between {low[1]:.3g} and {high[1]:.3g}")


@check(TINY, [{"t_past": 5, "n_far": 8}, {"t_past": 2, "n_far": 6}, {"t_past": 9, "n_far": 12}], shrink=False,
       after=AFTER)
def tiny_weights(impl, new, ref, t_past, n_far):
    # One head of size 2. q = (s * x_0, 0), k = x and v = (x_1, 0): x_0 sets the scores and x_1 the
    # values. The first and the last position are (1, 0), the n_far between them (0.5, 1). The
    # last query scores 60 on the two (1, 0) keys, whose values are 0, and 30 on the others, whose
    # values are 1, so its exact output is about n_far * exp(-30) / 2 ~ 1e-13 * n_far.
    s = 60.0 * np.sqrt(2.0)
    seq = np.array([[1.0, 0.0]] + [[0.5, 1.0]] * n_far + [[1.0, 0.0]])[None]     # (1, n_far + 2, 2)
    seq = new.let("seq", seq, f"np.array([[1.0, 0.0]] + [[0.5, 1.0]] * {n_far} + [[1.0, 0.0]])[None]")
    Ws = [new.let("W_q", np.array([[s, 0.0], [0.0, 0.0]]), f"np.array([[{s!r}, 0.0], [0.0, 0.0]])"),
          new.let("W_k", np.eye(2), "np.eye(2)"),
          new.let("W_v", np.array([[0.0, 0.0], [1.0, 0.0]]), "np.array([[0.0, 0.0], [1.0, 0.0]])"),
          new.let("W_o", np.eye(2), "np.eye(2)")]
    x_past = new.let("x_past", seq[:, :t_past].copy(), f"seq[:, :{t_past}].copy()")
    x = new.let("x", seq[:, t_past:].copy(), f"seq[:, {t_past}:].copy()")
    cache = _projected_cache(new, x_past, Ws, 1)
    want = _expected(ref, x, Ws, 1, cache)
    got = _call(impl, x, Ws, 1, cache)
    found = mismatch(got[0], want[0], *tolerance(np.float64))
    if found:
        n, (b, i, f), a, e = found
        raise CheckFailed(f"y at new position {i} (feature {f}) is {_g(a)}, expected {_g(e)}; "
                          f"{grammar.count(n, 'entry')} of y {grammar.verb(n, 'differs', 'differ')}. In this input a "
                          f"row's scores lie up to 30 below its largest, so weights as "
                          f"small as exp(-30) = 9.4e-14 count, and later keys must get weight exactly 0")
    _expect_all(got, want, "the call", np.float64)


# ----------------------------------------------------------------------------- errors and inputs

@check("raises ValueError when n_heads does not divide d_model", [
    {"B": 1, "t_new": 3, "d_model": 8, "n_heads": 3},
    {"B": 2, "t_new": 1, "d_model": 6, "n_heads": 4},
    {"B": 1, "t_new": 2, "d_model": 5, "n_heads": 2},
], valid=lambda c: c["d_model"] % c["n_heads"] != 0 and c["n_heads"] < c["d_model"])
def raises_heads(impl, new, B, t_new, d_model, n_heads):
    x = new.normal("x", (B, t_new, d_model))
    Ws = [new.normal(n, (d_model, d_model), scale=0.5) for n in W_NAMES]
    expect_raises(ValueError, getattr(impl, FUNCTION), x, *Ws, n_heads,
                  why=f"n_heads={n_heads} does not divide d_model={d_model}")


# (name, k shape, v shape, why) for x of shape (2, 2, 6) and n_heads = 2, so d_head = 3
MISFITS = [
    ("batch", (1, 2, 3, 3), (1, 2, 3, 3), "the cache holds 1 sequence, x holds 2"),
    ("heads", (2, 1, 3, 3), (2, 1, 3, 3), "the cache has 1 head, n_heads is 2"),
    ("head_size", (2, 2, 3, 2), (2, 2, 3, 2), "the cache's heads have size 2, d_model // n_heads is 3"),
    ("lengths", (2, 2, 3, 3), (2, 2, 4, 3), "k holds 3 positions and v holds 4"),
    ("v_heads", (2, 2, 3, 3), (2, 1, 3, 3), "k has 2 heads and v has 1"),
]


@check("raises ValueError for a cache that does not fit x, n_heads or itself", [{}], shrink=False)
def raises_cache(impl, new):
    x, Ws = _inputs(new, 2, 2, 2, 3)
    for name, k_shape, v_shape, why in MISFITS:
        k = new.normal(f"k_{name}", k_shape)
        v = new.normal(f"v_{name}", v_shape)
        cache = new.let(f"cache_{name}", (k, v), f"(k_{name}, v_{name})")
        expect_raises(ValueError, getattr(impl, FUNCTION), x, *Ws, 2, cache, why=why)


@check("raises ValueError when x has no new positions (t_new = 0)", [{}], shrink=False)
def raises_empty(impl, new):
    x = new.let("x", np.zeros((2, 0, 6)), "np.zeros((2, 0, 6))")
    Ws = [new.normal(n, (6, 6), scale=0.5) for n in W_NAMES]
    cache = _projected_cache(new, new.normal("x_past", (2, 3, 6)), Ws, 2)
    expect_raises(ValueError, getattr(impl, FUNCTION), x, *Ws, 2, cache, why="t_new = 0, with a cache of 3 positions")
    expect_raises(ValueError, getattr(impl, FUNCTION), x, *Ws, 2, why="t_new = 0, with cache=None")


@check(UNCHANGED, [
    {"B": 2, "t_past": 3, "t_new": 2, "n_heads": 2, "d_head": 3, "dtype": "float64"},
    {"B": 1, "t_past": 2, "t_new": 3, "n_heads": 3, "d_head": 2, "dtype": "float32"},
    {"B": 2, "t_past": None, "t_new": 4, "n_heads": 1, "d_head": 2, "dtype": "float64"},
])
def inputs_unchanged(impl, new, B, t_past, t_new, n_heads, d_head, dtype):
    x, Ws = _inputs(new, B, t_new, n_heads, d_head, dtype)
    cache = None
    if t_past is not None:
        cache = _projected_cache(new, new.normal("x_past", (B, t_past, n_heads * d_head), dtype=dtype), Ws, n_heads)
    _call(impl, x, Ws, n_heads, cache)
    expect_inputs_unchanged(impl)
