"""The input domain of transformer_block(x, params, n_heads, n_kv_heads, positions=None, eps=1e-6,
base=10000.0).

Sizes B, T, n_kv_heads, group (query heads per KV head: n_heads = n_kv_heads * group, so 1 is
multi-head attention and n_kv_heads = 1 multi-query), d_half (d_head = 2 * d_half), d_model
and d_ff, all free of each other: d_head is not d_model // n_heads in the plain cases. A plain
case gives unsorted positions with a repeat; `positions` also ranges over None (left out),
negative ones and ones up to a million; eps over 0 (legal) and 100, base over 10 and 1e6.
Value families: `huge` (scores near 1e3 and more, of both signs), `zeros` (a row of x that is
all zeros: a padding position), `row_scales` (rows of x from 1e-3 to 40 times the others),
`shared` (one array for the parameters of one shape: W_gate is W_up, ffn_norm is attn_norm,
W_v is W_k, as tied weights are; legitimate input the explorer's aliasing does not reach
inside a dict); float32 meets all but `huge` (see _valid; the grader's own check of scores in
the thousands has a float32 case). Invalid: n_heads that does not divide W_q.shape[1],
n_kv_heads that does not divide n_heads (more KV heads than query heads, or a proper
non-divisor), an odd d_head. The large cases: 16,385 sequences of one position, and
d_ff = 32,769. The engine's whole-array families too: `zero` (every position a padding one) and
`constant`. Pairs varied together on the plain case: each family with the positions, eps and
the dtype; the positions with base; n_kv_heads with the group, typed as NumPy integers; eps and
base as ints and np.float32.
"""
import numpy as np

from graders.engine.domain import (
    ANY_NUMBER,
    REAL_SIZES,
    SIZES_OF_ONE,
    Dim,
    Domain,
    Explore,
    Grows,
    Invalid,
    Mode,
    cast,
    floats,
)

ROW_SCALES = np.array([1.0, 40.0, 1e-3, 8.0, 0.2, 25.0])
NAMES = ("attn_norm", "W_q", "W_k", "W_v", "W_o", "ffn_norm", "W_gate", "W_up", "W_down")
SHARED = {"W_up": "W_gate", "ffn_norm": "attn_norm", "W_v": "W_k"}


def heads(case: dict) -> tuple[int, int, int, int]:
    """(n_heads, n_kv_heads, d_head, width of W_q) a case asks for, the invalid ones included."""
    n_kv = case["n_kv_heads"]
    n_heads = n_kv * case["group"] + case.get("extra_heads", 0)
    d_head = 2 * case["d_half"] + case.get("odd", 0)
    return n_heads, n_kv + case.get("extra_kv", 0), d_head, n_heads * d_head + case.get("extra_cols", 0)


def _shapes(case: dict) -> dict:
    n_heads, n_kv, d_head, q_cols = heads(case)
    d_model, d_ff = case["d_model"], case["d_ff"]
    return {"attn_norm": (d_model,), "W_q": (d_model, q_cols), "W_k": (d_model, n_kv * d_head),
            "W_v": (d_model, n_kv * d_head), "W_o": (q_cols, d_model), "ffn_norm": (d_model,),
            "W_gate": (d_model, d_ff), "W_up": (d_model, d_ff), "W_down": (d_ff, d_model)}


def _params(new, case: dict) -> dict:
    """Norm scales near 1, a different one per feature; projections scaled so that each product
    keeps unit size (the queries and keys 25 times larger for `huge`)."""
    qk = 25.0 if case["values"] == "huge" else 1.5
    p = {}
    for name, shape in _shapes(case).items():
        if case["values"] == "shared" and name in SHARED and _shapes(case)[SHARED[name]] == shape:
            p[name] = p[SHARED[name]]
        elif len(shape) == 1:
            base = floats(new, f"{name}_noise", shape, case, scale=0.3)
            value, suffix = cast(1.0 + base.astype(np.float64), case)
            p[name] = new.let(name, value, f"(1.0 + {new.name_of(base)}.astype(np.float64)){suffix}")
        else:
            scale = (qk if name in ("W_q", "W_k") else 1.0) / np.sqrt(shape[0])
            p[name] = floats(new, name, shape, case, scale=float(np.round(scale, 4)))
    new.let("params", p, "dict(" + ", ".join(f"{k}={new.name_of(v)}" for k, v in p.items()) + ")")
    return p


# (step, span, lowest): position i is (i % (T - 1)) * step % span + lowest, so the last row repeats the
# first; the large ones spread over a million, across every int16 and uint16 wrap
POSITIONS = {"shuffled": (37, 61, 0), "negative": (37, 81, -60), "large": (271_829, 1_000_003, 0)}


def _positions(new, case: dict, T: int):
    """The positions argument, unsorted: in 0..60, in -60..20, or up to a million. For T >= 3 the
    last row has the first row's position: nothing makes positions distinct."""
    step, span, low = POSITIONS[case["positions"]]
    mod = max(T - 1, 2)
    expr = f"np.arange({T}) % {mod} * {step} % {span} + {low}"
    return new.let("positions", np.arange(T) % mod * step % span + low, expr)


def draw(new, case: dict) -> dict:
    B, T, family = case["B"], case["T"], case["values"]
    x = floats(new, "x", (B, T, case["d_model"]), case)
    if family == "row_scales":
        value, suffix = cast(x.astype(np.float64) * np.resize(ROW_SCALES, T)[None, :, None], case)
        x = new.let("x", value, f"{new.name_of(x)}.astype(np.float64) * np.resize({ROW_SCALES.tolist()}, {T})"
                                f"[None, :, None]{suffix}")
    elif family == "zeros":
        row = min(1, T - 1)
        value = x.copy()
        value[:, row] = 0
        x = new.let("x", value, f"np.where((np.arange({T}) == {row})[:, None], 0.0, {new.name_of(x)})"
                                f".astype({new.name_of(x)}.dtype)")
    n_heads, n_kv, _, _ = heads(case)
    values = {"x": x, "params": _params(new, case), "n_heads": n_heads, "n_kv_heads": n_kv}
    if case.get("positions") is not None:
        values["positions"] = _positions(new, case, T)
    values.update({name: case[name] for name in ("eps", "base") if name in case})
    return values


def _valid(case: dict) -> bool:
    # with eps = 0 an all-zero row is 0 / 0, which the contract leaves undefined; float32 scores
    # near 1e3 are only good to about 1e-4, which an output entry near 0 shows beyond atol 1e-5
    return (not (case.get("eps", 1e-6) == 0 and case["values"] in ("zeros", "zero"))
            and not (case["dtype"] == "float32" and case["values"] == "huge"))


def _indivisible_width(case: dict) -> dict:
    return dict(case, extra_cols=1, group=max(2, case["group"]))     # n_heads >= 2: 1 divides anything


def _indivisible_kv(case: dict) -> dict:
    return dict(case, n_kv_heads=max(2, case["n_kv_heads"]), extra_heads=1)   # n_kv * group + 1


INVALID = (
    Invalid("n_heads does not divide W_q.shape[1]", _indivisible_width),
    Invalid("n_kv_heads does not divide n_heads (more KV heads than query heads)",
            lambda c: dict(c, extra_kv=c["n_kv_heads"] * c["group"] + 1 - c["n_kv_heads"])),
    Invalid("n_kv_heads does not divide n_heads", _indivisible_kv),
    Invalid("d_head is odd: RoPE turns pairs of features", lambda c: dict(c, odd=1)),
)


def constants(case: dict) -> dict:
    n_heads, _, d_head, _ = heads(case)
    return {"sqrt(d_head)": np.sqrt(d_head), "sqrt(d_model)": np.sqrt(case["d_model"]), "d_head": d_head,
            "n_heads": n_heads, "group": case["group"]}


DOMAIN = Domain(Explore(
    "transformer_block", draw,
    # each size at 1 and past its base values; group 1 is multi-head, n_kv_heads 1 multi-query
    dims={"B": Dim(small=(1,), base=(2, 3), trivial=0), "T": Dim(small=(1, 2, 5, 12), base=(3, 4, 5)),
          "n_kv_heads": Dim(small=(1, 3), base=(2, 3), trivial=0), "group": Dim(small=(1, 2, 4), base=(2, 3), trivial=0),
          "d_half": Dim(small=(1, 3), base=(2, 3), trivial=0), "d_model": Dim(small=(1, 9), base=(5, 6, 7)),
          "d_ff": Dim(small=(1, 12), base=(4, 6, 9))},
    families=("huge", "zeros", "row_scales", "shared", "zero", "constant"),
    scalars={"positions": (None, "negative", "large"), "eps": (0.0, 100.0), "base": (10.0, 1e6)},
    valid=_valid,
    invalid=INVALID,
    pairs=(("values", "positions"), ("values", "eps"), ("values", "dtype"), ("positions", "base"),
           ("n_kv_heads", "group"), ("n_kv_heads", "numbers"), ("eps", "numbers")),
    modes=(Mode("multi-head attention", lambda c: dict(c, group=1)),
           Mode("multi-query attention", lambda c: dict(c, n_kv_heads=1)),
           Mode("positions left out", lambda c: dict(c, positions=None))),
    cites={"B": SIZES_OF_ONE, "T": SIZES_OF_ONE, "n_kv_heads": "those of gqa", "group": "those of gqa",
           "d_half": "odd d_head raises ValueError", "d_model": REAL_SIZES, "d_ff": REAL_SIZES,
           "positions": "positions may be any integers, negative ones included",
           "eps": ANY_NUMBER, "base": ANY_NUMBER},
    # a batch past 16,384 rows of one position, and a feed-forward layer past 32,767: each cheap
    big=({"B": 16_385, "T": 1, "n_kv_heads": 1, "group": 1, "d_half": 1, "d_model": 2, "d_ff": 1},
         {"B": 1, "T": 2, "n_kv_heads": 1, "group": 1, "d_half": 1, "d_model": 1, "d_ff": 32_769}),
    fixed={"positions": "shuffled"},
    axes={0: "batch", 1: "positions", 2: "features"},
    constants=constants,
    grows=(Grows("T", "position", lambda n: {"T": n, "B": 1, "n_kv_heads": 1, "group": 2, "d_half": 2, "d_model": 8,
                                                "d_ff": 8}),
           Grows("n_heads", "head", lambda n: {"T": 16, "B": 1, "n_kv_heads": 1, "group": n, "d_half": 2, "d_model": 8,
                                               "d_ff": 8}, (2, 4, 8))),
))
