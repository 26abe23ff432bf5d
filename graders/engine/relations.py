"""What a wrong answer is, observed: plain sentences relating the candidate's output to the
reference's.

When a grader finds that the candidate's output differs from the reference's for the same
call, `observe(got, want, ...)` tests a fixed list of exact relations between the two and
returns one short English sentence for each relation that holds, most specific first:

- a rearrangement of axes: the reference transposed, or any two axes swapped (also when the
  shapes differ by that swap);
- along one axis: the reference's slices in another order, every slice equal to the same
  slice of the reference, or the slices shifted by one position;
- a scalar factor (named when it is one of the case's constants, its inverse, 2, 1/2), the
  reference negated, a constant offset, an input of the call added or subtracted, the
  input itself, the reference renormalised along another axis, the output all zeros;
- the output summing to 1 along another axis than the reference;
- the pattern of the entries where the two agree: a triangle of the last two axes, the
  first or last k positions along an axis, some indices along an axis, the first or second
  half, the even or odd indices, else a count;
- for scalars, the exact ratio or difference of integers, a named factor, the opposite sign;
- for several outputs, which ones agree, and the relations of the others.

Every relation is verified on every entry within `rtol`/`atol` (entries where both are
NaN, or the same infinity, are left out), never fitted approximately, and a relation that
could hold by accident (a single entry, slices that repeat, a reference that is constant)
is not claimed. `observe` never raises: what cannot be compared gives no sentence.
"""
from __future__ import annotations

import itertools
import math
import numbers
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["observe", "Finding", "findings"]

MAX_SENTENCES = 4
NAME_RTOL = 1e-6      # a fitted factor is named after a constant within this (or rtol, if larger)
SUM_TOL = 1e-6        # "sums to 1" within this (or rtol, if larger)
MAX_AXIS_PERMS = 120  # arrangements of axes tried at most
MAX_LISTED = 6        # indices listed in a sentence at most

# ranks: lower is more specific and comes first
R_LEAD, R_SWAPPED_PARTS, R_SHAPE, R_AXES, R_PERM, R_SHIFT, R_FACTOR, R_OFFSET, R_INPUT, \
    R_RENORM, R_CONSTANT, R_SUMS, R_PATTERN, R_COUNT = range(14)


@dataclass(frozen=True)
class Finding:
    """One relation that holds: `kind` and `detail` say which (for tests and callers that
    want structure), `text` says it in words, `rank` orders findings (lower first)."""

    rank: int
    kind: str
    text: str
    detail: tuple = ()


# ----------------------------------------------------------------------------- words

def _is_plural(subject: str) -> bool:
    last = subject.split()[-1] if subject.split() else subject
    return last.endswith("s") and not last.endswith("ss")


def _verb(subject: str, singular: str, plural: str) -> str:
    return plural if _is_plural(subject) else singular


def _bare(name: str) -> str:
    return name[4:] if name.startswith("the ") else name


def _listing(items: list) -> str:
    items = [str(i) for i in items]
    if len(items) > MAX_LISTED:
        return ", ".join(items[:MAX_LISTED - 1]) + f", … ({len(items)} in all)"
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _num(x: float) -> str:
    """A number in at most 6 significant digits, unless that would read as an integer it is not."""
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    for digits in (6, 9, 12):
        s = f"{x:.{digits}g}"
        y = float(s)
        if y != int(y) or abs(x - y) <= 1e-9 * abs(x):
            return str(int(y)) if y == int(y) and abs(y) < 1e15 else s
    return repr(x)


def _shape(shape: tuple) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _ordinal(i: int) -> str:
    words = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
    return f"the {words[i]} output" if i < len(words) else f"output {i}"


_SIMPLE_NAME = re.compile(r"^[\w.]+(\(.*\))?$")


def _inverse_name(name: str) -> str:
    if name.startswith("1/") and _SIMPLE_NAME.match(name[2:]):
        return name[2:]
    return f"1/{name}" if _SIMPLE_NAME.match(name) else f"1/({name})"


class _Words:
    """How one comparison names things: the output, the reference, the axes, the constants."""

    def __init__(self, subject: str, ref: str, ref_value: str, axes: dict | None, ndim: int,
                 consts: list[tuple[float, str | None]], rtol: float, atol: float):
        self.subject, self.ref, self.ref_value = subject, ref, ref_value
        self.rtol, self.atol = rtol, atol
        self.consts = consts
        self.name_tol = max(NAME_RTOL, rtol)
        self.axes: dict[int, str] = {}
        for k, v in (axes or {}).items():
            try:
                k = int(k)
            except (TypeError, ValueError):
                continue
            if -ndim <= k < ndim and isinstance(v, str) and v:
                self.axes[k % ndim] = v

    def verb(self, singular: str, plural: str) -> str:
        return _verb(self.subject, singular, plural)

    def ax(self, k: int) -> str:
        return f"axis {k} ({self.axes[k]})" if k in self.axes else f"axis {k}"

    def axes_pair(self, i: int, j: int) -> str:
        def one(k):
            return f"{k} ({self.axes[k]})" if k in self.axes else str(k)
        return f"axes {one(i)} and {one(j)}"

    def last_two(self, nd: int) -> str:
        a, b = self.axes.get(nd - 2), self.axes.get(nd - 1)
        if a and b:
            return f"the last two axes ({a} and {b})"
        return "the last two axes"

    def nouns(self, k: int, entries: bool) -> tuple[str, str]:
        """(singular, plural) for the indices along axis k: "head"/"heads" from "heads"."""
        name = self.axes.get(k)
        if name:
            if name.endswith("s") and not name.endswith("ss"):
                return name[:-1], name
            return name, name
        return ("entry", "entries") if entries else ("slice", "slices")

    def names_of(self, value: float, generic: bool = True) -> tuple[float | None, list[str]]:
        """The known constant `value` is (None if none), and the names it has."""
        known, names = None, []
        for v, name in self.consts:
            if name is None and not generic:
                continue
            if abs(value - v) <= self.name_tol * abs(v):
                known = v if known is None else known
                if name and name not in names:
                    names.append(name)
        return known, names

    def number(self, value: float, generic: bool = True) -> str:
        """`value` in words: the constant it is, with its names, else its 6 digits."""
        known, names = self.names_of(value, generic)
        text = _num(known if known is not None else value)
        return text + (f" ({' or '.join(names)})" if names else "")


def _constants(constants: dict | None) -> list[tuple[float, str | None]]:
    out: list[tuple[float, str | None]] = [(2.0, None), (0.5, None), (-1.0, None)]
    for name, value in (constants or {}).items():
        try:
            v = float(value)
        except (TypeError, ValueError, OverflowError):
            continue
        if not math.isfinite(v) or v == 0 or not isinstance(name, str):
            continue
        out.append((v, name))
        out.append((1.0 / v, _inverse_name(name)))
    return out


# ----------------------------------------------------------------------------- values

def _to_array(x: Any) -> np.ndarray | None:
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


def _close(a: np.ndarray, b: np.ndarray, w: "_Words") -> np.ndarray:
    """Entry by entry: `a` within tolerance of `b` (the reference side); NaN matches NaN and
    an infinity the same infinity."""
    with np.errstate(all="ignore"):
        return np.isclose(a, b, rtol=w.rtol, atol=w.atol, equal_nan=True)


def _all_close(a: np.ndarray, b: np.ndarray, w: "_Words") -> bool:
    return a.shape == b.shape and bool(np.all(_close(a, b, w)))


def _both_nonfinite(G: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Entries left out of elementwise relations: both NaN, or the same infinity."""
    with np.errstate(all="ignore"):
        return (np.isnan(G) & np.isnan(W)) | (np.isinf(G) & (G == W))


def _holds(G: np.ndarray, pred: np.ndarray, ignored: np.ndarray, w: "_Words") -> bool:
    return bool(np.all(_close(G, pred, w) | ignored))


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


def _slice_map(Gk: np.ndarray, Wk: np.ndarray, w: "_Words") -> np.ndarray | None:
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
    ok = _close(Gk[I], Wk[J], w).all(axis=1)
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

def _axes_relation(G, W, w: _Words) -> list[Finding]:
    nd = G.ndim
    for p in _axis_perms(W.shape, G.shape):
        if not _all_close(G, np.transpose(W, p), w):
            continue
        is_ = w.verb("is", "are")
        swap = _swap_of(p)
        if swap == (nd - 2, nd - 1):
            text = f"{w.subject} {is_} {w.ref} with {w.last_two(nd)} swapped"
        elif swap:
            text = f"{w.subject} {is_} {w.ref} with {w.axes_pair(*swap)} swapped"
        else:
            text = f"{w.subject} {is_} {w.ref} with its axes in the order {_shape(p)}"
        return [Finding(R_AXES, "transpose", text, (p,))]
    return []


def _along_axis_relations(G, W, w: _Words) -> list[Finding]:
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
                reverse = perm == list(range(n - 1, -1, -1))
                listed = ", ".join(str(j) for j in perm[:12]) + (", …" if n > 12 else "")
                if reverse:
                    order = f"the order {listed} (reversed)" if n <= 12 else "reverse order"
                else:
                    order = f"the order {listed}"
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


def _shift(Gk, Wk, w: _Words) -> int:
    """+1 when Gk[i] == Wk[i-1] for every i >= 1, -1 when Gk[i] == Wk[i+1] for every i < n-1,
    provided the reference's neighbouring slices differ (else the claim says nothing)."""
    n = Gk.shape[0]
    if n < 3 or Gk.shape[1] == 0:
        return 0
    distinct = ~_close(Wk[1:], Wk[:-1], w).all(axis=1)
    if not np.all(distinct):
        return 0
    if _close(Gk[1:], Wk[:-1], w).all():
        return 1
    if _close(Gk[:-1], Wk[1:], w).all():
        return -1
    return 0


def _shift_finding(k: int, s: int, wraps: bool, w: _Words) -> Finding:
    src = "i-1" if s == 1 else "i+1"
    text = (f"{w.subject} {w.verb('is', 'are')} {w.ref} shifted by one position along {w.ax(k)}: "
            f"entry i holds entry {src} of {w.ref}")
    if wraps:
        text += " (the last wraps around to the first)" if s == 1 else " (the first wraps around to the last)"
    return Finding(R_SHIFT, "shift", text, (k, s, wraps))


def _value_relations(G, W, w: _Words, inputs: dict[str, np.ndarray]) -> list[Finding]:
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
        if math.isfinite(c) and abs(c - 1.0) > w.name_tol and _holds(G, c * W, ignored, w):
            known, _ = w.names_of(c)
            named = known is not None and _holds(G, known * W, ignored, w)
            if named or (n_nz >= 2 and not w_constant):
                explained = True
                if named and known == -1.0:
                    out.append(Finding(R_FACTOR, "negated", f"{subj} {w.verb('is', 'are')} {ref} negated", (-1.0,)))
                else:
                    say = w.number(known) if named else _num(c)
                    out.append(Finding(R_FACTOR, "factor", f"{subj} {equals} {ref} times {say}",
                                       (known if named else c,)))

    # a constant offset: the median difference, verified on every entry
    if not explained:
        with np.errstate(all="ignore"):
            c = float(np.median(G[fin] - W[fin]))
        if math.isfinite(c) and abs(c) > w.atol and _holds(G, W + c, ignored, w):
            known, _ = w.names_of(abs(c), generic=False)
            named = known is not None and _holds(G, W + math.copysign(known, c), ignored, w)
            if named or (n_fin >= 2 and not w_constant):
                explained = True
                sign = "plus" if c > 0 else "minus"
                say = w.number(known, generic=False) if named else _num(abs(c))
                out.append(Finding(R_OFFSET, "offset", f"{subj} {equals} {ref} {sign} {say} everywhere",
                                   (math.copysign(known, c) if named else c,)))

    # the reference is one number everywhere: say what each is
    if not explained and w_constant and fin.all():
        if np.all(G == G.flat[0]):
            out.append(Finding(R_CONSTANT, "constant", f"{subj} {w.verb('is', 'are')} {_num(G.flat[0])} everywhere "
                               f"where {ref} is {_num(W.flat[0])} everywhere", (float(G.flat[0]),)))

    # an input of the call
    for name, A in inputs.items():
        if A.shape != G.shape or not np.any(np.abs(A[np.isfinite(A)]) > w.atol):
            continue
        if _all_close(G, A, w):
            out.append(Finding(R_INPUT, "input", f"{subj} {equals} the input {name}", (name, 0)))
            continue
        with np.errstate(all="ignore"):
            plus, minus = W + A, W - A
        if _holds(G, plus, ignored, w):
            out.append(Finding(R_INPUT, "plus_input", f"{subj} {equals} {ref} plus the input {name} "
                               f"(a residual that does not belong)", (name, 1)))
        elif _holds(G, minus, ignored, w):
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


def _sums_relation(G, W, w: _Words) -> list[Finding]:
    if G.ndim == 0 or not (np.all(np.isfinite(G)) and np.all(np.isfinite(W))):
        return []
    tol = max(SUM_TOL, w.rtol)

    def normalised(a):
        return {k for k in range(a.ndim) if a.shape[k] >= 2 and np.all(np.abs(a.sum(axis=k) - 1.0) <= tol)}

    A, B = normalised(W), normalised(G)
    if B - A and A - B:
        b, a = min(B - A), min(A - B)
        text = f"{w.subject} {w.verb('sums', 'sum')} to 1 along {w.ax(b)} where {w.ref} sums to 1 along {w.ax(a)}"
        return [Finding(R_SUMS, "sums", text, (b, a))]
    return []


_TRIANGLES = (
    ("lower_diag", "the lower triangle including the diagonal", lambda r, c: np.tri(r, c, 0, dtype=bool)),
    ("lower_strict", "the strict lower triangle (below the diagonal)", lambda r, c: np.tri(r, c, -1, dtype=bool)),
    ("diagonal", "the diagonal", lambda r, c: np.eye(r, c, dtype=bool)),
    ("upper_diag", "the upper triangle including the diagonal", lambda r, c: ~np.tri(r, c, -1, dtype=bool)),
    ("upper_strict", "the strict upper triangle (above the diagonal)", lambda r, c: ~np.tri(r, c, 0, dtype=bool)),
)


def _pattern(M: np.ndarray, w: _Words) -> list[Finding]:
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


def _axis_pattern(k: int, n: int, m: int, A: np.ndarray, w: _Words, last: bool) -> Finding | None:
    """The indices along axis k where every entry agrees, all others differing everywhere:
    halves and even/odd indices (of the last axis), first or last k, or a list."""
    idx = [int(i) for i in np.flatnonzero(A)]
    rest = [i for i in range(n) if i not in set(idx)]
    one, many = w.nouns(k, entries=m == 1)
    subj, ref, ax = w.subject, w.ref, w.ax(k)
    kk = len(idx)

    prefix, suffix = idx == list(range(kk)), idx == list(range(n - kk, n))
    if last and n % 2 == 0 and kk == n // 2 and (prefix or suffix):
        half, other = ("first", "second") if prefix else ("second", "first")
        text = (f"along {ax}, only the {half} half of {subj} ({many} {idx[0]}-{idx[-1]} of {n}) agrees "
                f"with {ref}; the {other} half differs")
        return Finding(R_PATTERN, f"{half}_half", text, (k,))
    if (prefix or suffix) and kk > 1:
        end, other = ("first", "last") if prefix else ("last", "first")
        rest_words = f"the {other} {n - kk} {many} differ" if n - kk > 1 else f"the {other} {one} differs"
        text = f"along {ax}, only the {end} {kk} {many} of {subj} agree with {ref}; {rest_words}"
        return Finding(R_PATTERN, "prefix" if prefix else "suffix", text, (k, kk))
    if last and kk >= 2 and idx in (list(range(0, n, 2)), list(range(1, n, 2))):
        parity, other = ("even", "odd") if idx[0] == 0 else ("odd", "even")
        text = (f"along {ax}, only the {parity}-numbered {many} of {subj} ({_listing(idx)}) agree with {ref}; "
                f"the {other}-numbered ones differ")
        return Finding(R_PATTERN, parity, text, (k,))
    if m < 2 and not (prefix or suffix):
        return None  # single entries: a list of them is no pattern
    if kk == 1:
        text = f"along {ax}, only {one} {idx[0]} of {subj} agrees with {ref}; "
    else:
        text = f"along {ax}, {many} {_listing(idx)} of {subj} agree with {ref}; "
    text += f"{one} {rest[0]} differs" if len(rest) == 1 else f"{many} {_listing(rest)} differ"
    return Finding(R_PATTERN, "indices", text, (k, tuple(idx)))


# ----------------------------------------------------------------------------- one output

def _scalar(g: float, v: float, w: _Words) -> list[Finding]:
    if not (math.isfinite(g) and math.isfinite(v)):
        return []
    subj, rv = w.subject, w.ref_value
    is_ = w.verb("is", "are")
    integral = g == int(g) and v == int(v) and abs(g) < 2 ** 53 and abs(v) < 2 ** 53
    if integral:
        gi, vi = int(g), int(v)
        pair = f"({gi} instead of {vi})"
        if vi != 0 and gi != 0 and gi % vi == 0:
            k = gi // vi
            if k == -1:
                return [Finding(R_FACTOR, "opposite_sign", f"{subj} {is_} {rv} with the opposite sign {pair}", (-1,))]
            return [Finding(R_FACTOR, "ratio", f"{subj} {is_} {w.number(k, generic=False)} times {rv} {pair}", (k,))]
        if vi != 0 and gi != 0 and vi % gi == 0:
            k = vi // gi
            frac = f"1/{k}" if k > 0 else f"-1/{-k}"
            _, names = w.names_of(1.0 / k, generic=False)
            frac += f" ({' or '.join(names)})" if names else ""
            return [Finding(R_FACTOR, "ratio", f"{subj} {is_} {frac} of {rv} {pair}", (1.0 / k,))]
        d = gi - vi
        more = "more" if d > 0 else "less"
        return [Finding(R_OFFSET, "difference", f"{subj} {is_} {w.number(abs(d), generic=False)} {more} "
                        f"than {rv} {pair}", (d,))]
    out: list[Finding] = []
    if v != 0:
        c = g / v
        if abs(c + 1.0) <= w.name_tol and math.isclose(g, -v, rel_tol=w.rtol, abs_tol=w.atol):
            return [Finding(R_FACTOR, "opposite_sign", f"{subj} {is_} {rv} with the opposite sign", (-1,))]
        known, _ = w.names_of(c)
        if known is not None and math.isclose(g, known * v, rel_tol=w.rtol, abs_tol=w.atol):
            out.append(Finding(R_FACTOR, "factor", f"{subj} {is_} {rv} times {w.number(c)}", (known,)))
    d = g - v
    if not out and d != 0:
        known, _ = w.names_of(abs(d), generic=False)
        if known is not None and math.isclose(g, v + math.copysign(known, d), rel_tol=w.rtol, abs_tol=w.atol):
            sign = "plus" if d > 0 else "minus"
            out.append(Finding(R_OFFSET, "offset", f"{subj} {is_} {rv} {sign} {w.number(abs(d), generic=False)}",
                               (d,)))
    return out


def _shapes(G: np.ndarray, W: np.ndarray, w: _Words) -> list[Finding]:
    gs, ws = G.shape, W.shape
    base = f"{w.subject} {w.verb('has', 'have')} shape {_shape(gs)} where {w.ref} has {_shape(ws)}"
    if G.size != W.size:
        return []
    empty = G.size == 0
    if len(gs) == len(ws) and sorted(gs) == sorted(ws):
        if not empty:
            nd = len(ws)
            for p in _axis_perms(ws, gs):
                if not _all_close(G, np.transpose(W, p), w):
                    continue
                swap = _swap_of(p)
                if swap == (nd - 2, nd - 1):
                    what = f"{w.last_two(nd)} are swapped"
                elif swap:
                    what = f"{w.axes_pair(*swap)} are swapped"
                else:
                    what = f"it is {w.ref} with its axes in the order {_shape(p)}"
                return [Finding(R_SHAPE, "transposed_shape", f"{base}: {what}", (p,))]
        return [Finding(R_SHAPE, "shape", base)]
    if [d for d in gs if d != 1] == [d for d in ws if d != 1]:
        if not empty and _all_close(G.reshape(ws), W, w):
            extra = len(gs) > len(ws)
            long_, short = (gs, ws) if extra else (ws, gs)
            where = _unit_axes(long_, short)
            if where is not None and where:
                count = len(where)
                noun = "axis" if count == 1 else "axes"
                label = (", ".join(w.ax(i) for i in where) if not extra else
                         ", ".join(f"axis {i}" for i in where))
                kind = "an extra" if extra and count == 1 else "extra" if extra else \
                    "a missing" if count == 1 else "missing"
                return [Finding(R_SHAPE, "unit_axis", f"{base}: {kind} {noun} of size 1 ({label}), "
                                f"with the same values", (extra, tuple(where)))]
            return [Finding(R_SHAPE, "unit_axis", f"{base}: the same values, with axes of size 1 "
                            f"added or removed", ())]
        return [Finding(R_SHAPE, "shape", base)]
    if not empty and _all_close(G.reshape(ws), W, w):
        return [Finding(R_SHAPE, "reshaped", f"{base}: the same values in the same order (a reshape of "
                        f"{w.ref})")]
    return []


def _unit_axes(long_: tuple, short: tuple) -> list[int] | None:
    """Positions in `long_` of the axes of length 1 that `short` does not have."""
    where, p = [], 0
    for i, d in enumerate(long_):
        if p < len(short) and d == short[p]:
            p += 1
        elif d == 1:
            where.append(i)
        else:
            return None
    return where if p == len(short) else None


def _is_bool(x: Any) -> bool:
    return isinstance(x, (bool, np.bool_)) or (isinstance(x, np.ndarray) and x.dtype.kind == "b")


def _single(got: Any, want: Any, w: _Words, inputs: dict[str, np.ndarray]) -> list[Finding]:
    G, W = _to_array(got), _to_array(want)
    if G is None or W is None:
        return []
    if G.shape != W.shape:
        return _shapes(G, W, w)
    if G.size == 0:
        return []
    M = _close(G, W, w)
    if M.all():
        return []
    if G.size == 1:
        if _is_bool(got) or _is_bool(want):
            return []  # true and false are not numbers to relate
        return _scalar(float(G.flat[0]), float(W.flat[0]), w)
    exact = _axes_relation(G, W, w) + _along_axis_relations(G, W, w) + _value_relations(G, W, w, inputs)
    if exact:
        return exact
    return _sums_relation(G, W, w) + _pattern(M, w)


# ----------------------------------------------------------------------------- several outputs

def _agrees(got: Any, want: Any, w: _Words) -> bool:
    if got is None and want is None:
        return True
    G, W = _to_array(got), _to_array(want)
    return G is not None and W is not None and _all_close(G, W, w)


def _axes_for(axes: Any, i: int, name: str) -> dict | None:
    if isinstance(axes, (list, tuple)):
        return axes[i] if i < len(axes) and isinstance(axes[i], dict) else None
    if isinstance(axes, dict) and axes and all(isinstance(v, dict) for v in axes.values()):
        part = axes.get(name, axes.get(i))
        return part if isinstance(part, dict) else None
    return axes if isinstance(axes, dict) else None


def _ndim(x: Any) -> int:
    a = _to_array(x)
    return a.ndim if a is not None else 0


def findings(got: Any, want: Any, *, inputs: dict | None = None, constants: dict | None = None,
             what: str = "the output", axes: dict | None = None, rtol: float = 1e-6, atol: float = 1e-9,
             names: tuple = ()) -> list[Finding]:
    """Every relation that holds, most specific first (`observe` keeps the first few texts)."""
    rtol, atol = float(rtol), float(atol)
    if not (math.isfinite(rtol) and math.isfinite(atol)) or rtol < 0 or atol < 0:
        return []
    what = what if isinstance(what, str) and what else "the output"
    consts = _constants(constants)
    arrays = {}
    for name, a in (inputs or {}).items():
        A = _to_array(a)
        if A is not None and isinstance(name, str):
            arrays[name] = A

    def words(subject, ref, ref_value, part_axes, ndim):
        return _Words(subject, ref, ref_value, part_axes, ndim, consts, rtol, atol)

    seq = (tuple, list)
    if isinstance(want, seq):
        n = len(want)
        part_names = [names[i] if i < len(names) and isinstance(names[i], str) and names[i] else _ordinal(i)
                      for i in range(n)]
        refs = [f"the reference's {_bare(nm)}" for nm in part_names]
        if not isinstance(got, seq):
            w = words(what, "the reference", "the reference's value", None, _ndim(got))
            for j in range(n):
                if _agrees(got, want[j], w):
                    text = (f"{what} {w.verb('is', 'are')} a single result equal to {refs[j]}, where the reference "
                            f"returns {n} outputs ({', '.join(part_names)})")
                    return [Finding(R_LEAD, "one_part", text, (j,))]
            return []
        if len(got) != n:
            w = words(what, "the reference", "the reference's value", None, 0)
            parts = "part" if len(got) == 1 else "parts"
            return [Finding(R_LEAD, "length", f"{what} {w.verb('has', 'have')} {len(got)} {parts} where the "
                            f"reference has {n}", (len(got), n))]
        out: list[Finding] = []
        ok = []
        for i in range(n):
            w = words(part_names[i], refs[i], refs[i], _axes_for(axes, i, part_names[i]), _ndim(want[i]))
            ok.append(_agrees(got[i], want[i], w))
        good = [part_names[i] for i in range(n) if ok[i]]
        bad = [part_names[i] for i in range(n) if not ok[i]]
        if not bad:
            return []
        if good:
            agree = "agree" if len(good) > 1 or _is_plural(good[0]) else "agrees"
            differ = "differ" if len(bad) > 1 or _is_plural(bad[0]) else "differs"
            out.append(Finding(R_LEAD, "parts", f"{_listing(good)} {agree} with the reference; "
                               f"{_listing(bad)} {differ}", (tuple(good), tuple(bad))))
        for i in (i for i in range(n) if not ok[i]):
            w = words(part_names[i], refs[i], refs[i], _axes_for(axes, i, part_names[i]), _ndim(want[i]))
            other = next((j for j in range(n) if j != i and _agrees(got[i], want[j], w)), None)
            if other is not None:
                out.append(Finding(R_SWAPPED_PARTS, "other_part",
                                   f"{part_names[i]} {w.verb('equals', 'equal')} {refs[other]}", (i, other)))
                continue
            out.extend(_single(got[i], want[i], w, arrays))
        return sorted(out, key=lambda f: f.rank)

    if isinstance(got, seq):
        w = words(what, "the reference", "the reference's value", axes, _ndim(want))
        G, W = _to_array(got), _to_array(want)
        if G is not None and W is not None and G.shape == W.shape:
            return sorted(_single(G, W, w, arrays), key=lambda f: f.rank)
        kind = "tuple" if isinstance(got, tuple) else "list"
        for i, part in enumerate(got):
            if _agrees(part, want, w):
                return [Finding(R_LEAD, "in_part", f"{what} {w.verb('is', 'are')} a {kind} of {len(got)} whose "
                                f"element {i} equals the reference", (i,))]
        return sorted(_single(G, W, w, arrays), key=lambda f: f.rank) if G is not None else []
    w = words(what, "the reference", "the reference's value", axes, _ndim(want))
    return sorted(_single(got, want, w, arrays), key=lambda f: f.rank)


def observe(got: Any, want: Any, *, inputs: dict[str, np.ndarray] | None = None,
            constants: dict[str, float] | None = None, what: str = "the output",
            axes: dict[int, str] | None = None, rtol: float = 1e-6, atol: float = 1e-9,
            names: tuple[str, ...] = ()) -> list[str]:
    """Short sentences, most specific first (at most four), each a relation between `got`
    (what the candidate returned) and `want` (what the reference returned for the same
    call) that was verified on every entry. [] when they agree or nothing holds.

    `inputs` are the call's arrays by name (for "plus the input x"); `constants` are named
    numbers of the case a factor could be ("sqrt(d_head)": 2.0), to which 2, 1/2, -1 and
    the inverse of each are added; `axes` names axes ({1: "heads"}; negative keys allowed;
    for several outputs also a list of such dicts, one per output, or a dict of them by
    name); `names` names several outputs ("y", "the weights")."""
    try:
        with np.errstate(all="ignore"):
            found = findings(got, want, inputs=inputs, constants=constants, what=what, axes=axes,
                             rtol=rtol, atol=atol, names=names)
    except Exception:  # an explanation is a courtesy: it never breaks a grading
        return []
    return [f.text for f in found[:MAX_SENTENCES]]
