"""Mistakes candidates make in the cross-entropy loss and its gradient.

Each entry is the plain answer BASE with one small edit, so it reads as exactly one mistake.
Entries marked "stateful" keep something between calls: what they do depends on the calls
made before, so replaying one failing call on its own does not show their mistake; the check
that catches them names them from what it measured.
"""
from graders.engine.bugs import Bug, edited

BASE = """import numpy as np


def cross_entropy(logits, targets, ignore_index=-100):
    V = logits.shape[-1]
    z = logits.reshape(-1, V)
    t = np.asarray(targets).reshape(-1)
    counted = t != ignore_index
    if np.any(counted & ((t < 0) | (t >= V))):
        raise ValueError("a target is outside [0, V)")
    n = int(counted.sum())
    if n == 0:
        raise ValueError("no position is counted")
    rows = np.arange(len(t))
    tt = np.where(counted, t, 0)
    m = z.max(axis=-1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(z - m).sum(axis=-1))
    losses = lse - z[rows, tt]
    loss = losses[counted].sum() / n
    grad = np.exp(z - lse[:, None])
    grad[rows, tt] -= 1
    grad[~counted] = 0
    grad /= n
    return loss, grad.reshape(logits.shape)
"""

LSE = "    lse = m[:, 0] + np.log(np.exp(z - m).sum(axis=-1))\n"
RANGE_CHECK = ('    if np.any(counted & ((t < 0) | (t >= V))):\n'
               '        raise ValueError("a target is outside [0, V)")\n')
RETURN = "    return loss, grad.reshape(logits.shape)\n"
DEF = "def cross_entropy("

BUGS = [
    Bug("no_max_shift", "huge_logits",
        "logsumexp is computed as log(sum(exp(z))): exp(1e4) is inf, and inf - inf is NaN; subtract each row's "
        "max before exp and add it back after the log",
        edited(BASE, (LSE, "    lse = np.log(np.exp(z).sum(axis=-1))\n"))),
    Bug("lse_is_max", "agrees",
        "logsumexp is approximated by the row max, which drops log(sum(exp(z - max))): that term is between 0 "
        "and log V, and it is 0 only when one logit dominates",
        edited(BASE, (LSE, "    lse = m[:, 0]\n"))),
    Bug("log_of_softmax", "huge_logits",
        "the loss takes the log of the softmax probability: at logits of 1e4 the target's probability underflows "
        "to 0 and -log(0) is inf; use logsumexp(z) - z[target], which never forms the probability",
        edited(BASE, ("    losses = lse - z[rows, tt]\n",
                      "    losses = -np.log(np.exp(z - lse[:, None])[rows, tt])\n"))),
    Bug("probability_clipped", "unlikely_targets",
        "the probability is clipped to [1e-7, 1] before the log, so no position can lose more than "
        "-log(1e-7) = 16.1; a confidently wrong prediction must pay its whole loss: use logsumexp(z) - z[target]",
        edited(BASE, ("    losses = lse - z[rows, tt]\n",
                      "    losses = -np.log(np.clip(np.exp(z - lse[:, None])[rows, tt], 1e-7, 1.0))\n"))),
    # special values: one max for the whole batch, so a row far below it underflows to log(0)
    Bug("global_max_shift", "huge_logits",
        "the max subtracted before exp is that of the whole batch, not of each position: a position whose logits "
        "all lie far below it underflows to exp = 0 and log(0) = -inf; take the max along the last axis",
        edited(BASE, ("m = z.max(axis=-1, keepdims=True)", "m = z.max()"), ("m[:, 0]", "m"))),
    # tolerance edges: clipping the logits keeps exp finite and changes the answer
    Bug("logits_clipped_before_exp", "huge_logits",
        "the logits are clipped to [-80, 80] so that exp cannot overflow, which changes every logit beyond that; "
        "subtract each row's max instead, which changes nothing",
        edited(BASE, (LSE, "    lse = np.log(np.exp(np.clip(z, -80, 80)).sum(axis=-1))\n"),
               ("np.exp(z - lse[:, None])", "np.exp(np.clip(z, -80, 80) - lse[:, None])"))),
    Bug("gather_all_columns", "agrees",
        "z[:, targets] picks every target's column for every position, an (N, N) array; the target logit of "
        "each position is z[np.arange(N), targets]",
        edited(BASE, ("    losses = lse - z[rows, tt]\n", "    losses = lse - z[:, tt]\n"))),
    Bug("mean_over_all_positions", "ignore_index",
        "the loss and gradient are divided by the number of all positions, ignored ones included; divide by the "
        "number of counted positions",
        edited(BASE, ("losses[counted].sum() / n", "losses[counted].sum() / len(t)"),
               ("grad /= n", "grad /= len(t)"))),
    Bug("count_from_len", "leading_axes",
        "the number of positions is taken as len(targets), the length of the first axis only: with targets "
        "(B, T) that is B, not B * T; count the positions that are not ignored",
        edited(BASE, ("losses[counted].sum() / n", "losses[counted].sum() / len(targets)"),
               ("grad /= n", "grad /= len(targets)"))),
    # meta-pytorch/torchtune PR #1875 ("(x1 / n1) + (x2 / n2) != (x1 + x2) / (n1 + n2)"); huggingface/transformers
    # PR #34191 (the gradient accumulation fix); allenai/open-instruct PR #1137 (sample-wise to token-wise)
    Bug("mean_of_row_means", "ignore_index_in_range",
        "the loss is the mean of each sequence's mean, so a token of a short (much padded) sequence weighs more "
        "than one of a long sequence: sum the losses of every counted position and divide once, by their number",
        edited(BASE, ("    loss = losses[counted].sum() / n\n",
                      "    shp = np.atleast_1d(np.asarray(targets)).shape\n"
                      "    per, cnt = np.where(counted, losses, 0.0).reshape(shp), counted.reshape(shp)\n"
                      "    loss = float(np.mean(per.sum(axis=-1) / cnt.sum(axis=-1)))\n"))),
    # pytorch/pytorch#15508 ("ignore_index=255 and reduction='none' ... target out of bounds");
    # lucidrains/DALLE-pytorch#57 ("`ignore_index` is defined but not used")
    Bug("gather_before_masking", "ignore_index",
        "the target logit is gathered at every position before the ignored ones are masked, so ignore_index "
        "itself is used as a column (-100 is out of bounds when V < 100); gather with a safe class at the "
        "ignored positions, np.where(counted, targets, 0)",
        edited(BASE, ("    losses = lse - z[rows, tt]\n", "    losses = lse - z[rows, t]\n"))),
    # flagos-ai/FlagGems PR #73 (review: "the targets are ignored only when ignore_index is not -100");
    # PaddlePaddle/Paddle PR #76033 (the default -100 skipped the valid-count branch)
    Bug("default_ignore_index_not_honoured", "ignore_index",
        "positions are ignored only when ignore_index differs from its default, so targets of -100 with the "
        "default argument are counted (and refused as outside [0, V)); compare with ignore_index always",
        edited(BASE, ("counted = t != ignore_index",
                      "counted = (t != ignore_index) if ignore_index != -100 else np.ones_like(t, bool)"))),
    Bug("ignored_rows_keep_gradient", "gradient_rows",
        "the gradient rows of ignored positions are not zeroed: they take no part in the loss, so their rows of "
        "dlogits are exactly 0",
        edited(BASE, ("    grad[~counted] = 0\n", ""))),
    # imaddabbura.github.io/posts/dl/why-not-softmax ("A Common Mistake That's Hard to See ... softmax is computed
    # twice"); runebook.dev torch.nn.Softmax ("A very common mistake")
    Bug("softmax_applied_twice", "agrees",
        "the logits are turned into probabilities first and the loss then takes the softmax of those again, which "
        "squashes every loss towards log V; the loss takes the raw logits",
        edited(BASE, ("    z = logits.reshape(-1, V)\n",
                      "    z = logits.reshape(-1, V)\n"
                      "    z = np.exp(z - z.max(axis=-1, keepdims=True))\n"
                      "    z = z / z.sum(axis=-1, keepdims=True)\n"))),
    # ai.stackexchange.com/q/35741 (the derivative of the cost and the softmax Jacobian computed separately);
    # sunhaozhe.github.io matrix-calculus derivation (the path through -y / p)
    Bug("gradient_through_minus_y_over_p", "huge_logits",
        "the gradient goes the long way, -1/p_target times the softmax Jacobian: once p_target underflows to 0 "
        "that is -inf * 0 = NaN; the two simplify to softmax - one_hot, which never divides",
        edited(BASE, ("    grad = np.exp(z - lse[:, None])\n    grad[rows, tt] -= 1\n",
                      "    p = np.exp(z - lse[:, None])\n"
                      "    pt = p[rows, tt][:, None]\n"
                      "    grad = (-1.0 / pt) * pt * ((np.arange(V) == tt[:, None]) - p)\n"))),
    Bug("gradient_not_averaged", "finite_differences",
        "the gradient is not divided by the number of counted positions, while the loss is a mean over them",
        edited(BASE, ("    grad /= n\n", ""))),
    Bug("gradient_sign_flipped", "finite_differences",
        "the gradient has the wrong sign: d loss / d logits is softmax - one_hot, not one_hot - softmax",
        edited(BASE, (RETURN, "    return loss, -grad.reshape(logits.shape)\n"))),
    Bug("ignore_assumed_negative", "ignore_index_in_range",
        "positions are ignored when their target is negative, not when it equals ignore_index: an ignore_index "
        "inside [0, V) (a padding id of 0) is counted, and a stray -1 is silently skipped",
        edited(BASE, ("counted = t != ignore_index", "counted = t >= 0"))),
    Bug("no_range_check", "raises",
        "targets are never checked: V is out of bounds for the index and -1 silently means the last class; raise "
        "ValueError for a counted target outside [0, V)",
        edited(BASE, (RANGE_CHECK, ""))),
    Bug("nan_when_nothing_counted", "raises_nothing_counted",
        "with every target ignored (or an empty batch) the mean is 0 / 0 = NaN; raise ValueError when no position "
        "is counted",
        edited(BASE, ('    if n == 0:\n        raise ValueError("no position is counted")\n', ""))),
    Bug("only_2d", "leading_axes",
        "the function unpacks N, V = logits.shape, so it takes only (N, V): flatten any leading axes to "
        "logits.reshape(-1, V) and targets.reshape(-1), and reshape dlogits back",
        edited(BASE, ("    V = logits.shape[-1]\n    z = logits.reshape(-1, V)\n",
                      "    N, V = logits.shape\n    z = logits\n"))),
    Bug("loss_as_array", "loss_is_scalar",
        "the loss comes back as an array of shape (1,) (a mean with keepdims=True); return one number: "
        "float(...) or a reduction without keepdims",
        edited(BASE, ("    loss = losses[counted].sum() / n\n",
                      "    loss = np.sum(losses[counted], keepdims=True) / n\n"))),
    # input layouts: reshape returns a view of contiguous logits, so writing into it writes into them
    Bug("shifts_logits_in_place", "inputs_unchanged",
        "the row max is subtracted in place through logits.reshape(-1, V), a view of contiguous logits, so the "
        "caller's logits are overwritten (Fortran-ordered logits are copied instead, which hides it)",
        edited(BASE, ("    m = z.max(axis=-1, keepdims=True)\n" + LSE,
                      "    z -= z.max(axis=-1, keepdims=True)\n    lse = np.log(np.exp(z).sum(axis=-1))\n"))),
    Bug("assumes_contiguous_output", "layouts",
        "dlogits is written through out.reshape(-1, V) where out = np.zeros_like(logits): for Fortran-ordered "
        "logits that reshape is a copy, so the writes are lost and zeros come back; reshape the result itself",
        edited(BASE, (RETURN, "    out = np.zeros_like(logits)\n    out.reshape(-1, V)[:] = grad\n"
                              "    return loss, out\n"))),
    # stateful: one gradient buffer kept at module level and handed back on every call
    Bug("grad_buffer_reused", "repeated_calls",
        "every call returns the same module-level gradient buffer, so the next call overwrites a dlogits the "
        "caller still holds; return a new array each call",
        edited(BASE, (DEF, "_grad = None\n\n\n" + DEF),
               ("    V = logits.shape[-1]\n", "    global _grad\n    V = logits.shape[-1]\n"),
               (RETURN, "    if _grad is None or _grad.shape != logits.shape or _grad.dtype != grad.dtype:\n"
                        "        _grad = np.empty(logits.shape, dtype=grad.dtype)\n"
                        "    _grad[...] = grad.reshape(logits.shape)\n"
                        "    return loss, _grad\n")), stateful=True),
    # sizes: a table of row indices built once, for at most 4096 positions
    Bug("row_index_table_4096", "large_sizes",
        "the row indices come from a table built once for 4096 positions, so a batch of more positions cannot "
        "be indexed; use np.arange(N) for the N positions of this call",
        edited(BASE, (DEF, "_ROWS = np.arange(4096)\n\n\n" + DEF),
               ("rows = np.arange(len(t))", "rows = _ROWS[:len(t)]"))),
]

# Close to a catalogued bug, but a different mistake: the grader must fail each one without
# naming any entry of BUGS.
NEAR_MISSES = [
    Bug("range_check_off_by_one", "raises",
        "the range check is t > V instead of t >= V, so the target V itself slips through to an IndexError; "
        "V is already outside [0, V)",
        edited(BASE, ("(t >= V)", "(t > V)")), says=('conduct',)),
    Bug("max_not_added_back", "agrees",
        "the row max is subtracted before exp but never added back after the log, so logsumexp is short by the "
        "max (and the softmax is off by a factor exp(max)); logsumexp(z) = max + log(sum(exp(z - max)))",
        edited(BASE, (LSE, "    lse = np.log(np.exp(z - m).sum(axis=-1))\n")), says=('scale', 'offset')),
    Bug("gradient_over_all_positions", "ignore_index",
        "the loss is averaged over the counted positions but the gradient is divided by all of them; both must "
        "use the same count",
        edited(BASE, ("grad /= n", "grad /= len(t)")), says=('scale',)),
    Bug("ignore_index_fixed", "ignore_index",
        "positions are ignored when their target is -100, whatever ignore_index the caller passes; compare with "
        "the ignore_index argument",
        edited(BASE, ("counted = t != ignore_index", "counted = t != -100")), says=('needs@ignore_index', 'conduct')),
    Bug("probability_floor_tiny", "huge_logits",
        "the log is taken of the softmax probability with a floor of 1e-300: a target more than 690 below its "
        "row's max underflows to that floor and its loss stops at 690.8; use logsumexp(z) - z[target]",
        edited(BASE, ("    losses = lse - z[rows, tt]\n",
                      "    losses = -np.log(np.maximum(np.exp(z - lse[:, None])[rows, tt], 1e-300))\n")),
        says=('needs@scale', 'clip')),
]

# Catalogued mistakes with their trigger moved (another divisor, another fixed index): no entry above is
# them, and the report must say what each is without a name.
VARIANTS = [
    Bug("gradient_divided_by_V", "finite_differences",
        "the gradient is divided by V, the vocabulary size, instead of the number of counted positions",
        edited(BASE, ("    grad /= n\n", "    grad /= V\n")), says=("scale",)),
    Bug("ignore_index_fixed_at_minus_1", "ignore_index",
        "positions are ignored when their target is -1, whatever ignore_index the caller passes",
        edited(BASE, ("    counted = t != ignore_index\n", "    counted = t != -1\n")),
        says=('needs@ignore_index', 'conduct')),
]
