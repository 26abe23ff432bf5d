"""Mistakes candidates make in mixture-of-experts routing and its load-balancing loss.

Every entry is BASE, a plain correct answer, with one small edit.
"""
from graders.engine.bugs import Bug, edited

BASE = '''
import numpy as np


def _softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def _swiglu(t, W_gate, W_up, W_down):
    g = t @ W_gate
    return (g * np.exp(-np.logaddexp(0.0, -g)) * (t @ W_up)) @ W_down


def _check(top_k, n_experts):
    if top_k < 1 or top_k > n_experts:
        raise ValueError("top_k must be between 1 and n_experts")


def moe_layer(x, W_router, experts, top_k=2):
    d_model = x.shape[-1]
    n_experts = len(experts)
    _check(top_k, n_experts)
    for W_gate, W_up, W_down in experts:
        if W_gate.shape[0] != d_model or W_up.shape[0] != d_model or W_down.shape[1] != d_model:
            raise ValueError("an expert does not fit d_model")
    tokens = x.reshape(-1, d_model)
    probs = _softmax(tokens @ W_router)
    top = np.argsort(-probs, axis=-1, kind="stable")[:, :top_k]
    weights = np.take_along_axis(probs, top, axis=-1)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    out = np.zeros(tokens.shape)
    for e in range(n_experts):
        rows, slot = np.nonzero(top == e)
        if len(rows) > 0:
            y = _swiglu(tokens[rows], *experts[e])
            out[rows] += weights[rows, slot][:, None] * y
    return out.reshape(x.shape)


def load_balancing_loss(router_logits, top_k=2):
    n_tokens, n_experts = router_logits.shape
    _check(top_k, n_experts)
    probs = _softmax(router_logits)
    picked = np.argsort(-probs, axis=-1, kind="stable")[:, :top_k]
    counts = np.bincount(picked.ravel(), minlength=n_experts)
    F = counts / n_tokens
    P = probs.mean(axis=0)
    return float(n_experts * np.sum(F * P))
'''


def _variant(*changes: tuple[str, str]) -> str:
    return edited(BASE, *changes)


PICK = 'top = np.argsort(-probs, axis=-1, kind="stable")[:, :top_k]'
RENORMALISE = "    weights = weights / weights.sum(axis=-1, keepdims=True)\n"
SHIFT = "    z = z - z.max(axis=-1, keepdims=True)\n    e = np.exp(z)\n"
EXPERT_LOOP = ("    for e in range(n_experts):\n        rows, slot = np.nonzero(top == e)\n"
               "        if len(rows) > 0:\n            y = _swiglu(tokens[rows], *experts[e])\n"
               "            out[rows] += weights[rows, slot][:, None] * y\n")
SHAPE_CHECK = ("    for W_gate, W_up, W_down in experts:\n"
               "        if W_gate.shape[0] != d_model or W_up.shape[0] != d_model or W_down.shape[1] != d_model:\n"
               "            raise ValueError(\"an expert does not fit d_model\")\n")
COUNTS = "    counts = np.bincount(picked.ravel(), minlength=n_experts)\n"
LOSS = "    return float(n_experts * np.sum(F * P))\n"

BUGS = [
    # --- routing weights
    Bug("no_renormalisation", "agrees",
        "the picked experts' probabilities are used as they are; the contract (Mixtral's code) divides them by "
        "their sum so that each token's weights add up to 1",
        _variant((RENORMALISE, ""))),
    Bug("renormalised_by_softmax_of_probs", "agrees",
        "the picked probabilities are passed through a second softmax; renormalising divides them by their sum "
        "(a softmax of the picked logits would also be right, a softmax of probabilities is not)",
        _variant((RENORMALISE, "    weights = _softmax(weights)\n"))),
    Bug("softmax_over_tokens", "agrees",
        "the router softmax runs over the tokens (axis 0) instead of over the experts: each token's "
        "probabilities must sum to 1 across the experts",
        _variant(("    probs = _softmax(tokens @ W_router)\n", "    probs = _softmax((tokens @ W_router).T).T\n"))),
    Bug("weights_of_first_experts", "permuted",
        "the weights are the probabilities of experts 0..top_k-1, not of the experts picked: take them with "
        "np.take_along_axis(probs, top, axis=-1)",
        _variant(("    weights = np.take_along_axis(probs, top, axis=-1)\n", "    weights = probs[:, :top_k]\n"))),
    # sglang-project/sglang PR #35160 ("returned the raw gathered router logits as topk_weights")
    Bug("weights_are_raw_logits", "agrees",
        "the picked experts' raw router logits are taken as their weights (then divided by their sum), not "
        "their softmax probabilities: weights can be negative or huge; take the picked probabilities",
        _variant(("    weights = np.take_along_axis(probs, top, axis=-1)\n",
                  "    weights = np.take_along_axis(tokens @ W_router, top, axis=-1)\n"))),
    # ml-explore/mlx-lm#1883 (softmax instead of sigmoid, LFM2); MetaX-MACA/vLLM-metax#270 (the other way)
    Bug("sigmoid_router", "agrees",
        "the router scores are a sigmoid per expert (the DeepSeek-V3 router) instead of a softmax over the "
        "experts: once top_k >= 2 the renormalised weights differ; this layer (Mixtral's) takes the softmax",
        _variant(("    probs = _softmax(tokens @ W_router)\n", "    probs = 1 / (1 + np.exp(-(tokens @ W_router)))\n"))),
    # databricks/megablocks PR #87 (a top_k == 1 branch whose weight norm ran over the wrong axis)
    Bug("top1_branch_normalised_over_tokens", "crowded",
        "for top_k == 1 the weights are divided by their sum over the tokens (axis 0) instead of over each "
        "token's picks (axis -1): with one expert per token each weight is 1",
        _variant((RENORMALISE, "    weights = weights / (weights.sum(axis=-1, keepdims=True) if top_k > 1 "
                               "else weights.sum(axis=0, keepdims=True))\n"))),
    # --- which experts are picked
    Bug("picks_lowest", "agrees",
        "an ascending argsort keeps the top_k LEAST likely experts; sort -probs (or take the end of an "
        "ascending sort)",
        _variant((PICK, 'top = np.argsort(probs, axis=-1, kind="stable")[:, :top_k]'))),
    Bug("ties_pick_higher_index", "ties",
        "reversing an ascending argsort puts the higher index first among equal probabilities; a stable "
        "argsort of -probs keeps the lower index first, as the contract asks",
        _variant((PICK, "top = np.argsort(probs, axis=-1)[:, ::-1][:, :top_k]"))),
    # ml-explore/mlx-examples#671 (mx.argpartition(-gates, kth=ne): "Received invalid kth 2")
    Bug("argpartition_topk", "dense",
        "np.argpartition(-probs, kth=top_k) needs kth < n_experts, so top_k == n_experts (the dense case) "
        "raises; kth=top_k - 1 would not, but a partition still takes tied experts in no set order: a stable "
        "argsort of -probs picks the lower index first",
        _variant((PICK, "top = np.argpartition(-probs, kth=top_k, axis=-1)[:, :top_k]"))),
    # huggingface/transformers PR #43154 (the number of experts taken as top_k)
    Bug("loops_over_top_k_experts", "agrees",
        "the dispatch loop runs over range(top_k) instead of every expert, so a token routed to an expert "
        "numbered top_k or above gets nothing from it; loop over range(n_experts)",
        _variant(("    for e in range(n_experts):\n        rows, slot", "    for e in range(top_k):\n        rows, slot"))),
    Bug("top_k_fixed_at_2", "agrees",
        "two experts per token whatever top_k says (Mixtral's value, written in as a constant); use the top_k "
        "argument",
        _variant((PICK, 'top = np.argsort(-probs, axis=-1, kind="stable")[:, :2]'))),
    Bug("dense_mixture", "unpicked",
        "every expert is run and mixed by its softmax weight, whatever top_k is: only the top_k experts of a "
        "token count, renormalised among themselves",
        _variant((EXPERT_LOOP,
                  "    for e in range(n_experts):\n"
                  "        out += probs[:, e:e + 1] * _swiglu(tokens, *experts[e])\n"))),
    Bug("capacity_drops_tokens", "crowded",
        "each expert takes at most 1.25 * N * top_k / n_experts tokens and the rest are dropped (the "
        "capacity factor of Switch-style training); this layer drops nothing: every token gets its experts",
        _variant(("        rows, slot = np.nonzero(top == e)\n",
                  "        rows, slot = np.nonzero(top == e)\n"
                  "        capacity = int(np.ceil(1.25 * len(tokens) * top_k / n_experts))\n"
                  "        rows, slot = rows[:capacity], slot[:capacity]\n"))),
    # --- special values and tolerance edges
    Bug("softmax_without_max_shift", "large_logits",
        "exp of the raw router logits: logits in the thousands overflow to inf, or all far below zero "
        "underflow to 0, and the softmax is NaN; subtract each row's max first",
        _variant((SHIFT, "    e = np.exp(z)\n"))),
    Bug("logits_clipped_before_exp", "large_logits",
        "the logits are clipped to [-50, 50] before exp: no overflow, but logits beyond the clip become equal "
        "and the wrong experts get picked; subtracting the row max is exact",
        _variant((SHIFT, "    e = np.exp(np.clip(z, -50, 50))\n"))),
    # stacked weights are kept per shape, so later experts of the same shapes are ignored
    Bug("experts_cached_between_calls", "follows_weights",
        "the experts' weights are stacked once and kept in a module-level cache keyed by their shapes, so a "
        "later call with other experts of the same shapes reuses the first ones; build them on every call",
        _variant(("import numpy as np\n", "import numpy as np\n\n_STACKED = {}\n"),
                 (EXPERT_LOOP,
                  "    key = (n_experts, d_model, experts[0][0].shape[1])\n"
                  "    if key not in _STACKED:\n"
                  "        _STACKED[key] = [tuple(np.array(w) for w in ex) for ex in experts]\n"
                  "    for e in range(n_experts):\n        rows, slot = np.nonzero(top == e)\n"
                  "        if len(rows) > 0:\n            y = _swiglu(tokens[rows], *_STACKED[key][e])\n"
                  "            out[rows] += weights[rows, slot][:, None] * y\n")),
        stateful=True),
    # the output lives in a module-level buffer kept per shape and is returned as a view of it
    Bug("output_buffer_reused", "repeated_calls",
        "the output is accumulated in a buffer kept between calls (one per shape) and returned as a view of "
        "it: the next call of the same shape overwrites the result the caller still holds; start from a new "
        "array on every call",
        _variant(("import numpy as np\n", "import numpy as np\n\n_OUT = {}\n"),
                 ("    out = np.zeros(tokens.shape)\n",
                  "    out = _OUT.setdefault(tokens.shape, np.zeros(tokens.shape))\n    out[...] = 0\n")),
        stateful=True),
    Bug("output_table_of_4096_tokens", "many_tokens",
        "the output rows come from a table made for at most 4096 tokens; a call with more tokens overflows it. "
        "Size the output by the number of tokens of the call",
        _variant(("    out = np.zeros(tokens.shape)\n",
                  "    out = np.zeros((4096, d_model))[:len(tokens)]\n"))),
    # --- the contract
    Bug("no_top_k_check", "raises_top_k",
        "top_k outside 1..n_experts is not refused: argsort(...)[:, :top_k] quietly takes fewer experts (or "
        "none); raise ValueError",
        _variant(("    _check(top_k, n_experts)\n    for W_gate", "    for W_gate"))),
    Bug("only_picked_experts_checked", "raises_expert_shapes",
        "only the experts that some token picks are checked, inside the loop; an expert in the list whose "
        "shapes do not fit is an error whether or not it is used",
        _variant((SHAPE_CHECK, ""),
                 ("            y = _swiglu(tokens[rows], *experts[e])\n",
                  "            if experts[e][0].shape[0] != d_model or experts[e][1].shape[0] != d_model \\\n"
                  "                    or experts[e][2].shape[1] != d_model:\n"
                  "                raise ValueError(\"an expert does not fit d_model\")\n"
                  "            y = _swiglu(tokens[rows], *experts[e])\n"))),
    # --- inputs
    Bug("flatten_assumes_contiguous", "layouts",
        "setting .shape on a view of x assumes x is contiguous: a Fortran-ordered or sliced x raises "
        "AttributeError; x.reshape(-1, d_model) copies when it must",
        _variant(("    tokens = x.reshape(-1, d_model)\n",
                  "    tokens = x.view()\n    tokens.shape = (-1, d_model)\n"))),
    Bug("experts_upcast_in_the_list", "inputs_unchanged",
        "each expert's weights are converted to float64 and written back into the caller's list; convert "
        "into local variables and leave the list and its tuples as they were",
        _variant(("    tokens = x.reshape(-1, d_model)\n",
                  "    for e in range(n_experts):\n"
                  "        experts[e] = tuple(np.asarray(w, dtype=np.float64) for w in experts[e])\n"
                  "    tokens = x.reshape(-1, d_model)\n"))),
    # --- load_balancing_loss
    Bug("loss_fraction_of_slots", "loss_uniform",
        "F_e was divided by N * top_k (the share of all picks) instead of N: F must sum to top_k, so that "
        "uniform routing gives top_k",
        _variant(("    F = counts / n_tokens\n", "    F = counts / (n_tokens * top_k)\n"))),
    Bug("loss_without_n_experts", "loss_uniform",
        "the factor n_experts is missing: the loss is n_experts * sum_e F_e * P_e",
        _variant((LOSS, "    return float(np.sum(F * P))\n"))),
    Bug("loss_counts_top1_only", "loss_uniform",
        "F counts only each token's first choice (the top-1 formula of the Switch Transformer); with top_k "
        "experts per token it counts every pick",
        _variant((COUNTS, "    counts = np.bincount(picked[:, 0], minlength=n_experts)\n"))),
    # huggingface/transformers#28093 ("The balancing loss function always return a constant")
    Bug("loss_constant_mean_of_picked_slots", "loss_uniform",
        "P is the mean over every slot of the picked experts' renormalised weights, which is always 1 / top_k, "
        "so the loss is n_experts whatever the routing; P_e is the mean over the tokens of expert e's full "
        "softmax probability, probs.mean(axis=0)",
        _variant(("    P = probs.mean(axis=0)\n",
                  "    w = np.take_along_axis(probs, picked, axis=-1)\n"
                  "    P = (w / w.sum(axis=-1, keepdims=True)).mean()\n"))),
    Bug("loss_probs_of_picked_only", "loss_agrees",
        "P was averaged over the renormalised weights of the picked experts (zero elsewhere); it is the mean of "
        "the full softmax over every expert",
        _variant(("    P = probs.mean(axis=0)\n",
                  "    w = np.zeros_like(probs)\n"
                  "    np.put_along_axis(w, picked, np.take_along_axis(probs, picked, axis=-1), axis=-1)\n"
                  "    P = (w / w.sum(axis=-1, keepdims=True)).mean(axis=0)\n"))),
    Bug("loss_bincount_without_minlength", "loss_agrees",
        "np.bincount without minlength stops at the highest expert picked, so when the last experts get no "
        "token F is too short; np.bincount(..., minlength=n_experts)",
        _variant((COUNTS, "    counts = np.bincount(picked.ravel())\n"))),
    Bug("loss_table_for_8_experts", "loss_agrees",
        "the counts live in a table sized for 8 experts (Mixtral's count); size it n_experts",
        _variant((COUNTS, "    counts = np.zeros(8)\n    np.add.at(counts, picked.ravel(), 1)\n"))),
    Bug("loss_as_0d_array", "loss_is_scalar",
        "np.tensordot (like np.array(...)) returns a 0-d array, not a scalar; float(...) or .item() gives the "
        "number",
        _variant((LOSS, "    return np.tensordot(n_experts * F, P, axes=1)\n"))),
    Bug("loss_shifts_logits_in_place", "loss_unchanged",
        "the max is subtracted in place from router_logits.reshape(...), a view of the caller's array, which "
        "changes it; z - z.max(...) builds a new array",
        _variant(("    probs = _softmax(router_logits)\n",
                  "    logits = router_logits.reshape(-1, n_experts)\n"
                  "    logits -= logits.max(axis=-1, keepdims=True)\n"
                  "    probs = _softmax(logits)\n"))),
    Bug("loss_no_top_k_check", "loss_raises",
        "load_balancing_loss does not refuse a top_k outside 1..n_experts; raise ValueError as moe_layer does",
        _variant(("    n_tokens, n_experts = router_logits.shape\n    _check(top_k, n_experts)\n",
                  "    n_tokens, n_experts = router_logits.shape\n"))),
]

# Close to a catalogued bug, but another mistake: none of these may be named as one of BUGS.
NEAR_MISSES = [
    Bug("equal_weights_for_picked", "agrees",
        "each picked expert gets weight 1 / top_k whatever its probability; the weights are the picked "
        "probabilities divided by their sum (not: left without renormalising)",
        _variant(("    weights = np.take_along_axis(probs, top, axis=-1)\n",
                  "    weights = np.ones(top.shape)\n")), says=('needs@top_k', 'scale')),
    Bug("picks_skip_the_best", "agrees",
        "the slice [:, 1:top_k + 1] skips the most probable expert and takes the next top_k; an off-by-one, "
        "not the ascending-order mistake",
        _variant((PICK, 'top = np.argsort(-probs, axis=-1, kind="stable")[:, 1:top_k + 1]')), says=('held', 'axes')),
    Bug("loss_divided_by_n_experts", "loss_uniform",
        "the loss is divided by n_experts instead of multiplied by it (not: the factor left out)",
        _variant((LOSS, "    return float(np.sum(F * P) / n_experts)\n")), says=('scale',)),
    Bug("loss_mean_of_logits", "loss_agrees",
        "P averages the raw router logits instead of the softmax probabilities (not: the renormalised "
        "weights of the picked experts)",
        _variant(("    P = probs.mean(axis=0)\n", "    P = router_logits.mean(axis=0)\n")), says=('held',)),
    Bug("capacity_of_n_over_experts", "crowded",
        "each expert keeps at most N / n_experts tokens, forgetting top_k in the capacity (not: the 1.25 "
        "capacity factor of Switch-style training)",
        _variant(("        rows, slot = np.nonzero(top == e)\n",
                  "        rows, slot = np.nonzero(top == e)\n"
                  "        rows, slot = rows[:len(tokens) // n_experts], slot[:len(tokens) // n_experts]\n")),
        says=('needs@N', 'needs@n_experts', 'where')),
]

# Catalogued mistakes with their trigger moved (another divisor, another cache key): no entry above is
# them, and the report must say what each is without a name.
VARIANTS = [
    Bug("weights_divided_by_top_k", "agrees",
        "the picked probabilities are divided by top_k instead of by their sum",
        edited(BASE, (RENORMALISE, "    weights = weights / top_k\n")), says=("scale",)),
    Bug("experts_cached_by_count", "repeated_calls",
        "the experts' weights are cached by how many experts there are, so a later call with as many experts gets "
        "the first call's weights",
        edited(BASE, ("def moe_layer(", "_EXPERTS = {}\n\n\ndef moe_layer("),
               ("    tokens = x.reshape(-1, d_model)\n",
                "    experts = _EXPERTS.setdefault(len(experts), [tuple(W.copy() for W in e) for e in experts])\n"
                "    tokens = x.reshape(-1, d_model)\n")),
        stateful=True, says=("history",)),
]
