"""Grader for top_p_probs and sample_top_p: temperature, the nucleus, and sampling with a Generator."""
import math

import numpy as np

from graders.engine import grammar
from graders.engine.vocabulary import (
    CheckFailed,
    check,
    expect_close,
    expect_finite,
    expect_inputs_unchanged,
    expect_raises,
    expect_rows_sum_to_one,
    expect_shape,
    kind_of,
    tolerance,
    with_dtypes,
)

# The chapter's worked example: at temperature 1 and top_p 0.9 the first two tokens survive.
WORKED = [8.2, 6.9, 5.4, 4.8, 4.1, 3.7, 2.2, 1.0]
# The same logits out of order, so that sorted positions and token ids differ.
SHUFFLED = [4.1, 8.2, 1.0, 6.9, 5.4, 2.2, 4.8, 3.7]
# Small named inputs; the name is what a failure's case description shows.
EXAMPLES = {
    "p = [0.1, 0.6, 0.3]": [math.log(0.1), math.log(0.6), math.log(0.3)],
    # p = 0.25 each, exactly (also as exp(-log 4)), so cumulative sums hit 0.5 and 0.75 exactly
    "four equal logits": [0.0, 0.0, 0.0, 0.0],
    # p = [0.5, 0.5, 0, 0] exactly: exp(-1000) is 0
    "p = [0.5, 0.5, 0, 0]": [0.0, 0.0, -1000.0, -1000.0],
    "shuffled worked example": SHUFFLED,
    "worked example": WORKED,
    # p = 0.31 for each of three tied tokens
    "three tied in the middle": [2.0, 5.0, 5.0, 5.0, 1.0],
    # p = 0.18 for each of five tied tokens, not adjacent
    "five tied, scattered": [1.0, 3.0, 3.0, 0.0, 3.0, 3.0, 2.0, 3.0],
    "eight equal logits": [0.0] * 8,
    "three rows with ties": [[3.0, 3.0, 1.0], [1.0, 3.0, 3.0], [2.0, 0.0, 2.0]],
    "four rows with tied maxima": [[1.0, 3.0, 3.0, 2.0], [0.5, -1.0, 0.5, 0.5], [7.0, 7.0, 7.0, 7.0],
                                   [-2.0, -1.0, -3.0, -1.0]],
    "five distinct logits": [0.2, 1.5, -0.3, 1.1, 0.9],
    "seven unsorted logits": [1.2, -0.3, 2.0, 0.4, 1.9, -1.5, 0.9],
}

PROBS_SHAPE = "top_p_probs returns an array of the logits' shape"
AGREES = "top_p_probs agrees with the reference"
EXAMPLE = "the worked example: at temperature 1 and top_p 0.9 exactly the first two tokens survive"
SUMS = "every row sums to 1: the kept probabilities are renormalised"
NUCLEUS = "only the nucleus is non-zero: the most probable tokens until their sum reaches top_p"
CROSSING = "the token whose cumulative probability reaches top_p is kept (so at least one token always is)"
KEEPS_ALL = "top_p = 1 keeps every token: the plain softmax of logits / temperature"
DIVIDES = "temperature divides the logits before the softmax: log p_i - log p_j = (z_i - z_j) / T"
SHARPENS = "a lower temperature sharpens the distribution, a higher one flattens it"
GREEDY = "temperature 0 is greedy: a one-hot on the argmax, the lowest index among ties"
TIES = "among equal probabilities the lower index is kept first"
BATCHED = "works row by row on a batch (B, V) and on any leading axes"
HUGE = "stays finite and correct for logits of 1e4 and a temperature of 0.002"
FAR_BELOW = "stays finite and correct when every logit of a row is far below zero (near -800)"
COLD = "a small temperature sharpens without turning greedy (T = 0.002 on logits 0.001 to 0.01 apart)"
LARGE_V = "a vocabulary of 4097 tokens, with a nucleus of thousands of them"
ERRORS = "raises ValueError for a negative temperature or a top_p outside (0, 1], NaN included, at any temperature"
UNCHANGED = "leaves the logits unchanged"
S_TYPE = "sample_top_p returns an integer scalar for (V,) and an int array (...) for (..., V)"
S_SEED = "sample_top_p gives the same draws for the same seed"
S_RNG = "sample_top_p draws with the Generator it is given, not NumPy's global random state"
S_NUCLEUS = "sample_top_p never draws a token outside the nucleus"
S_NONE = "sample_top_p works with rng=None"
S_GREEDY = "sample_top_p at temperature 0 always draws the argmax"
S_FREQ = "sample_top_p's frequencies match top_p_probs (chi-square test)"


# ----------------------------------------------------------------------------- NumPy's global state

# NumPy's module-level samplers (np.random.choice, np.random.rand, ...) raise in the attempt's
# process: a sampler that ignores `rng` then fails in a way that can be reproduced, replayed by
# the diagnosis (which refuses them the same way) and named, instead of drawing numbers that
# depend on whatever ran before it.
WORKER_SETUP = ("refuse_global_random",)


# ----------------------------------------------------------------------------- helpers

def full_softmax(ref, logits, temperature):
    """softmax(logits / T) in float64, before any token is cut."""
    return ref.top_p_probs(np.asarray(logits, dtype=np.float64), temperature, 1.0)


def safe_top_p(ref, logits, temperature, wanted):
    """`wanted`, or the nearest value 0.02 apart, so that no row's cumulative sum lies within 1e-3 of it.

    Away from exact boundaries, float32 rounding must not decide whether a token is kept.
    """
    if wanted == 1 or temperature == 0:
        return wanted
    p = full_softmax(ref, logits, temperature)
    cum = np.cumsum(-np.sort(-p, axis=-1), axis=-1)
    for step in (0, 1, -1, 2, -2, 3, -3, 4, -4):
        top_p = round(wanted + 0.02 * step, 2)
        if 0 < top_p < 1 and np.min(np.abs(cum - top_p)) > 1e-3:
            return top_p
    return wanted


def _row_name(r, lead):
    if not lead:
        return ""
    idx = np.unravel_index(r, lead)
    return f" (row {int(idx[0])})" if len(lead) == 1 else f" (row {tuple(int(i) for i in idx)})"


def _mass_above(p, i):
    """The probability held by the tokens ranked above token i (equal probabilities: lower index first)."""
    order = np.argsort(-p, kind="stable")
    return float(p[order[:int(np.flatnonzero(order == i)[0])]].sum())


def _tokens(ids):
    """[0, 3, 5] for a few token ids; "1024 tokens" for many."""
    ids = np.asarray(ids).tolist()
    return str(ids) if len(ids) <= 12 else f"{len(ids)} tokens"


def expect_support(out, want, p_full, top_p, what):
    """Row by row, the attempt's non-zero tokens are exactly the reference's nucleus."""
    out = expect_finite(out, what)
    V = want.shape[-1]
    got = out.reshape(-1, V) != 0
    keep = want.reshape(-1, V) > 0
    P = p_full.reshape(-1, V)
    for r in range(keep.shape[0]):
        if np.array_equal(got[r], keep[r]):
            continue
        missing, extra = np.flatnonzero(keep[r] & ~got[r]), np.flatnonzero(got[r] & ~keep[r])
        tied = " (equal probabilities rank the lower index first)"
        if missing.size:
            i = int(missing[0])
            why = (f"token {i} (p = {P[r, i]:.4g}) belongs to it: the tokens ranked above it hold only "
                   f"{_mass_above(P[r], i):.4g}, short of top_p = {top_p:g}")
        else:
            i = int(extra[0])
            why = (f"token {i} (p = {P[r, i]:.4g}) does not: the tokens ranked above it already hold "
                   f"{_mass_above(P[r], i):.4g}, which reaches top_p = {top_p:g}")
        if np.sum(P[r] == P[r, i]) > 1:
            why += tied
        raise CheckFailed(f"{what} keeps {_tokens(np.flatnonzero(got[r]))}{_row_name(r, want.shape[:-1])}, "
                          f"but the nucleus is {_tokens(np.flatnonzero(keep[r]))}: {why}", kind="nucleus")
    return out


def probs_call(impl, logits, temperature, top_p):
    """The attempt's probabilities, checked for shape and NaN; `what` names the call."""
    out = impl.top_p_probs(logits, temperature=temperature, top_p=top_p)
    what = impl.last_call()
    out = expect_finite(expect_shape(out, logits.shape, what), what)
    return out, what


def expect_draws(out, lead, V, what):
    """An int array of shape `lead` (an integer scalar when lead is ()) with ids in [0, V)."""
    if lead == ():
        if isinstance(out, (bool, np.bool_)) or not isinstance(out, (int, np.integer)):
            if isinstance(out, np.ndarray):
                got, but = f"an array of shape {out.shape}", ", not an array"
            else:
                got, but = f"{kind_of(out)} ({out!r})", ""
            raise CheckFailed(f"{what} returned {got} for logits of shape ({V},); expected an integer scalar "
                              f"(a Python int or np.int64){but}", kind="type")
        arr = np.asarray(out)
    else:
        arr = expect_shape(out, lead, what)
        if not np.issubdtype(arr.dtype, np.integer):
            raise CheckFailed(f"{what} returned an array of dtype {arr.dtype}; expected integer token ids",
                              kind="type")
    if arr.size and (arr.min() < 0 or arr.max() >= V):
        bad = int(arr.min()) if arr.min() < 0 else int(arr.max())
        raise CheckFailed(f"{what} returned token id {bad}, outside [0, {V})", kind="range")
    return arr


def batch_of(new, row, n):
    """`n` identical rows of logits: one batched call gives n independent draws."""
    base = new.array("row", row)
    return new.let("logits", np.tile(base, (n, 1)), f"np.tile(row, ({n}, 1))")


def seeded(new, name, seed):
    return new.let(name, np.random.default_rng(seed), f"np.random.default_rng({seed})")


def draw(impl, logits, temperature, top_p, rng):
    """The attempt's draws, checked for type, shape and range."""
    out = impl.sample_top_p(logits, temperature=temperature, top_p=top_p, rng=rng)
    return expect_draws(out, logits.shape[:-1], logits.shape[-1], impl.last_call())


# ----------------------------------------------------------------------------- top_p_probs

SHAPES = [
    {"shape": (5,), "seed": 0},
    {"shape": (1,), "seed": 1},
    {"shape": (4, 7), "seed": 2},
    {"shape": (1, 3), "seed": 3},
    {"shape": (2, 3, 6), "seed": 4},
    {"shape": (3, 1), "seed": 5},
]


@check(PROBS_SHAPE, SHAPES)
def probs_shape(impl, new, shape):
    logits = new.normal("logits", shape, scale=2.0)
    expect_shape(impl.top_p_probs(logits, temperature=0.8, top_p=0.9), shape, impl.last_call())


@check(AGREES, with_dtypes([
    {"shape": (6,), "temperature": 1.0, "top_p": 0.9, "seed": 10},
    {"shape": (3, 9), "temperature": 0.7, "top_p": 0.8, "seed": 11},
    {"shape": (4, 11), "temperature": 1.2, "top_p": 1.0, "seed": 13},
]) + with_dtypes([
    {"shape": (2, 2, 5), "temperature": 1.6, "top_p": 0.6, "seed": 12},
    {"shape": (1, 7), "temperature": 0.4, "top_p": 0.95, "seed": 14},
    {"shape": (3, 5), "temperature": 0.0, "top_p": 0.5, "seed": 15},
], ("float64",)))
def agrees(impl, new, ref, shape, temperature, top_p, dtype):
    logits = new.normal("logits", shape, scale=2.0, dtype=dtype)
    top_p = safe_top_p(ref, logits, temperature, top_p)
    want = ref.top_p_probs(logits.astype(np.float64), temperature, top_p)
    out, what = probs_call(impl, logits, temperature, top_p)
    expect_close(out, want, what, dtype)


@check(EXAMPLE, [{"dtype": "float64"}, {"dtype": "float32"}], shrink=False)
def worked_example(impl, new, dtype):
    logits = new.array("logits", WORKED, dtype=dtype)
    out, what = probs_call(impl, logits, 1.0, 0.9)
    kept = np.flatnonzero(out != 0).tolist()
    if kept != [0, 1]:
        raise CheckFailed(f"{what} keeps tokens {kept}, expected exactly [0, 1]: p = [0.7155, 0.1950, 0.0435, ...] "
                          f"in decreasing order, and the cumulative sum first reaches 0.9 at the second token "
                          f"(0.7155, then 0.9105)")
    expect_close(out, [0.7858349835, 0.2141650165, 0, 0, 0, 0, 0, 0], what, dtype)


@check(SUMS, [
    {"shape": (4, 6), "temperature": 1.0, "top_p": 0.7, "seed": 20},
    {"shape": (7,), "temperature": 0.6, "top_p": 0.5, "seed": 21},
    {"shape": (2, 3, 8), "temperature": 1.5, "top_p": 0.9, "seed": 22},
    {"shape": (5, 4), "temperature": 1.0, "top_p": 1.0, "seed": 23},
])
def sums_to_one(impl, new, ref, shape, temperature, top_p):
    logits = new.normal("logits", shape, scale=2.0)
    top_p = safe_top_p(ref, logits, temperature, top_p)
    out, what = probs_call(impl, logits, temperature, top_p)
    expect_rows_sum_to_one(out.astype(np.float64), what)


@check(NUCLEUS, [
    {"B": 3, "V": 7, "temperature": 1.0, "top_p": 0.8, "seed": 30},
    {"B": 2, "V": 9, "temperature": 0.7, "top_p": 0.6, "seed": 31},
    {"B": 4, "V": 6, "temperature": 1.6, "top_p": 0.7, "seed": 32},
    {"B": 1, "V": 12, "temperature": 0.5, "top_p": 0.9, "seed": 33},
    {"B": 2, "V": 8, "temperature": 2.5, "top_p": 0.5, "seed": 34},
])
def nucleus(impl, new, ref, B, V, temperature, top_p):
    logits = new.normal("logits", (B, V), scale=2.0)
    top_p = safe_top_p(ref, logits, temperature, top_p)
    want = ref.top_p_probs(logits, temperature, top_p)
    out, what = probs_call(impl, logits, temperature, top_p)
    expect_support(out, want, full_softmax(ref, logits, temperature), top_p, what)


@check(CROSSING, [
    # 0.6 falls short of 0.7, so the 0.3 that crosses it stays
    {"example": "p = [0.1, 0.6, 0.3]", "top_p": 0.7},
    # cumulative sums equal to top_p exactly: the token that reaches it stays
    {"example": "four equal logits", "top_p": 0.5},
    {"example": "four equal logits", "top_p": 0.75},
    {"example": "p = [0.5, 0.5, 0, 0]", "top_p": 0.5},
    # the most probable token alone passes a tiny top_p: it is kept, never an empty nucleus
    {"example": "shuffled worked example", "top_p": 1e-6},
    {"example": "worked example", "top_p": 0.95},
], shrink=False)
def crossing_token_kept(impl, new, ref, example, top_p):
    z = new.array("logits", EXAMPLES[example])
    want = ref.top_p_probs(z, 1.0, top_p)
    out, what = probs_call(impl, z, 1.0, top_p)
    expect_support(out, want, full_softmax(ref, z, 1.0), top_p, what)
    expect_close(out, want, what)


@check(KEEPS_ALL, [
    {"shape": (9,), "temperature": 1.0, "seed": 40},
    {"shape": (3, 6), "temperature": 0.6, "seed": 41},
    {"shape": (2, 5), "temperature": 2.5, "seed": 42},
])
def top_p_one_keeps_all(impl, new, ref, shape, temperature):
    logits = new.normal("logits", shape, scale=1.5)
    want = full_softmax(ref, logits, temperature)
    out, what = probs_call(impl, logits, temperature, 1.0)
    zero = np.flatnonzero(out.reshape(-1) == 0)
    if zero.size:
        r, tok = divmod(int(zero[0]), shape[-1])
        raise CheckFailed(f"{what}{_row_name(r, shape[:-1])} sets token {tok} (p = {want.reshape(-1)[zero[0]]:.4g}) "
                          f"to 0: top_p = 1 keeps every token")
    expect_close(out, want, what)


@check(DIVIDES, [
    {"V": 7, "temperature": 0.5, "top_p": 1.0, "dtype": "float64", "seed": 50},
    {"V": 6, "temperature": 2.0, "top_p": 1.0, "dtype": "float64", "seed": 51},
    {"V": 9, "temperature": 0.3, "top_p": 0.9, "dtype": "float64", "seed": 52},
    {"V": 8, "temperature": 1.7, "top_p": 0.8, "dtype": "float64", "seed": 53},
    {"V": 7, "temperature": 0.7, "top_p": 1.0, "dtype": "float32", "seed": 54},
], minimum={"V": 2})
def temperature_divides(impl, new, ref, V, temperature, top_p, dtype):
    logits = new.normal("logits", (V,), scale=1.5, dtype=dtype)
    z = logits.astype(np.float64)
    top_p = safe_top_p(ref, z, temperature, top_p)
    want = ref.top_p_probs(z, temperature, top_p)
    out, what = probs_call(impl, logits, temperature, top_p)
    out = out.astype(np.float64)
    both = np.flatnonzero((out > 0) & (want > 0))
    top = int(np.argmax(z))
    if top not in both:
        expect_support(out, want, full_softmax(ref, z, temperature), top_p, what)
    # the contract's tolerance on each probability (rtol, and atol relative to its size), carried
    # into the difference of two logarithms
    rtol, atol = tolerance(dtype)
    for j in both:
        if j == top:
            continue
        got, gap = math.log(out[j]) - math.log(out[top]), z[j] - z[top]
        allowed = 2 * rtol + atol / want[j] + atol / want[top]
        if abs(got - gap / temperature) > allowed:
            # what the ratio equals, when it equals what another use of T gives (T != 1 here)
            seen = next((f", which is {text}" for value, text in (
                (gap, f"z[{j}] - z[{top}], as at temperature 1"),
                (gap * temperature, f"(z[{j}] - z[{top}]) * T: the logits are multiplied by T"))
                if abs(got - value) <= allowed), "")
            raise CheckFailed(f"in {what}, log p[{j}] - log p[{top}] is {got:.8g}, expected (z[{j}] - z[{top}]) / T = "
                              f"{gap / temperature:.8g}{seen}")


@check(SHARPENS, [{"V": 6, "seed": 60}, {"V": 3, "seed": 61}], minimum={"V": 2})
def lower_temperature_sharpens(impl, new, V):
    logits = new.normal("logits", (V,), scale=1.5)
    temperatures = [4.0, 2.0, 1.0, 0.5, 0.25]
    peaks = []
    # a copy per call: an attempt that writes into its input is another check's business
    copies = [logits] + [new.let(f"logits_{i}", logits.copy(), "logits.copy()") for i in range(1, len(temperatures))]
    for z, t in zip(copies, temperatures):
        out, what = probs_call(impl, z, t, 1.0)
        peaks.append(float(np.max(out)))
    for (t_hi, p_hi), (t_lo, p_lo) in zip(zip(temperatures, peaks), zip(temperatures[1:], peaks[1:])):
        if not p_lo > p_hi + 1e-9:
            raise CheckFailed(f"the largest probability of top_p_probs(logits, temperature=T, top_p=1.0) is {p_lo:.4g} "
                              f"at T = {t_lo:g} but {p_hi:.4g} at T = {t_hi:g}: a lower temperature must sharpen the "
                              f"distribution")


@check(GREEDY, [
    {"example": "four rows with tied maxima", "top_p": 1.0, "dtype": "float64"},
    {"example": "four rows with tied maxima", "top_p": 0.3, "dtype": "float32"},
    {"example": "five distinct logits", "top_p": 0.9, "dtype": "float64"},
], shrink=False)
def temperature_zero_is_greedy(impl, new, example, top_p, dtype):
    z = new.array("logits", EXAMPLES[example], dtype=dtype)
    out, what = probs_call(impl, z, 0.0, top_p)
    V = z.shape[-1]
    best = np.argmax(z, axis=-1)
    want = (np.arange(V) == best[..., None]).astype(np.float64)
    rows, wants = out.reshape(-1, V).astype(np.float64), want.reshape(-1, V)
    flat = z.reshape(-1, V)
    for r in range(rows.shape[0]):
        if not np.allclose(rows[r], wants[r], rtol=0, atol=1e-12):
            shown = np.array2string(rows[r], precision=4, separator=", ")
            tied = np.flatnonzero(flat[r] == flat[r].max())
            shared = (f"; it shares the mass among the equal maxima {tied.tolist()}" if len(tied) > 1
                      and np.allclose(rows[r], np.isin(np.arange(V), tied) / len(tied), rtol=0, atol=1e-12) else "")
            raise CheckFailed(f"{what}{_row_name(r, z.shape[:-1])} is {shown}, expected the one-hot on token "
                              f"{int(best.reshape(-1)[r])}, the first argmax (ties go to the lowest index){shared}")


@check(TIES, [
    # top_p 0.5 needs two of the three tied tokens: the lower two
    {"example": "three tied in the middle", "top_p": 0.5},
    # top_p 0.5 needs three of the five tied tokens
    {"example": "five tied, scattered", "top_p": 0.5},
    {"example": "eight equal logits", "top_p": 0.3},
    {"example": "three rows with ties", "top_p": 0.4},
], shrink=False)
def ties_lower_index_first(impl, new, ref, example, top_p):
    z = new.array("logits", EXAMPLES[example])
    want = ref.top_p_probs(z, 1.0, top_p)
    out, what = probs_call(impl, z, 1.0, top_p)
    expect_support(out, want, full_softmax(ref, z, 1.0), top_p, what)
    expect_close(out, want, what)


@check(BATCHED, [
    {"shape": (4, 7), "temperature": 0.9, "top_p": 0.8, "seed": 70},
    {"shape": (2, 3, 5), "temperature": 1.3, "top_p": 0.7, "seed": 71},
    {"shape": (1, 6), "temperature": 1.0, "top_p": 0.9, "seed": 72},
    {"shape": (5, 1), "temperature": 0.8, "top_p": 0.5, "seed": 73},
    {"shape": (3, 4), "temperature": 0.0, "top_p": 0.9, "seed": 74},
])
def batched(impl, new, ref, shape, temperature, top_p):
    logits = new.normal("logits", shape, scale=2.0)
    top_p = safe_top_p(ref, logits, temperature, top_p)
    want = ref.top_p_probs(logits, temperature, top_p)
    out, what = probs_call(impl, logits, temperature, top_p)
    rows, wants = out.reshape(-1, shape[-1]).astype(np.float64), want.reshape(-1, shape[-1])
    for r in range(rows.shape[0]):
        expect_close(rows[r], wants[r], f"{what}{_row_name(r, shape[:-1])}")


@check(HUGE, [
    {"shape": (3, 6), "scale": 1e4, "temperature": 1.0, "top_p": 0.9, "dtype": "float64", "seed": 80},
    {"shape": (3, 6), "scale": 1e4, "temperature": 1.0, "top_p": 0.9, "dtype": "float32", "seed": 81},
    {"shape": (2, 7), "scale": 5.0, "temperature": 0.002, "top_p": 0.8, "dtype": "float64", "seed": 82},
    {"shape": (2, 5), "scale": 100.0, "temperature": 1.0, "top_p": 1.0, "dtype": "float32", "seed": 83},
])
def huge_logits(impl, new, ref, shape, scale, temperature, top_p, dtype):
    logits = new.normal("logits", shape, scale=scale, dtype=dtype)
    want = ref.top_p_probs(logits.astype(np.float64), temperature, top_p)
    out, what = probs_call(impl, logits, temperature, top_p)
    expect_close(out, want, what, dtype, extreme=True)


@check(FAR_BELOW, [
    {"shape": (3, 6), "temperature": 1.0, "top_p": 0.9, "dtype": "float64", "seed": 84},
    {"shape": (2, 5), "temperature": 0.5, "top_p": 1.0, "dtype": "float64", "seed": 85},
    {"shape": (4, 7), "temperature": 1.0, "top_p": 0.8, "dtype": "float32", "seed": 86},
])
def far_below_zero(impl, new, ref, shape, temperature, top_p, dtype):
    # spread 1 around -800: exp of any logit underflows to 0 unless the row's max is taken off first
    z = new.normal("z", shape, dtype=dtype)
    logits = new.let("logits", (z - 800).astype(dtype), f"(z - 800).astype(np.{dtype})")
    top_p = safe_top_p(ref, logits, temperature, top_p)
    want = ref.top_p_probs(logits.astype(np.float64), temperature, top_p)
    out, what = probs_call(impl, logits, temperature, top_p)
    expect_close(out, want, what, dtype)


@check(COLD, [{"top_p": 1.0}, {"top_p": 0.9}], shrink=False)
def small_temperature(impl, new, ref, top_p):
    # at T = 0.002 a gap of 0.002 is a factor e: near-equal logits keep real probabilities
    logits = new.array("logits", [[5.0, 4.998, 4.99, 3.0, 1.0], [4.996, 1.0, 5.0, 4.999, 0.0]])
    want = ref.top_p_probs(logits, 0.002, top_p)
    out, what = probs_call(impl, logits, 0.002, top_p)
    greedy = np.array_equal(np.asarray(out, dtype=np.float64), ref.top_p_probs(logits, 0.0, 1.0))
    expect_close(out, want, what, hint="every row is the one-hot on its argmax, what temperature 0 gives"
                 if greedy else None)


@check(LARGE_V, [{"V": 4097, "seed": 87}], shrink=False)
def large_vocabulary(impl, new, ref, V):
    # row 0 is nearly flat, so its nucleus holds about 90% of the vocabulary; row 1 is peaked
    flat, peaked = new.normal("flat", (V,), scale=0.05), new.normal("peaked", (V,), scale=2.0)
    logits = new.let("logits", np.stack([flat, peaked]), "np.stack([flat, peaked])")
    for top_p in (safe_top_p(ref, logits, 1.0, 0.9), 0.99999):
        want = ref.top_p_probs(logits, 1.0, top_p)
        out, what = probs_call(impl, logits, 1.0, top_p)
        expect_support(out, want, full_softmax(ref, logits, 1.0), top_p, what)
        expect_close(out, want, what)


@check(ERRORS, [
    {"fn": "top_p_probs", "temperature": -0.5, "top_p": 0.9},
    {"fn": "top_p_probs", "temperature": 1.0, "top_p": 0.0},
    {"fn": "top_p_probs", "temperature": 1.0, "top_p": -0.2},
    {"fn": "top_p_probs", "temperature": 1.0, "top_p": 1.5},
    {"fn": "top_p_probs", "temperature": 1.0, "top_p": float("nan")},
    {"fn": "top_p_probs", "temperature": 0.0, "top_p": 0.0},
    {"fn": "top_p_probs", "temperature": 0.0, "top_p": 1.5},
    {"fn": "top_p_probs", "temperature": 0.0, "top_p": float("nan")},
    {"fn": "sample_top_p", "temperature": -1.0, "top_p": 0.9},
    {"fn": "sample_top_p", "temperature": 1.0, "top_p": 0.0},
    {"fn": "sample_top_p", "temperature": 0.0, "top_p": float("nan")},
], shrink=False)
def value_errors(impl, new, fn, temperature, top_p):
    logits = new.array("logits", WORKED)
    # a seeded Generator, so that whatever an attempt that does not raise returns can be replayed
    extra = {"rng": seeded(new, "rng", 0)} if fn == "sample_top_p" else {}
    if temperature < 0:
        why = "a negative temperature"
    elif math.isnan(top_p):
        why = ("a NaN top_p is outside (0, 1]: `top_p <= 0 or top_p > 1` is False for NaN, "
               "`not 0 < top_p <= 1` is True")
    else:
        why = f"top_p = {top_p:g} is outside (0, 1]"
    if temperature == 0:
        why += ", at temperature 0 too"
    expect_raises(ValueError, getattr(impl, fn), logits, temperature=temperature, top_p=top_p, why=why, **extra)


# ----------------------------------------------------------------------------- sample_top_p

@check(S_TYPE, [
    {"shape": (6,), "seed": 100},
    {"shape": (1,), "seed": 101},
    {"shape": (4, 6), "seed": 102},
    {"shape": (2, 3, 5), "seed": 103},
    {"shape": (3, 1), "seed": 104},
])
def sample_type(impl, new, shape):
    logits = new.normal("logits", shape, scale=2.0)
    draw(impl, logits, 1.0, 0.9, seeded(new, "rng", 0))


@check(S_SEED, [{"n": 300, "seed": 110}], shrink=False)
def sample_same_seed(impl, new, n):
    logits = batch_of(new, WORKED, n)
    again = new.let("again", logits.copy(), "logits.copy()")
    a = draw(impl, logits, 1.5, 0.9, seeded(new, "rng_a", 7))
    b = draw(impl, again, 1.5, 0.9, seeded(new, "rng_b", 7))
    if not np.array_equal(a, b):
        r = int(np.flatnonzero(a != b)[0])
        raise CheckFailed(f"{impl.last_call()} and the same call with rng_a, both np.random.default_rng(7), gave different "
                          f"draws (row {r}: {int(b[r])} against {int(a[r])}): the same seed must give the same draws")
    one = new.array("one", WORKED)
    rng_c, rng_d = seeded(new, "rng_c", 3), seeded(new, "rng_d", 3)
    c = [int(draw(impl, one.copy(), 1.5, 0.9, rng_c)) for _ in range(8)]
    d = [int(draw(impl, one.copy(), 1.5, 0.9, rng_d)) for _ in range(8)]
    if c != d:
        raise CheckFailed(f"eight calls of sample_top_p(one, temperature=1.5, top_p=0.9, rng=...) drew {c} with rng_c "
                          f"and {d} with rng_d, both np.random.default_rng(3): the same seed must give the same draws")


@check(S_RNG, [{"n": 300, "seed": 120}], shrink=False)
def sample_uses_generator(impl, new, ref, n):
    logits = batch_of(new, WORKED, n)
    copies = [new.let(f"logits_{i}", logits.copy(), "logits.copy()") for i in (2, 3, 4, 5)]
    nucleus = np.flatnonzero(ref.top_p_probs(np.array(WORKED), 1.5, 0.9)).tolist()
    a = draw(impl, logits, 1.5, 0.9, seeded(new, "rng1", 1))
    b = draw(impl, copies[0], 1.5, 0.9, seeded(new, "rng2", 2))
    if np.array_equal(a, b):
        drawn = np.unique(a).tolist()
        raise CheckFailed(f"sample_top_p(logits, temperature=1.5, top_p=0.9, rng=...) drew the same {n} tokens "
                          f"({grammar.noun(len(drawn), 'token')} {', '.join(map(str, drawn))}) with "
                          f"np.random.default_rng(1) and np.random.default_rng(2), where each row's nucleus is "
                          f"{nucleus} (two independent sets of {n} draws agree with probability below 1e-100)")
    with impl.options(global_seed=0):
        c = draw(impl, copies[1], 1.5, 0.9, seeded(new, "rng3", 5))
    with impl.options(global_seed=1):
        d = draw(impl, copies[2], 1.5, 0.9, seeded(new, "rng4", 5))
    if np.array_equal(c, d):
        return
    # the same call again after np.random.seed(0): the same draws mean the global state decides them
    with impl.options(global_seed=0):
        e = draw(impl, copies[3], 1.5, 0.9, seeded(new, "rng5", 5))
    if np.array_equal(c, e):
        raise CheckFailed(f"{impl.last_call()} drew differently after np.random.seed(0) and np.random.seed(1) with the same "
                          f"np.random.default_rng(5), and the same again after np.random.seed(0): NumPy's global random "
                          f"state decides the draws")
    raise CheckFailed(f"{impl.last_call()} drew differently after np.random.seed(0) and np.random.seed(1) with the same "
                      f"np.random.default_rng(5), and differently again after np.random.seed(0): two calls made alike "
                      f"(the same logits, Generator state and global seed) drew different tokens, so the draws "
                      f"depend on something other than `rng`")


@check(S_NUCLEUS, [
    {"temperature": 1.0, "top_p": 0.9, "n": 2000, "seed": 130},
    {"temperature": 1.5, "top_p": 0.9, "n": 2000, "seed": 131},
], shrink=False)
def sample_inside_nucleus(impl, new, ref, temperature, top_p, n):
    logits = batch_of(new, SHUFFLED, n)
    q = ref.top_p_probs(np.array(SHUFFLED), temperature, top_p)
    drawn = draw(impl, logits, temperature, top_p, seeded(new, "rng", 11))
    outside = drawn[q[drawn] == 0]
    if outside.size:
        tok = int(outside[0])
        raise CheckFailed(f"{impl.last_call()} drew token {tok} in {int(np.sum(drawn == tok))} of {n} rows, but it lies "
                          f"outside the nucleus {np.flatnonzero(q).tolist()} (top_p_probs gives it 0)")


@check(S_NONE, [{"seed": 140}], shrink=False)
def sample_rng_none(impl, new):
    # top_p this small leaves one token, the argmax: what a correct sampler returns cannot depend
    # on the fresh generator, so a failure here can be reproduced and explained
    one = new.array("one", SHUFFLED)
    with impl.unrepeatable():
        expect_draws(impl.sample_top_p(one, temperature=1.0, top_p=1e-6), (), len(SHUFFLED), impl.last_call())
        draw(impl, batch_of(new, SHUFFLED, 5), 1.0, 1e-6, None)


@check(S_GREEDY, [{"n": 40, "seed": 150}], shrink=False)
def sample_greedy(impl, new, n):
    rows = [[1.0, 3.0, 3.0, 2.0], [0.5, -1.0, 0.5, 0.5]]
    base = new.array("rows", rows)
    logits = new.let("logits", np.tile(base, (n, 1)), f"np.tile(rows, ({n}, 1))")
    drawn = draw(impl, logits, 0.0, 0.9, seeded(new, "rng", 2))
    want = np.tile([1, 0], n)
    bad = np.flatnonzero(drawn != want)
    if bad.size:
        r = int(bad[0])
        raise CheckFailed(f"{impl.last_call()} drew token {int(drawn[r])} in row {r} at temperature 0; expected always "
                          f"{int(want[r])}, the first argmax of that row")


# Each chi-square test below may wrongly fail a correct sampler with probability at most ALPHA;
# with the two tests the total stays below 1e-6, as the contract asks.
ALPHA = 2.5e-7


def chi_square_threshold(q, n, alpha=ALPHA):
    """A threshold c with P(X^2 > c) <= alpha for n independent draws from q (every q_i > 0).

    Proved, not approximated. X^2 = sum_i (O_i - n q_i)^2 / (n q_i) over k cells can exceed c only
    if some cell has |O_i - n q_i| > t_i = sqrt(c n q_i / k). Each count O_i is Binomial(n, q_i),
    and Bernstein's inequality bounds P(|O_i - n q_i| >= t) by 2 exp(-t^2 / (2 (n q_i (1 - q_i) +
    t / 3))). The union of those bounds over the cells is below alpha at the c found by bisection,
    so a correct sampler fails with probability below alpha however it uses the Generator (only
    its draws matter, and they are independent with probabilities q). No SciPy, and no reliance
    on the chi-square distribution's tail, which a multinomial's tail exceeds this far out. The
    price is a threshold a few times the asymptotic quantile; the mistakes this test is for move
    X^2 into the thousands at n = 4000.
    """
    k = len(q)

    def bound(c):
        total = 0.0
        for qi in q:
            t = math.sqrt(c * n * qi / k)
            total += 2 * math.exp(-t * t / (2 * (n * qi * (1 - qi) + t / 3)))
        return total

    lo, hi = 0.0, 1.0
    while bound(hi) > alpha:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if bound(mid) <= alpha else (mid, hi)
    return hi


@check(S_FREQ, [
    # the worked example at temperature 1.5: four tokens survive, p = [0.596, 0.250, 0.092, 0.062]
    {"example": "worked example", "temperature": 1.5, "top_p": 0.9, "n": 4000, "seed": 160},
    # unsorted logits at temperature 0.8: five tokens survive, the smallest with p = 0.05
    {"example": "seven unsorted logits", "temperature": 0.8, "top_p": 0.95, "n": 4000, "seed": 161},
], shrink=False)
def sample_frequencies(impl, new, ref, example, temperature, top_p, n):
    row = EXAMPLES[example]
    logits = batch_of(new, row, n)
    q = ref.top_p_probs(np.array(row), temperature, top_p)
    drawn = draw(impl, logits, temperature, top_p, seeded(new, "rng", 17))
    what = impl.last_call()
    counts = np.bincount(drawn, minlength=len(row))
    outside = np.flatnonzero((counts > 0) & (q == 0))
    if outside.size:
        tok = int(outside[0])
        raise CheckFailed(f"over {n} draws, {what} drew token {tok} {grammar.times(int(counts[tok]))}, but "
                          f"top_p_probs gives it probability 0")
    cells = np.flatnonzero(q > 0)
    expected = n * q[cells]
    terms = (counts[cells] - expected) ** 2 / expected
    chi2 = float(terms.sum())
    limit = chi_square_threshold(q[cells], n)
    if chi2 > limit:
        worst = int(np.argmax(terms))
        tok = int(cells[worst])
        raise CheckFailed(f"over {n} draws, {what} drew token {tok} {grammar.times(int(counts[tok]))} where "
                          f"top_p_probs expects {expected[worst]:.0f} (p = {q[tok]:.4f}); chi-square {chi2:.0f} is "
                          f"above {limit:.0f}, which a correct sampler exceeds with probability below {ALPHA:g}")


@check(UNCHANGED, [{"dtype": "float64", "seed": 90}, {"dtype": "float32", "seed": 91}])
def logits_unchanged(impl, new, dtype):
    logits = new.normal("logits", (3, 6), scale=2.0, dtype=dtype)
    rng = new.let("rng", np.random.default_rng(5), "np.random.default_rng(5)")
    impl.top_p_probs(logits, temperature=0.7, top_p=0.8)
    impl.sample_top_p(logits, temperature=1.3, top_p=0.9, rng=rng)
    impl.top_p_probs(logits, temperature=0.0, top_p=0.9)
    impl.top_p_probs(logits, temperature=1.0, top_p=0.9)
    expect_inputs_unchanged(impl)
