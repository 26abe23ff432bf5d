"""Calls whose answer shows the attention weights of a function that returns only their product.

An attention that returns y = weights @ v hides its weights; called with v the identity, its
answer is the weights themselves, and the relations of weights (another temperature, another
mask, another axis of normalisation) can be tested on it. q and k get zero features up to T_k
when they have fewer (a zero feature adds nothing to a score), so that the identity fits.
A domain declares a probe (graders.engine.domain.Explore.probe) as one of the functions here,
and the size of its scores, for what a failure needs (Explore.magnitude), as one of the last.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


@dataclass(frozen=True)
class Probe:
    """Arguments under which the answer shows the weights, and how to read them off it."""

    values: dict
    weights: Callable[[Any], np.ndarray | None]


def _padded(a: np.ndarray, width: int) -> np.ndarray:
    if a.shape[-1] >= width:
        return np.array(a, dtype=np.float64)
    pad = np.zeros((*a.shape[:-1], width - a.shape[-1]))
    return np.concatenate([np.asarray(a, dtype=np.float64), pad], axis=-1)


def through_v(values: dict) -> Probe | None:
    """f(q, k, v, ...) -> (..., T_q, d): with v the identity (q and k padded to T_k features),
    the answer's first T_k features are the weights."""
    q, k = values.get("q"), values.get("k")
    if not (isinstance(q, np.ndarray) and isinstance(k, np.ndarray)) or q.ndim < 2 or k.ndim < 2:
        return None
    t_k = k.shape[-2]
    width = max(k.shape[-1], t_k)
    v = np.broadcast_to(np.eye(t_k, width), (*k.shape[:-1], width)).copy()
    probe = {**values, "q": _padded(q, width), "k": _padded(k, width), "v": v}

    def weights(out: Any) -> np.ndarray | None:
        a = _array(out)
        return a[..., :t_k] if a is not None and a.shape[-1] >= t_k else None
    return Probe(probe, weights)


def through_d_out(values: dict) -> Probe | None:
    """f(q, k, v, d_out, ...) -> (dq, dk, dv): with d_out the identity (q, k and v padded to T_q
    features), dv = weights.T @ d_out holds the weights, transposed, in its first T_q features."""
    q, k, v = values.get("q"), values.get("k"), values.get("v")
    if not all(isinstance(a, np.ndarray) and a.ndim >= 2 for a in (q, k, v)):
        return None
    t_q = q.shape[-2]
    width = max(q.shape[-1], t_q)
    d_out = np.broadcast_to(np.eye(t_q, width), (*q.shape[:-1], width)).copy()
    probe = {**values, "q": _padded(q, width), "k": _padded(k, width), "v": _padded(v, width), "d_out": d_out}

    def weights(out: Any) -> np.ndarray | None:
        if not isinstance(out, (tuple, list)) or len(out) != 3:
            return None
        dv = _array(out[2])
        return np.swapaxes(dv[..., :t_q], -1, -2) if dv is not None and dv.shape[-1] >= t_q else None
    return Probe(probe, weights)


def _array(out: Any) -> np.ndarray | None:
    try:
        a = np.asarray(out, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return a if a.ndim >= 2 else None


def through_cache(values: dict) -> Probe | None:
    """f(x, W_q, W_k, W_v, W_o, n_heads, cache) -> (y, cache), one decoding step over a cache: made
    with one sequence and one head (every head's columns together), x given one feature more for
    each new position (an identity, so that W_v can make each new value a one-hot row), the cached
    values one-hot rows too and W_o the identity, y's first t_past + t_new features are the
    weights of the new positions over every position."""
    x, W_q, W_k = values.get("x"), values.get("W_q"), values.get("W_k")
    cache = values.get("cache")
    if not all(isinstance(a, np.ndarray) for a in (x, W_q, W_k)) or x.ndim != 3:
        return None
    t_new, d_model = x.shape[1], x.shape[2]
    if cache is not None:
        if not (isinstance(cache, (tuple, list)) and len(cache) == 2 and isinstance(cache[0], np.ndarray)
                and cache[0].ndim == 4):
            return None
        k_past = np.asarray(cache[0][:1], dtype=np.float64)                      # (1, H, t_past, d_head)
        k_past = k_past.transpose(0, 2, 1, 3).reshape(1, k_past.shape[2], -1)   # every head's columns together
    else:
        k_past = np.zeros((1, 0, d_model))
    t_past = k_past.shape[1]
    t_all = t_past + t_new
    width = max(d_model + t_new, t_all)
    x1 = np.zeros((1, t_new, width))
    x1[0, :, :d_model] = x[0]
    x1[0, :, d_model:d_model + t_new] = np.eye(t_new)
    W_q1, W_k1, W_v1 = (np.zeros((width, width)) for _ in range(3))
    W_q1[:d_model, :d_model], W_k1[:d_model, :d_model] = W_q, W_k
    W_v1[d_model:d_model + t_new, t_past:t_all] = np.eye(t_new)      # the new values: one-hot rows t_past...
    probe = {**values, "x": x1, "W_q": W_q1, "W_k": W_k1, "W_v": W_v1, "W_o": np.eye(width), "n_heads": 1}
    if cache is not None:
        k1 = np.zeros((1, 1, t_past, width))
        k1[0, 0, :, :k_past.shape[2]] = k_past[0]
        v1 = np.zeros((1, 1, t_past, width))
        v1[0, 0, :, :t_past] = np.eye(t_past)                        # the cached values: one-hot rows 0...
        probe["cache"] = (k1, v1)

    def weights(out: Any) -> np.ndarray | None:
        y = _array(out[0]) if isinstance(out, (tuple, list)) and len(out) == 2 else None
        return y[0, :, :t_all] if y is not None and y.ndim == 3 and y.shape[-1] >= t_all else None
    return Probe(probe, weights)


def largest_score(values: dict) -> tuple[str, float]:
    """("scores", the largest |q . k| / sqrt(d)) for f(q, k, ...): the size that matters to a softmax."""
    q, k = np.asarray(values["q"], dtype=np.float64), np.asarray(values["k"], dtype=np.float64)
    return "scores", float(np.max(np.abs(q @ np.swapaxes(k, -1, -2)))) / np.sqrt(q.shape[-1])


def largest_projected_score(values: dict) -> tuple[str, float]:
    """("scores", the largest |x W_q . x W_k| / sqrt(d_k)) for f(x, W_q, W_k, ...), over all heads together."""
    x = np.asarray(values["x"], dtype=np.float64)
    q, k = x @ np.asarray(values["W_q"], dtype=np.float64), x @ np.asarray(values["W_k"], dtype=np.float64)
    return "scores", float(np.max(np.abs(q @ np.swapaxes(k, -1, -2)))) / np.sqrt(q.shape[-1])
