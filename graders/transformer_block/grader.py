"""Grader for transformer_block(x, params, n_heads, n_kv_heads, positions=None, eps=1e-6, base=10000.0).

Sizes are given as n_kv_heads, group (query heads per KV head) and d_half (d_head = 2 * d_half),
so that a shrunk failing case is always a valid call; d_model and d_ff are free, and most cases
keep d_model != n_heads * d_head and d_ff != d_model so that a wrong size changes a shape.
"""
import numpy as np

from graders.engine.vocabulary import (
    CheckFailed,
    check,
    expect_close,
    expect_finite,
    expect_inputs_unchanged,
    expect_prefix_invariant,
    expect_raises,
    expect_shape,
    tolerance,
)

CALL = "transformer_block(x, params, {}, {})"
CASES = [
    {"B": 2, "T": 5, "n_kv_heads": 2, "group": 2, "d_half": 2, "d_model": 6, "d_ff": 10, "seed": 0},
    {"B": 1, "T": 1, "n_kv_heads": 1, "group": 1, "d_half": 1, "d_model": 3, "d_ff": 5, "seed": 1},
    {"B": 3, "T": 7, "n_kv_heads": 1, "group": 3, "d_half": 3, "d_model": 5, "d_ff": 7, "seed": 2},
    {"B": 2, "T": 6, "n_kv_heads": 3, "group": 1, "d_half": 2, "d_model": 12, "d_ff": 9, "seed": 3},
    {"B": 1, "T": 4, "n_kv_heads": 2, "group": 3, "d_half": 1, "d_model": 7, "d_ff": 4, "seed": 4},
]
DTYPES = [dict(c, dtype=d) for c in CASES for d in ("float64", "float32")]
SMALL = {"B": 2, "T": 4, "n_kv_heads": 2, "group": 2, "d_half": 2, "d_model": 5, "d_ff": 6}
VARIANTS = [
    ({"interleaved": True}, "that is RoPE with the interleaved pairing (x[2i], x[2i+1]) in each head; the contract "
                            "pairs feature i with feature i + d_head/2"),
    ({"rope_values": True}, "that is what turning the values by RoPE as well gives; only queries and keys are "
                            "rotated"),
    ({"rope_width": True}, "that is RoPE over all n_heads * d_head features at once; each head of size d_head is "
                           "rotated on its own"),
]


# ----------------------------------------------------------------------------- inputs

def _layer(new, B, T, n_kv_heads, group, d_half, d_model, d_ff, dtype="float64", qk=1.5, tag=""):
    """x and the params dict, every array registered (its name ending in `tag`) so that a repro
    rebuilds it."""
    n_heads, d_head = n_kv_heads * group, 2 * d_half
    x = new.normal(f"x{tag}", (B, T, d_model), dtype=dtype)
    cast = "" if dtype == "float64" else f".astype(np.{dtype})"
    p = {}
    for name, shape, scale in [
            ("attn_norm", (d_model,), None), ("W_q", (d_model, n_heads * d_head), qk / d_model ** 0.5),
            ("W_k", (d_model, n_kv_heads * d_head), qk / d_model ** 0.5),
            ("W_v", (d_model, n_kv_heads * d_head), d_model ** -0.5),
            ("W_o", (n_heads * d_head, d_model), (n_heads * d_head) ** -0.5), ("ffn_norm", (d_model,), None),
            ("W_gate", (d_model, d_ff), d_model ** -0.5), ("W_up", (d_model, d_ff), d_model ** -0.5),
            ("W_down", (d_ff, d_model), d_ff ** -0.5)]:
        if scale is None:   # a norm scale near 1, a different value for each feature
            value = (1 + 0.3 * new.rng.standard_normal(shape)).astype(dtype)
            p[name] = new.let(f"{name}{tag}", value, f"(1 + 0.3 * rng.standard_normal({shape})){cast}")
        else:
            p[name] = new.normal(f"{name}{tag}", shape, scale=float(scale), dtype=dtype)
    return x, _params(new, p, f"params{tag}"), n_heads


def _params(new, p, name="params"):
    return new.let(name, p, "dict(" + ", ".join(f"{k}={new.name_of(v) or k}" for k, v in p.items()) + ")")


def _replaced(new, params, name, **arrays):
    """A copy of params with some entries replaced by registered arrays."""
    return _params(new, {**params, **arrays}, name)


def _projections(new, tag, d_model, q_cols, kv_cols, o_rows=None):
    """W_q, W_k, W_v and W_o of the given widths (named W_q_TAG, ...), for sizes that must be refused."""
    return {"W_q": new.normal(f"W_q_{tag}", (d_model, q_cols), scale=0.5),
            "W_k": new.normal(f"W_k_{tag}", (d_model, kv_cols), scale=0.5),
            "W_v": new.normal(f"W_v_{tag}", (d_model, kv_cols), scale=0.5),
            "W_o": new.normal(f"W_o_{tag}", (q_cols if o_rows is None else o_rows, d_model), scale=0.5)}


def _positions(new, T, top, name="positions"):
    """Unsorted int positions in [0, top], one repeated when T >= 3."""
    p = new.rng.integers(0, top + 1, size=T)
    if T >= 3:
        p[-1] = p[0]
    return new.array(name, p.astype(np.int64))


def _f64(x, params):
    return np.asarray(x, np.float64), {k: np.asarray(v, np.float64) for k, v in params.items()}


def _run(impl, x, params, n_heads, n_kv_heads, what=None, **kw):
    """The attempt's output, its shape checked."""
    what = what or CALL.format(n_heads, n_kv_heads)
    return expect_shape(impl.transformer_block(x, params, n_heads, n_kv_heads, **kw), x.shape, what)


# ----------------------------------------------------------------------------- known variants

def _variant(x, p, n_heads, n_kv_heads, positions=None, eps=1e-6, base=10000.0, rows=None,
             interleaved=False, rope_values=False, rope_width=False):
    """The block in float64, with one RoPE convention changed to say what an attempt computed;
    with `rows`, the output of those rows only (each sees the rows up to itself), which for a
    long sequence costs O(T) rather than O(T^2)."""
    x, p = _f64(x, p)
    B, T, _ = x.shape
    d_head = p["W_q"].shape[1] // n_heads
    pos = (np.arange(T) if positions is None else np.asarray(positions)).astype(np.float64)
    rows = np.arange(T) if rows is None else np.asarray(rows)

    def rope(t, d, at):   # t (B, len(at), n * d): every block of d features is rotated on its own
        ang = at[:, None] * base ** (-2.0 * np.arange(d // 2) / d)
        t = t.reshape(B, len(at), -1, d)
        c, s = np.cos(ang)[:, None], np.sin(ang)[:, None]
        a, b = (t[..., 0::2], t[..., 1::2]) if interleaved else (t[..., :d // 2], t[..., d // 2:])
        out = np.concatenate([a * c - b * s, b * c + a * s], axis=-1)
        if interleaved:
            out = np.stack([out[..., :d // 2], out[..., d // 2:]], axis=-1)
        return out.reshape(B, len(at), -1)

    def turn(t, at):
        return rope(t, t.shape[-1] if rope_width else d_head, at)

    def heads(t):
        return t.reshape(B, t.shape[1], -1, d_head).transpose(0, 2, 1, 3)

    def norm(t, w):
        return t / np.sqrt(np.mean(t * t, axis=-1, keepdims=True) + eps) * w

    a = norm(x, p["attn_norm"])
    group = n_heads // n_kv_heads
    q, k = heads(turn(a[:, rows] @ p["W_q"], pos[rows])), np.repeat(heads(turn(a @ p["W_k"], pos)), group, axis=1)
    v = np.repeat(heads(turn(a @ p["W_v"], pos) if rope_values else a @ p["W_v"]), group, axis=1)
    future = np.where(np.arange(T)[None, :] > rows[:, None], -np.inf, 0.0)        # (rows, T)
    s = q @ k.swapaxes(-1, -2) / np.sqrt(d_head) + future
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    ctx = ((w / w.sum(axis=-1, keepdims=True)) @ v).transpose(0, 2, 1, 3).reshape(B, len(rows), -1)
    h = x[:, rows] + ctx @ p["W_o"]
    f = norm(h, p["ffn_norm"])
    g = f @ p["W_gate"]
    with np.errstate(over="ignore"):
        return h + (g / (1 + np.exp(-g)) * (f @ p["W_up"])) @ p["W_down"]


def expect_block_close(out, expected, what, dtype, x, params, n_heads, n_kv_heads, **kw):
    """expect_close, naming a known RoPE variant when the attempt computed exactly that."""
    try:
        return expect_close(out, expected, what, dtype)
    except CheckFailed as failure:
        if failure.kind != "close":
            raise
        rtol, atol = tolerance(dtype)
        for flags, meaning in VARIANTS:
            if flags.get("interleaved") and params["W_q"].shape[1] // n_heads < 4:
                continue   # with d_head = 2 the two pairings are the same
            other = _variant(x, params, n_heads, n_kv_heads, **kw, **flags)
            if np.allclose(np.asarray(out, np.float64), other, rtol=rtol, atol=atol):
                raise CheckFailed(f"{failure.message}: {meaning}", kind="close") from None
        raise


# ----------------------------------------------------------------------------- the checks

@check("returns an array of shape (B, T, d_model)", CASES[::2])
def shape(impl, new, B, T, n_kv_heads, group, d_half, d_model, d_ff):
    x, params, n_heads = _layer(new, B, T, n_kv_heads, group, d_half, d_model, d_ff)
    _run(impl, x, params, n_heads, n_kv_heads)


@check("agrees with the reference", DTYPES)
def agrees(impl, new, ref, B, T, n_kv_heads, group, d_half, d_model, d_ff, dtype):
    x, params, n_heads = _layer(new, B, T, n_kv_heads, group, d_half, d_model, d_ff, dtype)
    expected = ref.transformer_block(*_f64(x, params), n_heads, n_kv_heads)
    out = _run(impl, x, params, n_heads, n_kv_heads)
    expect_block_close(out, expected, CALL.format(n_heads, n_kv_heads), dtype, x, params, n_heads, n_kv_heads)


@check("causal: changing the later rows of x leaves the earlier outputs unchanged", [
    {"B": 1, "T": 5, "t": 1, "n_kv_heads": 1, "group": 3, "d_half": 1, "d_model": 4, "d_ff": 3, "seed": 1},
    {"B": 2, "T": 7, "t": 4, "n_kv_heads": 3, "group": 1, "d_half": 3, "d_model": 6, "d_ff": 5, "seed": 2},
], valid=lambda c: c["t"] < c["T"])
def causal(impl, new, B, T, t, n_kv_heads, group, d_half, d_model, d_ff):
    x, params, n_heads = _layer(new, B, T, n_kv_heads, group, d_half, d_model, d_ff)
    later = new.normal("later", (B, T - t, d_model), scale=3.0)
    x2 = new.let("x_changed", np.concatenate([x[:, :t], later], axis=1), f"np.concatenate([x[:, :{t}], later], axis=1)")
    out = _run(impl, x, params, n_heads, n_kv_heads)
    out2 = _run(impl, x2, params, n_heads, n_kv_heads, CALL.format(n_heads, n_kv_heads).replace("(x,", "(x_changed,"))
    bad = ~np.isclose(np.asarray(out2[:, :t], np.float64), np.asarray(out[:, :t], np.float64), rtol=1e-6, atol=1e-9)
    if np.any(bad):
        b, i, j = (int(v) for v in np.argwhere(bad)[0])
        raise CheckFailed(f"changing rows {t}..{T - 1} of x changed the output of row {i} (batch {b}, feature {j}: "
                          f"{float(out[b, i, j]):.6g} before, {float(out2[b, i, j]):.6g} after): a row may only "
                          f"depend on itself and the rows before it")


@check("prefix invariance: the first t rows of x alone give the first t outputs", [
    dict(SMALL, T=6, t=2, seed=3),
    dict(SMALL, T=5, t=4, dtype="float32", seed=5),
], valid=lambda c: c["t"] < c["T"])
def prefix(impl, new, B, T, t, n_kv_heads, group, d_half, d_model, d_ff, dtype="float64"):
    x, params, n_heads = _layer(new, B, T, n_kv_heads, group, d_half, d_model, d_ff, dtype)
    short = new.let("x_short", x[:, :t].copy(), f"x[:, :{t}].copy()")
    out = _run(impl, x, params, n_heads, n_kv_heads)
    call = CALL.format(n_heads, n_kv_heads).replace("(x,", "(x_short,")
    out_short = _run(impl, short, params, n_heads, n_kv_heads, call)
    expect_prefix_invariant([("the output", out_short, out[:, :t])], t, T, dtype)


@check("adding a constant to every position changes nothing", [
    {"B": 1, "T": 4, "n_kv_heads": 1, "group": 2, "d_half": 3, "d_model": 6, "d_ff": 5, "shift": 123457, "seed": 1},
    {"B": 2, "T": 1, "n_kv_heads": 2, "group": 1, "d_half": 2, "d_model": 3, "d_ff": 4, "shift": 7, "seed": 2},
    dict(SMALL, T=6, shift=137, dtype="float32", seed=3),
], valid=lambda c: c["shift"] in (123457, 7, 137))   # shrink the sizes, not the shift
def shift(impl, new, B, T, n_kv_heads, group, d_half, d_model, d_ff, shift, dtype="float64"):
    x, params, n_heads = _layer(new, B, T, n_kv_heads, group, d_half, d_model, d_ff, dtype)
    positions = _positions(new, T, 60)
    moved = new.let("moved", positions + shift, f"positions + {shift}")
    call = CALL.format(n_heads, n_kv_heads)[:-1]
    out = _run(impl, x, params, n_heads, n_kv_heads, f"{call}, positions)", positions=positions)
    out2 = _run(impl, x, params, n_heads, n_kv_heads, f"{call}, moved)", positions=moved)
    rtol, atol = tolerance(dtype)
    bad = ~np.isclose(np.asarray(out2, np.float64), np.asarray(out, np.float64), rtol=rtol, atol=atol)
    if np.any(bad):
        b, i, j = (int(v) for v in np.argwhere(bad)[0])
        why = (": with a single row every attention weight is 1 whatever q and k are, so turning q and k cannot "
               "change anything; something else was rotated" if T == 1 else
               ": RoPE makes each score depend only on the difference of two positions")
        raise CheckFailed(f"adding {shift} to every position changed the output at batch {b}, row {i}, feature {j} "
                          f"from {float(out[b, i, j]):.6g} to {float(out2[b, i, j]):.6g}{why}")


def _zeroed(new, params, *names):
    return _replaced(new, params, "zeroed", **{
        n: new.let(f"zero_{n}", np.zeros_like(params[n]), f"np.zeros_like({n})") for n in names})


@check("all-zero W_o and W_down give x back", [
    {"B": 1, "T": 5, "n_kv_heads": 1, "group": 2, "d_half": 1, "d_model": 7, "d_ff": 3, "seed": 1},
    dict(SMALL, dtype="float32", seed=2),
])
def zero_sublayers(impl, new, B, T, n_kv_heads, group, d_half, d_model, d_ff, dtype="float64"):
    x, params, n_heads = _layer(new, B, T, n_kv_heads, group, d_half, d_model, d_ff, dtype)
    zeroed = _zeroed(new, params, "W_o", "W_down")
    out = _run(impl, x, zeroed, n_heads, n_kv_heads, CALL.format(n_heads, n_kv_heads).replace("params", "zeroed"))
    try:
        expect_close(out, x.astype(np.float64), "the output with W_o and W_down all zero", dtype, against="x")
    except CheckFailed as failure:
        if failure.kind != "close":
            raise
        got, (x64, p) = np.asarray(out, np.float64), _f64(x, params)
        rtol, atol = tolerance(dtype)

        def norm(t, w):
            return t / np.sqrt(np.mean(t * t, axis=-1, keepdims=True) + 1e-6) * w
        message = failure.message
        if np.allclose(got, 0, atol=atol):
            message += "; every entry is 0: both sub-layers give 0 here, so only the residual connections carry x"
        elif np.allclose(got, norm(norm(x64, p["attn_norm"]), p["ffn_norm"]), rtol=rtol, atol=atol):
            message += "; it is x normalised twice: RMSNorm is applied after adding to the stream (post-norm)"
        raise CheckFailed(message, kind="close") from None


@check("each sub-layer adds its output to the stream: x + attention with W_down = 0, x + feed-forward with W_o = 0", [
    dict(SMALL, T=4, seed=0),
    {"B": 1, "T": 3, "n_kv_heads": 1, "group": 1, "d_half": 2, "d_model": 5, "d_ff": 7, "seed": 1},
])
def residuals(impl, new, ref, B, T, n_kv_heads, group, d_half, d_model, d_ff):
    x, params, n_heads = _layer(new, B, T, n_kv_heads, group, d_half, d_model, d_ff)
    for zero, part in (("W_down", "attention"), ("W_o", "feed-forward")):
        only = _zeroed(new, params, zero)
        expected = ref.transformer_block(x, only, n_heads, n_kv_heads)
        out = _run(impl, x, only, n_heads, n_kv_heads, CALL.format(n_heads, n_kv_heads).replace("params", "zeroed"))
        try:
            expect_close(out, expected, f"the output with {zero} all zero (x + {part})")
        except CheckFailed as failure:
            if failure.kind != "close":
                raise
            if np.allclose(out, expected - x, rtol=1e-6, atol=1e-9):
                why = f"it is the {part} sub-layer's output alone: x is not added back (the {part} residual is missing)"
            elif np.allclose(out, 0, atol=1e-9):
                why = "every entry is 0: x is lost on the way, so a residual connection is missing"
            else:
                raise
            raise CheckFailed(f"{failure.message}; {why}", kind="close") from None


@check("stays finite and correct when scores reach the thousands (both signs)", [
    {"B": 2, "T": 5, "n_heads": 2, "d_half": 2, "d_model": 6, "d_ff": 5, "dtype": "float64", "seed": 0},
    {"B": 1, "T": 4, "n_heads": 3, "d_half": 1, "d_model": 4, "d_ff": 3, "dtype": "float32", "seed": 1},
], minimum={"T": 2})
def large_scores(impl, new, ref, B, T, n_heads, d_half, d_model, d_ff, dtype):
    x, params, _ = _layer(new, B, T, n_heads, 1, d_half, d_model, d_ff, dtype, qk=25.0)
    # W_k = -W_q: every row's score with itself is -|q|^2 / sqrt(d_head), far below zero
    params = _replaced(new, params, "big", W_k=new.let("W_k_neg", -params["W_q"], "-W_q"))
    expected = ref.transformer_block(*_f64(x, params), n_heads, n_heads)
    out = _run(impl, x, params, n_heads, n_heads, CALL.format(n_heads, n_heads).replace("params", "big"))
    expect_finite(out, "the output with scores in the thousands")
    expect_close(out, expected, "the output with scores in the thousands", dtype, extreme=True)


@check("a row of zeros in x (a padding position) gives a finite output that agrees", [
    dict(SMALL, T=4, seed=0),
    {"B": 1, "T": 3, "n_kv_heads": 1, "group": 2, "d_half": 1, "d_model": 5, "d_ff": 3, "dtype": "float32", "seed": 1},
])
def zero_row(impl, new, ref, B, T, n_kv_heads, group, d_half, d_model, d_ff, dtype="float64"):
    x, params, n_heads = _layer(new, B, T, n_kv_heads, group, d_half, d_model, d_ff, dtype)
    x0 = new.let("x_zero", np.concatenate([np.zeros_like(x[:, :1]), x[:, 1:]], axis=1),
                 "np.concatenate([np.zeros_like(x[:, :1]), x[:, 1:]], axis=1)  # row 0 is all zeros")
    expected = ref.transformer_block(*_f64(x0, params), n_heads, n_kv_heads)
    call = CALL.format(n_heads, n_kv_heads).replace("(x,", "(x_zero,")
    out = expect_finite(_run(impl, x0, params, n_heads, n_kv_heads, call), f"{call}, whose row 0 is all zeros,")
    expect_close(out, expected, call, dtype)


@check("uses the positions, base and eps it is given", [
    {"B": 1, "T": 4, "n_kv_heads": 1, "group": 2, "d_half": 3, "d_model": 7, "d_ff": 4, "top": 100000, "seed": 1},
    dict(SMALL, T=3, top=150, dtype="float32", seed=2),
], valid=lambda c: c["top"] in (100000, 150))   # shrink the sizes, not the largest position
def positions_base_eps(impl, new, ref, B, T, n_kv_heads, group, d_half, d_model, d_ff, top, dtype="float64"):
    x, params, n_heads = _layer(new, B, T, n_kv_heads, group, d_half, d_model, d_ff, dtype)
    positions = _positions(new, T, top)
    x64, p64 = _f64(x, params)
    call = CALL.format(n_heads, n_kv_heads)[:-1] + ", positions"
    for kw, shown in [({}, ""), ({"base": 500.0}, ", base=500.0"), ({"eps": 0.25}, ", eps=0.25")]:
        expected = ref.transformer_block(x64, p64, n_heads, n_kv_heads, positions, **kw)
        out = _run(impl, x, params, n_heads, n_kv_heads, f"{call}{shown})", positions=positions, **kw)
        expect_block_close(out, expected, f"{call}{shown})", dtype, x, params, n_heads, n_kv_heads,
                           positions=positions, **kw)


@check("long sequences: T beyond 1024 positions", [{"T": 1030, "seed": 0}], shrink=False)
def long_sequence(impl, new, T):
    # unrecorded: replaying an O(T^2) call for every known bug would make the diagnosis crawl
    x, params, n_heads = _layer(new, 1, T, 1, 1, 1, 3, 2)
    rows = [0, 1, T // 2, T - 2, T - 1]     # worked out alone: each row sees the rows up to itself
    try:
        with impl.unrecorded():
            out = _run(impl, x, params, n_heads, 1)
        expect_close(np.asarray(out)[:, rows], _variant(x, params, n_heads, 1, rows=rows),
                     f"rows {rows} of {CALL.format(n_heads, 1)} with T = {T}")
    except CheckFailed as failure:
        # the first 1024 rows alone, judged at the same kind of rows: if those come out right, the
        # length itself is the trouble (a table or a buffer of 1024 positions)
        head = new.let("x_1024", x[:, :1024].copy(), "x[:, :1024].copy()")
        inside = [0, 1, 512, 1022, 1023]
        try:
            with impl.unrecorded():
                short = _run(impl, head, params, n_heads, 1, CALL.format(n_heads, 1).replace("(x,", "(x_1024,"))
            expect_close(np.asarray(short)[:, inside], _variant(head, params, n_heads, 1, rows=inside), "")
        except CheckFailed:
            raise failure from None
        raise CheckFailed(f"{failure.message}; with the first 1024 rows alone, rows {inside} are right, so the "
                          f"length breaks it", kind=failure.kind, bug="table_of_1024_positions") from None


@check("raises ValueError when n_heads does not divide W_q.shape[1]", [
    {"q_cols": 9, "n_heads": 2, "n_kv_heads": 1}, {"q_cols": 8, "n_heads": 3, "n_kv_heads": 3},
], shrink=False)
def raises_heads(impl, new, q_cols, n_heads, n_kv_heads):
    x, params, _ = _layer(new, 2, 3, n_kv_heads, 1, 1, 4, 5)
    d_head = q_cols // n_heads    # W_k, W_v and W_o as wide as that d_head would make them
    bad = _projections(new, "bad", 4, q_cols, n_kv_heads * d_head, n_heads * d_head)
    expect_raises(ValueError, impl.transformer_block, x, _replaced(new, params, "bad", **bad), n_heads, n_kv_heads,
                  why=f"n_heads={n_heads} does not divide W_q.shape[1]={q_cols}")


@check("raises ValueError when n_kv_heads does not divide n_heads", [
    {"n_heads": 6, "n_kv_heads": 4}, {"n_heads": 2, "n_kv_heads": 4},
], shrink=False)
def raises_kv_heads(impl, new, n_heads, n_kv_heads):
    x, params, _ = _layer(new, 2, 3, 1, 1, 1, 5, 4)
    bad = _projections(new, "bad", 5, n_heads * 2, n_kv_heads * 2)
    expect_raises(ValueError, impl.transformer_block, x, _replaced(new, params, "bad", **bad), n_heads, n_kv_heads,
                  why=f"n_kv_heads={n_kv_heads} does not divide n_heads={n_heads}")


@check("raises ValueError when d_head is odd (RoPE needs pairs)", [
    {"n_heads": 2, "n_kv_heads": 1, "d_head": 3}, {"n_heads": 4, "n_kv_heads": 2, "d_head": 5},
], shrink=False)
def raises_odd_head(impl, new, n_heads, n_kv_heads, d_head):
    x, params, _ = _layer(new, 1, 3, 1, 1, 1, 6, 4)
    bad = _projections(new, "odd", 6, n_heads * d_head, n_kv_heads * d_head)
    expect_raises(ValueError, impl.transformer_block, x, _replaced(new, params, "odd", **bad), n_heads, n_kv_heads,
                  why=f"d_head={d_head} is odd: RoPE cannot split it into pairs")


@check("leaves x, positions and params (its arrays and its keys) unchanged", [
    dict(SMALL, T=4, dtype="float64", seed=0),
    {"B": 1, "T": 3, "n_kv_heads": 1, "group": 2, "d_half": 1, "d_model": 3, "d_ff": 5, "dtype": "float32", "seed": 1},
])
def inputs_unchanged(impl, new, B, T, n_kv_heads, group, d_half, d_model, d_ff, dtype):
    x, params, n_heads = _layer(new, B, T, n_kv_heads, group, d_half, d_model, d_ff, dtype)
    positions = _positions(new, T, 30)
    impl.transformer_block(x, params, n_heads, n_kv_heads, positions)
    impl.transformer_block(x, params, n_heads, n_kv_heads)
    expect_inputs_unchanged(impl)
