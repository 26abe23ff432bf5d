"""Relations of size between two arrays of one shape: each slice scaled by a number of its
own, and differences at the level of a precision (float32's accuracy, a case's eps) rather
than of a formula.

- along one axis, every slice of the answer is the reference's slice times one number, the
  numbers differing from slice to slice (a normalisation by a wrong total, a shift that does
  not cancel): a plain factor for the whole array is the relation finder's (array_relations);
- the answer agrees with the reference everywhere to a relative precision of about 1e-7 to
  1e-5 only: float32's accuracy, where the call is in float64 (a float32 step inside);
- the answer differs by about the case's eps, relative to the reference's size.
Every claim is verified on every entry.
"""
from __future__ import annotations

import math

import numpy as np

from graders.engine.wording import R_FACTOR, R_PRECISION, Finding, Words

FLOAT32_EPS = float(np.finfo(np.float32).eps)   # 1.19e-07
SAME_FACTOR = 1e-6                               # the numbers of one slice agree within this


def slice_factors(G: np.ndarray, W: np.ndarray, w: Words) -> list[Finding]:
    """Along one axis (the last first), each slice of G is W's slice times a number of its own."""
    if G.ndim == 0 or not (np.all(np.isfinite(G)) and np.all(np.isfinite(W))):
        return []
    for k in [G.ndim - 1, *range(G.ndim - 1)]:
        n = G.shape[k]
        if n < 2 or G.size // n < 2:
            continue
        g, r = np.moveaxis(G, k, -1).reshape(-1, n), np.moveaxis(W, k, -1).reshape(-1, n)
        c = _factors(g, r, w)
        if c is None:
            continue
        spread = float(np.ptp(c))
        if spread <= w.name_tol * float(np.max(np.abs(c))):
            continue  # one number for every slice: a plain factor
        ones = np.isclose(c, 1.0, rtol=0, atol=w.name_tol * 10)
        if np.any(c == 0) or 2 * int(ones.sum()) >= len(c):
            continue  # slices zeroed, or mostly right: where it differs, not by how much
        lo, hi = float(np.min(c)), float(np.max(c))
        text = (f"along {w.ax(k)}, each slice of {w.subject} is {w.ref}'s slice times a number of its own (from "
                f"{lo:.3g} to {hi:.3g}): right up to one factor per slice, as when a sum or a shift is taken over the "
                f"wrong entries")
        return [Finding(R_FACTOR, "slice_factor", text, (k,))]
    return []


def _factors(g: np.ndarray, r: np.ndarray, w: Words) -> np.ndarray | None:
    """The number each row of g is its row of r times, when every row is one (else None). Rows
    of r that are constant say nothing (any constant row is a multiple of another)."""
    if np.any(np.ptp(r, axis=1) <= w.atol):
        return None
    with np.errstate(all="ignore"):
        c = (g * r).sum(axis=1) / (r * r).sum(axis=1)
    if not np.all(np.isfinite(c)) or not np.all(np.isclose(g, c[:, None] * r, rtol=w.rtol, atol=w.atol)):
        return None
    return c


def precision(G: np.ndarray, W: np.ndarray, w: Words) -> list[Finding]:
    """The answer agrees only to float32's accuracy (in a float64 call), or differs by about the
    case's eps: a level of difference, said before where it shows."""
    if G.size < 2 or not (np.all(np.isfinite(G)) and np.all(np.isfinite(W))):
        return []
    scale = float(np.max(np.abs(W)))
    if scale == 0:
        return []
    rel = float(np.max(np.abs(G - W))) / scale
    if rel == 0:
        return []
    eps = [(name, float(v)) for name, v in w.constant_items() if "eps" in name and float(v) > 0]
    for name, v in eps:
        if 0.2 * v <= rel <= 5 * v:
            text = (f"{w.subject} {w.verb('differs', 'differ')} from {w.ref} by about {name} ({rel:.2g} of its "
                    f"largest entry, with {name} = {v:g}): {name} enters where it should not, or not where it should")
            return [Finding(R_PRECISION, "eps", text, (name,))]
    if w.rtol <= 1e-6 and 3 * FLOAT32_EPS <= rel <= 3e-4:  # a float64 call
        text = (f"{w.subject} {w.verb('agrees', 'agree')} with {w.ref} only to about {rel:.1g} of its largest entry: "
                f"float32's accuracy (its eps is {FLOAT32_EPS:.2g}), not float64's: a step inside runs in float32")
        return [Finding(R_PRECISION, "precision", text, ())]
    return []
