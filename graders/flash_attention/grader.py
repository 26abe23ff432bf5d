"""Grader for flash_attention(q, k, v, block_size=128, causal=True).

The yardstick is plain attention with the whole score matrix, in float64, written here;
every case is small enough for it except the memory check, which judges a few rows.
"""

import numpy as np

from graders.engine.vocabulary import (
    check,
    expect_close,
    expect_finite,
    expect_inputs_unchanged,
    expect_memory_below,
    expect_raises,
    expect_shape,
    with_dtypes,
)

MEMORY = ("never builds a full T_q x T_k array (tracemalloc peak at T=8192, d=16, block 64; and 1024 queries over "
          "8192 keys with the defaults)")


def plain_attention(q, k, v, causal):
    """softmax(q k^T / sqrt(d)) v with the whole score matrix, in float64: the yardstick."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    t_q, t_k = q.shape[-2], k.shape[-2]
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])           # (..., T_q, T_k)
    if causal:
        future = np.arange(t_k)[None, :] > (t_k - t_q + np.arange(t_q))[:, None]
        s = np.where(future, -np.inf, s)
    s = s - s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    return (p / p.sum(axis=-1, keepdims=True)) @ v                   # (..., T_q, d)


def qkv(new, lead, t_q, t_k, d, dtype="float64", scale=1.0, suffix=""):
    q = new.normal(f"q{suffix}", (*lead, t_q, d), scale=scale, dtype=dtype)
    k = new.normal(f"k{suffix}", (*lead, t_k, d), scale=scale, dtype=dtype)
    v = new.normal(f"v{suffix}", (*lead, t_k, d), dtype=dtype)
    return q, k, v


def _visible_scores(q, k, causal):
    """Every score some query may see, in float64 (for saying how large they were)."""
    q, k = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    t_q, t_k = s.shape[-2:]
    seen = np.arange(t_k)[None, :] <= (t_k - t_q + np.arange(t_q))[:, None] if causal else np.ones((t_q, t_k), bool)
    return s[..., seen]


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
def shape(impl, new, lead, t_q, t_k, d, block_size, causal):
    q, k, v = qkv(new, lead, t_q, t_k, d)
    out = impl.flash_attention(q, k, v, block_size=block_size, causal=causal)
    expect_shape(out, (*lead, t_q, d), "the output")


@check("agrees with plain attention, causal and not", with_dtypes(CASES))
def agrees(impl, new, lead, t_q, t_k, d, block_size, causal, dtype):
    q, k, v = qkv(new, lead, t_q, t_k, d, dtype)
    if t_q > 2:  # a query of zeros and a key of zeros: scores of exactly 0
        zero_row = "np.concatenate([{0}[..., :1, :], 0 * {0}[..., 1:2, :], {0}[..., 2:, :]], axis=-2)"
        q = new.let("q", np.concatenate([q[..., :1, :], 0 * q[..., 1:2, :], q[..., 2:, :]], axis=-2),
                    zero_row.format("q"))
        k = new.let("k", np.concatenate([k[..., :1, :], 0 * k[..., 1:2, :], k[..., 2:, :]], axis=-2),
                    zero_row.format("k"))
    out = impl.flash_attention(q, k, v, block_size=block_size, causal=causal)
    expect_close(out, plain_attention(q, k, v, causal), f"flash_attention(..., causal={causal})", dtype,
                 against="plain attention")


@check("causal with fewer queries than keys uses bottom-right alignment", [
    {"t_q": 1, "t_k": 6, "block_size": 4, "seed": 0},
    {"t_q": 3, "t_k": 8, "block_size": 2, "seed": 1},
    {"t_q": 5, "t_k": 11, "block_size": 3, "seed": 2},
], minimum={"t_q": 1, "t_k": 2}, valid=lambda c: c["t_q"] < c["t_k"])
def bottom_right(impl, new, t_q, t_k, block_size):
    q, k, v = qkv(new, (), t_q, t_k, 4)
    out = impl.flash_attention(q, k, v, block_size=block_size, causal=True)
    expect_close(out, plain_attention(q, k, v, True),
                 f"flash_attention with T_q={t_q} < T_k={t_k} (query i sees keys up to {t_k - t_q} + i)",
                 against="plain attention")


@check("any block size gives the same answer (1, not dividing T, larger than T)", [
    {"t": 11, "block_size": 1, "causal": True, "seed": 0},
    {"t": 11, "block_size": 4, "causal": True, "seed": 1},
    {"t": 11, "block_size": 4, "causal": False, "seed": 2},
    {"t": 11, "block_size": 64, "causal": True, "seed": 3},
    {"t": 17, "block_size": 16, "causal": False, "seed": 4},
])
def block_sizes(impl, new, t, block_size, causal):
    q, k, v = qkv(new, (), t, t, 3)
    out = impl.flash_attention(q, k, v, block_size=block_size, causal=causal)
    expect_close(out, plain_attention(q, k, v, causal), f"flash_attention(..., block_size={block_size})",
                 against="plain attention")


@check("stays finite and exact for scores near 1e4", [
    {"t": 9, "block_size": 3, "causal": True, "dtype": "float64", "seed": 0},
    {"t": 9, "block_size": 3, "causal": False, "dtype": "float64", "seed": 1},
    {"t": 8, "block_size": 3, "causal": True, "dtype": "float32", "seed": 2},
], shrink=False)  # smaller cases have smaller scores: a failure is shown where they are near 1e4
def large_scores(impl, new, t, block_size, causal, dtype):
    # entries of 70 give scores q.k / sqrt(2) of order 1e4
    q, k, v = qkv(new, (), t, t, 2, dtype, scale=70.0)
    top = f"(scores up to {np.abs(_visible_scores(q, k, causal)).max():.2g} here)"
    out = expect_finite(impl.flash_attention(q, k, v, block_size=block_size, causal=causal), f"the output {top}")
    expect_close(out, plain_attention(q, k, v, causal), f"the output {top}", dtype, extreme=True,
                 against="plain attention")


def _below_zero(new, lead, t_q, t_k, d, dtype, level):
    """q and k whose every score is `level` (far below 0) give or take a few units: the keys
    lie along one direction u and the queries along -u."""
    size = float(np.sqrt(-level * np.sqrt(d)))                   # |q| |k| / sqrt(d) = -level
    u = new.normal("u", (d,))
    eps_q = new.normal("eps_q", (*lead, t_q, d), scale=2 * np.sqrt(d) / size)
    eps_k = new.normal("eps_k", (*lead, t_k, d), scale=2 * np.sqrt(d) / size)
    cast = "" if dtype == "float64" else f".astype(np.{dtype})"
    unit = u / np.linalg.norm(u)
    q = new.let("q", (eps_q - size * unit).astype(dtype), f"(eps_q - {size!r} * u / np.linalg.norm(u)){cast}")
    k = new.let("k", (eps_k + size * unit).astype(dtype), f"(eps_k + {size!r} * u / np.linalg.norm(u)){cast}")
    v = new.normal("v", (*lead, t_k, d), dtype=dtype)
    return q, k, v


# about -800 first (where exp of a score is 0 in float64), then about -1.2e4
@check("rows whose every visible score is far below 0 (near -800, and near -1.2e4)", [
    {"lead": (), "t_q": 7, "t_k": 7, "d": 4, "block_size": 3, "causal": True, "level": -800.0,
     "dtype": "float64", "seed": 0},
    {"lead": (2,), "t_q": 3, "t_k": 8, "d": 2, "block_size": 4, "causal": False, "level": -800.0,
     "dtype": "float32", "seed": 1},
    {"lead": (), "t_q": 6, "t_k": 6, "d": 4, "block_size": 2, "causal": True, "level": -1.2e4,
     "dtype": "float64", "seed": 2},
], shrink=False)
def far_below_zero(impl, new, lead, t_q, t_k, d, block_size, causal, level, dtype):
    q, k, v = _below_zero(new, lead, t_q, t_k, d, dtype, level)
    seen = _visible_scores(q, k, causal)
    what = f"the output (every visible score between {seen.min():.0f} and {seen.max():.0f} here)"
    out = expect_finite(impl.flash_attention(q, k, v, block_size=block_size, causal=causal), what)
    expect_close(out, plain_attention(q, k, v, causal), what, dtype, against="plain attention")


@check("a value in a query's future never reaches its output, even at 1e6", [
    {"t_q": 7, "t_k": 7, "block_size": 3, "dtype": "float64", "seed": 0},
    {"t_q": 4, "t_k": 9, "block_size": 4, "dtype": "float64", "seed": 1},
    {"t_q": 6, "t_k": 6, "block_size": 2, "dtype": "float32", "seed": 2},
], minimum={"t_q": 2, "t_k": 2}, valid=lambda c: c["t_q"] <= c["t_k"])
def future_value(impl, new, t_q, t_k, block_size, dtype):
    # feature 0 of v is 0 except at the last key, which only the last query sees: feature 0 of
    # every other query's output is exactly 0, and any weight a future key gets shows a million-fold
    q, k, v = qkv(new, (), t_q, t_k, 3, dtype)
    cast = "" if dtype == "float64" else f", dtype=np.{dtype}"
    spike = np.concatenate([np.zeros(t_k - 1), [1e6]]).astype(dtype)
    v = new.let("v", np.concatenate([spike[:, None], v[:, 1:]], axis=1),
                f"np.concatenate([np.array([0.0] * {t_k - 1} + [1e6]{cast})[:, None], v[:, 1:]], axis=1)")
    out = impl.flash_attention(q, k, v, block_size=block_size, causal=True)
    expect_close(out, plain_attention(q, k, v, True), "flash_attention(q, k, v) with v[-1, 0] = 1e6", dtype,
                 against="plain attention")


@check("long sequences: a few queries over more than 4096 keys", [
    {"t_q": 3, "t_k": 4100, "block_size": 128, "causal": True, "seed": 0},
    {"t_q": 2, "t_k": 4200, "block_size": 100, "causal": False, "seed": 1},
], shrink=False)
def long_sequences(impl, new, t_q, t_k, block_size, causal):
    q, k, v = qkv(new, (), t_q, t_k, 2)
    out = impl.flash_attention(q, k, v, block_size=block_size, causal=causal)
    expect_close(out, plain_attention(q, k, v, causal), f"flash_attention(q, k, v, block_size={block_size}, "
                 f"causal={causal}) with T_q={t_q}, T_k={t_k}", against="plain attention")


@check("raises ValueError for block_size < 1 and for causal with T_q > T_k", [{}], shrink=False)
def value_errors(impl, new):
    q, k, v = qkv(new, (), 4, 4, 2)
    expect_raises(ValueError, impl.flash_attention, q, k, v, block_size=0, why="block_size must be at least 1")
    expect_raises(ValueError, impl.flash_attention, q, k, v, block_size=-3, why="block_size must be at least 1")
    q5 = new.normal("q5", (5, 2))
    expect_raises(ValueError, impl.flash_attention, q5, k, v,
                  why="causal with T_q=5 > T_k=4: the first query sees no key")
    out = impl.flash_attention(q5, k, v, causal=False)
    expect_close(out, plain_attention(q5, k, v, False), "flash_attention(q5, k, v, causal=False) (allowed)",
                 against="plain attention")


@check("leaves q, k and v unchanged", [{"causal": True}, {"causal": False}])
def inputs_unchanged(impl, new, causal):
    q, k, v = qkv(new, (2,), 6, 6, 3, scale=3.0)
    impl.flash_attention(q, k, v, block_size=4, causal=causal)
    expect_inputs_unchanged(impl)


@check(MEMORY, [{}], shrink=False, timeout=60, slow="calls at T = 8192")
def memory(impl, new):
    t, d, block = 8192, 16, 64
    q, k, v = qkv(new, (), t, t, d)
    h = d // 2
    out = expect_memory_below(impl, lambda: impl.flash_attention(q, k, v, block_size=block, causal=True), t,
                              narrower=lambda: impl.flash_attention(q[:, :h].copy(), k[:, :h].copy(), v[:, :h].copy(),
                                                                    block_size=block, causal=True))
    expect_shape(out, (t, d), "the output")
    # the values must still be right (checked on a slice, cheaply)
    rows = slice(t - 3, t)
    expect_close(np.asarray(out)[rows], plain_attention(q[rows], k, v, True), "the last rows of the output at T=8192",
                 against="plain attention")
    # the rule holds for fewer queries than keys (decoding), with every default too
    few = new.let("q_few", q[-1024:].copy(), "q[-1024:].copy()")
    expect_memory_below(impl, lambda: impl.flash_attention(few, k, v), 1024, t)
