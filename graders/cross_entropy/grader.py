"""Grader for cross_entropy(logits, targets, ignore_index=-100): the mean loss and its gradient.

Cases give the leading axes `lead` and the vocabulary size V, so a shrunk failing case is
always a valid call. Targets are drawn from the case's generator (a repro rebuilds them) or
written out when a check needs particular ones. Every result is copied as soon as it is
returned, so a later call cannot change what an earlier check compares.
"""
import numpy as np

from graders.engine.vocabulary import (
    CheckFailed,
    check,
    expect_close,
    expect_finite,
    expect_inputs_unchanged,
    expect_raises,
    expect_shape,
    expect_tuple,
    kind_of,
    tolerance,
)

SHAPES = [
    {"lead": (), "V": 5, "seed": 0},
    {"lead": (4,), "V": 7, "seed": 1},
    {"lead": (2, 3), "V": 6, "seed": 2},
    {"lead": (2, 1, 3), "V": 4, "seed": 3},
    {"lead": (3,), "V": 1, "seed": 4},
    {"lead": (5,), "V": 9, "seed": 5},
]
DTYPES = [dict(c, dtype=d) for c in SHAPES for d in ("float64", "float32")]


# ----------------------------------------------------------------------------- helpers

def _targets(new, lead, V, name="targets"):
    """Target ids drawn from the case's generator, in [0, V)."""
    value = new.rng.integers(0, V, size=lead)
    return new.let(name, np.asarray(value), f"np.asarray(rng.integers(0, {V}, size={tuple(lead)}))")


def _batch(new, lead, V, dtype="float64", scale=2.0):
    logits = new.normal("logits", (*lead, V), scale=scale, dtype=dtype)
    return logits, _targets(new, lead, V)


def _source(ignore_index):
    return "cross_entropy(logits, targets" + ("" if ignore_index is None else f", ignore_index={ignore_index}") + ")"


def _call(impl, logits, targets, ignore_index=None, what=None):
    """(loss, dlogits) of the attempt, checked for form, as float64 copies (safe from later calls)."""
    what = what or _source(ignore_index)
    out = (impl.cross_entropy(logits, targets) if ignore_index is None else
           impl.cross_entropy(logits, targets, ignore_index=ignore_index))
    loss, grad = expect_tuple(out, 2, what)
    if isinstance(loss, np.ndarray) or not isinstance(loss, (float, np.floating)):
        shape = f" of shape {loss.shape}" if isinstance(loss, np.ndarray) else ""
        raise CheckFailed(f"the loss from {what} is {kind_of(loss)}{shape}, expected a Python float or a "
                          f"NumPy floating scalar: the mean over the counted positions is one number", kind="type")
    grad = np.array(expect_shape(grad, logits.shape, f"dlogits from {what}"), dtype=np.float64)
    return float(loss), grad, what


def _ref(ref, logits, targets, ignore_index=-100):
    return ref.cross_entropy(np.asarray(logits, dtype=np.float64), targets, ignore_index)


def _expect_agrees(got, want, what, dtype="float64", extreme=False, against=None):
    """The attempt's (loss, dlogits) against the reference's. At logits near 1e4 a float32 logit is
    only known to about 1e-3, and so is each probability: dlogits then gets an atol of 1e-3 times
    its largest entry, or softmax - 1 at a confident target would be held to more than float32 holds."""
    loss, expected = float(got[0]), float(want[0])
    if not np.isclose(loss, expected, *tolerance(dtype, extreme)):
        raise CheckFailed(f"the loss from {what} is {_g(loss)}, expected {_g(expected)}"
                          + (f" (from {against})" if against else ""), kind="close")
    atol = 1e-3 * float(np.max(np.abs(want[1]), initial=0.0)) if extreme and dtype == "float32" else None
    expect_close(got[1], want[1], f"dlogits from {what}", dtype, extreme=extreme, atol=atol,
                 against=against or "the reference")


def _g(v):
    return f"{v:.6g}"


# ----------------------------------------------------------------------------- the checks

@check("returns (loss, dlogits), dlogits shaped like logits", SHAPES[:4])
def shapes(impl, new, lead, V):
    logits, targets = _batch(new, lead, V)
    out = impl.cross_entropy(logits, targets)
    _, grad = expect_tuple(out, 2, _source(None))
    expect_shape(grad, logits.shape, f"dlogits from {_source(None)}")


@check("the loss is a Python float or a NumPy floating scalar, not an array", [
    {"lead": (3,), "V": 4, "seed": 0},
    {"lead": (2, 2), "V": 5, "seed": 1, "dtype": "float32"},
])
def loss_is_scalar(impl, new, lead, V, dtype="float64"):
    logits, targets = _batch(new, lead, V, dtype)
    _call(impl, logits, targets)


@check("agrees with the reference", DTYPES)
def agrees(impl, new, ref, lead, V, dtype):
    logits, targets = _batch(new, lead, V, dtype)
    loss, grad, what = _call(impl, logits, targets)
    _expect_agrees((loss, grad), _ref(ref, logits, targets), what, dtype)


@check("dlogits is the gradient of the loss it comes with (finite differences, float64)", [
    {"lead": (3,), "V": 4, "seed": 0, "ignored": 0},
    {"lead": (2, 2), "V": 5, "seed": 1, "ignored": 1},
    {"lead": (), "V": 6, "seed": 2, "ignored": 0},
])
def finite_differences(impl, new, ref, lead, V, ignored):
    logits, targets = _batch(new, lead, V)
    if ignored:
        targets = new.let("targets_ig", np.where(np.arange(targets.size).reshape(targets.shape) == 1, -100, targets),
                          "np.where(np.arange(targets.size).reshape(targets.shape) == 1, -100, targets)")
    loss, grad, what = _call(impl, logits, targets)
    # central differences of the attempt's own loss: a wrong loss with its own right gradient is
    # the loss's fault (`agrees` says so), and this check judges the gradient alone
    h, flat = 1e-5, logits.reshape(-1)
    fd = np.empty(flat.size)
    with impl.unrecorded():
        for i in range(flat.size):
            up, down = flat.copy(), flat.copy()
            up[i] += h
            down[i] -= h
            fd[i] = (float(impl.cross_entropy(up.reshape(logits.shape), targets)[0])
                     - float(impl.cross_entropy(down.reshape(logits.shape), targets)[0])) / (2 * h)
    fd = fd.reshape(logits.shape)
    ok = np.isclose(grad, fd, rtol=1e-5, atol=1e-7)
    if not np.all(ok):
        idx = tuple(int(i) for i in np.argwhere(~ok)[0])
        n = int(np.count_nonzero(targets != -100))
        if np.allclose(grad, -fd, rtol=1e-5, atol=1e-7):
            why = ": every entry has the opposite sign (one_hot - softmax instead of softmax - one_hot)"
        elif n > 1 and np.allclose(grad, n * fd, rtol=1e-5, atol=1e-7):
            why = f": every entry is {n} times too large, so the gradient is not divided by the {n} counted positions"
        else:
            why = ""
        raise CheckFailed(f"dlogits{list(idx)} from {what} is {_g(grad[idx])}, but the loss it returns changes at the "
                          f"rate {_g(fd[idx])} there (central differences, h = {h:g}){why}")


@check("every counted row of dlogits sums to 0 and every ignored row is exactly 0", [
    {"lead": (5,), "V": 4, "seed": 0},
    {"lead": (2, 3), "V": 6, "seed": 1},
    {"lead": (4,), "V": 3, "seed": 2, "dtype": "float32"},
], minimum={"lead": 2})
def gradient_rows(impl, new, lead, V, dtype="float64"):
    logits, targets = _batch(new, lead, V, dtype)
    targets = new.let("targets_ig", np.where(np.arange(targets.size).reshape(lead) % 2 == 1, -100, targets),
                      "np.where(np.arange(targets.size).reshape(targets.shape) % 2 == 1, -100, targets)")
    _, grad, what = _call(impl, logits, targets)
    ignored = (targets == -100)
    sums = grad.sum(axis=-1)
    for p in (tuple(int(i) for i in q) for q in np.argwhere(ignored)):
        if np.any(grad[p] != 0):
            raise CheckFailed(f"the ignored position {list(p)} (target -100) has dlogits row "
                              f"{np.array2string(grad[p], precision=4)} in {what}: an ignored position takes no part "
                              f"in the loss, so its gradient is exactly 0")
    for p in (tuple(int(i) for i in q) for q in np.argwhere(~ignored)):
        if not abs(sums[p]) <= 10 * tolerance(dtype)[1]:
            n = int(np.count_nonzero(~ignored))
            why = (f": 1/{n}, so the one-hot of the target is never subtracted" if np.isclose(sums[p], 1 / n) else "")
            raise CheckFailed(f"row {list(p)} of dlogits from {what} sums to {_g(sums[p])}, not 0: softmax sums to 1 "
                              f"and one_hot to 1{why}")


@check("positions whose target is ignore_index count in neither the sum nor the number of positions", [
    {"lead": (5,), "V": 4, "ignore_index": -100, "seed": 0},
    {"lead": (2, 3), "V": 6, "ignore_index": -100, "seed": 1},
    {"lead": (4,), "V": 5, "ignore_index": -1, "seed": 2},
], minimum={"lead": 2})
def ignore_index(impl, new, ref, lead, V, ignore_index):
    logits, targets = _batch(new, lead, V)
    every_third = np.arange(targets.size).reshape(lead) % 3 == 1
    targets = new.let("targets_ig", np.where(every_third, ignore_index, targets),
                      f"np.where(np.arange(targets.size).reshape(targets.shape) % 3 == 1, {ignore_index}, targets)")
    loss, grad, what = _call(impl, logits, targets, ignore_index=None if ignore_index == -100 else ignore_index)
    want = _ref(ref, logits, targets, ignore_index)
    n, total = int(np.count_nonzero(~every_third)), targets.size
    try:
        _expect_agrees((loss, grad), want, what)
    except CheckFailed as failure:
        why = (f": that is the sum over the {n} counted positions divided by all {total} positions; ignored "
               f"positions must not count in the number either" if np.isclose(loss, want[0] * n / total, rtol=1e-6)
               else "")
        raise CheckFailed(f"{failure.message} (targets {np.array2string(targets.reshape(-1))}, "
                          f"{total - n} of them ignored){why}", kind=failure.kind) from None


@check("an ignore_index inside [0, V) ignores that class", [
    {"lead": (6,), "V": 4, "seed": 0},
    {"lead": (2, 3), "V": 5, "seed": 1},
], minimum={"lead": 3, "V": 3})
def ignore_index_in_range(impl, new, ref, lead, V):
    logits = new.normal("logits", (*lead, V), scale=2.0)
    # every class appears, 0 (a padding id) and V - 1 included
    targets = new.let("targets", np.arange(int(np.prod(lead))).reshape(lead) % V,
                      f"np.arange({int(np.prod(lead))}).reshape({tuple(lead)}) % {V}")
    for ignore_index in (0, V - 1):
        got = _call(impl, logits, targets, ignore_index=ignore_index)
        _expect_agrees(got[:2], _ref(ref, logits, targets, ignore_index), got[2])


@check("logits of magnitude 1e4 give a finite loss and gradient that agree with the reference", [
    {"lead": (6,), "V": 5, "dtype": "float64", "seed": 0},
    {"lead": (2, 3), "V": 7, "dtype": "float64", "seed": 1},
    {"lead": (6,), "V": 5, "dtype": "float32", "seed": 2},
], minimum={"lead": 2, "V": 2})
def huge_logits(impl, new, ref, lead, V, dtype):
    # entries cluster at -1e4, 0 and 1e4 and differ by O(1) within a cluster, so the top of a row
    # is a near tie (logsumexp is the max plus up to log V); position 0 lies entirely near -1e4
    raw = new.normal("raw", (*lead, V))
    first = (0,) * len(lead)
    value = (1e4 * np.clip(np.round(raw), -1, 1) + raw).astype(dtype)
    value[first] = raw[first] - 1e4
    where = ", ".join("0" * len(lead))
    logits = new.let("logits", value, f"(1e4 * np.clip(np.round(raw), -1, 1) + raw)"
                                      f"{'' if dtype == 'float64' else f'.astype(np.{dtype})'}"
                                      f"; logits[{where}] = raw[{where}] - 1e4")
    # every other position's target is its row's smallest logit (a loss near 1e4), the rest its largest
    n = int(np.prod(lead))
    targets = new.let("targets", np.where(np.arange(n).reshape(lead) % 2 == 1, value.argmax(-1), value.argmin(-1)),
                      f"np.where(np.arange({n}).reshape({tuple(lead)}) % 2 == 1, logits.argmax(-1), logits.argmin(-1))")
    loss, grad, what = _call(impl, logits, targets)
    what += " with logits of magnitude 1e4"
    if not np.isfinite(loss):
        raise CheckFailed(f"the loss from {what} is {loss}", kind="finite")
    expect_finite(grad, f"dlogits from {what}")
    _expect_agrees((loss, grad), _ref(ref, logits, targets), what, dtype, extreme=True)


@check("a target whose probability is far below 1e-30 still gives its whole loss (40 to 800 at one position)", [
    {"V": 5, "seed": 0},
    {"V": 8, "seed": 1},
], minimum={"V": 4})
def unlikely_targets(impl, new, ref, V):
    gaps = [40.0, 100.0, 300.0, 800.0]
    noise = new.normal("noise", (len(gaps), V), scale=0.5)
    logits = new.let("logits", noise - np.eye(len(gaps), V) * np.array(gaps)[:, None],
                     f"noise - np.eye({len(gaps)}, {V}) * np.array({gaps})[:, None]"
                     "  # position i: its target, class i, far below the rest")
    targets = new.let("targets", np.arange(len(gaps)) % V, f"np.arange({len(gaps)}) % {V}")
    loss, grad, what = _call(impl, logits, targets)
    want = _ref(ref, logits, targets)
    try:
        _expect_agrees((loss, grad), want, what)
    except CheckFailed as failure:
        alone = []
        for i in range(len(gaps)):  # one position at a time, to see each position's loss
            row = new.let(f"row{i}", logits[i:i + 1].copy(), f"logits[{i}:{i + 1}].copy()")
            tgt = new.let(f"target{i}", targets[i:i + 1].copy(), f"targets[{i}:{i + 1}].copy()")
            alone.append(_call(impl, row, tgt, what=f"cross_entropy(row{i}, target{i})")[0])
        true = [float(_ref(ref, logits[i:i + 1], targets[i:i + 1])[0]) for i in range(len(gaps))]
        capped = np.all(np.isfinite(alone)) and max(alone) - min(alone) < 1e-3 * max(alone) and max(alone) > 5
        why = (f": one position at a time the losses are {[round(a, 3) for a in alone]} where "
               f"{[round(t, 1) for t in true]} are right, all the same value, so each probability was raised to a "
               f"floor of about e^-{alone[0]:.4g} = {np.exp(-alone[0]):.3g} before the log" if capped else "")
        raise CheckFailed(failure.message + why, kind=failure.kind) from None


@check("works for any leading axes: (V,) with a 0-d target, (N, V), (B, T, V), (2, 1, 3, V)", [
    {"lead": (2, 3), "V": 5, "seed": 1},
    {"lead": (2, 1, 3), "V": 4, "seed": 2},
    {"lead": (3, 4), "V": 2, "seed": 3},
    {"lead": (), "V": 6, "seed": 0},
], minimum={"lead": 2})
def leading_axes(impl, new, lead, V):
    # compared with the attempt's own answer on the same positions as one (N, V) batch: a wrong
    # formula fails `agrees`, not this
    logits, targets = _batch(new, lead, V)
    loss, grad, what = _call(impl, logits, targets)
    n = targets.size
    flat_z = new.let("logits_2d", logits.reshape(n, V), f"logits.reshape({n}, {V})")
    flat_t = new.let("targets_1d", targets.reshape(n), f"targets.reshape({n})")
    flat = _call(impl, flat_z, flat_t, what="cross_entropy(logits_2d, targets_1d)")
    try:
        _expect_agrees((loss, grad.reshape(n, V)), flat[:2], f"{what} (logits of shape {logits.shape})",
                       against=flat[2])
    except CheckFailed as failure:
        first = lead[0] if lead else 1
        wrong_count = n != first and np.isclose(loss, flat[0] * n / first, rtol=1e-6)
        why = (f": that is the sum over all {n} positions divided by {first}, the length of the first axis only; "
               f"count every position (targets.size)" if wrong_count else "")
        raise CheckFailed(f"{failure.message}{why}", kind=failure.kind) from None


@check("raises ValueError for a target outside [0, V) that is not ignore_index", [
    {"n": 3, "V": 5, "seed": 0},
], shrink=False)
def raises(impl, new, n, V):
    logits = new.normal("logits", (n, V))
    for bad, ignore_index in ((V + 3, None), (-1, None), (V, None), (-100, 0)):
        targets = new.let(f"targets_{'m' if bad < 0 else ''}{abs(bad)}", np.array([1] * (n - 1) + [bad]),
                          f"np.array({[1] * (n - 1) + [bad]})")
        kwargs = {} if ignore_index is None else {"ignore_index": ignore_index}
        ignored = -100 if ignore_index is None else ignore_index
        expect_raises(ValueError, impl.cross_entropy, logits, targets, **kwargs,
                      why=f"the target {bad} is outside [0, {V}) and ignore_index is {ignored}")


@check("raises ValueError when no position is counted (every target ignored, or an empty batch)", shrink=False)
def raises_nothing_counted(impl, new):
    logits = new.normal("logits", (3, 4))
    calls = [
        (logits, new.array("all_ignored", [-100, -100, -100]), {}, "every target is ignore_index"),
        (logits, new.array("all_padding", [0, 0, 0]), {"ignore_index": 0}, "every target is ignore_index=0"),
        (new.let("empty", np.zeros((0, 4)), "np.zeros((0, 4))"),
         new.let("no_targets", np.zeros(0, dtype=np.int64), "np.zeros(0, dtype=np.int64)"), {}, "the batch is empty"),
        (new.let("empty_bt", np.zeros((2, 0, 4)), "np.zeros((2, 0, 4))"),
         new.let("no_targets_bt", np.zeros((2, 0), dtype=np.int64), "np.zeros((2, 0), dtype=np.int64)"), {},
         "the batch (2 sequences of 0 positions) is empty"),
    ]
    for logits, targets, kwargs, why in calls:
        expect_raises(ValueError, impl.cross_entropy, logits, targets, **kwargs, why=f"no position is counted: {why}")


@check("large sizes (4100 positions; a vocabulary of 32000): the loss and rows of a split batch add up", [
    {"lead": (2, 2050), "V": 3, "seed": 0},
    {"lead": (2,), "V": 32000, "seed": 2},
], shrink=False)
def large_sizes(impl, new, lead, V):
    logits, targets = _batch(new, lead, V)
    loss, grad, what = _call(impl, logits, targets)
    n, k = targets.size, min(4, targets.size - 1)
    parts = []
    for name, rows in (("head", slice(0, k)), ("tail", slice(k, n))):
        part_z = new.let(f"logits_{name}", logits.reshape(-1, V)[rows].copy(),
                         f"logits.reshape(-1, {V})[{rows.start}:{rows.stop}].copy()")
        part_t = new.let(f"targets_{name}", targets.reshape(-1)[rows].copy(),
                         f"targets.reshape(-1)[{rows.start}:{rows.stop}].copy()")
        part = _call(impl, part_z, part_t, what=f"cross_entropy(logits_{name}, targets_{name})")
        parts.append((part, rows))
    combined = sum(p[0] * (r.stop - r.start) for p, r in parts) / n
    rescaled = np.concatenate([p[1] * (r.stop - r.start) / n for p, r in parts])
    if not np.isclose(loss, combined, rtol=1e-6, atol=1e-9):
        raise CheckFailed(f"the loss of {what} over {n} positions is {_g(loss)}, but the first {k} and the other "
                          f"{n - k} positions, graded apart and weighted by their counts, give {_g(combined)}")
    bad = ~np.all(np.isclose(grad.reshape(-1, V), rescaled, rtol=1e-6, atol=1e-9), axis=-1)
    if np.any(bad):
        p = int(np.argmax(bad))
        raise CheckFailed(f"row {p} of dlogits from {what} over {n} positions is "
                          f"{np.array2string(grad.reshape(-1, V)[p], precision=4, threshold=6)}, but "
                          f"{np.array2string(rescaled[p], precision=4, threshold=6)} in a call with part of the batch, "
                          f"rescaled to the same count: a position's gradient must not depend on how many positions "
                          f"share the call, beyond the division by their number")


@check("leaves logits and targets unchanged", [
    {"lead": (3,), "V": 5},
    {"lead": (2, 2), "V": 4, "dtype": "float32"},
])
def inputs_unchanged(impl, new, lead, V, dtype="float64"):
    logits, targets = _batch(new, lead, V, dtype)
    impl.cross_entropy(logits, targets)
    ignored = new.let("targets_ig", np.where(np.arange(targets.size).reshape(lead) == 0, -100, targets),
                      "np.where(np.arange(targets.size).reshape(targets.shape) == 0, -100, targets)")
    impl.cross_entropy(logits, ignored)
    expect_inputs_unchanged(impl)
