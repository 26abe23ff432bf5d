"""Grouped-query attention, and what it saves in the KV cache."""
import numpy as np


def gqa(x, W_q, W_k, W_v, W_o, n_heads, n_kv_heads):
    """Causal grouped-query attention: n_heads query heads share n_kv_heads key/value heads.

    Task
        Write the attention layer that recent open-weights models ship in place of
        multi-head attention. Every query head keeps its own projection, but keys and
        values have only n_kv_heads heads, each shared by a group of
        n_heads // n_kv_heads neighbouring query heads. Keys and values are what a
        KV cache stores during generation, so fewer KV heads means a smaller cache.
        With n_kv_heads == n_heads this is ordinary multi-head attention; with
        n_kv_heads == 1 it is multi-query attention. NumPy only.

    Shapes
        x        (B, T, d_model), float64 or float32
        W_q      (d_model, n_heads * d_head)
        W_k      (d_model, n_kv_heads * d_head)
        W_v      (d_model, n_kv_heads * d_head)
        W_o      (n_heads * d_head, d_model)
        d_head   W_q.shape[1] // n_heads. d_model and n_heads * d_head are independent
                 sizes: they need not be equal.
        q        (B, n_heads, T, d_head)
        k, v     (B, n_kv_heads, T, d_head)
        scores   (B, n_heads, T, T)
        returns  (y, weights): y (B, T, d_model), weights (B, n_heads, T, T), the
                 attention weights of every query head after the softmax.

    Conventions
        - Head h of a projection is its feature columns h*d_head:(h+1)*d_head.
        - Query head h uses key/value head h // (n_heads // n_kv_heads): neighbouring
          query heads share a KV head. With 4 query heads and 2 KV heads, query heads
          0 and 1 use KV head 0, and query heads 2 and 3 use KV head 1.
        - Scores are q k^T / sqrt(d_head). Always causal: position i attends to
          positions 0..i only; its weights are the softmax of its scores over those
          keys, so every later key gets weight exactly 0 and every row sums to 1.
        - Scores may reach 1e4 and more in magnitude, and every score a query sees
          may be far below 0: the weights must stay finite and correct.
        - Head h's output fills columns h*d_head:(h+1)*d_head of the merged
          (B, T, n_heads * d_head) array that goes into `@ W_o`.
        - ValueError if n_heads does not divide W_q.shape[1], or if n_kv_heads does
          not divide n_heads.
        - Do not modify any input array.

    What the grader checks
        the shapes of y and weights; agreement with the reference on several seeds and
        shapes (T = 1, batch of 1 and more, odd sizes, float32 and float64, a row of x
        that is all zeros); d_model different from n_heads * d_head; finite, causal and
        correct weights for scores of 1e4 and more, also where every score a query
        sees is far below 0; the same result as causal multi-head attention when
        n_kv_heads == n_heads and as multi-query attention when n_kv_heads == 1; which
        KV head each query head uses; rows of weights summing to 1; nothing attending
        to the future; earlier outputs unchanged when the input is cut short; the
        ValueErrors; inputs left unchanged. Then kv_cache_bytes (see its docstring).
        Both functions are called many times, gqa with 1025 positions too (results
        must outlast later calls), and gqa on inputs that may be views,
        Fortran-ordered or read-only.

    Time budget: 40 minutes.
    """
    raise NotImplementedError("gqa: not implemented yet")


def kv_cache_bytes(n_layers, n_kv_heads, d_head, n_tokens, bytes_per_value=2):
    """Bytes a KV cache needs to hold keys and values for n_tokens tokens.

    Task
        During generation a decoder keeps, for every layer and every KV head, the key
        and the value of each token it has already read, so that a new token attends
        to them without recomputing them. Count the bytes this cache takes.

    Arguments
        n_layers         number of transformer layers
        n_kv_heads       key/value heads per layer (n_heads for multi-head attention,
                         fewer for grouped-query attention)
        d_head           width of one head: one key, or one value, is d_head numbers
        n_tokens         tokens held in the cache
        bytes_per_value  bytes per number: 2 for 16-bit (the default), 4 for 32-bit
        returns          an int (a Python or NumPy integer), the number of bytes

    Worked figure
        32 layers, 8 KV heads, d_head 128, 16-bit: 131072 bytes (128 KiB) per token.

    What the grader checks
        that figure and the same model with 32 KV heads (multi-head attention), the
        16-bit default, linear growth with n_tokens, other sizes (caches of more than
        2**31 bytes too), and that the result is an integer.
    """
    raise NotImplementedError("kv_cache_bytes: not implemented yet")
