"""Calls whose answer shows the attention weights of a function that returns only their product.

An attention that returns y = weights @ v hides its weights; called with v the identity, its
answer is the weights themselves, and the relations of weights (another temperature, another
mask, another axis of normalisation) can be tested on it. q and k get zero features up to T_k
when they have fewer (a zero feature adds nothing to a score), so that the identity fits.
A domain declares a probe (graders.engine.domain.Explore.probe) as one of the functions here.
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
