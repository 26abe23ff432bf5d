"""The mask an answer applies, against the reference's: which (query, key) entries of the last
two axes each one blocks, and how the two differ.

An entry is blocked where a bool mask is True, where masked scores are -inf, and where a row
of weights (non-negative, summing to 1) is exactly 0. Each row's visible keys are described
as a band, keys i + lo to i + hi for query i (clipped to the keys there are); two bands are
compared by their ends: the upper end moved by k (the diagonal shifted: a query sees the next
key, or not its own), aligned top-left (query i sees up to key i) instead of bottom-right (up
to key i + t_k - t_q), a lower end moved (a window one key wider or narrower, or none), a
band that reaches both ways, or a mask transposed. Every claim is verified on every entry.
"""
from __future__ import annotations

import numpy as np

from graders.engine import grammar
from graders.engine.wording import R_MASK, Finding, Words

INF = 10 ** 9   # a band with no end on that side


def blocked(a: np.ndarray, bool_like: bool) -> np.ndarray | None:
    """Where `a` blocks an entry (see the module's docstring), or None when it is not a mask,
    masked scores or weights."""
    if a.ndim < 2 or a.shape[-1] < 2 or a.shape[-2] < 1:
        return None
    if bool_like:
        return a != 0
    if np.any(np.isneginf(a)):
        return np.isneginf(a)
    lost = np.all(np.isnan(a), axis=-1, keepdims=True)   # rows that saw no key at all: 0 / 0
    rest = np.where(lost, 0.5, a)
    if np.all(np.isfinite(rest)) and np.all(rest >= 0) and np.all(np.abs(np.where(lost[..., 0], 1.0, rest.sum(axis=-1))
                                                                  - 1.0) <= 1e-5):
        return (a == 0) | lost
    return None


def mask_relation(G: np.ndarray, W: np.ndarray, w: Words, bool_like: bool) -> list[Finding]:
    """How the entries the answer blocks differ from those the reference blocks: [] when they
    are the same, or when either is not a mask (or the same mask in every slice)."""
    bw, bg = blocked(W, bool_like), blocked(G, bool_like)
    if bw is None or not bw.any():
        return []
    if not bool_like and np.any(np.isneginf(W)) and not np.any(np.isneginf(G)):
        return _filled(G, W, bw, w)
    if bg is None or np.array_equal(bg, bw):
        return []
    mw, mg = _one_plane(bw), _one_plane(bg)
    if mw is None or mg is None:
        return []
    t_q, t_k = mw.shape
    subj, ref = w.subject, w.ref
    blocks, its = w.verb("blocks", "block"), grammar.agrees(ref, "blocks", "block")
    if not mg.any():
        return [Finding(R_MASK, "mask", f"{subj} {blocks} no (query, key) entry, where {ref} {its} {int(mw.sum())} "
                        f"of the {t_q * t_k} in each slice: the mask is not applied", ("none",))]
    if np.array_equal(mg, ~mw):
        return [Finding(R_MASK, "mask", f"{subj} {blocks} exactly the entries {ref} leaves visible, and leaves visible "
                        f"those it blocks: the mask is inverted", ("inverted",))]
    if t_q == t_k and np.array_equal(mg, mw.T):
        return [Finding(R_MASK, "mask", f"{subj} {blocks} the transpose of what {ref} {its}: each query sees the "
                        f"keys after it instead of those before it", ("transposed",))]
    band_w, band_g = _band(mw), _band(mg)
    if band_w is None or band_g is None:
        return [Finding(R_MASK, "mask", f"{subj} {blocks} {int(mg.sum())} of the {t_q * t_k} (query, key) entries of "
                        f"each slice where {ref} {its} {int(mw.sum())}, and not the same ones", ("differs",))]
    return _compared(band_g, band_w, t_q, t_k, w)


def not_zero(G: np.ndarray, W: np.ndarray, w: Words) -> list[Finding]:
    """Answers that agree within the tolerance, but where the reference is exactly 0 (a blocked
    key, a -inf logit) the answer holds small numbers that are not: what is blocked is only made
    small (a clip, a large finite fill), which no tolerance sees and a check of exact zeros does."""
    zero = W == 0
    if G.ndim == 0 or not zero.any() or zero.all():
        return []
    left = zero & (G != 0) & np.isfinite(G)
    if not left.any():
        return []
    small = np.abs(G[left])
    n, m = int(left.sum()), int(zero.sum())
    of = f"{n} of the {m} entries" if n < m else f"all {m} entries" if m > 1 else "the entry"
    text = (f"{w.subject} {w.verb('is', 'are')} not exactly 0 where {w.ref} {grammar.agrees(w.ref, 'is', 'are')} ({of}): {w.verb('it holds', 'they hold')} "
            f"numbers from {float(small.min()):.3g} to {float(small.max()):.3g} there, within the tolerance but not 0, "
            f"and {w.verb('agrees', 'agree')} everywhere else: what is blocked is only made small, not removed")
    return [Finding(R_MASK, "mask", text, ("not_zero",))]


def _filled(G: np.ndarray, W: np.ndarray, bw: np.ndarray, w: Words) -> list[Finding]:
    """Masked scores whose blocked entries hold one finite number (or +inf) instead of -inf,
    the others right."""
    fill = G[bw]
    if fill.size == 0 or not np.all(fill == fill.flat[0]) or not np.allclose(
            G[~bw], W[~bw], rtol=w.rtol, atol=w.atol, equal_nan=True):
        return []
    v = float(fill.flat[0]) + 0.0   # -0.0 reads as 0
    return [Finding(R_MASK, "mask", f"{w.subject} {w.verb('holds', 'hold')} {v:g} where {w.ref} holds -inf (the "
                    f"blocked entries), and agrees everywhere else: the mask's fill value is {v:g}, not -inf",
                    ("fill", v))]


def _one_plane(b: np.ndarray) -> np.ndarray | None:
    """The (t_q, t_k) pattern, when every slice of the leading axes has the same one."""
    planes = b.reshape(-1, *b.shape[-2:])
    first = planes[0]
    return first if all(np.array_equal(first, p) for p in planes[1:]) else None


def _band(m: np.ndarray) -> tuple[int, int] | None:
    """(lo, hi): query i sees exactly keys max(0, i + lo) to min(t_k - 1, i + hi), the same lo
    and hi for every row (INF: no end on that side); None when the visible keys are no band.
    The ends are read off the rows that show them (a row cut by the first or last key shows
    only a bound), then the band is verified on every row, those that see nothing included."""
    t_q, t_k = m.shape
    lows, highs = [], []
    for i in range(t_q):
        seen = np.flatnonzero(~m[i])
        if seen.size == 0:
            continue
        if seen[-1] - seen[0] + 1 != seen.size:
            return None
        if seen[0] > 0:
            lows.append(int(seen[0]) - i)
        if seen[-1] < t_k - 1:
            highs.append(int(seen[-1]) - i)
    if len(set(lows)) > 1 or len(set(highs)) > 1:
        return None
    lo = lows[0] if lows else -INF
    hi = highs[0] if highs else INF
    rows, cols = np.arange(t_q)[:, None], np.arange(t_k)[None, :]
    return (lo, hi) if np.array_equal(~m, (cols >= rows + lo) & (cols <= rows + hi)) else None


def _compared(g: tuple[int, int], r: tuple[int, int], t_q: int, t_k: int, w: Words) -> list[Finding]:
    """The differences between the band the answer shows (`g`) and the reference's (`r`)."""
    subj, ref = w.subject, w.ref
    sees, refs = grammar.agrees(ref, "sees", "see"), _possessive(ref)
    (glo, ghi), (rlo, rhi) = g, r
    if glo != -INF and ghi != INF and glo == -ghi and ghi > 0 and rlo != -rhi:
        return [Finding(R_MASK, "mask", f"the band of keys {subj} {w.verb('sees', 'see')} reaches both ways: "
                        f"each query sees the {ghi} key{_s(ghi)} after it as well as those before it", ("two_sided",))]
    out = []
    if ghi != rhi:
        if t_k > t_q and rhi == t_k - t_q and ghi == 0:
            out.append(Finding(R_MASK, "mask", f"{subj} {w.verb('aligns', 'align')} the mask top-left (query i sees "
                               f"keys up to i) where {ref} {grammar.agrees(ref, 'aligns', 'align')} it bottom-right (query i sees "
                               f"keys up to i + {t_k - t_q}: the queries are the last {t_q} of {t_k} positions)",
                               ("top_left",)))
        elif ghi == INF:
            out.append(Finding(R_MASK, "mask", f"{subj} {w.verb('blocks', 'block')} none of the later keys that {ref} "
                               f"{grammar.agrees(ref, 'blocks', 'block')}: the future is not masked", ("no_future",)))
        elif rhi != INF:
            k = ghi - rhi
            what = ("each query also sees the next key" if k == 1 else f"each query also sees the next {k} keys"
                    if k > 1 else "no query sees its own key" if k == -1 and rhi == t_k - t_q
                    else f"each query sees {-k} key{_s(-k)} fewer at the end")
            out.append(Finding(R_MASK, "mask", f"the mask of {subj} is {refs} with its diagonal moved by {k:+d}: "
                               f"{what}", ("shifted", k)))
    if glo != rlo:
        if rlo != -INF and glo == -INF:
            out.append(Finding(R_MASK, "mask", f"{subj} {w.verb('sees', 'see')} every earlier key, where {ref} {sees} "
                               f"the last {rhi - rlo + 1} only: the window is not applied", ("no_window",)))
        elif rlo != -INF:
            k = rlo - glo
            out.append(Finding(R_MASK, "mask", f"the window of {subj} is {abs(k)} key{_s(k)} "
                               f"{'wider' if k > 0 else 'narrower'} than {refs}: each query sees {abs(k)} "
                               f"{'more' if k > 0 else 'fewer'} earlier key{_s(k)}", ("window", k)))
        else:
            out.append(Finding(R_MASK, "mask", f"{subj} {w.verb('sees', 'see')} only the last {ghi - glo + 1} keys up "
                               f"to each query, where {ref} {sees} every earlier key", ("window_added",)))
    return out


def _possessive(name: str) -> str:
    """"the reference's", "the reference's weights'"."""
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def _s(n: int) -> str:
    return "" if abs(n) == 1 else "s"
