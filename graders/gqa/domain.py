"""The input domain of gqa(x, W_q, W_k, W_v, W_o, n_heads, n_kv_heads) and
kv_cache_bytes(n_layers, n_kv_heads, d_head, n_tokens, bytes_per_value=2).

gqa: sizes B, T, n_kv_heads, group (query heads per KV head: n_heads = n_kv_heads * group,
so n_kv_heads ranges over 1, n_heads and the divisors between), d_head and d_model, which
is its own size: in the plain cases d_model // n_heads is not d_head, so a head size or a
scale taken from d_model shows. `q_extra` adds columns to W_q alone and `heads` gives
n_heads directly, for the two ValueErrors. Value families: `huge` (scores of 1e3 and
more), `row_scales` (positions of x of very different lengths), `zeros` (a position of x
that is all zeros). Past a cheap boundary: 16,385 sequences in one batch.
The engine's whole-array families too: `zero`, `constant`, `tiny`. Pairs varied together
on the plain case: each family with the group and the dtype, n_kv_heads with the group, the
head counts typed as NumPy integers.
kv_cache_bytes: integer sizes, bytes_per_value 1 to 8, and figures past 2**31 and 2**53
(where a float, or a 32-bit integer, is no longer exact); n_layers and n_tokens, which have
no upper bound, at 2**31 and 10**12 too, every size as a NumPy integer.
"""
import numpy as np

from graders.engine.domain import (
    ANY_NUMBER,
    REAL_SIZES,
    SIZES_OF_ONE,
    UNBOUNDED,
    Dim,
    Domain,
    Explore,
    Grows,
    Invalid,
    cast,
    floats,
)

ROW_SCALES = np.array([1.0, 40.0, 1e-3, 8.0, 0.2, 25.0, 1.0])


def _x(new, case: dict) -> np.ndarray:
    B, T, family = case["B"], case["T"], case["values"]
    x = floats(new, "x", (B, T, case["d_model"]), case, scale=30.0 if family == "huge" else 1.0)
    if family == "row_scales":
        value, suffix = cast(x.astype(np.float64) * np.resize(ROW_SCALES, T)[None, :, None], case)
        x = new.let("x", value, f"{new.name_of(x)}.astype(np.float64) * np.resize({ROW_SCALES.tolist()}, {T})"
                                f"[None, :, None]{suffix}")
    elif family == "zeros":
        value = x.copy()
        value[:, T // 2] = 0
        name = new.name_of(x)
        x = new.let("x", value, f"{name}.copy(); {name}[:, {T // 2}] = 0")
    return x


def draw(new, case: dict) -> dict:
    n_kv, d_head, d_model = case["n_kv_heads"], case["d_head"], case["d_model"]
    n_heads = case.get("heads", n_kv * case["group"])
    x = _x(new, case)
    w = float(1 / np.sqrt(d_model))    # entries of variance 1/d_model keep q and k as large as x
    W_q = floats(new, "W_q", (d_model, n_heads * d_head + case.get("q_extra", 0)), case, scale=w)
    W_k = floats(new, "W_k", (d_model, n_kv * d_head), case, scale=w)
    W_v = floats(new, "W_v", (d_model, n_kv * d_head), case, scale=w)
    W_o = floats(new, "W_o", (n_heads * d_head, d_model), case, scale=float(1 / np.sqrt(n_heads * d_head)))
    return {"x": x, "W_q": W_q, "W_k": W_k, "W_v": W_v, "W_o": W_o, "n_heads": n_heads, "n_kv_heads": n_kv}


def _valid(case: dict) -> bool:
    """d_model // n_heads is not d_head, unless d_model is n_heads * d_head exactly (the
    common configuration, where the two agree)."""
    n_heads = case["n_kv_heads"] * case["group"]
    return case["d_model"] // n_heads != case["d_head"] or case["d_model"] == n_heads * case["d_head"]


def _width_not_divided(case: dict) -> dict:
    """One column more in W_q: with n_heads >= 2 its width // n_heads is still d_head, so only
    the check on W_q.shape[1] notices."""
    if case["n_kv_heads"] * case["group"] == 1:
        case = dict(case, group=2)
    return dict(case, q_extra=1)


def _kv_not_dividing(case: dict) -> dict:
    n_kv = max(case["n_kv_heads"], 2)
    return dict(case, n_kv_heads=n_kv, heads=n_kv * case["group"] + 1)


def constants(values: dict) -> dict:
    """Numbers a wrong factor may be, named as the mistake that gives it: scores not divided at
    all are sqrt(d_head) times too large; divided by sqrt(d_model), sqrt(d_head / d_model) times."""
    n_heads, d_model = values["n_heads"], values["x"].shape[2]
    d_head = values["W_q"].shape[1] // n_heads
    return {"sqrt(d_head)": np.sqrt(d_head), "sqrt(d_head / d_model)": np.sqrt(d_head / d_model),
            "n_heads": n_heads, "d_head": d_head, "T": values["x"].shape[1]}


AXES = [{0: "batch", 1: "positions", 2: "features"},
        {0: "batch", 1: "heads", 2: "query positions", 3: "key positions"}]


def draw_bytes(new, case: dict) -> dict:
    values = {k: case[k] for k in ("n_layers", "n_kv_heads", "d_head", "n_tokens")}
    if "bytes_per_value" in case:
        values["bytes_per_value"] = case["bytes_per_value"]
    return values


DOMAIN = Domain(
    Explore("gqa", draw,
            dims={"B": Dim(small=(1,), base=(2, 3), trivial=0), "T": Dim(small=(1, 2, 3, 7, 12), base=(4, 5, 6)),
                  "n_kv_heads": Dim(small=(1, 2, 3, 4), base=(1, 2, 3), trivial=0), "group": Dim(small=(1, 2, 5), base=(2, 3), trivial=0),
                  "d_head": Dim(small=(1, 5), base=(2, 3)), "d_model": Dim(small=(1, 2, 6, 12), base=(5, 7, 11))},
            families=("huge", "row_scales", "zeros", "zero", "constant", "tiny"),
            extreme=("huge", "row_scales"),
            valid=_valid,
            pairs=(("values", "group"), ("values", "dtype"), ("n_kv_heads", "group"), ("T", "values"),
                   ("n_kv_heads", "numbers")),
            cites={"B": SIZES_OF_ONE, "T": SIZES_OF_ONE, "n_kv_heads": "n_kv_heads that does not divide n_heads "
                   "raises ValueError", "group": "n_kv_heads == n_heads is multi-head attention, n_kv_heads == 1 "
                   "multi-query", "d_head": REAL_SIZES, "d_model": REAL_SIZES},
            invalid=(Invalid("n_heads does not divide W_q.shape[1]", _width_not_divided),
                     Invalid("n_kv_heads does not divide n_heads", _kv_not_dividing)),
            big=({"B": 16_385, "T": 2, "n_kv_heads": 1, "group": 2, "d_head": 1, "d_model": 1},),  # 16,385 sequences
            outputs=("y", "the weights"), axes=AXES, constants=constants, masks=("the weights",),
            grows=(Grows("T", "position", lambda n: {"T": n, "B": 1, "n_kv_heads": 2, "group": 2, "d_head": 4,
                                                        "d_model": 16}),
                   Grows("n_heads", "head", lambda n: {"T": 16, "B": 1, "n_kv_heads": 1, "group": n, "d_head": 4,
                                                       "d_model": 16}, (2, 4, 8)),
                   Grows("B", "sequence", lambda n: {"T": 16, "B": n, "n_kv_heads": 2, "group": 2, "d_head": 4,
                                                     "d_model": 16}, (2, 4, 8)))),
    Explore("kv_cache_bytes", draw_bytes,
            dims={"n_layers": Dim(small=(1,), base=(2, 3, 4)), "n_kv_heads": Dim(small=(1,), base=(5, 6)),
                  "d_head": Dim(small=(1,), base=(7, 8)), "n_tokens": Dim(small=(1, 2), base=(9, 10, 11))},
            scalars={"bytes_per_value": (1, 2, 4, 8)},
            float32=False, sequence=False,
            pairs=(("bytes_per_value", "numbers"), ("n_tokens", "numbers")),
            counts=("n_layers", "n_tokens"),
            cites={"n_layers": UNBOUNDED, "n_kv_heads": UNBOUNDED, "d_head": UNBOUNDED, "n_tokens": UNBOUNDED,
                   "bytes_per_value": ANY_NUMBER},
            big=({"n_layers": 80, "n_kv_heads": 8, "d_head": 128, "n_tokens": 131_072, "bytes_per_value": 2},
                 {"n_layers": 61, "n_kv_heads": 7, "d_head": 129, "n_tokens": 10**12 + 1, "bytes_per_value": 2},
                 {"n_layers": 3, "n_kv_heads": 5, "d_head": 7, "n_tokens": 2**53 + 1},
                 {"n_layers": 1, "n_kv_heads": 1, "d_head": 1, "n_tokens": 2**31 - 1, "bytes_per_value": 1}),
            grows=(Grows("n_layers", "layer", lambda n: {"n_layers": n}, (8, 16, 32)),)),
)
