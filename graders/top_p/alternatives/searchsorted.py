import numpy as np


def top_p_probs(logits, temperature=1.0, top_p=1.0):
    if not temperature >= 0:
        raise ValueError("negative temperature")
    if np.isnan(top_p) or top_p <= 0 or top_p > 1:
        raise ValueError("top_p outside (0, 1]")
    z = np.asarray(logits, dtype=np.float64)
    flat = z.reshape(-1, z.shape[-1])
    out = np.zeros_like(flat)
    for r, row in enumerate(flat):
        if temperature == 0:
            out[r, np.argmax(row)] = 1.0
            continue
        s = row / temperature
        p = np.exp(s - s.max())
        p /= p.sum()
        order = np.argsort(-p, kind="mergesort")          # stable: ties stay in index order
        cum = np.cumsum(p[order])
        # side="left": the first position whose cumulative sum is >= top_p is the crossing token
        k = min(int(np.searchsorted(cum, top_p, side="left")) + 1, len(p))
        if top_p == 1:
            k = len(p)
        keep = order[:k]
        out[r, keep] = p[keep] / p[keep].sum()
    return out.reshape(z.shape)


def sample_top_p(logits, temperature=1.0, top_p=1.0, rng=None):
    if rng is None:
        rng = np.random.default_rng()
    probs = top_p_probs(logits, temperature, top_p)
    flat = probs.reshape(-1, probs.shape[-1])
    u = rng.random(flat.shape[0])
    draws = np.empty(flat.shape[0], dtype=np.int64)
    for r, row in enumerate(flat):
        cum = np.cumsum(row)
        # inverse CDF: the first token whose cumulative sum passes u (scaled to the row's total)
        i = int(np.searchsorted(cum, u[r] * cum[-1], side="right"))
        while row[min(i, len(row) - 1)] == 0 and i > 0:   # never land on a token the cut removed
            i -= 1
        draws[r] = min(i, len(row) - 1)
    if probs.ndim == 1:
        return int(draws[0])
    return draws.reshape(probs.shape[:-1])
