"""Relations between two arrays of one shape, for the relation finder (graders.engine.relations):
axes swapped, slices permuted or shifted along one axis, a factor, an offset, an input added,
sums along another axis, and the pattern of the entries where they agree."""
from __future__ import annotations

import itertools
import math
import numbers
from typing import Any

import numpy as np

from graders.engine import grammar
from graders.engine.wording import (
    MAX_AXIS_PERMS,
    R_AXES,
    R_CONSTANT,
    R_COUNT,
    R_FACTOR,
    R_INPUT,
    R_OFFSET,
    R_PATTERN,
    R_PERM,
    R_RENORM,
    R_SHIFT,
    R_SUMS,
    SUM_TOL,
    Finding,
    Words,
    listing,
    num_text,
    shape_text,
)

# ----------------------------------------------------------------------------- values

def to_array(x: Any) -> np.ndarray | None:
    """`x` as a float64 array, or None when it is not numbers (None, strings, objects, complex)."""
    try:
        if x is None or isinstance(x, (str, bytes, dict)):
            return None
        if isinstance(x, (bool, np.bool_)):
            return np.asarray(float(x))
        if isinstance(x, numbers.Real) and not isinstance(x, np.ndarray):
            return np.asarray(float(x), dtype=np.float64)
        arr = x if isinstance(x, np.ndarray) else np.asarray(x)
        kind = arr.dtype.kind
        if kind in "biuf":
            with np.errstate(all="ignore"):
                return arr.astype(np.float64)
        if kind == "O" and arr.size <= 100_000:
            flat = arr.ravel().tolist()
            if all(isinstance(v, numbers.Real) and not isinstance(v, (str, bytes)) for v in flat):
                return np.array([float(v) for v in flat], dtype=np.float64).reshape(arr.shape)
        return None
    except Exception:
        return None


def close_entries(a: np.ndarray, b: np.ndarray, w: "Words") -> np.ndarray:
    """Entry by entry: `a` within tolerance of `b` (the reference side); NaN matches NaN and
    an infinity the same infinity."""
    with np.errstate(all="ignore"):
        return np.isclose(a, b, rtol=w.rtol, atol=w.atol, equal_nan=True)


def all_close(a: np.ndarray, b: np.ndarray, w: "Words") -> bool:
    return a.shape == b.shape and bool(np.all(close_entries(a, b, w)))


def _both_nonfinite(G: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Entries left out of elementwise relations: both NaN, or the same infinity."""
    with np.errstate(all="ignore"):
        return (np.isnan(G) & np.isnan(W)) | (np.isinf(G) & (G == W))


def _holds(G: np.ndarray, pred: np.ndarray, ignored: np.ndarray, w: "Words") -> bool:
    return bool(np.all(close_entries(G, pred, w) | ignored))


EXPLAINS = 0.1  # a fitted relation must leave at most this share of the largest difference


def _explains(G: np.ndarray, pred: np.ndarray, W: np.ndarray, ignored: np.ndarray, w: "Words") -> bool:
    """`pred` (a relation fitted to the answers) holds within tolerance and accounts for the
    difference: what it leaves is a tenth of what there was at most. A difference at the
    edge of the tolerance is otherwise "explained" by any constant that halves it."""
    if not _holds(G, pred, ignored, w):
        return False
    keep = np.isfinite(G) & np.isfinite(W) & np.isfinite(pred)
    if not keep.any():
        return True
    with np.errstate(all="ignore"):
        before = float(np.max(np.abs(G[keep] - W[keep])))
        after = float(np.max(np.abs(G[keep] - pred[keep])))
    return after <= EXPLAINS * before


# ----------------------------------------------------------------------------- axes

def _axis_perms(ws: tuple, gs: tuple):
    """Orders of the axes (as for np.transpose) that turn shape `ws` into `gs`, other than
    the identity; single swaps first."""
    nd = len(ws)
    if nd < 2 or nd != len(gs) or nd > 8:
        return
    ident = tuple(range(nd))
    tried = 0
    seen = set()
    for i, j in itertools.combinations(range(nd), 2):
        if ws[i] == 1 and ws[j] == 1:
            continue
        p = list(ident)
        p[i], p[j] = p[j], p[i]
        p = tuple(p)
        if tuple(ws[k] for k in p) == gs:
            seen.add(p)
            tried += 1
            yield p
            if tried >= MAX_AXIS_PERMS:
                return
    if nd > 6:
        return
    for p in itertools.permutations(ident):
        if p == ident or p in seen or tuple(ws[k] for k in p) != gs:
            continue
        # moving only axes of length 1 changes nothing
        if [k for k in p if ws[k] != 1] == [k for k in ident if ws[k] != 1]:
            continue
        tried += 1
        yield p
        if tried >= MAX_AXIS_PERMS:
            return


def _swap_of(p: tuple) -> tuple[int, int] | None:
    moved = [k for k, v in enumerate(p) if k != v]
    if len(moved) == 2:
        return moved[0], moved[1]
    return None


_GOLDEN = 0.6180339887498949


def _projection_weights(m: int) -> np.ndarray:
    return 1.0 + (np.arange(m, dtype=np.float64) * _GOLDEN) % 1.0


def _slice_map(Gk: np.ndarray, Wk: np.ndarray, w: "Words") -> np.ndarray | None:
    """For rows Gk[i] and Wk[j] (slices along one axis, flattened): the j that each Gk[i]
    matches, when each matches exactly one; else None. Candidates come from a projection
    (two matching slices project within a computable bound of each other), so only few
    pairs are compared entry by entry."""
    n, m = Gk.shape
    if n == 0 or m == 0:
        return None
    r = _projection_weights(m)
    with np.errstate(all="ignore"):
        Gf = np.where(np.isfinite(Gk), Gk, 0.0)
        Wf = np.where(np.isfinite(Wk), Wk, 0.0)
        pg, pw = Gf @ r, Wf @ r
        scale = max(float(np.max(np.abs(Wf) @ r)), float(np.max(np.abs(Gf) @ r)))
        tol = 2.0 * ((w.atol + w.rtol * np.abs(Wf)) @ r) + 1e-9 * scale + 1e-300
    if not (np.all(np.isfinite(pg)) and np.all(np.isfinite(pw)) and np.all(np.isfinite(tol))):
        return None
    tmax = float(tol.max())
    order = np.argsort(pw, kind="stable")
    ps = pw[order]
    lo = np.searchsorted(ps, pg - tmax, side="left")
    hi = np.searchsorted(ps, pg + tmax, side="right")
    counts = hi - lo
    if np.any(counts == 0):
        return None
    total = int(counts.sum())
    if total > 4 * n + 16:  # slices too alike to tell apart
        return None
    starts = np.repeat(lo - (np.cumsum(counts) - counts), counts)
    I = np.repeat(np.arange(n), counts)
    J = order[np.arange(total) + starts]
    ok = close_entries(Gk[I], Wk[J], w).all(axis=1)
    per = np.bincount(I[ok], minlength=n)
    if np.any(per != 1):
        return None
    mapping = np.empty(n, dtype=np.int64)
    mapping[I[ok]] = J[ok]
    return mapping


def _flat_along(a: np.ndarray, k: int) -> np.ndarray:
    n = a.shape[k]
    return np.moveaxis(a, k, 0).reshape(n, -1)


# ----------------------------------------------------------------------------- relations (same shape)

def transposition(G, W, w: Words) -> tuple | None:
    """The order of W's axes (as for np.transpose) that makes it G, other than the identity."""
    return next((p for p in _axis_perms(W.shape, G.shape) if all_close(G, np.transpose(W, p), w)), None)


def swapped_axes(p: tuple, w: Words) -> str | None:
    """The axes a transposition `p` swaps, in words; None when it does more than one swap."""
    swap, nd = _swap_of(p), len(p)
    if swap == (nd - 2, nd - 1):
        return w.last_two(nd)
    return w.axes_pair(*swap) if swap else None


def axes_relation(G, W, w: Words) -> list[Finding]:
    p = transposition(G, W, w)
    if p is None:
        return []
    swapped = swapped_axes(p, w)
    how = f"{swapped} swapped" if swapped else f"its axes in the order {shape_text(p)}"
    return [Finding(R_AXES, "transpose", f"{w.subject} {w.verb('is', 'are')} {w.ref} with {how}", (p,))]


def along_axis_relations(G, W, w: Words) -> list[Finding]:
    out: list[Finding] = []
    for k in range(G.ndim):
        n = G.shape[k]
        if n < 2:
            continue
        Gk, Wk = _flat_along(G, k), _flat_along(W, k)
        shift = _shift(Gk, Wk, w)
        mapping = _slice_map(Gk, Wk, w)
        ax = w.ax(k)
        if mapping is not None:
            perm = [int(j) for j in mapping]
            if sorted(perm) == list(range(n)) and perm != list(range(n)):
                roll = next((s for s in (1, -1) if n >= 3 and perm == [(i - s) % n for i in range(n)]), 0)
                if roll:
                    out.append(_shift_finding(k, roll, True, w))
                    continue
                rolled = next((s for s in range(2, n - 1) if n >= 4 and perm == [(i - s) % n for i in range(n)]), 0)
                if rolled:
                    text = (f"along {ax}, {w.subject} {w.verb('holds', 'hold')} the slices of {w.ref} rolled by "
                            f"{w.number(rolled, generic=False)}: slice i holds its slice i - {rolled}, the last "
                            f"{rolled} coming first")
                    out.append(Finding(R_PERM, "rolled", text, (k, rolled)))
                    continue
                pattern = permutation_pattern(perm)
                listed = ", ".join(str(j) for j in perm[:12]) + (", …" if n > 12 else "")
                if pattern == "reversed":
                    order = f"the order {listed} (reversed)" if n <= 12 else "reverse order"
                else:
                    order = f"the order {listed}" + (f" ({PATTERNS[pattern]})" if pattern else "")
                text = f"along {ax}, {w.subject} {w.verb('holds', 'hold')} the slices of {w.ref} in {order}"
                out.append(Finding(R_PERM, "permutation", text, (k, tuple(perm))))
                continue
            if len(set(perm)) == 1:
                s = perm[0]
                text = f"every slice of {w.subject} along {ax} equals slice {s} of {w.ref}"
                out.append(Finding(R_PERM, "same_slice", text, (k, s)))
                continue
        if shift:
            out.append(_shift_finding(k, shift, False, w))
    return out


PATTERNS = {"evens_first": "its even-numbered slices first, then its odd-numbered ones",
            "interleaved": "its two halves interleaved: slice 2i holds its slice i, slice 2i + 1 its slice i + n/2"}


def permutation_pattern(perm: list[int]) -> str | None:
    """The name of an order of slices that is the same at every length (reversed, the even-numbered
    slices first, the two halves interleaved), so that two cases of other lengths can agree on it.
    Below six slices the last two are one swap, and not named."""
    n = len(perm)
    if perm == list(range(n - 1, -1, -1)):
        return "reversed"
    if n < 6:
        return None
    if perm == list(range(0, n, 2)) + list(range(1, n, 2)):
        return "evens_first"
    if n % 2 == 0 and perm == [i // 2 + (n // 2) * (i % 2) for i in range(n)]:
        return "interleaved"
    return None


def _shift(Gk, Wk, w: Words) -> int:
    """+1 when Gk[i] == Wk[i-1] for every i >= 1, -1 when Gk[i] == Wk[i+1] for every i < n-1,
    provided the reference's neighbouring slices differ (else the claim says nothing)."""
    n = Gk.shape[0]
    if n < 3 or Gk.shape[1] == 0:
        return 0
    distinct = ~close_entries(Wk[1:], Wk[:-1], w).all(axis=1)
    if not np.all(distinct):
        return 0
    if close_entries(Gk[1:], Wk[:-1], w).all():
        return 1
    if close_entries(Gk[:-1], Wk[1:], w).all():
        return -1
    return 0


def _shift_finding(k: int, s: int, wraps: bool, w: Words) -> Finding:
    src = "i-1" if s == 1 else "i+1"
    text = (f"{w.subject} {w.verb('is', 'are')} {w.ref} shifted by one position along {w.ax(k)}: "
            f"entry i holds entry {src} of {w.ref}")
    if wraps:
        text += " (the last wraps around to the first)" if s == 1 else " (the first wraps around to the last)"
    return Finding(R_SHIFT, "shift", text, (k, s, wraps))


def value_relations(G, W, w: Words, inputs: dict[str, np.ndarray]) -> list[Finding]:
    out: list[Finding] = []
    ignored = _both_nonfinite(G, W)
    fin = np.isfinite(G) & np.isfinite(W)
    n_fin = int(fin.sum())
    if n_fin == 0:
        return out
    subj, ref = w.subject, w.ref
    equals = w.verb("equals", "equal")
    Wf = W[fin]
    w_constant = n_fin >= 2 and bool(np.all(Wf == Wf[0]))

    # all zeros
    if _holds(G, np.zeros_like(G), ignored, w):
        rest = "" if fin.all() else f" wherever {ref} is finite"
        out.append(Finding(R_CONSTANT, "zero", f"{subj} {w.verb('is', 'are')} 0 everywhere{rest}"))
        return out

    # a factor: fitted on the entries where the reference is not ~0, verified on all; a
    # constant is named only if the relation also holds with the constant's own value
    nz = fin & (np.abs(W) > w.atol)
    n_nz = int(nz.sum())
    explained = False
    if n_nz >= 1:
        with np.errstate(all="ignore"):
            c = float(np.dot(G[nz], W[nz]) / np.dot(W[nz], W[nz]))
        if math.isfinite(c) and abs(c - 1.0) > w.name_tol and _explains(G, c * W, W, ignored, w):
            known, _ = w.names_of(c)
            named = known is not None and _holds(G, known * W, ignored, w)
            if named or (n_nz >= 2 and not w_constant):
                explained = True
                if named and known == -1.0:
                    out.append(Finding(R_FACTOR, "negated", f"{subj} {w.verb('is', 'are')} {ref} negated", (-1.0,)))
                else:
                    say = w.number(known) if named else num_text(c)
                    out.append(Finding(R_FACTOR, "factor", f"{subj} {equals} {ref} times {say}",
                                       (known if named else c,)))

    # a constant offset: the median difference, verified on every entry
    if not explained:
        with np.errstate(all="ignore"):
            c = float(np.median(G[fin] - W[fin]))
        if math.isfinite(c) and abs(c) > w.atol and _explains(G, W + c, W, ignored, w):
            known, _ = w.names_of(abs(c), generic=False)
            named = known is not None and _holds(G, W + math.copysign(known, c), ignored, w)
            if named or (n_fin >= 2 and not w_constant):
                explained = True
                sign = "plus" if c > 0 else "minus"
                say = w.number(known, generic=False) if named else num_text(abs(c))
                out.append(Finding(R_OFFSET, "offset", f"{subj} {equals} {ref} {sign} {say} everywhere",
                                   (math.copysign(known, c) if named else c,)))

    # the reference is one number everywhere: say what each is
    if not explained and w_constant and fin.all():
        if np.all(G == G.flat[0]):
            out.append(Finding(R_CONSTANT, "constant", f"{subj} {w.verb('is', 'are')} {num_text(G.flat[0])} everywhere "
                               f"where {ref} is {num_text(W.flat[0])} everywhere", (float(G.flat[0]),)))

    # an input of the call
    for name, A in inputs.items():
        if A.shape != G.shape or not np.any(np.abs(A[np.isfinite(A)]) > w.atol):
            continue
        if all_close(G, A, w):
            out.append(Finding(R_INPUT, "input", f"{subj} {equals} the input {name}", (name, 0)))
            continue
        with np.errstate(all="ignore"):
            plus, minus = W + A, W - A
        if _explains(G, plus, W, ignored, w):
            out.append(Finding(R_INPUT, "plus_input", f"{subj} {equals} {ref} plus the input {name} "
                               f"(a residual that does not belong)", (name, 1)))
        elif _explains(G, minus, W, ignored, w):
            out.append(Finding(R_INPUT, "minus_input", f"{subj} {equals} {ref} minus the input {name} "
                               f"(the residual {name} is missing)", (name, -1)))

    # renormalised along another axis
    if not explained and fin.all():
        sum_tol = max(SUM_TOL, w.rtol)
        for b in range(W.ndim):
            if W.shape[b] < 2:
                continue
            s = W.sum(axis=b, keepdims=True)
            if np.any(np.abs(s) <= w.atol) or np.all(np.abs(s - 1.0) <= sum_tol):
                continue
            if float(np.ptp(s)) <= w.name_tol * float(np.max(np.abs(s))):
                continue  # the same sum everywhere: a factor, said above if it holds
            with np.errstate(all="ignore"):
                pred = W / s
            if _holds(G, pred, ignored, w):
                out.append(Finding(R_RENORM, "renormalised", f"{subj} {equals} {ref} renormalised to sum to 1 "
                                   f"along {w.ax(b)}", (b,)))
                break
    return out


STATISTICS = {   # numbers of an input a shift may be, by name: a row is the last axis
    "row_max_mean": ("the mean of the row maxima of {}", lambda A: float(np.mean(A.max(axis=-1) if A.ndim else A))),
    "max": ("the largest entry of {}", lambda A: float(np.max(A))),
    "row_max_sum": ("the sum of the row maxima of {}", lambda A: float(np.sum(A.max(axis=-1) if A.ndim else A))),
}


def _statistics(A: np.ndarray) -> list[tuple[str, float]]:
    """The STATISTICS of an input, each once (the first of those equal here)."""
    if A.size == 0 or not np.all(np.isfinite(A)):
        return []
    out: list[tuple[str, float]] = []
    for stat, (_, of) in STATISTICS.items():
        x = of(A)
        if not any(math.isclose(x, y, rel_tol=1e-9, abs_tol=0.0) for _, y in out):
            out.append((stat, x))
    return out


def input_offsets(g: float, v: float, w: Words, inputs: dict[str, np.ndarray]) -> list[Finding]:
    """A single number that is the reference's plus or minus a statistic of an input (the mean of
    its row maxima, say): a shift subtracted before a step and not added back after it. Every
    statistic that fits is returned, so that a second case keeps the one that fits there too."""
    if not (math.isfinite(g) and math.isfinite(v)) or g == 0 or math.isclose(g, v, rel_tol=w.rtol, abs_tol=w.atol):
        return []
    out = []
    for name, A in inputs.items():
        for stat, x in _statistics(A):
            if abs(x) <= w.atol or math.isclose(abs(x), abs(v), rel_tol=w.rtol, abs_tol=w.atol):
                continue
            for sign, word in ((1, "plus"), (-1, "minus")):
                if math.isclose(g, v + sign * x, rel_tol=w.rtol, abs_tol=w.atol):
                    label = STATISTICS[stat][0].format(name)
                    text = (f"{w.subject} {w.verb('is', 'are')} {w.ref_value} {word} {label} ({num_text(x)} here): "
                            f"a shift of {name} {'added' if sign > 0 else 'subtracted'} before a step and not "
                            f"{'taken back' if sign > 0 else 'added back'} after it")
                    out.append(Finding(R_OFFSET, "input_offset", text, (name, stat, sign)))
    return out


def zero_rows(G, W, M: np.ndarray, w: Words, inputs: dict[str, np.ndarray]) -> list[Finding]:
    """The answer is exactly 0 in the rows (all but the last axis) where an input's row is all
    zeros, and agrees with the reference everywhere else: a row of zeros taken for padding."""
    if G.ndim < 2:
        return []
    out = []
    for name, A in inputs.items():
        if A.shape[:-1] != G.shape[:-1] or A.shape[-1] == 0:
            continue
        Z = np.all(A == 0, axis=-1)
        if not Z.any() or Z.all():
            continue
        if np.all(G[Z] == 0) and np.all(M[~Z]) and np.any(np.abs(W[Z]) > w.atol):
            n = int(Z.sum())
            rows = f"the {n} rows" if n > 1 else "the row"
            text = (f"{w.subject} {w.verb('is', 'are')} 0 in {rows} where the input {name} is all zeros, and "
                    f"{w.verb('agrees', 'agree')} with {w.ref} everywhere else: a row of zeros is taken for padding")
            out.append(Finding(R_INPUT, "zero_rows", text, (name,)))
    return out


def tempered_relation(G, W, w: Words) -> list[Finding]:
    """Both are distributions along the last axis and the output is the reference's at another
    temperature: G is softmax(c * log W) along the last axis, for one c (a wrong scale of the
    scores before a softmax, say), zero where W is. c is fitted on the entries where both are
    well above underflow, and the prediction is verified on every entry."""
    if G.ndim == 0 or G.shape[-1] < 2 or not (np.all(np.isfinite(G)) and np.all(np.isfinite(W))):
        return []
    if np.any(G < 0) or np.any(W < 0) or not (_sums_to_one(G) and _sums_to_one(W)):
        return []
    if np.any(G[W == 0] > 1e-12):  # zero where the reference is (a mask), and only there
        return []
    both = (W > 1e-12) & (G > 1e-12)
    count = both.sum(axis=-1, keepdims=True)
    if not np.any(count >= 2):
        return []
    with np.errstate(all="ignore"):
        lg = np.where(both, np.log(np.where(both, G, 1.0)), 0.0)
        lw = np.where(both, np.log(np.where(both, W, 1.0)), 0.0)
    lg = np.where(both, lg - lg.sum(axis=-1, keepdims=True) / np.maximum(count, 1), 0.0)
    lw = np.where(both, lw - lw.sum(axis=-1, keepdims=True) / np.maximum(count, 1), 0.0)
    spread = float(np.sum(lw * lw))
    if spread < 1e-12:
        return []
    c = float(np.sum(lg * lw)) / spread
    if not math.isfinite(c) or abs(c - 1) <= 10 * max(w.rtol, 1e-6):
        return []
    with np.errstate(all="ignore"):
        logits = np.where(W > 0, c * np.log(np.where(W > 0, W, 1.0)), -np.inf)
        top = np.max(logits, axis=-1, keepdims=True)
        e = np.where(W > 0, np.exp(logits - np.where(np.isfinite(top), top, 0.0)), 0.0)
        pred = e / e.sum(axis=-1, keepdims=True)
    if not _explains(G, pred, W, np.zeros(G.shape, dtype=bool), w):
        return []
    text = (f"{w.subject} {w.verb('is', 'are')} {w.ref} at another temperature: what comes out of the softmax is "
            f"as if every score before it were multiplied by {w.number(c)}")
    return [Finding(R_FACTOR, "tempered", text, (c,))]


FIT_ROUNDS = 30   # rounds of the alternating fit of a row's and a key's share of a log-ratio


def reweighted_relation(G, W, w: Words) -> list[Finding]:
    """Both are distributions along the last axis, zero at the same entries, and each key of a
    slice has its weight multiplied by a number of its own, the same for every row, each row then
    renormalised: G = W * d_j / sum_j(W * d_j). A shift of the scores before a softmax that differs
    from key to key does that (a max taken over the queries, not over the keys). The log-ratio
    log(G / W) is fitted as a row's part plus a key's part, on the entries where both are well above
    underflow; the prediction is verified on every entry, and the fit is claimed only where the
    entries outnumber what it fits (and a second case confirms it)."""
    if G.ndim < 2 or G.shape[-1] < 2 or G.shape[-2] < 2 or not (np.all(np.isfinite(G)) and np.all(np.isfinite(W))):
        return []
    if np.any(G < 0) or np.any(W < 0) or not (_sums_to_one(G) and _sums_to_one(W)):
        return []
    if not np.array_equal(G == 0, W == 0):
        return []
    t_q, t_k = G.shape[-2:]
    g, r = G.reshape(-1, t_q, t_k), W.reshape(-1, t_q, t_k)
    both = (g > 1e-12) & (r > 1e-12)
    rows, keys = both.any(axis=2), both.any(axis=1)
    if int(both.sum()) < int(rows.sum()) + int(keys.sum()) - g.shape[0] + 1:
        return []
    with np.errstate(all="ignore"):
        R = np.where(both, np.log(np.where(both, g, 1.0)) - np.log(np.where(both, r, 1.0)), 0.0)
    n_row, n_key = np.maximum(both.sum(axis=2), 1), np.maximum(both.sum(axis=1), 1)
    a, b = np.zeros(g.shape[:2]), np.zeros((g.shape[0], t_k))
    for _ in range(FIT_ROUNDS):
        a = np.where(both, R - b[:, None, :], 0.0).sum(axis=2) / n_row
        b = np.where(both, R - a[:, :, None], 0.0).sum(axis=1) / n_key
    b = np.where(keys, b - np.max(np.where(keys, b, -np.inf), axis=1, keepdims=True), 0.0)
    if float(np.max(np.ptp(np.where(keys, b, 0.0), axis=1))) <= 10 * max(w.rtol, 1e-6):
        return []   # one number for every key: the same weights
    with np.errstate(all="ignore"):
        e = r * np.exp(b)[:, None, :]
        pred = (e / e.sum(axis=2, keepdims=True)).reshape(G.shape)
    if not np.all(np.isfinite(pred)) or not _explains(G, pred, W, np.zeros(G.shape, dtype=bool), w):
        return []
    text = (f"{w.subject} {w.verb('is', 'are')} {w.ref} with the weight of each key (each entry along the last axis) "
            f"multiplied by a number of its own, the same for every query (every row), and each row renormalised to "
            f"sum to 1: a shift before the softmax that differs from key to key, such as a max taken over the queries "
            f"instead of the keys")
    return [Finding(R_RENORM, "reweighted", text, ("keys",))]


def _sums_to_one(a: np.ndarray) -> bool:
    return bool(np.all(np.abs(a.sum(axis=-1) - 1.0) <= 1e-5))


def sums_relation(G, W, w: Words) -> list[Finding]:
    if G.ndim == 0 or not (np.all(np.isfinite(G)) and np.all(np.isfinite(W))):
        return []
    tol = max(SUM_TOL, w.rtol)

    def normalised(a):
        return {k for k in range(a.ndim) if a.shape[k] >= 2 and np.all(np.abs(a.sum(axis=k) - 1.0) <= tol)}

    A, B = normalised(W), normalised(G)
    if B - A and A - B:
        b, a = min(B - A), min(A - B)
        text = (f"{w.subject} {w.verb('sums', 'sum')} to 1 along {w.ax(b)} where {w.ref} "
                f"{grammar.agrees(w.ref, 'sums', 'sum')} to 1 along {w.ax(a)}")
        return [Finding(R_SUMS, "sums", text, (b, a))]
    return []


_TRIANGLES = (
    ("lower_diag", "the lower triangle including the diagonal", lambda r, c: np.tri(r, c, 0, dtype=bool)),
    ("lower_strict", "the strict lower triangle (below the diagonal)", lambda r, c: np.tri(r, c, -1, dtype=bool)),
    ("diagonal", "the diagonal", lambda r, c: np.eye(r, c, dtype=bool)),
    ("upper_diag", "the upper triangle including the diagonal", lambda r, c: ~np.tri(r, c, -1, dtype=bool)),
    ("upper_strict", "the strict upper triangle (above the diagonal)", lambda r, c: ~np.tri(r, c, 0, dtype=bool)),
)


def agreement_pattern(M: np.ndarray, w: Words) -> list[Finding]:
    """Where the two agree, when that is a recognisable pattern; else how many entries."""
    n_ok, total = int(M.sum()), M.size
    if n_ok == 0 or n_ok == total:
        return []
    subj, ref = w.subject, w.ref
    agrees = w.verb("agrees", "agree")
    nd = M.ndim
    if nd >= 2 and M.shape[-1] >= 2 and M.shape[-2] >= 2:
        r, c = M.shape[-2:]
        for kind, words, make in _TRIANGLES:
            if np.array_equal(M, np.broadcast_to(make(r, c), M.shape)):
                text = f"{subj} {agrees} with {ref} only on {words} of {w.last_two(nd)}" + (
                    ", in every slice" if nd > 2 else "")
                return [Finding(R_PATTERN, kind, text)]
    for k in range(nd):
        n = M.shape[k]
        if n < 2:
            continue
        Mk = _flat_along(M, k)
        m = Mk.shape[1]
        A, D = Mk.all(axis=1), ~Mk.any(axis=1)
        if not np.all(A | D):
            continue
        found = _axis_pattern(k, n, m, A, w, last=k == nd - 1)
        if found:
            return [found]
    return [Finding(R_COUNT, "count", f"{subj} {agrees} with {ref} on {n_ok} of {total} entries", (n_ok, total))]


def _axis_pattern(k: int, n: int, m: int, A: np.ndarray, w: Words, last: bool) -> Finding | None:
    """The indices along axis k where every entry agrees, all others differing everywhere:
    halves and even/odd indices (of the last axis), first or last k, or a list."""
    idx = [int(i) for i in np.flatnonzero(A)]
    rest = [int(i) for i in np.flatnonzero(~A)]
    one, many = w.nouns(k, entries=m == 1)
    subj, ref, ax = w.subject, w.ref, w.ax(k)
    kk = len(idx)

    prefix, suffix = idx == list(range(kk)), idx == list(range(n - kk, n))
    if last and n % 2 == 0 and kk == n // 2 and (prefix or suffix):
        half, other = ("first", "second") if prefix else ("second", "first")
        text = (f"along {ax}, only the {half} half of {subj} ({grammar.span(idx[0], idx[-1], n, one, many)}) agrees "
                f"with {ref}; the {other} half differs")
        return Finding(R_PATTERN, f"{half}_half", text, (k,))
    if (prefix or suffix) and kk > 1:
        end, other = ("first", "last") if prefix else ("last", "first")
        rest_words = f"the {other} {n - kk} {many} differ" if n - kk > 1 else f"the {other} {one} differs"
        text = f"along {ax}, only the {end} {kk} {many} of {subj} agree with {ref}; {rest_words}"
        return Finding(R_PATTERN, "prefix" if prefix else "suffix", text, (k, kk))
    if last and kk >= 2 and idx in (list(range(0, n, 2)), list(range(1, n, 2))):
        parity, other = ("even", "odd") if idx[0] == 0 else ("odd", "even")
        text = (f"along {ax}, only the {parity}-numbered {many} of {subj} ({listing(idx)}) agree with {ref}; "
                f"the {other}-numbered ones differ")
        return Finding(R_PATTERN, parity, text, (k,))
    if m < 2 and not (prefix or suffix):
        return None  # single entries: a list of them is no pattern
    if kk == 1:
        text = f"along {ax}, only {one} {idx[0]} of {subj} agrees with {ref}; "
    else:
        text = f"along {ax}, {many} {listing(idx)} of {subj} agree with {ref}; "
    text += f"{one} {rest[0]} differs" if len(rest) == 1 else f"{many} {listing(rest)} differ"
    return Finding(R_PATTERN, "indices", text, (k, tuple(idx)))
