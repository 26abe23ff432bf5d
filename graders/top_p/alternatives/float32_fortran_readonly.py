import numpy as np


def top_p_probs(logits, temperature=1.0, top_p=1.0):
    # float32 in, float32 out; the result is Fortran-ordered and read-only
    if temperature < 0 or not (0 < top_p <= 1):
        raise ValueError("temperature must be >= 0 and top_p in (0, 1]")
    V = logits.shape[-1]
    if temperature == 0:
        out = (np.arange(V) == np.argmax(logits, axis=-1)[..., None]).astype(logits.dtype)
    else:
        s = logits / np.asarray(temperature, dtype=logits.dtype)
        e = np.exp(s - np.max(s, axis=-1, keepdims=True))
        p = e / np.sum(e, axis=-1, keepdims=True)
        rank = np.argsort(np.argsort(-p, axis=-1, kind="mergesort"), axis=-1, kind="mergesort")
        by_rank = np.take_along_axis(p, np.argsort(rank, axis=-1), axis=-1)
        mass_before = np.cumsum(by_rank, axis=-1) - by_rank
        kept_by_rank = (mass_before < top_p) | (top_p == 1)
        keep = np.take_along_axis(kept_by_rank, rank, axis=-1)
        q = np.where(keep, p, np.zeros((), dtype=p.dtype))
        out = q / np.sum(q, axis=-1, keepdims=True)
    out = np.asfortranarray(out)
    out.setflags(write=False)
    return out


def sample_top_p(logits, temperature=1.0, top_p=1.0, rng=None):
    # inverse-CDF draws; an np.int64 scalar for one row, an int32 array for a batch
    rng = np.random.default_rng() if rng is None else rng
    q = top_p_probs(logits, temperature, top_p).astype(np.float64)
    cdf = np.cumsum(q, axis=-1)
    u = rng.random(q.shape[:-1] + (1,)) * cdf[..., -1:]
    idx = np.minimum(np.sum(cdf <= u, axis=-1), q.shape[-1] - 1)
    # a u that lands on a zero-probability tail is moved back to the last kept token
    last = q.shape[-1] - 1 - np.argmax(q[..., ::-1] > 0, axis=-1)
    idx = np.minimum(idx, last)
    if idx.ndim == 0:
        return np.int64(idx)
    return idx.astype(np.int32)
