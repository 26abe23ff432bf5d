import numpy as np


def top_p_probs(logits, temperature=1.0, top_p=1.0):
    # keeps the input's dtype (float32 stays float32); the nucleus is cut by rank, not by scatter
    if temperature < 0:
        raise ValueError("temperature must be non-negative")
    if not (top_p > 0 and top_p <= 1):
        raise ValueError("top_p must lie in (0, 1]")
    V = logits.shape[-1]
    if temperature == 0:
        hot = np.zeros_like(logits)
        np.put_along_axis(hot, np.argmax(logits, axis=-1)[..., None], 1, axis=-1)
        return hot
    # log-softmax via log-sum-exp, then exponentiate
    s = logits / temperature
    m = s.max(axis=-1, keepdims=True)
    logp = s - (m + np.log(np.exp(s - m).sum(axis=-1, keepdims=True)))
    p = np.exp(logp)
    order = np.argsort(-p, axis=-1, kind="stable")
    rank = np.argsort(order, axis=-1, kind="stable")            # rank[i]: place of token i in the order
    cum = np.cumsum(np.take_along_axis(p, order, axis=-1), axis=-1)
    needed = 1 + np.sum(cum[..., :-1] < top_p, axis=-1, keepdims=True)   # tokens until the sum reaches top_p
    if top_p == 1:
        needed = np.full_like(needed, V)
    q = np.where(rank < needed, p, 0)
    return q / q.sum(axis=-1, keepdims=True)


def sample_top_p(logits, temperature=1.0, top_p=1.0, rng=None):
    # Gumbel-max: argmax(log q + Gumbel noise) is a draw from q; log 0 = -inf is never chosen
    rng = np.random.default_rng() if rng is None else rng
    q = top_p_probs(logits, temperature, top_p)
    with np.errstate(divide="ignore"):
        logq = np.log(q.astype(np.float64))
    return np.argmax(logq + rng.gumbel(size=q.shape), axis=-1)
