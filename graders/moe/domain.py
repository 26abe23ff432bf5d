"""The input domain of moe_layer(x, W_router, experts, top_k=2) and
load_balancing_loss(router_logits, top_k=2).

moe_layer: sizes n (the first leading axis; the others have 2 and 3), d_model, d_ff and
n_experts (3 or more in plain cases, at least 2: top_k is left to its default, 2), up to three
leading axes; top_k 1, 2 and n_experts (`all`: the dense mixture). Value families: `ties`
(token 0 ties every expert, and the last router column repeats column 1: equal
probabilities, the lower index first), `huge` (router logits in the thousands, of either
sign), `offsets` (each token's logits shifted by its own large amount, +3000, -3000, 0, ...,
through a constant router row: x stays small). The ValueErrors: top_k 0 and n_experts + 1; an
expert whose W_gate or W_up lacks d_model rows or whose W_down lacks d_model columns, one that
token 0 picks and one that no token can pick (the last, whose router column repeats
column 0, with top_k 1: the tie goes to expert 0).

load_balancing_loss: router_logits (N, n_experts), top_k 1, 2 and n_experts; families
`ties` (whole-number logits), `offsets` (+3000, -3000, ... per token), `cold` (the last two
experts far below the rest: no token picks them), `uniform` (each row constant: every
probability 1 / n_experts, and the loss top_k).
float32 meets no offsets in moe_layer: a float32 logit near 3000 is only known to 2e-4, and so
is every routing weight, which a sum of experts' outputs can amplify.
The engine's whole-array families too: `zero` (every token's logits equal: a tie across every
expert, the lower indices first) and `constant` (every token the same). No `tiny`: logits of
1e-30 tie in their probabilities but not in their own order, where the contract says only
that equal probabilities keep the lower index. Pairs varied together on the plain case: each
family with top_k, the dtype and the leading axes; n_experts with top_k; top_k typed as a
NumPy integer.
"""
import numpy as np

from graders.engine.domain import (
    ANY_NUMBER,
    SIZES_OF_ONE,
    Dim,
    Domain,
    Explore,
    Grows,
    Invalid,
    Mode,
    cast,
    floats,
    with_row_offsets,
    with_ties,
)

OFFSETS = np.array([3.0, -3.0, 0.0, 1.0, -0.43])   # feature 0 of x, times a router row of 1000
PARTS = ("W_gate", "W_up", "W_down")


def top_k_of(case: dict) -> int:
    top_k = case.get("top_k", 2)
    return case["n_experts"] if top_k == "all" else top_k


def _experts(new, case: dict, misfit: tuple | None = None) -> list:
    """n_experts (W_gate, W_up, W_down) tuples; `misfit` (expert, part) gets a wrong shape."""
    d_model, d_ff = case["d_model"], case["d_ff"]
    shapes = {"W_gate": (d_model, d_ff), "W_up": (d_model, d_ff), "W_down": (d_ff, d_model)}
    wrong = {"W_gate": (d_model + 1, d_ff), "W_up": (d_model + 2, d_ff), "W_down": (d_ff, d_model + 1)}
    experts = []
    for e in range(case["n_experts"]):
        ws = []
        for part in PARTS:
            shape = wrong[part] if misfit == (e, part) else shapes[part]
            ws.append(floats(new, f"{part}{e}", shape, case, scale=shape[0] ** -0.5))
        experts.append(tuple(ws))
    shown = ", ".join("(" + ", ".join(new.name_of(w) for w in ws) + ")" for ws in experts)
    return new.let("experts", experts, f"[{shown}]")


def _router(new, x: np.ndarray, case: dict) -> tuple[np.ndarray, np.ndarray]:
    """(x, W_router) of the case's family."""
    E, family = case["n_experts"], case["values"]
    W = floats(new, "W_router", (case["d_model"], E), case, scale=1e3 if family == "huge" else 1.5)
    if family == "ties":
        # token 0 is 1.5 * e_0 and router row 0 is constant: token 0's logits are all equal
        first = np.zeros(x.shape[:-1] + (1,), bool)
        first.reshape(-1)[:1] = True
        value, suffix = cast(np.where(first, np.eye(1, x.shape[-1]).reshape(-1) * 1.5, x.astype(np.float64)), case)
        x = new.let("x", value, f"np.where(np.arange({first.size}).reshape({first.shape}) == 0, "
                                f"np.eye(1, {x.shape[-1]})[0] * 1.5, {new.name_of(x)}.astype(np.float64)){suffix}")
        value, suffix = cast(np.concatenate([np.full((1, E), 0.7), W[1:].astype(np.float64)]), case)
        W = new.let("W_router", value, f"np.concatenate([np.full((1, {E}), 0.7), {new.name_of(W)}[1:]]){suffix}")
        cols = list(range(E - 1)) + [min(1, E - 1)]
        return x, new.let("W_router", W[:, cols], f"{new.name_of(W)}[:, {cols}]")
    if family == "offsets":
        # feature 0 of x is 3, -3, 0, ... and router row 0 is 1000: each token's logits shifted on their own
        rows = int(np.prod(x.shape[:-1], dtype=np.int64))
        value, suffix = cast(np.concatenate([np.resize(OFFSETS, rows).reshape(x.shape[:-1] + (1,)),
                                             x[..., 1:].astype(np.float64)], axis=-1), case)
        x = new.let("x", value, f"np.concatenate([np.resize({OFFSETS.tolist()}, {rows}).reshape("
                                f"{x.shape[:-1] + (1,)}), {new.name_of(x)}[..., 1:].astype(np.float64)], axis=-1)"
                                f"{suffix}")
        value, suffix = cast(np.concatenate([np.full((1, E), 1e3), W[1:].astype(np.float64)]), case)
        W = new.let("W_router", value, f"np.concatenate([np.full((1, {E}), 1000.0), {new.name_of(W)}[1:]]){suffix}")
    return x, W


def _misfit(new, x: np.ndarray, W_router: np.ndarray, case: dict) -> tuple[np.ndarray, tuple]:
    """(W_router, (expert, part)) for a misfit case: the expert token 0 picks first, or the last
    one, which no token picks when its column repeats column 0 and top_k is 1."""
    part, where = case["misfit"].split(":")
    if where == "picked":
        logits = x.reshape(-1, x.shape[-1])[:1].astype(np.float64) @ W_router.astype(np.float64)
        return W_router, (int(np.argmax(logits)), part)
    E = case["n_experts"]
    cols = list(range(E - 1)) + [0]
    return new.let("W_router", W_router[:, cols], f"{new.name_of(W_router)}[:, {cols}]"), (E - 1, part)


def draw_layer(new, case: dict) -> dict:
    lead = (case["n"], 2, 3)[:case["lead"]]
    x = floats(new, "x", (*lead, case["d_model"]), case)
    x, W_router = _router(new, x, case)
    misfit = None
    if "misfit" in case:
        W_router, misfit = _misfit(new, x, W_router, case)
    values = {"x": x, "W_router": W_router, "experts": _experts(new, case, misfit)}
    if "top_k" in case:
        values["top_k"] = top_k_of(case)
    return values


def draw_loss(new, case: dict) -> dict:
    N, E, family = case["N"], case["n_experts"], case["values"]
    z = floats(new, "router_logits", (N, E), case, scale=1.5)
    if family == "ties":
        z = with_ties(new, "router_logits", z, case)
    elif family == "offsets":
        z = with_row_offsets(new, "router_logits", z, case, axis=-1, size=3e3)
    elif family == "uniform":
        value, suffix = cast(np.repeat(z[:, :1].astype(np.float64), E, axis=1), case)
        z = new.let("router_logits", value, f"np.repeat({new.name_of(z)}[:, :1].astype(np.float64), {E}, axis=1)"
                                            f"{suffix}")
    elif family == "cold" and E > 2:
        value, suffix = cast(z.astype(np.float64) - np.where(np.arange(E) >= E - 2, 20.0, 0.0), case)
        z = new.let("router_logits", value, f"{new.name_of(z)}.astype(np.float64) - np.where(np.arange({E}) >= "
                                            f"{E - 2}, 20.0, 0.0){suffix}")
    values = {"router_logits": z}
    if "top_k" in case:
        values["top_k"] = top_k_of(case)
    return values


def _valid_layer(case: dict) -> bool:
    return 1 <= top_k_of(case) <= case["n_experts"] and (case["dtype"] == "float64" or case["values"] != "offsets")


def _valid_loss(case: dict) -> bool:
    return 1 <= top_k_of(case) <= case["n_experts"]


TOP_K_INVALID = (Invalid("top_k must be at least 1", lambda c: dict(c, top_k=0)),
                 Invalid("top_k must be at most n_experts", lambda c: dict(c, top_k=c["n_experts"] + 1)))


def _misfit_invalid(part: str, where: str) -> Invalid:
    why = (f"an expert's {part} does not have d_model {'columns' if part == 'W_down' else 'rows'}"
           + (" (an expert token 0 picks)" if where == "picked" else " (an expert no token picks)"))
    return Invalid(why, lambda c: dict(c, misfit=f"{part}:{where}", **({"top_k": 1} if where == "unpicked" else {})))


LAYER_INVALID = TOP_K_INVALID + (_misfit_invalid("W_gate", "picked"), _misfit_invalid("W_up", "unpicked"),
                                 _misfit_invalid("W_down", "unpicked"))
SCALARS = {"top_k": (1, 2, "all")}
CITES = {"n": SIZES_OF_ONE, "N": SIZES_OF_ONE, "d_model": SIZES_OF_ONE, "d_ff": SIZES_OF_ONE,
         "n_experts": "ValueError: top_k < 1 or top_k > n_experts",
         "top_k": "top_k == n_experts is the dense softmax mixture of all experts. " + ANY_NUMBER}
MODES = (Mode("one expert picked", lambda c: dict(c, top_k=1)), Mode("every expert picked", lambda c: dict(c, top_k="all")))

DOMAIN = Domain(
    Explore("moe_layer", draw_layer,
            # few sizes each (every call carries n_experts * 3 arrays): 1, an odd d_model, and more
            # experts than a table of 8 holds; random mixes draw from base sizes too
            dims={"n": Dim(small=(1,), base=(2, 3), trivial=0), "d_model": Dim(small=(1, 3), base=(4, 5)),
                  "d_ff": Dim(small=(1,), base=(6, 7)), "n_experts": Dim(minimum=2, small=(2, 12), base=(3, 4, 5))},
            lead=3,
            families=("ties", "huge", "offsets", "zero", "constant"),
            extreme=("huge",),
            scalars=SCALARS,
            valid=_valid_layer,
            invalid=LAYER_INVALID,
            pairs=(("values", "top_k"), ("values", "dtype"), ("values", "lead"), ("n_experts", "top_k"),
                   ("top_k", "numbers")),
            modes=MODES, cites=CITES,
            # tokens past 16,384 with one feature
            big=({"n": 16_385, "lead": 1, "d_model": 1, "d_ff": 1, "n_experts": 3},),
            grows=(Grows("N", "token", lambda n: {"n": n, "lead": 1, "d_model": 4, "d_ff": 6, "n_experts": 4}),)),
    Explore("load_balancing_loss", draw_loss,
            dims={"N": Dim(small=(1, 12), base=(5, 6, 7), trivial=0), "n_experts": Dim(minimum=2, small=(2, 12), base=(3, 4))},
            families=("ties", "offsets", "cold", "uniform", "zero", "constant"),
            extreme=("offsets",),
            scalars=SCALARS,
            valid=_valid_loss,
            invalid=TOP_K_INVALID,
            pairs=(("values", "top_k"), ("N", "values"), ("n_experts", "top_k"), ("top_k", "numbers")),
            modes=MODES, cites=CITES,
            # tokens past 16,384; experts past 255 (an 8-bit index wraps) for two tokens: not past
            # 32,767, since a pick by pairwise comparison of the experts, fine for a few hundred,
            # takes n_experts**2 memory per token
            big=({"N": 16_385, "n_experts": 3}, {"N": 2, "n_experts": 300}),
            grows=(Grows("N", "token", lambda n: {"N": n, "n_experts": 4}),)),
)
