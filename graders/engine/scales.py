"""Relations of size between two arrays of one shape: each slice scaled by a number of its
own, and differences at the level of a precision (float32's accuracy, a case's eps) rather
than of a formula.

- along one axis, every slice of the answer is the reference's slice times one number, the
  numbers differing from slice to slice (a normalisation by a wrong total, a shift that does
  not cancel): a plain factor for the whole array is the relation finder's (array_relations);
- the answer is about as far from the reference as the reference computed in float32 is,
  where the call is in float64 (a float32 step inside);
- the answer differs by about the case's eps, relative to the reference's size.
Every claim is verified on every entry.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from graders.engine import grammar
from graders.engine.wording import R_FACTOR, R_PRECISION, Finding, Words


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


def clipped(G: np.ndarray, W: np.ndarray, w: Words) -> list[Finding]:
    """G is W with every entry below one number raised to it (a floor), or every entry above one
    lowered to it (a ceiling): a clip where none belongs."""
    if G.size < 2 or not np.all(np.isfinite(G)):
        return []
    with np.errstate(all="ignore"):
        differ = ~np.isclose(G, W, rtol=w.rtol, atol=w.atol)
    if not differ.any() or differ.all():
        return []
    c = float(np.median(G[differ]))
    for kind, bound, beyond in (("floor", np.maximum, W[differ] < c), ("ceiling", np.minimum, W[differ] > c)):
        if not np.all(beyond):
            continue
        with np.errstate(all="ignore"):
            if np.all(np.isclose(G, bound(W, c), rtol=w.rtol, atol=w.atol)):
                side = ("below", "raised") if kind == "floor" else ("above", "lowered")
                text = (f"{w.subject} {w.verb('is', 'are')} {w.ref} with every entry {side[0]} {c:.3g} {side[1]} to "
                        f"{c:.3g}: a {kind} (a clip) where none belongs")
                return [Finding(R_FACTOR, kind, text, (c,))]
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


def precision(got: Any, want: Any, want32: Any, eps: dict[str, float], what: str, names: tuple = ()) -> list[Finding]:
    """A difference at the level of a precision, for each output (`names`) that differs: the
    attempt's answer is about as far from the reference's as the reference computed in float32
    (`want32`, for a float64 call), or about one of the case's `eps` away, relative to its size."""
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return []
        out = []
        for i, (g, w) in enumerate(zip(got, want)):
            w32 = want32[i] if isinstance(want32, (tuple, list)) and len(want32) == len(want) else None
            name = names[i] if i < len(names) else f"output {i}"
            name = name[0] if isinstance(name, tuple) else name
            out += [replace(f, part=name) for f in precision(g, w, w32, eps, name)]
        return out
    try:
        G, W = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    except (TypeError, ValueError):
        return []
    if G.shape != W.shape or G.size < 2 or not (np.all(np.isfinite(G)) and np.all(np.isfinite(W))):
        return []
    scale = float(np.max(np.abs(W)))
    gap = float(np.max(np.abs(G - W)))
    if scale == 0 or gap <= 1e-9 + 1e-6 * scale:
        return []
    rel = gap / scale
    if want32 is not None:
        try:
            W32 = np.asarray(want32, dtype=np.float64)
        except (TypeError, ValueError):
            W32 = None
        if W32 is not None and W32.shape == W.shape and np.all(np.isfinite(W32)):
            own = float(np.max(np.abs(W32 - W)))
            if 0 < own and gap <= 10 * own and rel <= 1e-3:
                text = (f"{what} {grammar.agrees(what, 'agrees', 'agree')} with the reference only to float32's "
                        f"accuracy: {rel:.1g} of its largest entry, as the reference computed in float32 "
                        f"({own / scale:.1g}): a step inside runs in float32")
                return [Finding(R_PRECISION, "precision", text, ())]
    for name, v in eps.items():
        if v > 0 and 0.1 * v <= rel <= 50 * v and rel <= 1e-3:
            text = (f"{what} {grammar.agrees(what, 'differs', 'differ')} from the reference by about {name} "
                    f"({rel:.2g} of its largest entry, with {name} = {v:g}): {name} enters where it should not, or "
                    f"not where it should")
            return [Finding(R_PRECISION, "eps", text, (name,))]
    return []
