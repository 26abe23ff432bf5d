"""Grader for gqa(x, W_q, W_k, W_v, W_o, n_heads, n_kv_heads) and kv_cache_bytes(...).

Sizes are given as n_kv_heads and group (query heads per KV head), so that
n_heads = n_kv_heads * group always divides evenly, also when a failing case is shrunk.
"""
import numpy as np

from graders.engine.vocabulary import (
    CheckFailed,
    check,
    expect_causal,
    expect_close,
    expect_finite,
    expect_inputs_unchanged,
    expect_prefix_invariant,
    expect_raises,
    expect_repeatable,
    expect_rows_sum_to_one,
    expect_shape,
    expect_tuple,
    kind_of,
    tolerance,
    with_dtypes,
)

SHAPES = "returns y of shape (B, T, d_model) and weights of shape (B, n_heads, T, T)"
GROUPING = "neighbouring query heads share a KV head (query head h uses KV head h // (n_heads // n_kv_heads))"

CASES = [
    {"B": 2, "T": 5, "n_kv_heads": 2, "group": 2, "d_head": 3, "seed": 0},
    {"B": 1, "T": 1, "n_kv_heads": 1, "group": 3, "d_head": 2, "seed": 1},
    {"B": 3, "T": 7, "n_kv_heads": 3, "group": 2, "d_head": 4, "seed": 2},
    {"B": 1, "T": 6, "n_kv_heads": 4, "group": 2, "d_head": 2, "seed": 3},
    {"B": 2, "T": 4, "n_kv_heads": 2, "group": 1, "d_head": 5, "seed": 4},
    {"B": 2, "T": 3, "n_kv_heads": 1, "group": 1, "d_head": 1, "seed": 5},
]
DTYPES = with_dtypes(CASES)


def _inputs(new, B, T, d_model, n_heads, n_kv_heads, d_head, dtype="float64", scale=1.0, suffix=""):
    """x and the four weight matrices, scaled so that scores are of order 1."""
    w = float(scale / np.sqrt(d_model))
    x = new.normal(f"x{suffix}", (B, T, d_model), dtype=dtype)
    W_q = new.normal(f"W_q{suffix}", (d_model, n_heads * d_head), scale=w, dtype=dtype)
    W_k = new.normal(f"W_k{suffix}", (d_model, n_kv_heads * d_head), scale=w, dtype=dtype)
    W_v = new.normal(f"W_v{suffix}", (d_model, n_kv_heads * d_head), scale=w, dtype=dtype)
    W_o = new.normal(f"W_o{suffix}", (n_heads * d_head, d_model), scale=float(1 / np.sqrt(n_heads * d_head)),
                     dtype=dtype)
    return x, W_q, W_k, W_v, W_o


def _f64(*arrays):
    return [np.asarray(a, dtype=np.float64) for a in arrays]


def _call(impl, args, n_heads, n_kv_heads, B, T, d_model):
    """The attempt's (y, weights), after checking it returned two arrays of the right shapes."""
    src = f"gqa(..., n_heads={n_heads}, n_kv_heads={n_kv_heads})"
    y, w = expect_tuple(impl.gqa(*args, n_heads, n_kv_heads), 2, src)
    y = expect_shape(y, (B, T, d_model), f"y from {src}")
    w = expect_shape(w, (B, n_heads, T, T), f"weights from {src}")
    return y, w


def _attention_by_heads(x, W_q, W_k, W_v, W_o, n_heads, kv_of):
    """Causal attention written head by head; query head h reads key/value head kv_of(h)."""
    B, T, _ = x.shape
    d_head = W_q.shape[1] // n_heads
    cols = lambda h: slice(h * d_head, (h + 1) * d_head)
    blocked = np.triu(np.ones((T, T), dtype=bool), 1)
    heads, weights = [], []
    for h in range(n_heads):
        q = x @ W_q[:, cols(h)]                                   # (B, T, d_head)
        k = x @ W_k[:, cols(kv_of(h))]
        v = x @ W_v[:, cols(kv_of(h))]
        s = np.einsum("btd,bsd->bts", q, k) / np.sqrt(d_head)     # (B, T, T)
        s[:, blocked] = -np.inf
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        p /= p.sum(axis=-1, keepdims=True)
        heads.append(p @ v)
        weights.append(p)
    return np.concatenate(heads, axis=-1) @ W_o, np.stack(weights, axis=1)


def _scores(x, W_q, W_k, n_heads, n_kv_heads, rows=None):
    """The scores (B, n_heads, rows, T) of the last `rows` queries (all when None), in float64,
    query head h against KV head h // (n_heads // n_kv_heads), before masking."""
    B, T, _ = x.shape
    d_head = W_q.shape[1] // n_heads
    rows = T if rows is None else rows
    q = (x[:, T - rows:] @ W_q).reshape(B, rows, n_heads, d_head).transpose(0, 2, 1, 3)
    k = (x @ W_k).reshape(B, T, n_kv_heads, d_head).transpose(0, 2, 1, 3)
    k = np.repeat(k, n_heads // n_kv_heads, axis=1)                 # (B, n_heads, T, d_head)
    return q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)


def _last_rows(args, n_heads, n_kv_heads, rows=3):
    """A judge of the attempt's (y, weights) on the last `rows` positions only, in float64: for a
    long call, whose last rows see every key."""
    x, W_q, W_k, W_v, W_o = _f64(*args)
    B, T, d_model = x.shape
    d_head = W_q.shape[1] // n_heads
    s = _scores(x, W_q, W_k, n_heads, n_kv_heads, rows)                # (B, n_heads, rows, T)
    s[..., np.arange(T)[None, :] > np.arange(T - rows, T)[:, None]] = -np.inf
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    w /= w.sum(axis=-1, keepdims=True)
    v = np.repeat((x @ W_v).reshape(B, T, n_kv_heads, d_head).transpose(0, 2, 1, 3), n_heads // n_kv_heads, axis=1)
    y = (w @ v).transpose(0, 2, 1, 3).reshape(B, rows, -1) @ W_o       # (B, rows, d_model)

    def judge(out, what):
        y_got, w_got = expect_tuple(out, 2, what)
        y_got = expect_shape(y_got, (B, T, d_model), f"y from {what}")
        w_got = expect_shape(w_got, (B, n_heads, T, T), f"the weights from {what}")
        expect_close(w_got[..., -rows:, :], w, f"the last {rows} rows of the weights from {what}")
        expect_close(y_got[:, -rows:], y, f"the last {rows} rows of y from {what}")
    return judge


# ----------------------------------------------------------------------------- gqa

@check(SHAPES, CASES)
def shapes(impl, new, B, T, n_kv_heads, group, d_head):
    n_heads = n_kv_heads * group
    d_model = n_heads * d_head
    args = _inputs(new, B, T, d_model, n_heads, n_kv_heads, d_head)
    _call(impl, args, n_heads, n_kv_heads, B, T, d_model)


@check("agrees with the reference", DTYPES)
def agrees(impl, new, ref, B, T, n_kv_heads, group, d_head, dtype):
    n_heads = n_kv_heads * group
    d_model = n_heads * d_head
    x, *Ws = _inputs(new, B, T, d_model, n_heads, n_kv_heads, d_head, dtype)
    if T > 2:  # a padding row of zeros: its scores, and every score against it, are exactly 0
        x = new.let("x", np.concatenate([x[:, :1], 0 * x[:, 1:2], x[:, 2:]], axis=1),
                    "np.concatenate([x[:, :1], 0 * x[:, 1:2], x[:, 2:]], axis=1)")
    y, w = _call(impl, (x, *Ws), n_heads, n_kv_heads, B, T, d_model)
    y_ref, w_ref = ref.gqa(*_f64(x, *Ws), n_heads, n_kv_heads)
    expect_close(w, w_ref, "weights", dtype)
    hint = ("with T = 1 every weight is 1, so each query head's output is the value of the KV head it reads"
            if T == 1 else "the weights agree, so the difference lies in the values, the merge of the heads or W_o")
    expect_close(y, y_ref, "y", dtype, hint=hint)


def n_heads_d_head(case):
    return case["n_kv_heads"] * case["group"] * case["d_head"]


@check("works when d_model differs from n_heads * d_head (d_head is W_q.shape[1] // n_heads)", [
    {"B": 2, "T": 4, "n_kv_heads": 2, "group": 2, "d_head": 3, "d_model": 16, "seed": 0},
    {"B": 1, "T": 5, "n_kv_heads": 1, "group": 2, "d_head": 4, "d_model": 3, "seed": 1},
    {"B": 2, "T": 3, "n_kv_heads": 3, "group": 1, "d_head": 2, "d_model": 7, "seed": 2},
    {"B": 1, "T": 3, "n_kv_heads": 1, "group": 2, "d_head": 3, "d_model": 7, "dtype": "float32", "seed": 3},
], valid=lambda c: n_heads_d_head(c) != c["d_model"] >= c["n_kv_heads"] * c["group"], after=("agrees",))
def d_model_differs(impl, new, ref, B, T, n_kv_heads, group, d_head, d_model, dtype="float64"):
    n_heads = n_kv_heads * group
    args = _inputs(new, B, T, d_model, n_heads, n_kv_heads, d_head, dtype)
    y, w = _call(impl, args, n_heads, n_kv_heads, B, T, d_model)
    y_ref, w_ref = ref.gqa(*_f64(*args), n_heads, n_kv_heads)
    expect_close(w, w_ref, f"weights (d_model={d_model}, d_head={d_head})", dtype)
    expect_close(y, y_ref, f"y (d_model={d_model}, d_head={d_head})", dtype)


def _away_from_own_key(new, B, T, n_kv_heads, group, d_head, dtype, magnitude):
    """x and weights whose scores reach about `magnitude`, where every query points away from
    the key of its own position: each query head's columns of W_q are minus those of the KV head
    it reads, plus a little noise. A query's score against its own position is then far below
    0, so position 0, which sees only itself, has every visible score near -magnitude."""
    n_heads = n_kv_heads * group
    d_model = n_heads * d_head
    w = float(np.sqrt(magnitude / (np.sqrt(d_head) * d_model)))
    x = new.normal("x", (B, T, d_model), dtype=dtype)
    W_k = new.normal("W_k", (d_model, n_kv_heads * d_head), scale=w, dtype=dtype)
    noise = new.normal("noise", (d_model, n_heads * d_head), scale=0.2 * w, dtype=dtype)
    shared = np.repeat(W_k.reshape(d_model, n_kv_heads, d_head), group, axis=1).reshape(d_model, -1)
    W_q = new.let("W_q", noise - shared, f"noise - np.repeat(W_k.reshape({d_model}, {n_kv_heads}, {d_head}), "
                                         f"{group}, axis=1).reshape({d_model}, -1)")
    W_v = new.normal("W_v", (d_model, n_kv_heads * d_head), dtype=dtype)
    W_o = new.normal("W_o", (n_heads * d_head, d_model), scale=float(1 / np.sqrt(n_heads * d_head)), dtype=dtype)
    return x, W_q, W_k, W_v, W_o


@check("stays finite, causal and correct for scores of 1e4 and more, and where every visible score is far below 0", [
    {"B": 2, "T": 5, "n_kv_heads": 2, "group": 2, "d_head": 3, "magnitude": 2e4, "dtype": "float64", "seed": 0},
    {"B": 1, "T": 4, "n_kv_heads": 1, "group": 2, "d_head": 4, "magnitude": 2e4, "dtype": "float32", "seed": 1},
    {"B": 2, "T": 6, "n_kv_heads": 3, "group": 1, "d_head": 2, "magnitude": 3e4, "dtype": "float64", "seed": 2},
], shrink=False, after=("agrees",))  # smaller cases have smaller scores: a failure shows where they reach 1e4
def large_scores(impl, new, ref, B, T, n_kv_heads, group, d_head, magnitude, dtype):
    n_heads = n_kv_heads * group
    d_model = n_heads * d_head
    args = _away_from_own_key(new, B, T, n_kv_heads, group, d_head, dtype, magnitude)
    y, w = _call(impl, args, n_heads, n_kv_heads, B, T, d_model)
    y_ref, w_ref = ref.gqa(*_f64(*args), n_heads, n_kv_heads)
    seen = _scores(*_f64(*args[:3]), n_heads, n_kv_heads)[..., np.tril(np.ones((T, T), dtype=bool))]
    top = f"(scores from {seen.min():.2g} to {seen.max():.2g} here)"
    expect_finite(w, f"weights {top}")
    expect_finite(y, f"y {top}")
    expect_causal(w, what=f"the weights {top}")
    expect_close(w, w_ref, f"weights {top}", dtype, extreme=True)
    expect_close(y, y_ref, f"y {top}", dtype, extreme=True)


@check("equals causal multi-head attention when n_kv_heads == n_heads", [
    {"B": 2, "T": 5, "n_heads": 3, "d_head": 2, "seed": 0},
    {"B": 1, "T": 4, "n_heads": 4, "d_head": 3, "seed": 1},
    {"B": 2, "T": 1, "n_heads": 2, "d_head": 2, "seed": 2},
])
def multi_head(impl, new, B, T, n_heads, d_head):
    d_model = n_heads * d_head
    args = _inputs(new, B, T, d_model, n_heads, n_heads, d_head)
    y, w = _call(impl, args, n_heads, n_heads, B, T, d_model)
    y_mha, w_mha = _attention_by_heads(*args, n_heads, kv_of=lambda h: h)
    against = "multi-head attention (query head h reads KV head h)"
    expect_close(w, w_mha, "weights", against=against)
    expect_close(y, y_mha, "y", against=against)


@check("works as multi-query attention when n_kv_heads == 1", [
    {"B": 2, "T": 5, "n_heads": 4, "d_head": 2, "seed": 0},
    {"B": 1, "T": 3, "n_heads": 3, "d_head": 3, "seed": 1},
    {"B": 1, "T": 1, "n_heads": 2, "d_head": 1, "seed": 2},
])
def multi_query(impl, new, B, T, n_heads, d_head):
    d_model = n_heads * d_head
    args = _inputs(new, B, T, d_model, n_heads, 1, d_head)
    y, w = _call(impl, args, n_heads, 1, B, T, d_model)
    y_mqa, w_mqa = _attention_by_heads(*args, n_heads, kv_of=lambda h: 0)
    against = "multi-query attention (every query head reads KV head 0)"
    expect_close(w, w_mqa, "weights", against=against)
    expect_close(y, y_mqa, "y", against=against)


def _key_heads(x, W_q, W_k, w, n_heads, n_kv_heads):
    """Which query head and which KV head produced each head's weights.

    Whatever the scale or the softmax's shift, log(weights) along a row is an affine
    function of that row's scores, so it correlates perfectly with the scores of the
    (query head, KV head) pair actually used (rows with at least 3 visible keys).
    Returns (query, kv): query[h] is the query head found in weights[:, h], and kv[c] the
    KV head that query head c was paired with; None where nothing fits.
    """
    B, T, _ = x.shape
    d_head = W_q.shape[1] // n_heads
    q = (x @ W_q).reshape(B, T, n_heads, d_head)
    k = (x @ W_k).reshape(B, T, n_kv_heads, d_head)
    s = np.einsum("bicd,bjgd->bcgij", q, k)[:, None]                  # (B, 1, H, G, T, T)
    visible = np.tril(np.ones((T, T), dtype=bool))
    with np.errstate(all="ignore"):
        w = np.asarray(w, dtype=np.float64)[:, :, None, None]          # (B, H, 1, 1, T, T)
        m = visible & np.isfinite(w) & (w > 0)
        a = np.where(m, np.log(np.where(m, w, 1.0)), 0.0)
        n = m.sum(-1, keepdims=True)
        da = np.where(m, a - (a * m).sum(-1, keepdims=True) / n, 0.0)
        ds = np.where(m, s - (s * m).sum(-1, keepdims=True) / n, 0.0)
        corr = (da * ds).sum(-1) / np.sqrt((da ** 2).sum(-1) * (ds ** 2).sum(-1))   # (B, H, H, G, T)
        usable = (n[..., 0] >= 3) & np.isfinite(corr)
        score = np.where(usable, corr, 0.0).sum((0, 4)) / usable.sum((0, 4))        # (H, H, G)
    score = np.where(np.isfinite(score), score, -1.0)
    query, kv = [None] * n_heads, [None] * n_heads
    for h in range(n_heads):
        c, g = np.unravel_index(int(np.argmax(score[h])), score[h].shape)
        if score[h, c, g] > 0.999:
            query[h], kv[int(c)] = int(c), int(g)
    return query, kv


def _value_heads(y, v, n_heads, n_kv_heads, d_head):
    """For each query head, the KV head whose values fill its slot of y (T = 1, W_o = I)."""
    found = []
    for h in range(n_heads):
        out = y[:, 0, h * d_head:(h + 1) * d_head]
        hits = [g for g in range(n_kv_heads)
                if np.allclose(out, v[:, 0, g * d_head:(g + 1) * d_head], *tolerance(np.float64))]
        found.append(hits[0] if len(hits) == 1 else None)
    return found


def _show(heads):
    return "[" + ", ".join("?" if g is None else str(g) for g in heads) + "]"


@check(GROUPING, [
    {"B": 2, "T": 6, "n_kv_heads": 2, "group": 2, "d_head": 3, "seed": 0},
    {"B": 2, "T": 6, "n_kv_heads": 3, "group": 2, "d_head": 3, "seed": 1},
    {"B": 2, "T": 6, "n_kv_heads": 4, "group": 2, "d_head": 3, "seed": 2},
    {"B": 2, "T": 6, "n_kv_heads": 2, "group": 3, "d_head": 3, "seed": 3},
    {"B": 2, "T": 6, "n_kv_heads": 2, "group": 4, "d_head": 3, "seed": 4},
], minimum={"T": 4, "B": 1, "d_head": 2})
def grouping(impl, new, B, T, n_kv_heads, group, d_head):
    n_heads = n_kv_heads * group
    d_model = n_heads * d_head
    x, W_q, W_k, W_v, _ = _inputs(new, B, T, d_model, n_heads, n_kv_heads, d_head, scale=2.0)
    # W_o = I puts each query head's output in its own columns of y
    W_o = new.let("W_o", np.eye(d_model), f"np.eye({d_model})")
    _, w = _call(impl, (x, W_q, W_k, W_v, W_o), n_heads, n_kv_heads, B, T, d_model)
    order, keys = _key_heads(x, W_q, W_k, w, n_heads, n_kv_heads)
    # one position: its output is exactly the value of the KV head it reads
    x1 = new.let("x1", x[:, :1].copy(), "x[:, :1].copy()")
    y1, _ = _call(impl, (x1, W_q, W_k, W_v, W_o), n_heads, n_kv_heads, B, 1, d_model)
    values = _value_heads(y1, x1 @ W_v, n_heads, n_kv_heads, d_head)

    expected = [h // group for h in range(n_heads)]
    interleaved = [h % n_kv_heads for h in range(n_heads)]
    wrong_k = any(g is not None and g != e for g, e in zip(keys, expected))
    wrong_v = any(g is not None and g != e for g, e in zip(values, expected))
    moved = any(c is not None and c != h for h, c in enumerate(order))
    if not (wrong_k or wrong_v):
        if moved:
            raise CheckFailed(f"weights[:, h] should be query head h's weights, but they come from query heads "
                              f"{_show(order)}: head h is columns h*d_head:(h+1)*d_head of x @ W_q, kept in order")
        return
    rule = (f"expected {expected}: query head h uses KV head h // (n_heads // n_kv_heads), "
            f"with n_heads={n_heads}, n_kv_heads={n_kv_heads}")
    parts = []
    if wrong_k:
        parts.append(f"keys from KV heads {_show(keys)}")
    if wrong_v:
        parts.append(f"values from KV heads {_show(values)}")
    message = f"query heads 0..{n_heads - 1} read {' and '.join(parts)}, {rule}"
    if (not wrong_k or keys == interleaved) and (not wrong_v or values == interleaved):
        message += ("; that interleaved order is what np.tile, or KV head h % n_kv_heads, gives; "
                    "np.repeat(k, n_heads // n_kv_heads, axis=1) keeps each group together")
    if moved:
        message += f"; the weights also come back in the order of query heads {_show(order)}, not 0..{n_heads - 1}"
    raise CheckFailed(message)


@check("rows of the weights sum to 1", CASES)
def rows_sum_to_one(impl, new, B, T, n_kv_heads, group, d_head):
    n_heads = n_kv_heads * group
    d_model = n_heads * d_head
    args = _inputs(new, B, T, d_model, n_heads, n_kv_heads, d_head, scale=3.0)
    _, w = _call(impl, args, n_heads, n_kv_heads, B, T, d_model)
    expect_rows_sum_to_one(w, "the weights")


@check("nothing attends to the future", CASES, minimum={"T": 5})  # a failure is drawn as a grid
def causal(impl, new, B, T, n_kv_heads, group, d_head):
    n_heads = n_kv_heads * group
    d_model = n_heads * d_head
    args = _inputs(new, B, T, d_model, n_heads, n_kv_heads, d_head)
    _, w = _call(impl, args, n_heads, n_kv_heads, B, T, d_model)
    expect_causal(w, what="the weights")


@check("earlier outputs do not change when later positions are cut off", [
    {"B": 2, "T": 6, "cut": 3, "n_kv_heads": 2, "group": 2, "d_head": 2, "seed": 0},
    {"B": 1, "T": 5, "cut": 1, "n_kv_heads": 1, "group": 3, "d_head": 3, "seed": 1},
    {"B": 2, "T": 7, "cut": 4, "n_kv_heads": 3, "group": 1, "d_head": 2, "dtype": "float32", "seed": 2},
], valid=lambda c: c["cut"] < c["T"])
def prefix(impl, new, B, T, cut, n_kv_heads, group, d_head, dtype="float64"):
    n_heads = n_kv_heads * group
    d_model = n_heads * d_head
    x, W_q, W_k, W_v, W_o = _inputs(new, B, T, d_model, n_heads, n_kv_heads, d_head, dtype)
    y, w = _call(impl, (x, W_q, W_k, W_v, W_o), n_heads, n_kv_heads, B, T, d_model)
    short = new.let("x_short", x[:, :cut].copy(), f"x[:, :{cut}].copy()")
    y_s, w_s = _call(impl, (short, W_q, W_k, W_v, W_o), n_heads, n_kv_heads, B, cut, d_model)
    expect_prefix_invariant([("the weights", w_s, w[:, :, :cut, :cut]), ("y", y_s, y[:, :cut])], cut, T, dtype)


@check("raises ValueError when n_heads does not divide W_q.shape[1]", [
    {"q_cols": 9, "n_heads": 2, "n_kv_heads": 1},
    {"q_cols": 8, "n_heads": 3, "n_kv_heads": 3},
    {"q_cols": 5, "n_heads": 4, "n_kv_heads": 2},
], shrink=False)
def heads_must_divide_width(impl, new, q_cols, n_heads, n_kv_heads):
    # the other matrices are as wide as a d_head of q_cols // n_heads would make them,
    # so only the check on W_q.shape[1] can notice
    d_model, d_head = 6, q_cols // n_heads
    x = new.normal("x", (2, 3, d_model))
    W_q = new.normal("W_q", (d_model, q_cols), scale=0.4)
    W_k = new.normal("W_k", (d_model, n_kv_heads * d_head), scale=0.4)
    W_v = new.normal("W_v", (d_model, n_kv_heads * d_head), scale=0.4)
    W_o = new.normal("W_o", (n_heads * d_head, d_model), scale=0.4)
    expect_raises(ValueError, impl.gqa, x, W_q, W_k, W_v, W_o, n_heads, n_kv_heads,
                  why=f"n_heads={n_heads} does not divide W_q.shape[1]={q_cols}")


@check("raises ValueError when n_kv_heads does not divide n_heads", [
    {"n_heads": 6, "n_kv_heads": 4, "d_head": 2},
    {"n_heads": 3, "n_kv_heads": 2, "d_head": 3},
    {"n_heads": 2, "n_kv_heads": 4, "d_head": 2},
], shrink=False)
def kv_heads_must_divide_heads(impl, new, n_heads, n_kv_heads, d_head):
    d_model = 5
    x = new.normal("x", (2, 3, d_model))
    W_q, W_k, W_v, W_o = (new.normal(name, shape, scale=0.4) for name, shape in [
        ("W_q", (d_model, n_heads * d_head)), ("W_k", (d_model, n_kv_heads * d_head)),
        ("W_v", (d_model, n_kv_heads * d_head)), ("W_o", (n_heads * d_head, d_model))])
    expect_raises(ValueError, impl.gqa, x, W_q, W_k, W_v, W_o, n_heads, n_kv_heads,
                  why=f"n_kv_heads={n_kv_heads} does not divide n_heads={n_heads}")


@check("leaves its inputs unchanged", [
    {"B": 2, "T": 4, "n_kv_heads": 2, "group": 2, "d_head": 3, "dtype": "float64"},
    {"B": 1, "T": 3, "n_kv_heads": 1, "group": 2, "d_head": 2, "dtype": "float32"},
])
def inputs_unchanged(impl, new, B, T, n_kv_heads, group, d_head, dtype):
    n_heads = n_kv_heads * group
    d_model = n_heads * d_head
    args = _inputs(new, B, T, d_model, n_heads, n_kv_heads, d_head, dtype)
    impl.gqa(*args, n_heads, n_kv_heads)
    expect_inputs_unchanged(impl)


@check("works past 1024 positions (judged on the last rows)", [{"seed": 0}], shrink=False, timeout=20,
       slow="a call at T = 1025")
def long_sequence(impl, new, ref):
    n_heads, n_kv_heads, d_head = 1, 1, 2
    small = _inputs(new, 1, 4, n_heads * d_head, n_heads, n_kv_heads, d_head, suffix="_short")
    args = _inputs(new, 1, 1025, n_heads * d_head, n_heads, n_kv_heads, d_head)
    # a short call first, so that a mask or buffer sized by the first call shows too
    expect_repeatable(impl, [(lambda: impl.gqa(*small, n_heads, n_kv_heads),
                              ref.gqa(*_f64(*small), n_heads, n_kv_heads)),
                             (lambda: impl.gqa(*args, n_heads, n_kv_heads), _last_rows(args, n_heads, n_kv_heads))],
                      names=("y", "weights"))


# ----------------------------------------------------------------------------- kv_cache_bytes

def _cache_bytes(impl, *args, **kwargs):
    out = impl.kv_cache_bytes(*args, **kwargs)
    shown = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
    if isinstance(out, (bool, np.bool_)) or not isinstance(out, (int, float, np.integer, np.floating)):
        raise CheckFailed(f"kv_cache_bytes({shown}) returned {out!r}, {kind_of(out)}; "
                          f"expected a number of bytes (an int)", kind="type")
    return out, f"kv_cache_bytes({shown})"


def _expect_bytes(got, want, src, why):
    if got != want:
        ratio = got / want if want else float("nan")
        hint = f" ({ratio:g} times the expected number)" if np.isfinite(ratio) and ratio > 0 else ""
        raise CheckFailed(f"{src} returned {got!r}, expected {want} {why}{hint}")


@check("kv_cache_bytes gives 128 KiB per token for 32 layers, 8 KV heads, d_head 128, 16-bit (512 KiB with 32)",
       shrink=False)
def cache_figures(impl, new):
    got, src = _cache_bytes(impl, 32, 8, 128, 1, bytes_per_value=2)
    _expect_bytes(got, 131072, src, "= 2 (keys and values) x 32 layers x 8 KV heads x 128 x 2 bytes, 128 KiB")
    got, src = _cache_bytes(impl, 32, 32, 128, 1, bytes_per_value=2)
    _expect_bytes(got, 524288, src, "= 2 (keys and values) x 32 layers x 32 KV heads x 128 x 2 bytes, 512 KiB")


@check("kv_cache_bytes counts 2 bytes per value (16-bit) by default", shrink=False)
def cache_default(impl, new):
    for args, want in [((32, 8, 128, 1), 131072), ((2, 3, 5, 7), 2 * 2 * 3 * 5 * 7 * 2)]:
        got, src = _cache_bytes(impl, *args)
        if got == want:
            continue
        explicit, src2 = _cache_bytes(impl, *args, bytes_per_value=2)
        if explicit == want:
            raise CheckFailed(f"{src} returned {got!r}, but {src2} returned {want}: the default "
                              f"bytes_per_value is not 2 (16-bit values)")
        _expect_bytes(got, want, src, "= 2 x layers x kv_heads x d_head x 2 bytes (the default) x n_tokens")


@check("kv_cache_bytes grows linearly with the number of tokens", shrink=False)
def cache_linear(impl, new):
    one, src1 = _cache_bytes(impl, 32, 8, 128, 1, bytes_per_value=2)
    for n in (8192, 3):
        many, src = _cache_bytes(impl, 32, 8, 128, n, bytes_per_value=2)
        if many != n * one:
            raise CheckFailed(f"{src} returned {many!r}, but {src1} returned {one!r}: {n} tokens "
                              f"must take {n} times the bytes of one")


@check("kv_cache_bytes agrees with 2 x layers x kv_heads x d_head x bytes x tokens on other sizes", [
    {"n_layers": 1, "n_kv_heads": 1, "d_head": 1, "n_tokens": 1, "bytes_per_value": 2},
    {"n_layers": 3, "n_kv_heads": 5, "d_head": 7, "n_tokens": 11, "bytes_per_value": 4},
    {"n_layers": 80, "n_kv_heads": 8, "d_head": 128, "n_tokens": 131072, "bytes_per_value": 1},
    {"n_layers": 2, "n_kv_heads": 3, "d_head": 64, "n_tokens": 4096, "bytes_per_value": 2},
], shrink=False)
def cache_other_sizes(impl, new, ref, n_layers, n_kv_heads, d_head, n_tokens, bytes_per_value):
    got, src = _cache_bytes(impl, n_layers, n_kv_heads, d_head, n_tokens, bytes_per_value=bytes_per_value)
    _expect_bytes(got, ref.kv_cache_bytes(n_layers, n_kv_heads, d_head, n_tokens, bytes_per_value),
                  src, "= 2 x layers x kv_heads x d_head x bytes_per_value x n_tokens")


@check("kv_cache_bytes returns an int", shrink=False)
def cache_int(impl, new):
    for args in [(32, 8, 128, 1), (3, 5, 7, 11)]:
        got, src = _cache_bytes(impl, *args, bytes_per_value=2)
        if not isinstance(got, (int, np.integer)):
            raise CheckFailed(f"{src} returned {got!r}, {kind_of(got)}; a number of bytes is an int "
                              f"(a Python or a NumPy integer)")
