"""Grader for flash_attention(q, k, v, block_size=128, causal=True)."""

import numpy as np

from graders.checks import (LOG, call_options, CheckFailed, check, expect_close, expect_finite, expect_inputs_unchanged,
                            expect_raises, expect_shape, unrecorded)

MEMORY = "never builds a full T x T array (tracemalloc peak at T=8192, d=16, block 64)"


def plain_attention(q, k, v, causal):
    """softmax(q k^T / sqrt(d)) v with the whole score matrix, in float64: the yardstick."""
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    t_q, t_k = q.shape[-2], k.shape[-2]
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])           # (..., T_q, T_k)
    if causal:
        future = np.arange(t_k)[None, :] > (t_k - t_q + np.arange(t_q))[:, None]
        s = np.where(future, -np.inf, s)
    s = s - s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    return (p / p.sum(axis=-1, keepdims=True)) @ v                   # (..., T_q, d)


def qkv(new, lead, t_q, t_k, d, dtype="float64", scale=1.0):
    q = new.normal("q", (*lead, t_q, d), scale=scale, dtype=dtype)
    k = new.normal("k", (*lead, t_k, d), scale=scale, dtype=dtype)
    v = new.normal("v", (*lead, t_k, d), dtype=dtype)
    return q, k, v


CASES = [
    {"lead": (), "t_q": 1, "t_k": 1, "d": 1, "block_size": 4, "causal": True, "seed": 0},
    {"lead": (), "t_q": 7, "t_k": 7, "d": 3, "block_size": 3, "causal": True, "seed": 1},
    {"lead": (), "t_q": 7, "t_k": 7, "d": 3, "block_size": 3, "causal": False, "seed": 2},
    {"lead": (2,), "t_q": 13, "t_k": 13, "d": 5, "block_size": 4, "causal": True, "seed": 3},
    {"lead": (2, 3), "t_q": 9, "t_k": 9, "d": 4, "block_size": 2, "causal": False, "seed": 4},
    {"lead": (1, 2), "t_q": 10, "t_k": 10, "d": 8, "block_size": 5, "causal": True, "seed": 5},
]


@check("returns (..., T_q, d)", CASES[:4] + [{"lead": (3,), "t_q": 4, "t_k": 6, "d": 2, "block_size": 4,
                                             "causal": False, "seed": 6}])
def test_shape(impl, new, lead, t_q, t_k, d, block_size, causal):
    q, k, v = qkv(new, lead, t_q, t_k, d)
    out = impl.flash_attention(q, k, v, block_size=block_size, causal=causal)
    expect_shape(out, (*lead, t_q, d), "the output")


@check("agrees with plain attention, causal and not",
       [dict(c, dtype=dt) for c in CASES for dt in ("float64", "float32")])
def test_agrees(impl, new, lead, t_q, t_k, d, block_size, causal, dtype):
    q, k, v = qkv(new, lead, t_q, t_k, d, dtype)
    out = impl.flash_attention(q, k, v, block_size=block_size, causal=causal)
    expect_close(out, plain_attention(q, k, v, causal), f"flash_attention(..., causal={causal})", dtype)


@check("causal with fewer queries than keys uses bottom-right alignment", [
    {"t_q": 1, "t_k": 6, "block_size": 4, "seed": 0},
    {"t_q": 3, "t_k": 8, "block_size": 2, "seed": 1},
    {"t_q": 5, "t_k": 11, "block_size": 3, "seed": 2},
], minimum={"t_q": 1, "t_k": 2}, valid=lambda c: c["t_q"] < c["t_k"])
def test_bottom_right(impl, new, t_q, t_k, block_size):
    q, k, v = qkv(new, (), t_q, t_k, 4)
    out = impl.flash_attention(q, k, v, block_size=block_size, causal=True)
    expect_close(out, plain_attention(q, k, v, True),
                 f"flash_attention with T_q={t_q} < T_k={t_k} (query i sees keys up to {t_k - t_q} + i)")


@check("any block size gives the same answer (1, not dividing T, larger than T)", [
    {"t": 11, "block_size": 1, "causal": True, "seed": 0},
    {"t": 11, "block_size": 4, "causal": True, "seed": 1},
    {"t": 11, "block_size": 4, "causal": False, "seed": 2},
    {"t": 11, "block_size": 64, "causal": True, "seed": 3},
    {"t": 17, "block_size": 16, "causal": False, "seed": 4},
])
def test_block_sizes(impl, new, t, block_size, causal):
    q, k, v = qkv(new, (), t, t, 3)
    out = impl.flash_attention(q, k, v, block_size=block_size, causal=causal)
    expect_close(out, plain_attention(q, k, v, causal), f"flash_attention(..., block_size={block_size})")


@check("stays finite and exact for scores near 1e4", [
    {"t": 9, "block_size": 3, "causal": True, "dtype": "float64", "seed": 0},
    {"t": 9, "block_size": 3, "causal": False, "dtype": "float64", "seed": 1},
    {"t": 8, "block_size": 3, "causal": True, "dtype": "float32", "seed": 2},
])
def test_large_scores(impl, new, t, block_size, causal, dtype):
    # entries of 70 give scores q.k / sqrt(2) of order 1e4: exp would overflow without the running max
    q, k, v = qkv(new, (), t, t, 2, dtype, scale=70.0)
    out = expect_finite(impl.flash_attention(q, k, v, block_size=block_size, causal=causal), "the output")
    expect_close(out, plain_attention(q, k, v, causal), "flash_attention on large scores", dtype, extreme=True)


@check("raises ValueError for block_size < 1 and for causal with T_q > T_k", [{}], shrink=False)
def test_value_errors(impl, new):
    q, k, v = qkv(new, (), 4, 4, 2)
    expect_raises(ValueError, impl.flash_attention, q, k, v, block_size=0, why="block_size must be at least 1")
    expect_raises(ValueError, impl.flash_attention, q, k, v, block_size=-3, why="block_size must be at least 1")
    q5 = new.normal("q5", (5, 2))
    expect_raises(ValueError, impl.flash_attention, q5, k, v, why="causal with T_q=5 > T_k=4: the first query sees no key")
    out = impl.flash_attention(q5, k, v, causal=False)
    expect_close(out, plain_attention(q5, k, v, False), "flash_attention(q5, k, v, causal=False) (allowed)")


@check("leaves q, k and v unchanged", [{"causal": True}, {"causal": False}])
def test_inputs_unchanged(impl, new, causal):
    q, k, v = qkv(new, (2,), 6, 6, 3, scale=3.0)
    impl.flash_attention(q, k, v, block_size=4, causal=causal)
    expect_inputs_unchanged()


@check(MEMORY, [{}], shrink=False, timeout=60, slow="a call at T = 8192")
def test_memory(impl, new):
    t, d, block = 8192, 16, 64
    q, k, v = qkv(new, (), t, t, d)
    budget = t * t  # bytes: one boolean T x T mask
    with unrecorded(), call_options(memory=True):
        out = impl.flash_attention(q, k, v, block_size=block, causal=True)
    peak = LOG.calls[-1].peak
    expect_shape(out, (t, d), "the output")
    if peak >= budget:
        mib = peak / 2**20
        cause = ("the full float64 score matrix alone is 512 MiB" if peak >= 8 * t * t
                 else "that is the size of a full T x T boolean mask or larger")
        bug = "full_score_matrix" if peak >= 8 * t * t else "full_boolean_mask"
        raise CheckFailed(f"the peak memory during the call was {mib:.0f} MiB, the budget is {budget / 2**20:.0f} MiB "
                          f"(below one T x T boolean array at T={t}); {cause}: work one block at a time",
                          kind="memory", bug=bug)
    # the values must still be right (checked on a slice, cheaply)
    rows = slice(t - 3, t)
    want = plain_attention(q[rows], k, v, True)
    expect_close(np.asarray(out)[rows], want, "the last rows of the output at T=8192")
