"""Grader for attention_backward(q, k, v, d_out, causal=True): dq, dk and dv of attention.

Two yardsticks, both float64 and written here: central finite differences of a plain
forward pass, and an analytic backward pass that takes any mask (so that a failure can
be compared with the gradients of a top-left mask or of no mask at all). The reference
solution is the third.
"""
import numpy as np

from graders.engine import grammar
from graders.engine.vocabulary import (
    CheckFailed,
    check,
    expect_close,
    expect_finite,
    expect_inputs_unchanged,
    expect_raises,
    expect_shape,
    expect_tuple,
    tolerance,
)

NAMES = ("dq", "dk", "dv")


# ----------------------------------------------------------------------------- yardsticks

def _future(t_q, t_k, causal, offset=None):
    """(T_q, T_k) bool, True where query i may not see key j; bottom-right unless `offset` is given."""
    if not causal:
        return np.zeros((t_q, t_k), dtype=bool)
    offset = t_k - t_q if offset is None else offset
    return np.arange(t_k)[None, :] > (offset + np.arange(t_q))[:, None]


def _forward(q, k, v, future):
    """softmax(q k^T / sqrt(d), future masked) v in float64; leading axes broadcast."""
    s = np.einsum("...id,...jd->...ij", q, k) / np.sqrt(q.shape[-1])
    s = np.where(future, -np.inf, s)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    return np.einsum("...ij,...jd->...id", w / w.sum(axis=-1, keepdims=True), v)


def _analytic(q, k, v, d_out, future):
    """dq, dk, dv in float64 for any mask, with the row term taken as sum(d_out * out)."""
    q, k, v, d_out = (np.asarray(a, dtype=np.float64) for a in (q, k, v, d_out))
    scale = 1 / np.sqrt(q.shape[-1])
    s = np.where(future, -np.inf, np.einsum("...id,...jd->...ij", q, k) * scale)
    with np.errstate(invalid="ignore"):
        w = np.exp(s - s.max(axis=-1, keepdims=True))
        p = w / w.sum(axis=-1, keepdims=True)
    out = np.einsum("...ij,...jd->...id", p, v)
    ds = p * (np.einsum("...id,...jd->...ij", d_out, v) - np.sum(d_out * out, axis=-1, keepdims=True))
    return (np.einsum("...ij,...jd->...id", ds, k) * scale, np.einsum("...ij,...id->...jd", ds, q) * scale,
            np.einsum("...ij,...id->...jd", p, d_out))


def _numeric(q, k, v, d_out, future, h=1e-6):
    """Central differences of sum(out * d_out), every entry of q, k and v perturbed at once."""
    arrays = [np.asarray(a, dtype=np.float64) for a in (q, k, v)]
    grads = []
    for which, x in enumerate(arrays):
        step = np.eye(x.size).reshape((x.size,) + x.shape) * h            # (n, *x.shape)

        def loss(shifted):
            args = list(arrays)
            args[which] = shifted
            out = _forward(*args, future)                                  # (n, ..., T_q, d)
            return (out * d_out).reshape(x.size, -1).sum(axis=1)           # (n,)

        grads.append(((loss(x + step) - loss(x - step)) / (2 * h)).reshape(x.shape))
    return grads


# ----------------------------------------------------------------------------- inputs and calls

def _inputs(new, lead, t_q, t_k, d, dtype="float64", scale=1.0):
    q = new.normal("q", (*lead, t_q, d), scale=scale, dtype=dtype)
    k = new.normal("k", (*lead, t_k, d), scale=scale, dtype=dtype)
    v = new.normal("v", (*lead, t_k, d), dtype=dtype)
    d_out = new.normal("d_out", (*lead, t_q, d), dtype=dtype)
    return q, k, v, d_out


def _call(impl, q, k, v, d_out, causal=True, names=("q", "k", "v", "d_out")):
    """The attempt's (dq, dk, dv), each checked for its shape."""
    src = f"attention_backward({', '.join(names)}{'' if causal else ', causal=False'})"
    out = expect_tuple(impl.attention_backward(q, k, v, d_out, causal=causal), 3, src)
    return tuple(expect_shape(g, a.shape, f"{n} from {src}") for g, n, a in zip(out, NAMES, (q, k, v))), src


def _expect_grads(got, want, src, dtype="float64", rtol=None, atol=None, against="the reference"):
    """Each gradient close to `want`; the first one that is not, with which of the others agree."""
    rtol_, atol_ = tolerance(dtype)
    rtol, atol = rtol or rtol_, atol if atol is not None else (atol_,) * 3
    ok = [np.allclose(np.asarray(g, dtype=np.float64), w, rtol=rtol, atol=a, equal_nan=True)
          for g, w, a in zip(got, want, atol)]
    if all(ok):
        return
    first = ok.index(False)
    agree = [n for n, good in zip(NAMES, ok) if good]
    if agree == ["dv"]:
        note = "; dv agrees, so the attention weights are right and the difference lies after them"
    elif agree:
        note = f"; {' and '.join(agree)} {grammar.verb(len(agree), 'agrees', 'agree')}"
    else:
        note = "; all three differ, dv too, and dv depends only on the attention weights and d_out"
    try:
        expect_close(got[first], want[first], f"{NAMES[first]} from {src}", dtype, rtol=rtol, atol=atol[first])
    except CheckFailed as exc:
        raise CheckFailed(exc.message.replace("the reference", against) + note, kind=exc.kind) from None


def _reference(ref, q, k, v, d_out, causal=True):
    return ref.attention_backward(*(a.astype(np.float64) for a in (q, k, v, d_out)), causal=causal)


# ----------------------------------------------------------------------------- the checks

CASES = [
    {"lead": (), "t_q": 1, "t_k": 1, "d": 1, "causal": True, "seed": 0},
    {"lead": (), "t_q": 5, "t_k": 5, "d": 3, "causal": True, "seed": 1},
    {"lead": (), "t_q": 5, "t_k": 5, "d": 3, "causal": False, "seed": 2},
    {"lead": (2,), "t_q": 4, "t_k": 7, "d": 2, "causal": True, "seed": 3},
    {"lead": (2, 3), "t_q": 3, "t_k": 3, "d": 4, "causal": False, "seed": 4},
    {"lead": (1, 2), "t_q": 6, "t_k": 9, "d": 5, "causal": True, "seed": 5},
    {"lead": (3,), "t_q": 7, "t_k": 4, "d": 3, "causal": False, "seed": 6},
]
VALID = {"valid": lambda c: not c.get("causal", True) or c["t_q"] <= c["t_k"]}


@check("returns (dq, dk, dv) shaped like q, k and v", [
    {"lead": (), "t_q": 3, "t_k": 5, "d": 2, "causal": True, "seed": 0},
    {"lead": (2,), "t_q": 4, "t_k": 4, "d": 3, "causal": True, "seed": 1},
    {"lead": (2, 3), "t_q": 2, "t_k": 6, "d": 5, "causal": True, "seed": 2},
    {"lead": (), "t_q": 1, "t_k": 1, "d": 1, "causal": True, "seed": 3},
    {"lead": (3,), "t_q": 5, "t_k": 2, "d": 4, "causal": False, "seed": 4},
], **VALID)
def shapes(impl, new, lead, t_q, t_k, d, causal):
    _call(impl, *_inputs(new, lead, t_q, t_k, d), causal)


@check("agrees with central finite differences of a float64 forward pass", [
    {"lead": (), "t_q": 4, "t_k": 4, "d": 3, "causal": True, "seed": 0},
    {"lead": (), "t_q": 3, "t_k": 5, "d": 2, "causal": True, "seed": 1},
    {"lead": (2,), "t_q": 3, "t_k": 3, "d": 2, "causal": False, "seed": 2},
    {"lead": (), "t_q": 5, "t_k": 3, "d": 2, "causal": False, "seed": 3},
    {"lead": (2,), "t_q": 1, "t_k": 3, "d": 3, "causal": True, "seed": 4},
], **VALID)
def finite_differences(impl, new, lead, t_q, t_k, d, causal):
    q, k, v, d_out = _inputs(new, lead, t_q, t_k, d)
    numeric = _numeric(q, k, v, d_out, _future(t_q, t_k, causal))   # before the call, whatever it does
    got, src = _call(impl, q, k, v, d_out, causal)
    # a central difference with step 1e-6 is good to about 1e-8 here
    _expect_grads(got, numeric, src, rtol=1e-5, atol=(1e-6,) * 3, against="the finite differences")


@check("agrees with the reference in float64 and float32", [dict(c, dtype=t) for c in CASES
                                                            for t in ("float64", "float32")], **VALID)
def agrees(impl, new, ref, lead, t_q, t_k, d, causal, dtype):
    q, k, v, d_out = _inputs(new, lead, t_q, t_k, d, dtype)
    want = _reference(ref, q, k, v, d_out, causal)
    got, src = _call(impl, q, k, v, d_out, causal)
    _expect_grads(got, want, src, dtype)


@check("a key that no query with a non-zero d_out row can see gets exactly zero dk and dv", [
    {"lead": (), "t_q": 6, "t_k": 6, "d": 3, "live": "upto", "m": 2, "seed": 0},
    {"lead": (2,), "t_q": 4, "t_k": 7, "d": 2, "live": "upto", "m": 1, "seed": 1},
    {"lead": (), "t_q": 5, "t_k": 5, "d": 4, "live": "only", "m": 0, "seed": 2},
    {"lead": (3,), "t_q": 5, "t_k": 8, "d": 3, "live": "only", "m": 2, "seed": 3},
], minimum={"t_q": 2, "t_k": 3}, valid=lambda c: c["m"] < c["t_q"] - 1 and c["t_q"] <= c["t_k"])
def unseen_keys_get_zero(impl, new, lead, t_q, t_k, d, live, m):
    q, k, v, d_out = _inputs(new, lead, t_q, t_k, d, scale=2.0)
    rows = np.arange(t_q) <= m if live == "upto" else np.arange(t_q) == m      # (T_q,) non-zero rows
    expr = f"np.where((np.arange({t_q}) {'<=' if live == 'upto' else '=='} {m})[:, None], d_out, 0.0)"
    d_out = new.let("d_out", np.where(rows[:, None], d_out, 0.0), expr)
    got, src = _call(impl, q, k, v, d_out)
    last = t_k - t_q + m          # the position of the last query with a non-zero d_out row
    for name, g in zip(NAMES[1:], got[1:]):
        g = np.asarray(g, dtype=np.float64)
        unseen = g[..., last + 1:, :]                                       # (..., T_k - last - 1, d)
        if np.any(unseen != 0):
            idx = tuple(int(i) for i in np.argwhere(unseen != 0)[0])
            j = last + 1 + idx[-2]
            which = (f"every row but {m}" if live == "only" else f"row {m + 1}" if m + 2 == t_q
                     else f"rows {m + 1}..{t_q - 1}")
            message = (f"{name}[..., {j}, :] from {src} holds {float(unseen[idx]):.3g} at index "
                       f"{list(idx[:-2]) + [j, idx[-1]]}, expected exactly 0: d_out is zero in {which}, and key "
                       f"{j} comes after position {last}, where query {m} sits, so no query that counts can see it")
            # every stray entry a billionth of the largest: the masked weights are tiny, not zero
            tiny = np.all(np.abs(unseen) <= 1e-9 * np.max(np.abs(g)))
            if tiny:
                message += "; those entries are all below a billionth of the largest, so masked weights are tiny, not 0"
            raise CheckFailed(message, bug="clip_before_exp" if tiny else None)


@check("causal with fewer queries than keys uses bottom-right alignment (query i sits at T_k - T_q + i)", [
    {"lead": (), "t_q": 1, "t_k": 5, "d": 2, "seed": 0},
    {"lead": (), "t_q": 3, "t_k": 7, "d": 4, "seed": 1},
    {"lead": (2,), "t_q": 4, "t_k": 6, "d": 3, "seed": 2},
], minimum={"t_k": 2}, valid=lambda c: c["t_q"] < c["t_k"])
def bottom_right(impl, new, lead, t_q, t_k, d):
    q, k, v, d_out = _inputs(new, lead, t_q, t_k, d)
    want = _analytic(q, k, v, d_out, _future(t_q, t_k, True))
    others = [("a mask aligned to the top-left (query i sees keys 0..i)",
               _analytic(q, k, v, d_out, _future(t_q, t_k, True, offset=0))),
              ("no mask at all", _analytic(q, k, v, d_out, _future(t_q, t_k, False)))]
    got, src = _call(impl, q, k, v, d_out)
    try:
        _expect_grads(got, want, src)
    except CheckFailed as exc:
        for label, other in others:
            if all(np.allclose(g, o, rtol=1e-6, atol=1e-9) for g, o in zip(got, other)):
                raise CheckFailed(f"{exc.message}; all three match the gradients of {label}, whereas with "
                                  f"T_q={t_q} < T_k={t_k} query i sees keys 0..{t_k - t_q}+i") from None
        raise


@check("causal=False lets every query see every key (T_q > T_k allowed)", [
    {"lead": (), "t_q": 4, "t_k": 4, "d": 3, "seed": 0},
    {"lead": (2,), "t_q": 6, "t_k": 3, "d": 2, "seed": 1},
    {"lead": (), "t_q": 2, "t_k": 5, "d": 4, "seed": 2},
])
def not_causal(impl, new, lead, t_q, t_k, d):
    q, k, v, d_out = _inputs(new, lead, t_q, t_k, d)
    want = _analytic(q, k, v, d_out, _future(t_q, t_k, False))
    masked = _analytic(q, k, v, d_out, _future(t_q, t_k, True)) if t_q <= t_k else None
    got, src = _call(impl, q, k, v, d_out, causal=False)
    try:
        _expect_grads(got, want, src)
    except CheckFailed as exc:
        if masked and all(np.allclose(g, o, rtol=1e-6, atol=1e-9) for g, o in zip(got, masked)):
            raise CheckFailed(f"{exc.message}; all three match the causal gradients, so causal=False "
                              f"was not honoured") from None
        raise


def _near_ties(new, t_q, t_k, causal, magnitude, dtype):
    """2-D q and k with scores of about `magnitude`, every row split between its two best keys.

    Keys lie on a circle; each query points between two keys it may see that are neighbours
    on the circle (a pair no earlier query took, where there is one), turned a little so
    that their two scores differ by about 1. The weights
    are then far from 0 and 1 at scores near 1e4. The first query of a causal call sees one
    key only; it points away from it, below -magnitude, where a mask value of -1e4 would win.
    """
    rng = new.rng
    radius = 100.0
    theta = (np.arange(t_k) * 2.399963 + rng.uniform(0, 0.3, t_k)) % (2 * np.pi)   # golden-angle spread
    k = radius * np.stack([np.cos(theta), np.sin(theta)], axis=-1)                 # (T_k, 2)
    r = magnitude * np.sqrt(2) / radius
    phi, length = np.empty(t_q), np.full(t_q, r)
    used = set()
    for i in range(t_q):
        seen = np.arange(t_k - t_q + i + 1 if causal else t_k)                  # the keys query i sees
        if len(seen) == 1:
            phi[i], length[i] = theta[0] + np.pi, 1.2 * r
            continue
        order = seen[np.argsort(theta[seen])]                                   # by angle
        after = np.roll(order, -1)
        arcs = (theta[after] - theta[order]) % (2 * np.pi)                       # neighbour to neighbour
        pairs = [(int(a), int(b)) for a, b, arc in zip(order, after, arcs) if arc <= 2 * np.pi / 3]
        # a pair no earlier query took: two queries pointing the same way would make dk a
        # difference of near-equal terms, which float32 cannot resolve
        fresh = [pair for pair in pairs if pair not in used] or pairs
        a, b = fresh[0] if fresh else (int(order[np.argmin(arcs)]), int(after[np.argmin(arcs)]))
        used.add((a, b))
        half = ((theta[b] - theta[a]) % (2 * np.pi)) / 2
        gap = rng.uniform(-1.5, 1.5)                                               # score difference wanted
        phi[i] = theta[a] + half + gap / (2 * magnitude * np.sin(half))
    q = length[:, None] * np.stack([np.cos(phi), np.sin(phi)], axis=-1)           # (T_q, 2)
    v = rng.standard_normal((t_k, 2))
    d_out = rng.standard_normal((t_q, 2))
    return tuple(new.array(n, a.astype(dtype), dtype=dtype) for n, a in zip(("q", "k", "v", "d_out"), (q, k, v, d_out)))


@check("stays finite and correct for scores near 1e4 (float32 to rtol 1e-3, atol 1e-3 of each gradient's largest entry)", [
    {"t_q": 7, "t_k": 7, "causal": False, "dtype": "float64", "seed": 0},
    {"t_q": 6, "t_k": 6, "causal": True, "dtype": "float64", "seed": 1},
    {"t_q": 4, "t_k": 7, "causal": True, "dtype": "float64", "seed": 2},
    {"t_q": 7, "t_k": 7, "causal": False, "dtype": "float32", "seed": 3},
    {"t_q": 6, "t_k": 6, "causal": True, "dtype": "float32", "seed": 4},
], shrink=False)
def huge_scores(impl, new, t_q, t_k, causal, dtype):
    q, k, v, d_out = _near_ties(new, t_q, t_k, causal, 1e4, dtype)
    want = _analytic(q, k, v, d_out, _future(t_q, t_k, causal))
    got, src = _call(impl, q, k, v, d_out, causal)
    top = float(np.max(np.abs(q.astype(np.float64) @ k.T.astype(np.float64)))) / np.sqrt(2)
    try:
        for name, g in zip(NAMES, got):
            expect_finite(g, f"{name} from {src}")
        if dtype == "float32":
            atol = tuple(1e-3 * float(np.max(np.abs(w))) for w in want)
            _expect_grads(got, want, src, dtype, rtol=1e-3, atol=atol)
        else:
            _expect_grads(got, want, src, dtype)
    except CheckFailed as exc:
        raise CheckFailed(f"{exc.message} (the scores here reach {top:.3g})", kind=exc.kind) from None


@check("long sequences: a few queries over more than 4096 keys", [
    {"t_q": 3, "t_k": 4100, "d": 2, "seed": 0},
    {"t_q": 1, "t_k": 5000, "d": 3, "seed": 1},
], shrink=False)
def long_sequences(impl, new, ref, t_q, t_k, d):
    q, k, v, d_out = _inputs(new, (), t_q, t_k, d)
    want = _reference(ref, q, k, v, d_out)
    got, src = _call(impl, q, k, v, d_out)
    _expect_grads(got, want, src)


@check("raises ValueError for a causal call with T_q > T_k; causal=False allows it", shrink=False)
def value_error(impl, new):
    q, k, v, d_out = _inputs(new, (), 5, 3, 2)
    expect_raises(ValueError, impl.attention_backward, q, k, v, d_out,
                  why="causal with T_q=5 > T_k=3: the first queries would see no key")
    _call(impl, q, k, v, d_out, causal=False)


@check("leaves q, k, v and d_out unchanged", [
    {"lead": (2,), "t_q": 4, "t_k": 6, "d": 3, "causal": True, "dtype": "float64"},
    {"lead": (), "t_q": 5, "t_k": 5, "d": 2, "causal": False, "dtype": "float32"},
])
def inputs_unchanged(impl, new, lead, t_q, t_k, d, causal, dtype):
    q, k, v, d_out = _inputs(new, lead, t_q, t_k, d, dtype, scale=3.0)
    impl.attention_backward(q, k, v, d_out, causal=causal)
    expect_inputs_unchanged(impl)
