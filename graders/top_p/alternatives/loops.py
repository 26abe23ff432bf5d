import math

import numpy as np


def _row(z, temperature, top_p):
    """One row of logits as a list of probabilities, with plain Python."""
    V = len(z)
    if temperature == 0:
        best = max(range(V), key=lambda i: (z[i], -i))   # the first of equal maxima
        return [1.0 if i == best else 0.0 for i in range(V)]
    m = max(z)
    e = [math.exp((v - m) / temperature) for v in z]
    total = sum(e)
    p = [v / total for v in e]
    kept, mass = [], 0.0
    for i in sorted(range(V), key=lambda i: (-p[i], i)):
        kept.append(i)
        mass += p[i]
        if mass >= top_p:
            break
    norm = sum(p[i] for i in kept)
    out = [0.0] * V
    for i in kept:
        out[i] = p[i] / norm
    return out


def top_p_probs(logits, temperature=1.0, top_p=1.0):
    if temperature < 0 or not (0 < top_p <= 1):
        raise ValueError("temperature must be >= 0 and top_p in (0, 1]")
    z = np.asarray(logits, dtype=np.float64)
    rows = z.reshape(-1, z.shape[-1])
    out = np.array([_row(list(r), temperature, top_p) for r in rows])
    return out.reshape(z.shape)


def sample_top_p(logits, temperature=1.0, top_p=1.0, rng=None):
    rng = rng if rng is not None else np.random.default_rng()
    probs = top_p_probs(logits, temperature, top_p)
    rows = probs.reshape(-1, probs.shape[-1])
    draws = [int(rng.choice(len(r), p=r)) for r in rows]
    if probs.ndim == 1:
        return draws[0]
    return np.array(draws, dtype=np.int64).reshape(probs.shape[:-1])
