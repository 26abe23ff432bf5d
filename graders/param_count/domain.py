"""The input domain of llama_param_counts(vocab_size, d_model, n_layers, n_heads, n_kv_heads,
d_ff, tie_embeddings=False) and weight_gib(n_params, bits).

Sizes vocab_size, n_layers, n_kv_heads, group (query heads per KV head), d_head and d_ff:
n_heads = n_kv_heads * group and d_model = n_heads * d_head, so every explored call is
valid, odd d_head included; a case may give n_heads or d_model outright (the ValueErrors).
Base values differ from one another (n_kv_heads != group: sizing the KV projections by the
group gives the same count only when n_kv_heads**2 == n_heads). tie_embeddings both ways
(True in plain cases, so that call styles pass it positionally and by keyword, and compare
False given with False left out). Large cases: the 8B and 405B configurations, whose
products pass 2**31 (an int32 anywhere wraps). vocab_size and n_layers, which have no upper
bound, at 2**31 and 10**12 too (one at a time: their products stay within an int64); every
size as a NumPy integer. weight_gib: bits from 1 to 32 (bits // 8 is 0 at 4), n_params from 0
(an answer far below 1 GiB is compared relative to its own scale, not to the contract's atol
of 1e-9, which would pass anything there) to 4e11, past 2**53 and at 10**12.
"""
from graders.engine.domain import ANY_NUMBER, REAL_SIZES, UNBOUNDED, Dim, Domain, Explore, Grows, Invalid

ARGS = ("vocab_size", "d_model", "n_layers", "n_heads", "n_kv_heads", "d_ff")


def arguments(case: dict) -> dict:
    """The six sizes of a case: n_heads and d_model from the group and d_head unless given."""
    n_heads = case["n_kv_heads"] * case["group"]
    d_model = case.get("d_model", n_heads * case["d_head"])
    n_heads = case.get("n_heads", n_heads)
    return {"vocab_size": case["vocab_size"], "d_model": d_model, "n_layers": case["n_layers"],
            "n_heads": n_heads, "n_kv_heads": case["n_kv_heads"], "d_ff": case["d_ff"]}


def draw_counts(new, case: dict) -> dict:
    values = arguments(case)
    if "tie_embeddings" in case:
        values["tie_embeddings"] = case["tie_embeddings"]
    return values


def draw_gib(new, case: dict) -> dict:
    return {"n_params": case["n_params"], "bits": case["bits"]}


def _below_one(name: str, value: int):
    return Invalid(f"{name}={value} is below 1", lambda c: dict(c, **{name: value}))


def _indivisible(case: dict) -> dict:
    """n_heads (2 or more) does not divide d_model."""
    n_heads = max(2, case["n_kv_heads"] * case["group"])
    return dict(case, n_kv_heads=1, n_heads=n_heads, d_model=n_heads * case["d_head"] + 1)


def _kv_indivisible(case: dict) -> dict:
    """n_kv_heads (2 or more) does not divide n_heads, which still divides d_model."""
    kv = max(2, case["n_kv_heads"])
    n_heads = kv * case["group"] + 1
    return dict(case, n_kv_heads=kv, n_heads=n_heads, d_model=n_heads * case["d_head"])


COUNTS_INVALID = (
    *(_below_one(name, 0) for name in ARGS),   # negative sizes: the kata's own sizes_below_one
    Invalid("n_heads does not divide d_model", _indivisible),
    Invalid("n_kv_heads does not divide n_heads", _kv_indivisible),
)

EIGHT_B = {"vocab_size": 128_256, "n_layers": 32, "n_kv_heads": 8, "group": 4, "d_head": 128, "d_ff": 14_336}
BIG_405B = {"vocab_size": 128_256, "n_layers": 126, "n_kv_heads": 8, "group": 16, "d_head": 128, "d_ff": 53_248}

DOMAIN = Domain(
    Explore("llama_param_counts", draw_counts,
            # a few small values each (1: one layer, multi-query, multi-head, d_head 1): ints are cheap
            # to count but each call is a round trip
            dims={"vocab_size": Dim(small=(1, 2), base=(11, 13, 17)), "n_layers": Dim(small=(1, 5), base=(2, 3, 4)),
                  "n_kv_heads": Dim(small=(1, 5), base=(2, 3)), "group": Dim(small=(1, 2, 3), base=(2, 3, 4)),
                  "d_head": Dim(small=(1, 3), base=(5, 6, 7)), "d_ff": Dim(small=(1, 7), base=(9, 10, 14))},
            scalars={"tie_embeddings": (False, True)},
            invalid=COUNTS_INVALID,
            big=(dict(EIGHT_B, tie_embeddings=False), dict(EIGHT_B, tie_embeddings=True), BIG_405B,
                 # one layer whose feed-forward alone passes 2**31 (3 * 1024 * 700_000)
                 {"vocab_size": 3, "n_layers": 1, "n_kv_heads": 1, "group": 1, "d_head": 1024, "d_ff": 700_000}),
            float32=False, fixed={"tie_embeddings": True},
            pairs=(("tie_embeddings", "numbers"), ("vocab_size", "numbers"), ("group", "d_head")),
            counts=("vocab_size", "n_layers"),
            cites={"vocab_size": UNBOUNDED, "n_layers": UNBOUNDED, "n_kv_heads": "n_kv_heads does not divide n_heads",
                   "group": "n_kv_heads does not divide n_heads", "d_head": "An odd d_head is allowed",
                   "d_ff": REAL_SIZES, "tie_embeddings": "unembedding (0 when tie_embeddings)"},
            grows=(Grows("n_layers", "layer", lambda n: {"n_layers": n}, (8, 16, 32)),)),
    Explore("weight_gib", draw_gib,
            # from no weights at all: an answer far below 1 GiB is compared relative to its own scale
            dims={"n_params": Dim(minimum=0, small=(0, 1, 2, 3, 2**20, 3_000_001), base=(7_000_000_001, 8_030_261_248))},
            scalars={"bits": (1, 2, 3, 4, 8, 12, 16, 32)},
            invalid=(Invalid("bits=0 is below 1", lambda c: dict(c, bits=0)),
                     Invalid("bits=-16 is below 1", lambda c: dict(c, bits=-16))),
            big=({"n_params": 405_853_388_800, "bits": 4}, {"n_params": 2**53 + 1, "bits": 3}),
            float32=False, fixed={"bits": 16},
            pairs=(("n_params", "bits"), ("bits", "numbers"), ("n_params", "numbers")),
            counts=("n_params",),
            cites={"n_params": UNBOUNDED + "; weight_gib(n_params, bits) is n_params * bits / 8 / 2**30",
                   "bits": "bits below 1 raises ValueError. " + ANY_NUMBER}),
)
