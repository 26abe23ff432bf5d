"""Grader for moe_layer(x, W_router, experts, top_k=2) and load_balancing_loss(router_logits, top_k=2).

Sizes are small (a few experts of width up to 7), so every check runs in milliseconds. Cases keep
d_model, d_ff and n_experts apart so that a transposed weight changes a shape instead of hiding.
"""
import numpy as np

from graders.engine.vocabulary import (
    CheckFailed,
    check,
    expect_close,
    expect_finite,
    expect_inputs_unchanged,
    expect_raises,
    expect_shape,
    kind_of,
    tolerance,
)

CASES = [
    {"lead": (5,), "d_model": 4, "d_ff": 6, "n_experts": 4, "top_k": 2, "seed": 0},
    {"lead": (), "d_model": 3, "d_ff": 5, "n_experts": 3, "top_k": 1, "seed": 1},
    {"lead": (2, 3), "d_model": 5, "d_ff": 3, "n_experts": 5, "top_k": 3, "seed": 2},
    {"lead": (7,), "d_model": 1, "d_ff": 2, "n_experts": 3, "top_k": 2, "seed": 3},
    {"lead": (1,), "d_model": 2, "d_ff": 4, "n_experts": 1, "top_k": 1, "seed": 4},
]
DTYPES = [dict(c, dtype=d) for c in CASES for d in ("float64", "float32")]


def fits(case):
    return 1 <= case["top_k"] <= case["n_experts"]


# ----------------------------------------------------------------------------- inputs

def _experts(new, d_model, d_ff, n_experts, dtype="float64", scale=1.0, prefix=""):
    """n_experts SwiGLU experts, each array registered; the list is registered as `{prefix}experts`."""
    arrays = [new.normal(f"{prefix}{name}{e}", shape, scale=float(scale * shape[0] ** -0.5), dtype=dtype)
              for e in range(n_experts)
              for name, shape in (("W_gate", (d_model, d_ff)), ("W_up", (d_model, d_ff)), ("W_down", (d_ff, d_model)))]
    return _expert_list(new, arrays, f"{prefix}experts")


def _expert_list(new, arrays, name="experts"):
    """The list of (W_gate, W_up, W_down) tuples made of registered arrays, three per expert."""
    experts = [tuple(arrays[i:i + 3]) for i in range(0, len(arrays), 3)]
    shown = ", ".join("(" + ", ".join(new.name_of(w) for w in e) + ")" for e in experts)
    return new.let(name, experts, f"[{shown}]")


def _layer(new, lead, d_model, d_ff, n_experts, dtype="float64"):
    x = new.normal("x", (*lead, d_model), dtype=dtype)
    W_router = new.normal("W_router", (d_model, n_experts), scale=float(2.0 / np.sqrt(d_model)), dtype=dtype)
    return x, W_router, _experts(new, d_model, d_ff, n_experts, dtype)


def _f64(x, W_router, experts):
    return (np.asarray(x, np.float64), np.asarray(W_router, np.float64),
            [tuple(np.asarray(w, np.float64) for w in e) for e in experts])


def _run(impl, x, W_router, experts, top_k, what=None):
    """The attempt's output, its shape checked; top_k 2 is left to the default."""
    kw = {} if top_k == 2 else {"top_k": top_k}
    what = what or f"moe_layer(x, W_router, experts{'' if top_k == 2 else f', top_k={top_k}'})"
    return expect_shape(impl.moe_layer(x, W_router, experts, **kw), x.shape, what)


def _route64(x, W_router, top_k, higher_first=False):
    """Probabilities (N, E) and picks (N, k) in float64; higher_first breaks ties the wrong way."""
    logits = np.asarray(x, np.float64).reshape(-1, W_router.shape[0]) @ np.asarray(W_router, np.float64)
    p = np.exp(logits - logits.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    order = np.argsort(p, axis=-1, kind="stable")[:, ::-1] if higher_first else np.argsort(-p, axis=-1, kind="stable")
    return p, order[:, :top_k]


def _mix64(x, W_router, experts, top_k, higher_first=False, dense=False):
    """The layer in float64, dense (softmax weights over every expert) or with a tie rule of choice."""
    x, W_router, experts = _f64(x, W_router, experts)
    tokens = x.reshape(-1, x.shape[-1])
    p, picked = _route64(tokens, W_router, top_k, higher_first)
    out = np.zeros(tokens.shape)
    top = np.take_along_axis(p, picked, -1)                             # (N, k) picked probabilities
    for e, (W_gate, W_up, W_down) in enumerate(experts):
        # e's weight: its softmax probability (dense), or its renormalised one where picked, else 0
        w = p[:, e] if dense else np.where(picked == e, top, 0).sum(-1) / top.sum(-1)
        g = tokens @ W_gate
        out += w[:, None] * ((g / (1 + np.exp(-g)) * (tokens @ W_up)) @ W_down)
    return out.reshape(x.shape)


# ----------------------------------------------------------------------------- moe_layer

@check("returns an array of x's shape: one token, a list of tokens, (B, T, d_model)", CASES[:3], valid=fits)
def shape(impl, new, lead, d_model, d_ff, n_experts, top_k):
    x, W_router, experts = _layer(new, lead, d_model, d_ff, n_experts)
    _run(impl, x, W_router, experts, top_k)


@check("agrees with the reference", DTYPES, valid=fits)
def agrees(impl, new, ref, lead, d_model, d_ff, n_experts, top_k, dtype):
    x, W_router, experts = _layer(new, lead, d_model, d_ff, n_experts, dtype)
    expected = ref.moe_layer(*_f64(x, W_router, experts), top_k)
    out = _run(impl, x, W_router, experts, top_k)
    expect_close(out, expected, "moe_layer(x, W_router, experts, ...)", dtype)


@check("top_k == n_experts is the dense softmax mixture of every expert", [
    {"lead": (4,), "d_model": 4, "d_ff": 3, "n_experts": 3, "seed": 0},
    {"lead": (5,), "d_model": 3, "d_ff": 4, "n_experts": 4, "dtype": "float32", "seed": 2},
])
def dense(impl, new, lead, d_model, d_ff, n_experts, dtype="float64"):
    x, W_router, experts = _layer(new, lead, d_model, d_ff, n_experts, dtype)
    out = _run(impl, x, W_router, experts, n_experts)
    expect_close(out, _mix64(x, W_router, experts, n_experts, dense=True),
                 f"moe_layer(x, W_router, experts, top_k={n_experts})", dtype,
                 against="the dense mixture sum_e softmax(x @ W_router)_e * swiglu_e(x)")


@check("permuting the experts together with the router's columns changes nothing", [
    {"lead": (6,), "d_model": 4, "d_ff": 5, "n_experts": 4, "top_k": 2, "seed": 0},
    {"lead": (2, 3), "d_model": 3, "d_ff": 2, "n_experts": 5, "top_k": 1, "seed": 1},
], valid=fits, minimum={"n_experts": 2})
def permuted(impl, new, lead, d_model, d_ff, n_experts, top_k):
    x, W_router, experts = _layer(new, lead, d_model, d_ff, n_experts)
    order = np.roll(np.arange(n_experts), 1)                     # a cycle: every expert moves
    new.array("perm", order)                                     # named: the repro writes W_router[:, perm]
    W_perm = new.let("W_router_perm", W_router[:, order], "W_router[:, perm]")
    experts_perm = new.let("experts_perm", [experts[i] for i in order], "[experts[i] for i in perm]")
    out = _run(impl, x, W_router, experts, top_k)
    what = f"moe_layer(x, W_router_perm, experts_perm, top_k={top_k})"
    out2 = _run(impl, x, W_perm, experts_perm, top_k, what)
    bad = ~np.isclose(np.asarray(out2, np.float64), np.asarray(out, np.float64), rtol=1e-6, atol=1e-9)
    if np.any(bad):
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise CheckFailed(f"putting expert perm[e] in slot e of both the list and the router's columns (perm = "
                          f"{[int(i) for i in order]}) changed the output at index {list(idx)} from "
                          f"{float(out[idx]):.6g} to {float(out2[idx]):.6g}: an expert's place in the list must not "
                          f"matter, only its weights")


def _cold_router(new, d_model, n_experts, cold, hot=None):
    """x's feature 0 is at least 1; router row 0 puts expert `cold` at least 4 below every other
    (so no token picks it) or, with `hot`, those experts at least 4 above the rest (every token picks them)."""
    W = 0.3 * new.rng.standard_normal((d_model, n_experts)) / np.sqrt(d_model)
    W[0] = 0.0 if hot is not None else 1.0
    if hot is not None:
        W[0, list(hot)] = 5.0
    else:
        W[0, cold] = -3.0
        W[1:, cold] = 0.0
    return new.array("W_router", W)


def _positive_first_feature(new, lead, d_model):
    x = new.normal("x0", (*lead, d_model))
    return new.let("x", np.concatenate([1 + np.abs(x[..., :1]), x[..., 1:]], axis=-1),
                   "np.concatenate([1 + np.abs(x0[..., :1]), x0[..., 1:]], axis=-1)")


@check("the weights of an expert that no token picks do not matter", [
    {"lead": (6,), "d_model": 3, "d_ff": 4, "n_experts": 4, "top_k": 2, "seed": 0},
    {"lead": (5,), "d_model": 2, "d_ff": 3, "n_experts": 5, "top_k": 4, "seed": 2},
], valid=lambda c: 1 <= c["top_k"] < c["n_experts"], minimum={"n_experts": 2})
def unpicked(impl, new, lead, d_model, d_ff, n_experts, top_k):
    x = _positive_first_feature(new, lead, d_model)
    cold = n_experts // 2
    W_router = _cold_router(new, d_model, n_experts, cold)
    experts = _experts(new, d_model, d_ff, n_experts)
    other = _experts(new, d_model, d_ff, 1, scale=3.0, prefix="other_")[0]
    swapped = new.let("swapped", [other if e == cold else experts[e] for e in range(n_experts)],
                      f"[other_experts[0] if e == {cold} else experts[e] for e in range({n_experts})]")
    out = _run(impl, x, W_router, experts, top_k)
    out2 = _run(impl, x, W_router, swapped, top_k, f"moe_layer(x, W_router, swapped, top_k={top_k})")
    bad = ~np.isclose(np.asarray(out2, np.float64), np.asarray(out, np.float64), rtol=1e-6, atol=1e-9)
    if np.any(bad):
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise CheckFailed(f"no token picks expert {cold} (its router logit is at least 4 below every other expert's), "
                          f"yet giving it other weights changed the output at index {list(idx)} from "
                          f"{float(out[idx]):.6g} to {float(out2[idx]):.6g}: only the top_k experts of a token count")


@check("no token is dropped when every token picks the same experts", [
    {"N": 12, "d_model": 3, "d_ff": 4, "n_experts": 4, "top_k": 1, "seed": 0},
    {"N": 16, "d_model": 2, "d_ff": 3, "n_experts": 6, "top_k": 2, "seed": 1},
], valid=lambda c: 1 <= c["top_k"] < c["n_experts"], minimum={"N": 2})
def crowded(impl, new, ref, N, d_model, d_ff, n_experts, top_k):
    x = _positive_first_feature(new, (N,), d_model)
    W_router = _cold_router(new, d_model, n_experts, None, hot=range(1, 1 + top_k))
    experts = _experts(new, d_model, d_ff, n_experts)
    expected = ref.moe_layer(x, W_router, experts, top_k)
    out = _run(impl, x, W_router, experts, top_k)
    zero = np.all(np.asarray(out) == 0, axis=-1) & np.any(expected != 0, axis=-1)
    if np.any(zero):
        raise CheckFailed(f"every token picks experts {list(range(1, 1 + top_k))}, and tokens "
                          f"{[int(i) for i in np.flatnonzero(zero)][:6]} came out as all zeros: every token gets "
                          f"its experts' outputs, however many tokens pick the same expert")
    expect_close(out, expected, f"moe_layer(x, W_router, experts, top_k={top_k}) with every token on the same experts")


@check("on equal probabilities the expert with the lower index is picked", [
    {"N": 5, "d_model": 3, "d_ff": 4, "n_experts": 4, "top_k": 1, "seed": 0},
    {"N": 4, "d_model": 2, "d_ff": 5, "n_experts": 3, "top_k": 2, "dtype": "float32", "seed": 2},
], valid=lambda c: 1 <= c["top_k"] < c["n_experts"] >= 3, minimum={"N": 1, "n_experts": 3})
def ties(impl, new, ref, N, d_model, d_ff, n_experts, top_k, dtype="float64"):
    # token 0 is 1.5 * e_0 and router row 0 is constant: its logits are all equal (a tie of every
    # expert); the last router column repeats column 1, so those two experts tie for every token
    x0 = new.normal("x0", (N, d_model), dtype=dtype)
    as32 = "" if dtype == "float64" else ", dtype=np.float32"
    x = new.let("x", np.concatenate([np.eye(1, d_model, dtype=dtype) * 1.5, x0[1:]]),
                f"np.concatenate([np.eye(1, {d_model}{as32}) * 1.5, x0[1:]])")
    W = new.normal("W", (d_model, n_experts), scale=1.5, dtype=dtype)
    W_0 = new.let("W_0", np.concatenate([np.full((1, n_experts), 0.7, dtype), W[1:]]),
                  f"np.concatenate([np.full((1, {n_experts}), 0.7{as32}), W[1:]])")
    cols = list(range(n_experts - 1)) + [1]
    W_router = new.let("W_router", W_0[:, cols], f"W_0[:, {cols}]")
    experts = _experts(new, d_model, d_ff, n_experts, dtype)
    expected = ref.moe_layer(*_f64(x, W_router, experts), top_k)
    out = _run(impl, x, W_router, experts, top_k)
    try:
        expect_close(out, expected, f"moe_layer(x, W_router, experts, top_k={top_k}) with tied experts", dtype)
    except CheckFailed as failure:
        rtol, atol = tolerance(dtype)
        if failure.kind == "close" and np.allclose(np.asarray(out, np.float64),
                                                   _mix64(x, W_router, experts, top_k, higher_first=True), rtol, atol):
            raise CheckFailed(f"{failure.message}: that is the higher index picked first on equal probabilities "
                              f"(token 0 ties every expert and must go to experts 0..{top_k - 1})",
                              kind="close") from None
        raise


@check("stays finite and correct for router logits in the thousands, of either sign", [
    {"N": 6, "d_model": 3, "d_ff": 4, "n_experts": 4, "top_k": 2, "dtype": "float64", "seed": 0},
    {"N": 4, "d_model": 4, "d_ff": 2, "n_experts": 3, "top_k": 1, "dtype": "float32", "seed": 1},
], valid=fits, minimum={"N": 2, "d_model": 2})
def large_logits(impl, new, ref, N, d_model, d_ff, n_experts, top_k, dtype):
    # feature 0 is +1 or -1 and router row 0 is -3000: half the tokens have every logit far below
    # zero, the other half every logit far above
    x0 = new.normal("x0", (N, d_model), dtype=dtype)
    sign = np.where(np.arange(N) % 2 == 0, 1.0, -1.0).astype(dtype)
    x = new.let("x", np.concatenate([sign[:, None], x0[:, 1:]], axis=1),
                f"np.concatenate([np.where(np.arange({N}) % 2 == 0, 1.0, -1.0)[:, None], x0[:, 1:]], axis=1)"
                + ("" if dtype == "float64" else ".astype(np.float32)"))
    W = new.normal("W", (d_model, n_experts), scale=800.0, dtype=dtype)
    W_router = new.let("W_router", W - np.eye(d_model, 1, dtype=dtype) * 3000,
                       f"W - np.eye({d_model}, 1{'' if dtype == 'float64' else ', dtype=np.float32'}) * 3000")
    experts = _experts(new, d_model, d_ff, n_experts, dtype)
    expected = ref.moe_layer(*_f64(x, W_router, experts), top_k)
    out = expect_finite(_run(impl, x, W_router, experts, top_k), "the output with router logits in the thousands")
    expect_close(out, expected, "the output with router logits in the thousands", dtype, extreme=True)


@check("the output follows the experts' weights: doubling every W_down doubles it", [
    {"lead": (5,), "d_model": 4, "d_ff": 6, "n_experts": 4, "top_k": 2, "seed": 7},
    {"lead": (2, 3), "d_model": 3, "d_ff": 2, "n_experts": 3, "top_k": 1, "seed": 8},
], valid=fits)
def follows_weights(impl, new, lead, d_model, d_ff, n_experts, top_k):
    x, W_router, experts = _layer(new, lead, d_model, d_ff, n_experts)
    doubled = new.let("doubled", [(g, u, d * 2) for g, u, d in experts], "[(g, u, d * 2) for g, u, d in experts]")
    out = np.asarray(_run(impl, x, W_router, experts, top_k), np.float64)
    out2 = np.asarray(_run(impl, x, W_router, doubled, top_k, f"moe_layer(x, W_router, doubled, top_k={top_k})"),
                      np.float64)
    if np.allclose(out2, out, rtol=1e-6, atol=1e-9) and np.max(np.abs(out)) > 1e-6:
        raise CheckFailed("doubling every expert's W_down left the output exactly as it was: the call did not use "
                          "the weights it was given, so something from an earlier call was kept and reused")
    expect_close(out2, 2 * out, "moe_layer(x, W_router, doubled)", against="2 * moe_layer(x, W_router, experts)")


@check("many tokens (N = 4100): each comes out as it does alone, and 4100 tokens that repeat 5 give their loss", [
    {"N": 4100, "d_model": 3, "d_ff": 2, "n_experts": 4, "top_k": 2, "seed": 0},
], shrink=False)
def many_tokens(impl, new, N, d_model, d_ff, n_experts, top_k):
    # compared with the attempt's own answers on a few tokens: a wrong formula fails `agrees`, not this
    x, W_router, experts = _layer(new, (N,), d_model, d_ff, n_experts)
    out = np.asarray(_run(impl, x, W_router, experts, top_k, f"moe_layer(x, W_router, experts) with {N} tokens"))
    for lo, hi in ((0, 3), (N - 3, N)):
        part = new.let(f"x_{lo}", x[lo:hi], f"x[{lo}:{hi}]")
        alone = _run(impl, part, W_router, experts, top_k, f"moe_layer(x_{lo}, W_router, experts)")
        expect_close(out[lo:hi], alone, f"tokens {lo} to {hi - 1} of moe_layer(x, W_router, experts) with {N} tokens",
                     against=f"moe_layer(x_{lo}, W_router, experts) (the same tokens alone)")
    few = new.let("few_logits", x[:5] @ W_router, "x[:5] @ W_router")
    many = new.let("router_logits", np.tile(few, (N // 5, 1)), f"np.tile(few_logits, ({N // 5}, 1))")
    expect_close(_loss(impl, many, top_k), _loss(impl, few, top_k, "load_balancing_loss(few_logits)"),
                 f"load_balancing_loss(router_logits) with {N} tokens, 5 repeated",
                 against="load_balancing_loss(few_logits) (F and P are means over the tokens)")


@check("moe_layer raises ValueError when top_k < 1 or top_k > n_experts", [
    {"n_experts": 3, "top_k": 4}, {"n_experts": 2, "top_k": 0}, {"n_experts": 1, "top_k": 2},
], shrink=False)
def raises_top_k(impl, new, n_experts, top_k):
    x, W_router, experts = _layer(new, (3,), 3, 4, n_experts)
    expect_raises(ValueError, impl.moe_layer, x, W_router, experts, top_k=top_k,
                  why=f"top_k={top_k} is outside 1..n_experts={n_experts}")


@check("moe_layer raises ValueError for an expert whose shapes do not fit d_model, picked or not", [
    {"which": "W_up", "picked": True}, {"which": "W_gate", "picked": False}, {"which": "W_down", "picked": False},
], shrink=False)
def raises_expert_shapes(impl, new, which, picked):
    d_model, d_ff, n_experts = 3, 4, 4
    x = _positive_first_feature(new, (5,), d_model)
    bad_e = 1 if picked else n_experts - 1
    W_router = _cold_router(new, d_model, n_experts, None, hot=(1,)) if picked else \
        _cold_router(new, d_model, n_experts, bad_e)
    experts = _experts(new, d_model, d_ff, n_experts)
    shape = {"W_gate": (d_model + 1, d_ff), "W_up": (d_model + 2, d_ff), "W_down": (d_ff, d_model + 1)}[which]
    wrong = new.normal("wrong", shape, scale=0.5)
    slot = ("W_gate", "W_up", "W_down").index(which)
    bad = new.let("bad_experts", [tuple(wrong if (e == bad_e and i == slot) else w for i, w in enumerate(ws))
                                  for e, ws in enumerate(experts)],
                  f"[tuple(wrong if (e == {bad_e} and i == {slot}) else w for i, w in enumerate(ws)) "
                  f"for e, ws in enumerate(experts)]")
    expect_raises(ValueError, impl.moe_layer, x, W_router, bad, top_k=1,
                  why=f"expert {bad_e}'s {which} has shape {shape} with d_model={d_model}"
                      + ("" if picked else f"; no token picks expert {bad_e}, but the list must still fit"))


@check("moe_layer leaves x, W_router, the list of experts and its tuples unchanged", [
    {"lead": (4,), "d_model": 3, "d_ff": 5, "n_experts": 3, "top_k": 2, "dtype": "float64", "seed": 0},
    {"lead": (2, 2), "d_model": 4, "d_ff": 2, "n_experts": 4, "top_k": 1, "dtype": "float32", "seed": 1},
], valid=fits)
def inputs_unchanged(impl, new, lead, d_model, d_ff, n_experts, top_k, dtype):
    x, W_router, experts = _layer(new, lead, d_model, d_ff, n_experts, dtype)
    _run(impl, x, W_router, experts, top_k)
    expect_inputs_unchanged(impl)


# ----------------------------------------------------------------------------- load_balancing_loss

LOSS_CASES = [
    {"N": 1, "n_experts": 3, "top_k": 1, "seed": 1},
    {"N": 7, "n_experts": 5, "top_k": 3, "seed": 2},
    {"N": 5, "n_experts": 1, "top_k": 1, "seed": 3},
    {"N": 3, "n_experts": 6, "top_k": 1, "cold": True, "seed": 4},
    {"N": 6, "n_experts": 4, "top_k": 2, "tie": True, "seed": 5},
]


def _loss(impl, logits, top_k, what=None):
    """The attempt's loss as a float64 0-d array (its type is checked in test_loss_is_scalar)."""
    out = impl.load_balancing_loss(logits, **({} if top_k == 2 else {"top_k": top_k}))
    what = what or f"load_balancing_loss(router_logits{'' if top_k == 2 else f', top_k={top_k}'})"
    arr = expect_shape(out, (), f"the loss from {what}")
    return arr.astype(np.float64)


def _logits(new, N, n_experts, dtype="float64", cold=False, tie=False, scale=1.5):
    z = new.normal("z", (N, n_experts), scale=scale, dtype=dtype)
    if cold:   # the last experts far below the rest: no token picks them
        return new.let("router_logits", np.concatenate([z[:, :-2], z[:, -2:] - 20], axis=1),
                       "np.concatenate([z[:, :-2], z[:, -2:] - 20], axis=1)")
    if tie:    # token 0 has equal logits for every expert
        return new.let("router_logits", np.concatenate([np.zeros_like(z[:1]), z[1:]]),
                       "np.concatenate([np.zeros_like(z[:1]), z[1:]])")
    return new.let("router_logits", z, "z")


@check("load_balancing_loss agrees with the reference (experts no token picks and ties included)",
       [dict(c, dtype=d) for c in LOSS_CASES for d in ("float64", "float32")], valid=fits)
def loss_agrees(impl, new, ref, N, n_experts, top_k, dtype, cold=False, tie=False):
    logits = _logits(new, N, n_experts, dtype, cold and n_experts > 2, tie)
    expected = ref.load_balancing_loss(np.asarray(logits, np.float64), top_k)
    expect_close(_loss(impl, logits, top_k), expected, "the loss", dtype)


@check("uniform routing gives a loss of top_k", [
    {"N": 6, "n_experts": 4, "top_k": 2}, {"N": 5, "n_experts": 3, "top_k": 1}, {"N": 4, "n_experts": 5, "top_k": 3},
    {"N": 3, "n_experts": 6, "top_k": 6}, {"N": 5, "n_experts": 5, "top_k": 2, "balanced": True},
    {"N": 4, "n_experts": 4, "top_k": 3, "balanced": True},
], valid=fits)
def loss_uniform(impl, new, N, n_experts, top_k, balanced=False):
    if balanced:   # token i prefers experts i..i+top_k-1 (mod n): every expert as often, the mean softmax uniform
        N = n_experts
        ahead = (np.arange(n_experts)[None, :] - np.arange(N)[:, None]) % n_experts   # (N, E): e - i mod E
        logits = new.let("router_logits", np.where(ahead < top_k, 2.0, -1.0),
                         f"np.where((np.arange({n_experts})[None, :] - np.arange({N})[:, None]) % {n_experts} < "
                         f"{top_k}, 2.0, -1.0)")
        how = "every expert picked equally often, the mean softmax uniform"
    else:          # each row constant (a different constant per row): every probability is 1 / n_experts
        c = new.normal("c", (N, 1), scale=3.0)
        logits = new.let("router_logits", np.repeat(c, n_experts, axis=1), f"np.repeat(c, {n_experts}, axis=1)")
        how = "every row of logits constant"
    got = float(_loss(impl, logits, top_k))
    if not np.isclose(got, top_k, rtol=1e-6, atol=1e-9):
        raise CheckFailed(f"{_loss_call(top_k)} is {got:.6g} with uniform routing ({how}), expected top_k = {top_k}: "
                          f"n_experts * sum_e F_e * P_e with F_e the share of the N tokens' top_k picks that go "
                          f"to e (F sums to top_k) and P_e = 1 / n_experts")


def _loss_call(top_k):
    return f"load_balancing_loss(router_logits{'' if top_k == 2 else f', top_k={top_k}'})"


@check("load_balancing_loss returns a float or a NumPy floating scalar, not an array", [
    {"N": 5, "n_experts": 4, "top_k": 2, "dtype": "float64", "seed": 0},
    {"N": 3, "n_experts": 3, "top_k": 1, "dtype": "float32", "seed": 1},
], shrink=False)
def loss_is_scalar(impl, new, N, n_experts, top_k, dtype):
    logits = _logits(new, N, n_experts, dtype)
    out = impl.load_balancing_loss(logits, **({} if top_k == 2 else {"top_k": top_k}))
    if isinstance(out, (float, np.floating)):
        return
    kind = (f"a NumPy array of shape {out.shape}" if isinstance(out, np.ndarray) else kind_of(out))
    raise CheckFailed(f"{_loss_call(top_k)} returned {kind}; the loss is one number: a Python float or a NumPy "
                      f"floating scalar (float(...) or .item() gives one)", kind="type",
                      bug="loss_as_0d_array" if isinstance(out, np.ndarray) and out.ndim == 0 else None)


@check("load_balancing_loss stays finite and correct for logits in the thousands", [
    {"N": 6, "n_experts": 4, "top_k": 2, "dtype": "float64", "seed": 0},
    {"N": 5, "n_experts": 3, "top_k": 1, "dtype": "float32", "seed": 1},
], valid=fits, minimum={"N": 2})
def loss_large_logits(impl, new, ref, N, n_experts, top_k, dtype):
    # rows near +3000 or -3000 with a spread of a few units: exp overflows or underflows unless the
    # row max is taken out, while the picks stay clear-cut (no probability rounds to 0 in float32)
    z = new.normal("z", (N, n_experts), scale=3.0, dtype=dtype)
    shift = np.where(np.arange(N) % 2 == 0, 3000.0, -3000.0).astype(dtype)[:, None]
    logits = new.let("router_logits", z + shift, f"z + np.where(np.arange({N}) % 2 == 0, 3000.0, -3000.0)[:, None]"
                     + ("" if dtype == "float64" else ".astype(np.float32)"))
    expected = ref.load_balancing_loss(np.asarray(logits, np.float64), top_k)
    got = _loss(impl, logits, top_k)
    expect_finite(got, "the loss with logits in the thousands")
    expect_close(got, expected, "the loss with logits in the thousands", dtype, extreme=True)


@check("load_balancing_loss raises ValueError when top_k < 1 or top_k > n_experts", [
    {"n_experts": 3, "top_k": 4}, {"n_experts": 2, "top_k": 0}, {"n_experts": 1, "top_k": 2},
], shrink=False)
def loss_raises(impl, new, n_experts, top_k):
    logits = _logits(new, 4, n_experts)
    expect_raises(ValueError, impl.load_balancing_loss, logits, top_k=top_k,
                  why=f"top_k={top_k} is outside 1..n_experts={n_experts}")


@check("load_balancing_loss leaves router_logits unchanged", [
    {"N": 5, "n_experts": 4, "top_k": 2, "dtype": "float64", "seed": 0},
    {"N": 3, "n_experts": 3, "top_k": 1, "dtype": "float32", "seed": 1},
], valid=fits)
def loss_unchanged(impl, new, N, n_experts, top_k, dtype):
    logits = _logits(new, N, n_experts, dtype)
    _loss(impl, logits, top_k)
    expect_inputs_unchanged(impl)
