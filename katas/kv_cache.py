"""Multi-head attention over a KV cache: the step that autoregressive decoding repeats."""
import numpy as np


def attend_with_cache(x, W_q, W_k, W_v, W_o, n_heads, cache=None):
    """Causal multi-head attention for new positions, over cached keys and values.

    Task
        A decoder generates one token at a time. Running the layer over the whole
        prefix again at every step redoes every earlier position, O(T^2) work for one
        new token, so the keys and values already computed are kept in a cache: each
        step projects only the new positions, attends over the cached keys and values
        plus the new ones, and hands back the cache grown by the new positions.
        Write that step for causal multi-head attention (the `causal_mha` kata's
        layer). The new positions may be one token (decoding), a whole prompt
        (prefill, with `cache=None`), or any chunk in between. NumPy only.

    Shapes
        x        (B, t_new, d_model)     the new positions, float64 or float32
        W_q, W_k, W_v, W_o  (d_model, d_model)
        n_heads  int that divides d_model; d_head = d_model // n_heads
        cache    None (nothing read yet), or a pair (k, v) of arrays, each
                 (B, n_heads, t_past, d_head): the keys and values of the t_past
                 positions already read, split into heads
        q        (B, n_heads, t_new, d_head)
        k, v     (B, n_heads, t_past + t_new, d_head)   the cache grown by the new positions
        scores   (B, n_heads, t_new, t_past + t_new)
        returns  (y, (k, v)): y (B, t_new, d_model), and the grown cache

    Conventions
        - Exactly `causal_mha`'s layer: q = x @ W_q, k = x @ W_k, v = x @ W_v; head h
          is feature columns h*d_head:(h+1)*d_head of each; scores are
          q k^T / sqrt(d_head); the heads are concatenated back in order, (B, t_new,
          d_model), before `@ W_o`. No positional encoding.
        - The cache holds keys and values already split into heads: the cached k is
          (x_past @ W_k) split into heads, with head h at k[:, h]. Its third axis is
          the position.
        - The new positions are the LAST t_new of t_past + t_new: new position i sits
          at absolute position t_past + i. It attends to every cached position and to
          the new positions 0..i, never to a later one.
        - The returned cache is the given one with the new keys and values appended
          along the positions axis, as new arrays: the given arrays are not modified.
          A cache with t_past = 0 behaves exactly as None.
        - Feeding one sequence through in any split into chunks (one token at a time,
          a prompt and then single tokens, everything at once with cache=None) gives
          the same outputs as causal multi-head attention on the whole sequence, and
          the same final cache.
        - ValueError when n_heads does not divide d_model; when the cache's k or v does
          not fit x and n_heads (batch size, head count, head size) or the two do not
          fit each other (shape, length); when t_new is 0.
        - Do not modify any input: neither the arrays nor the cache pair.

    What the grader checks
        the shapes of y and of the returned cache; agreement with the reference over
        several seeds and shapes (t_new = 1, odd sizes, one and several sequences and
        heads, d_head = 1, t_past from 0 to thousands of positions), in float64 and
        float32; random splits of one sequence into chunks against attention on the
        whole sequence; the returned cache against the projected keys and values; a
        cache with t_past = 0 against None; scores near 1e4, scores exactly 0 (a zero
        row of x), rows whose scores are all far below 0, and rows whose scores spread
        over 30 and more (weights as small as exp(-30) must come out exact); the
        ValueErrors; and that no input, the cache included, is modified. Your
        function is called many times in a row, on inputs that may be views, slices,
        Fortran-ordered or read-only, and at large sizes where that is cheap; results
        of earlier calls are checked again after later ones.

    Time budget: 35 minutes.
    """
    raise NotImplementedError("attend_with_cache: not implemented yet")
