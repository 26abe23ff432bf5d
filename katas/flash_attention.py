"""Blockwise online-softmax (Flash) attention."""
import numpy as np


def flash_attention(q, k, v, block_size=128, causal=True):
    """Exact attention computed block by block, never holding the whole score matrix.

    Task
        Compute softmax(q @ k^T / sqrt(d)) @ v exactly, the way FlashAttention does:
        walk over the keys one block at a time (and over the queries in blocks too),
        keeping a running max and a running sum for every query row, so that the
        softmax is accumulated block by block (the "online softmax") and the full
        matrix of scores never exists. NumPy only.

    Shapes ("..." is any number of leading axes, e.g. (batch, heads), the same for
    q, k and v; Bq and Bk are the sizes of the current query and key blocks)
        q           (..., T_q, d)      float64 or float32
        k, v        (..., T_k, d)
        block_size  int >= 1, keys per block (128 by default)
        causal      bool, True by default
        s           (..., Bq, Bk)      one block of scores, q_blk @ k_blk^T / sqrt(d)
        returns     (..., T_q, d)      the same as plain full-matrix attention

    Conventions
        - Exact: the result equals softmax(q @ k^T / sqrt(d)) @ v to floating-point
          precision, for scores as large as 1e4 too, and where every score a query
          sees is far below 0. A key a query may not see has no effect on it at all.
        - causal=True uses bottom-right alignment: the queries are the LAST T_q
          positions (decoding with a cache), so query i sits at absolute position
          T_k - T_q + i and may see key j only when j <= T_k - T_q + i. With
          T_q == T_k that is the usual lower triangle. causal=False: every query sees
          every key.
        - block_size need not divide T_q or T_k, and may be larger than both.
        - ValueError (with a message in plain words) for block_size < 1, and for a
          causal call with T_q > T_k (a query would have no key it may see).
        - Memory: never build an array of shape (T_q, T_k), of any dtype: no full
          scores, no full weights, not even a full boolean mask. At T = 8192, d = 16,
          block_size = 64, float64, causal, the peak that tracemalloc sees during the
          call, above what was in use when it began, must stay below T * T bytes
          (64 MiB, one boolean T x T mask); blockwise code uses about 1 to 30 MiB.
        - Do not modify q, k or v.

    What the grader checks
        the output shape; agreement with a plain full-matrix attention and with the
        reference (float64: rtol 1e-6, atol 1e-9; float32: rtol 1e-4, atol 1e-5) on
        several seeds and shapes, causal and not: T_q == T_k and T_q < T_k, sizes of 1,
        sizes that are not powers of two, leading axes, a query and a key of zeros,
        block_size 1, block sizes that do not divide T and block sizes larger than T;
        no NaN or inf for scores near 1e4, nor where every score a query sees is far
        below 0 (near -800, and near -1.2e4); a value of 1e6 at a key in a query's
        future leaves that query's output exactly as it was; a few queries over more
        than 4096 keys; the two ValueErrors; the tracemalloc peak above; the inputs are
        left unchanged. Your function is called many times (results must outlast later
        calls), on inputs that may be views, Fortran-ordered or read-only, and at large
        sizes.

    Time budget: 45 minutes.
    """
    raise NotImplementedError("flash_attention: not implemented yet")
