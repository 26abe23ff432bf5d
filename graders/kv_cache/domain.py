"""The input domain of attend_with_cache(x, W_q, W_k, W_v, W_o, n_heads, cache=None).

Sizes B, t_new, n_heads, d_head (d_model = n_heads * d_head) and t_past, the length of the
given cache: the keys and values of an earlier stretch x_past, split into heads, as a caller
that decodes holds them (t_past = 0 is an empty cache). `cache=None` is explored as a
value of its own (the argument left out). Value families: `huge` (scores near 1e3, the
cached keys too), `row_scales` (new and cached positions scaled by very different amounts,
so the rows of scores lie far apart), `zeros` (a new position of x and a cached key that are
all zeros: scores of exactly 0). float32 meets neither `huge` nor `row_scales` (see _valid);
the grader's own check of scores near 1e4 has a float32 case. The invalid calls: n_heads
that does not divide d_model, a cache that does not fit x, n_heads or itself (`misfit`), and
no new position; each also with one new token over a cache, where a decoding fast path might
skip the checks, and in every mode (no cache, an empty one, a decoding step).
The engine's whole-array families too, for x: `zero`, `constant`, `tiny`. Pairs varied
together on the plain case: each family with t_past and the dtype; t_new with t_past; the
cache left out with t_new; n_heads typed as a NumPy integer. The size of a real model: one new
token over a cache of 8,200 positions, with every family.
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
from graders.engine.probes import through_cache

ROW_SCALES = np.array([1.0, 40.0, 1e-3, 8.0, 0.2, 25.0, 1.0])

# what each misfit changes in the cache's (k shape, v shape), from the shape that fits
MISFITS = {
    "batch": "the cache holds another number of sequences than x",
    "heads": "the cache has another number of heads than n_heads",
    "head_size": "the cache's heads have another size than d_model // n_heads",
    "lengths": "k and v hold different numbers of positions",
    "v_heads": "k and v have different numbers of heads",
}


def _scaled_rows(new, name: str, a: np.ndarray, case: dict, scales: np.ndarray) -> np.ndarray:
    """`a` (B, t, d) with position i scaled by scales[i % len(scales)]."""
    t = a.shape[1]
    value, suffix = cast(a.astype(np.float64) * np.resize(scales, t)[None, :, None], case)
    return new.let(name, value, f"{new.name_of(a)}.astype(np.float64) * np.resize({scales.tolist()}, {t})"
                                f"[None, :, None]{suffix}")


def _zero_row(new, name: str, a: np.ndarray, i: int) -> np.ndarray:
    value = a.copy()
    value[:, i] = 0
    shown = new.name_of(a)
    return new.let(name, value, f"np.concatenate([{shown}[:, :{i}], 0 * {shown}[:, {i}:{i + 1}], "
                                f"{shown}[:, {i + 1}:]], axis=1)")


def _positions(new, name: str, shape: tuple, case: dict, past: bool) -> np.ndarray:
    """x or x_past in the case's value family."""
    family = case["values"]
    # with unit weights, entries of 30 / sqrt(d_model) make q and k entries near 30: scores near 1e3
    a = floats(new, name, shape, case, scale=round(30.0 / np.sqrt(shape[2]), 3) if family == "huge" else 1.0)
    if family == "row_scales":
        a = _scaled_rows(new, name, a, case, ROW_SCALES[::-1] if past else ROW_SCALES)
    elif family == "zeros" and shape[1]:
        a = _zero_row(new, name, a, shape[1] - 1 if past else min(1, shape[1] - 1))
    return a


def _cache(new, case: dict, x_past: np.ndarray, W_k: np.ndarray, W_v: np.ndarray) -> tuple:
    """x_past's keys and values split into heads: (k, v), each (B, n_heads, t_past, d_head)."""
    B, t, d_model = x_past.shape
    H, d_head = case["n_heads"], case["d_head"]
    xp = new.name_of(x_past)
    pair = []
    for name, W in (("k_past", W_k), ("v_past", W_v)):
        value = (x_past @ W).reshape(B, t, H, d_head).transpose(0, 2, 1, 3)
        pair.append(new.let(name, value, f"({xp} @ {new.name_of(W)}).reshape({B}, {t}, {H}, {d_head})"
                                         f".transpose(0, 2, 1, 3)"))
    return new.let("cache", tuple(pair), f"({new.name_of(pair[0])}, {new.name_of(pair[1])})")


def _misfit_cache(new, case: dict) -> tuple:
    """Random keys and values of shapes that do not fit (case["misfit"]), or that fit when
    n_heads does not divide d_model (then nothing fits)."""
    B, H, t, d_head, misfit = case["B"], case["n_heads"], case["t_past"], case["d_head"], case.get("misfit")
    k_shape = v_shape = (B, H, t, d_head)
    if misfit == "batch":
        k_shape = v_shape = (1 if B > 1 else 2, H, t, d_head)   # 1 sequence against several broadcasts silently
    elif misfit == "heads":
        k_shape = v_shape = (B, 1 if H > 1 else 2, t, d_head)
    elif misfit == "head_size":
        k_shape = v_shape = (B, H, t, d_head + 1)
    elif misfit == "lengths":
        v_shape = (B, H, t + 1, d_head)
    elif misfit == "v_heads":
        v_shape = (B, H + 1, t, d_head)
    k = floats(new, "k_past", k_shape, case)
    v = floats(new, "v_past", v_shape, case)
    return new.let("cache", (k, v), f"({new.name_of(k)}, {new.name_of(v)})")


def draw(new, case: dict) -> dict:
    B, t_new, H, d_head, t_past = case["B"], case["t_new"], case["n_heads"], case["d_head"], case["t_past"]
    d_model = H * d_head + case.get("extra", 0)
    x = _positions(new, "x", (B, t_new, d_model), case, past=False)
    w_scale = 1.0 if case["values"] == "huge" else 0.5
    Ws = {name: floats(new, name, (d_model, d_model), case, scale=w_scale) for name in ("W_q", "W_k", "W_v", "W_o")}
    values = {"x": x, **Ws, "n_heads": H}
    if case.get("cache", "given") is None:
        return values                      # cache left out: None
    if case.get("misfit") or case.get("extra"):
        values["cache"] = _misfit_cache(new, case)
    else:
        x_past = _positions(new, "x_past", (B, t_past, d_model), case, past=True)
        values["cache"] = _cache(new, case, x_past, Ws["W_k"], Ws["W_v"])
    return values


def _valid(case: dict) -> bool:
    # float32 meets neither huge scores nor rows far apart: a row split between two keys whose
    # scores near 1e3 differ by little, times values of 30, is only good to about 1e-2 there
    return case["dtype"] == "float64" or case["values"] not in ("huge", "row_scales")


def _indivisible(case: dict) -> dict:
    return dict(case, extra=1) if case["n_heads"] > 1 else dict(case, n_heads=2, d_head=1, extra=1)


def _misfit(kind: str, one_token: bool):
    def make(case: dict) -> dict | None:
        if one_token and case["t_new"] == 1:
            return None                    # already one token
        return dict(case, misfit=kind, **({"t_new": 1} if one_token else {}))
    return make


INVALID = (
    Invalid("n_heads does not divide d_model", _indivisible),
    *(Invalid(why, _misfit(kind, False)) for kind, why in MISFITS.items()),
    *(Invalid(f"{why} (one new token)", _misfit(kind, True)) for kind, why in MISFITS.items()),
    Invalid("x has no new positions (t_new = 0)", lambda c: dict(c, t_new=0)),
    Invalid("x has no new positions (t_new = 0), with cache=None", lambda c: dict(c, t_new=0, cache=None)),
)

def constants(case: dict) -> dict:
    """Numbers a wrong factor may be, named as the mistake that gives it (see causal_mha)."""
    H, d_head = case["n_heads"], case["d_head"]
    d_model = H * d_head + case.get("extra", 0)
    return {"sqrt(d_head)": np.sqrt(d_head), "sqrt(d_head / d_model)": np.sqrt(d_head / d_model),
            "n_heads": H, "d_head": d_head, "t_new": case["t_new"], "t_past": case["t_past"],
            "t_past + t_new": case["t_past"] + case["t_new"]}


DOMAIN = Domain(Explore(
    "attend_with_cache", draw,
    # sizes where a wrong formula shows: 1 and 2, odd and even ones past the base values
    dims={"B": Dim(small=(1, 3), base=(2, 3), trivial=0), "t_new": Dim(small=(1, 2, 5, 7, 12), base=(3, 4, 5)),
          "n_heads": Dim(small=(1, 2, 5, 6), base=(2, 3, 4), trivial=0), "d_head": Dim(small=(1, 2, 3, 7), base=(2, 3, 5)),
          "t_past": Dim(minimum=0, small=(0, 1, 2, 7, 12), base=(4, 5, 6, 7))},
    families=("huge", "row_scales", "zeros", "zero", "constant", "tiny"),
    valid=_valid,
    scalars={"cache": (None,)},
    invalid=INVALID,
    pairs=(("values", "t_past"), ("values", "dtype"), ("t_new", "t_past"), ("cache", "t_new"),
           ("n_heads", "numbers")),
    real=({"B": 1, "t_new": 1, "n_heads": 1, "d_head": 2, "t_past": 8_200},),
    modes=(Mode("no cache", lambda c: dict(c, cache=None)), Mode("an empty cache", lambda c: dict(c, t_past=0)),
           Mode("a decoding step (one new token)", lambda c: dict(c, t_new=1))),
    cites={"B": SIZES_OF_ONE, "t_new": "t_new == 0 raises ValueError", "n_heads": ANY_NUMBER,
           "d_head": REAL_SIZES, "t_past": REAL_SIZES + "; a cache with t_past = 0 is the same as None",
           "cache": "cache None or (k, v) each (B, n_heads, t_past, d_head)"},
    # one new token over a cache past 32,767 positions: an int16 position index wraps there
    big=({"B": 1, "t_new": 1, "n_heads": 1, "d_head": 1, "t_past": 32_768},),
    outputs=("y", ("the returned cache", ("k", "v"))),
    axes={"y": {0: "batch", 1: "new positions", 2: "features"},
          "the returned cache": {0: "batch", 1: "heads", 2: "positions", 3: "features"}},
    constants=constants, probe=through_cache,
    grows=(Grows("t_past", "cached position",   # past NumPy's buffers of 8,192 entries: what grows shows
                 lambda n: {"t_past": n, "t_new": 1, "B": 1, "n_heads": 2, "d_head": 4}, (256, 512, 1024)),
           Grows("n_heads", "head", lambda n: {"t_past": 16, "t_new": 1, "B": 1, "n_heads": n, "d_head": 4}, (2, 4, 8))),
))
