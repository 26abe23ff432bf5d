"""Grader for llama_param_counts(...) and weight_gib(n_params, bits).

Cases name a configuration (CONFIGS) rather than list its sizes, so a failure reads
"[config=gqa3]" and shrinking, which could only make a configuration invalid, is off.
Counts are ints and are compared exactly.
"""
import numpy as np

from graders.engine.vocabulary import CheckFailed, check, expect_raises, kind_of

KEYS = ("embedding", "attention_q", "attention_kv", "attention_out", "feed_forward", "norms",
        "unembedding", "total")
ARGS = ("vocab_size", "d_model", "n_layers", "n_heads", "n_kv_heads", "d_ff")

CONFIGS = {
    # vocab_size, d_model, n_layers, n_heads, n_kv_heads, d_ff
    "8B": (128256, 4096, 32, 32, 8, 14336),        # the chapter's table
    "mha": (1000, 96, 3, 8, 8, 256),               # one KV head per query head
    "mqa": (503, 60, 5, 6, 1, 161),                # one KV head for all
    "gqa3": (777, 72, 7, 12, 4, 200),              # groups of 3: n_heads // n_kv_heads != n_kv_heads / 2
    "odd": (11, 15, 2, 5, 5, 9),                   # d_head = 3
    "d_head_1": (3, 7, 1, 7, 7, 5),                # d_head = 1, one layer
    "ones": (1, 1, 1, 1, 1, 1),
    "405B": (128256, 16384, 126, 128, 8, 53248),   # hundreds of billions: int arithmetic only
    "fresh": (257, 40, 3, 4, 2, 100),              # used only by the check on repeated calls
}

# The chapter's table for the 8B configuration, row by row.
TABLE_8B = {"embedding": 525_336_576, "attention_q": 536_870_912, "attention_kv": 268_435_456,
            "attention_out": 536_870_912, "feed_forward": 5_637_144_576, "norms": 266_240,
            "unembedding": 525_336_576, "total": 8_030_261_248}
GIB_8B = {16: "14.96", 8: "7.48", 4: "3.74"}   # the chapter's figures, to two decimals


# ----------------------------------------------------------------------------- helpers

def _show(value):
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):,.6g}"
    return repr(value)


def _source(config, tie):
    args = ", ".join(str(v) for v in CONFIGS[config])
    return f"llama_param_counts({args}{', tie_embeddings=True' if tie else ''})"


def _counts(impl, config, tie=None):
    """The attempt's dict for a named configuration, and the call as the candidate would write it."""
    kwargs = {} if tie is None else {"tie_embeddings": tie}
    out = impl.llama_param_counts(*CONFIGS[config], **kwargs)
    src = _source(config, tie)
    if not isinstance(out, dict):
        raise CheckFailed(f"{src} returned {kind_of(out)} {_show(out)}, expected a dict of ints by "
                          f"component", kind="type")
    return out, src


def _formula(key, config, tie):
    V, d, L, h, kv, ff = CONFIGS[config]
    dh = d // h
    return " = " + {
        "embedding": f"vocab_size x d_model = {V} x {d}",
        "attention_q": f"n_layers x d_model x n_heads x d_head = {L} x {d} x {h} x {dh}",
        "attention_kv": f"n_layers x 2 x d_model x n_kv_heads x d_head = {L} x 2 x {d} x {kv} x {dh}",
        "attention_out": f"n_layers x n_heads x d_head x d_model = {L} x {h} x {dh} x {d}",
        "feed_forward": f"n_layers x 3 x d_model x d_ff = {L} x 3 x {d} x {ff}",
        "norms": f"(2 x n_layers + 1) x d_model = {2 * L + 1} x {d}",
        "unembedding": "0 when tied" if tie else f"vocab_size x d_model = {V} x {d}",
        "total": "the sum of the seven other entries",
    }[key]


def _expect_keys(got, src):
    have, want = set(got), set(KEYS)
    if have != want:
        parts = []
        if want - have:
            parts.append("missing " + ", ".join(repr(k) for k in KEYS if k not in have))
        if have - want:
            parts.append("unexpected " + ", ".join(repr(k) for k in sorted(have - want, key=str)))
        raise CheckFailed(f"{src} returned the keys {sorted(have, key=str)}: {'; '.join(parts)} "
                          f"(exactly these eight: {', '.join(KEYS)})", kind="keys")


def _ratio(got, want):
    try:
        r = float(got) / float(want)
    except (TypeError, ValueError, ZeroDivisionError):
        return ""
    if not np.isfinite(r) or r <= 0:
        return ""
    if r == 0.5:
        return " (half of it)"
    # a ratio that rounds to 1 says nothing: the difference does
    if f"{r:.4g}" != "1":
        return f" ({r:.4g} times that)"
    d = float(got) - float(want)
    return f" ({abs(d):,.0f} {'more' if d > 0 else 'fewer'})"


def _expect_counts(got, want, src, config, tie=False, what="expected"):
    """Every entry equal to `want`; the first wrong component named with its formula."""
    _expect_keys(got, src)
    wrong = [k for k in KEYS if not _equal(got[k], want[k])]
    if wrong:
        k = wrong[0]
        also = f"; also wrong: {', '.join(wrong[1:])}" if len(wrong) > 1 else ""
        raise CheckFailed(f"{src}[{k!r}] is {_show(got[k])}, {what} {want[k]:,}{_formula(k, config, tie)}"
                          f"{_ratio(got[k], want[k])}{also}")


def _equal(a, b):
    try:
        return bool(a == b)
    except Exception:
        return False


def _reference(ref, config, tie=False):
    return ref.llama_param_counts(*CONFIGS[config], tie_embeddings=tie)


# ----------------------------------------------------------------------------- llama_param_counts

@check("returns a dict with exactly the keys " + ", ".join(KEYS),
       [{"config": "8B"}, {"config": "mqa"}], shrink=False)
def keys(impl, new, config):
    got, src = _counts(impl, config)
    _expect_keys(got, src)


@check("every count is an int (Python or NumPy), not a float",
       [{"config": "8B"}, {"config": "gqa3"}, {"config": "odd"}], shrink=False)
def integers(impl, new, config):
    got, src = _counts(impl, config)
    for key, value in got.items():
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise CheckFailed(f"{src}[{key!r}] is {_show(value)}, {kind_of(value)}: a number of "
                              f"parameters is an int, and a float stops being exact above 2**53", kind="type")


@check("the 8B configuration gives the chapter's table row by row (total 8,030,261,248)",
       [{"config": "8B"}], shrink=False)
def table_8b(impl, new, config):
    got, src = _counts(impl, config)
    _expect_counts(got, TABLE_8B, src, config, what="the chapter's table says")


@check("total is the sum of the seven other entries",
       [{"config": "8B"}, {"config": "gqa3"}, {"config": "odd", "tie": True}], shrink=False)
def total_is_the_sum(impl, new, config, tie=None):
    got, src = _counts(impl, config, tie)
    _expect_keys(got, src)
    try:
        parts = sum(got[k] for k in KEYS[:-1])
    except TypeError:
        raise CheckFailed(f"{src} holds entries that are not numbers: {got!r}", kind="type") from None
    if not _equal(got["total"], parts):
        raise CheckFailed(f"{src}['total'] is {_show(got['total'])}, but the seven other entries add up to "
                          f"{_show(parts)}")


@check("agrees with the reference on other configurations (multi-head, multi-query, groups of 3, "
       "sizes of 1, a 405B model)",
       [{"config": c} for c in ("mha", "mqa", "gqa3", "ones", "d_head_1", "405B")], shrink=False)
def agrees(impl, new, ref, config):
    got, src = _counts(impl, config)
    _expect_counts(got, _reference(ref, config), src, config)


@check("an odd d_head is allowed (d_model=15, n_heads=5 gives d_head 3)",
       [{"config": "odd"}, {"config": "d_head_1"}], shrink=False)
def odd_d_head(impl, new, ref, config):
    got, src = _counts(impl, config)
    _expect_counts(got, _reference(ref, config), src, config)


@check("tied embeddings: unembedding is 0, every other entry unchanged, total smaller by vocab_size x d_model",
       [{"config": c} for c in ("8B", "mqa", "ones")], shrink=False)
def tied(impl, new, ref, config):
    # untied first, then tied, on the same sizes
    untied, src_untied = _counts(impl, config, False)
    _expect_counts(untied, _reference(ref, config), src_untied, config)
    tied, src = _counts(impl, config, True)
    _expect_counts(tied, _reference(ref, config, True), src, config, tie=True)


@check("a call's answer depends on its own arguments, not on the calls made before it",
       [{"config": "fresh"}], shrink=False)
def calls_independent(impl, new, ref, config):
    V, d, L, h, kv, ff = CONFIGS[config]
    # the same sizes tied, then untied, then with one size changed: four different answers
    steps = [((V, d, L, h, kv, ff), True), ((V, d, L, h, kv, ff), False), ((V, d, L, h, 1, ff), False),
             ((V, d, L, h, kv, ff + 1), False)]
    earlier = []
    for args, tie in steps:
        src = f"llama_param_counts({', '.join(map(str, args))}, tie_embeddings={tie})"
        got = impl.llama_param_counts(*args, tie_embeddings=tie)
        want = ref.llama_param_counts(*args, tie_embeddings=tie)
        if isinstance(got, dict) and any(not _equal(got.get(k), want[k]) for k in KEYS):
            for old_src, old_got, old_want in earlier:
                if old_want != want and old_got == got:
                    k = next(k for k in KEYS if old_want[k] != want[k])
                    raise CheckFailed(f"{src} returned exactly what the earlier call {old_src} returned "
                                      f"({k} = {_show(got.get(k))}), though the two answers differ ({k} is "
                                      f"{want[k]:,} here): an answer must depend on its own call's arguments")
        earlier.append((src, got, want))


SIZES = [("vocab_size", 0), ("d_model", 0), ("n_layers", 0), ("d_ff", 0), ("d_model", -4096),
         ("n_layers", -1), ("n_heads", 0), ("n_kv_heads", 0), ("n_heads", -4)]


@check("any of the six sizes below 1 raises ValueError, checked before anything divides by it",
       [{"size": name, "value": value} for name, value in SIZES], shrink=False)
def sizes_below_one(impl, new, size, value):
    args = dict(zip(ARGS, CONFIGS["mqa"]), **{size: value})
    expect_raises(ValueError, impl.llama_param_counts, *(args[a] for a in ARGS), why=f"{size}={value} is below 1")


@check("raises ValueError when n_heads does not divide d_model or n_kv_heads does not divide n_heads", [
    {"d_model": 60, "n_heads": 7, "n_kv_heads": 7},
    {"d_model": 60, "n_heads": 6, "n_kv_heads": 4},
    {"d_model": 60, "n_heads": 6, "n_kv_heads": 12},
    {"d_model": 10, "n_heads": 4, "n_kv_heads": 2},
], shrink=False)
def divisibility(impl, new, d_model, n_heads, n_kv_heads):
    why = (f"n_heads={n_heads} does not divide d_model={d_model}" if d_model % n_heads else
           f"n_kv_heads={n_kv_heads} does not divide n_heads={n_heads}")
    expect_raises(ValueError, impl.llama_param_counts, 503, d_model, 5, n_heads, n_kv_heads, 161, why=why)


# ----------------------------------------------------------------------------- weight_gib

def _gib(impl, n_params, bits):
    out = impl.weight_gib(n_params, bits)
    src = f"weight_gib({n_params}, {bits})"
    if isinstance(out, (bool, np.bool_)) or not isinstance(out, (int, float, np.integer, np.floating)):
        raise CheckFailed(f"{src} returned {_show(out)}, {kind_of(out)}; expected a float", kind="type")
    return float(out), src


def _expect_gib(got, n_params, bits, src, note=""):
    want = n_params * bits / 8 / 2**30
    # relative tolerance only: a tiny model's weights are a tiny fraction of a GiB
    if not np.isclose(got, want, rtol=1e-6, atol=0.0):
        ratio = f"; {got / want:.6g} times that" if want and got else ""
        raise CheckFailed(f"{src} returned {got:.6g}, expected {want:.6g} GiB{note}{ratio}")


@check("weight_gib: the 8B model's weights take 14.96 GiB at 16 bits, 7.48 at 8 and 3.74 at 4", shrink=False)
def gib_8b(impl, new):
    n_params = TABLE_8B["total"]
    for bits, figure in GIB_8B.items():
        got, src = _gib(impl, n_params, bits)
        _expect_gib(got, n_params, bits, src, f" (the chapter's {figure}, to the float tolerance)")


@check("weight_gib agrees with n_params x bits / 8 bytes, in GiB, on other counts and widths", [
    {"n_params": 1, "bits": 8}, {"n_params": 3, "bits": 1}, {"n_params": 2**30, "bits": 8},
    {"n_params": 7_000_000_001, "bits": 3}, {"n_params": 405_853_388_800, "bits": 4},
    {"n_params": 123_456_789, "bits": 32},
], shrink=False)
def gib_other(impl, new, n_params, bits):
    got, src = _gib(impl, n_params, bits)
    _expect_gib(got, n_params, bits, src)


@check("weight_gib raises ValueError when bits is below 1",
       [{"bits": 0}, {"bits": -16}], shrink=False)
def gib_value_error(impl, new, bits):
    expect_raises(ValueError, impl.weight_gib, 8_030_261_248, bits, why=f"bits={bits} is below 1")
