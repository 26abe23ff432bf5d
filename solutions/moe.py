"""Mixture of experts: top-k routing over SwiGLU experts, and the load-balancing loss."""
import numpy as np


def moe_layer(x, W_router, experts, top_k=2):
    """The sparse feed-forward block of a mixture-of-experts model, from scratch in NumPy.

    Task
        Replace the one feed-forward block of a layer by n_experts SwiGLU blocks (the
        experts) and a router. For every token, the router scores each expert, the
        token goes to the top_k experts only, and its output is their outputs mixed by
        the router's weights. The other experts do nothing for that token: that is how
        a sparse model holds many times the parameters that one token pays for.

            router_logits = x @ W_router                     one score per expert
            probs         = softmax(router_logits)           over the experts
            picked        = the top_k experts of highest probability
            weights       = probs of the picked experts, renormalised to sum to 1
            out           = sum over picked e of weights_e * swiglu(x, *experts[e])

    Shapes
        x          (..., d_model), float64 or float32: any leading axes are tokens,
                   e.g. (d_model,), (N, d_model) or (B, T, d_model)
        W_router   (d_model, n_experts)
        experts    a list of n_experts tuples (W_gate, W_up, W_down), the swiglu
                   kata's weights: W_gate and W_up (d_model, d_ff), W_down (d_ff, d_model)
        top_k      int, 2 by default (as in Mixtral): experts per token
        probs      (N, n_experts) for N tokens;  picked, weights  (N, top_k)
        returns    the shape of x

    Conventions
        - The conventions of the common open-weights Mixtral code: softmax over all
          n_experts first, then keep the top_k largest probabilities, then divide
          those by their sum. top_k == n_experts is the dense softmax mixture of all
          experts.
        - Ties: when probabilities are equal, the expert with the lower index is picked
          first (a token whose router logits are all equal goes to experts 0..top_k-1).
        - swiglu(t, W_gate, W_up, W_down) = (silu(t @ W_gate) * (t @ W_up)) @ W_down,
          silu(z) = z * sigmoid(z).
        - Every token is routed on its own, and no token is dropped, however many pick
          the same expert.
        - ValueError when top_k < 1 or top_k > n_experts, and when any expert in the
          list, picked or not, has a W_gate or W_up without d_model rows or a W_down
          without d_model columns.
        - Do not modify x, W_router, the list or its tuples.

    What the grader checks
        the output shape for one token, a list of tokens and (B, T, d_model); agreement
        with the reference on several seeds and shapes in float64 and float32 (one
        expert, top_k 1 to n_experts, d_model = 1, odd sizes); that top_k == n_experts is
        the dense softmax mixture; that permuting the experts together with the router's
        columns changes nothing; that the weights of an expert no token picks do not
        matter; that no token is dropped when every token picks the same expert; ties;
        router logits in the thousands, of either sign; that the output follows the
        experts' weights (doubling every W_down doubles it); thousands of tokens; the
        ValueErrors. Both functions are called many times, on inputs that may be views,
        Fortran-ordered or read-only; they must leave them unchanged, and what they
        return must stay as it was when later calls are made.

    Time budget: 35 minutes.
    """
    d_model = x.shape[-1]
    n_experts = len(experts)
    _check_top_k(top_k, n_experts)
    for e, (W_gate, W_up, W_down) in enumerate(experts):
        if W_gate.shape[0] != d_model or W_up.shape[0] != d_model or W_down.shape[-1] != d_model:
            raise ValueError(f"expert {e} does not fit d_model={d_model}: W_gate {W_gate.shape}, "
                             f"W_up {W_up.shape}, W_down {W_down.shape}")
    if W_router.shape != (d_model, n_experts):
        raise ValueError(f"W_router is {W_router.shape}, expected (d_model, n_experts) = {(d_model, n_experts)}")

    tokens = x.reshape(-1, d_model)                          # (N, d_model): every leading axis is tokens
    probs, picked = _route(tokens @ W_router, top_k)         # (N, n_experts), (N, top_k)
    weights = np.take_along_axis(probs, picked, axis=-1)     # (N, top_k)
    weights = weights / weights.sum(axis=-1, keepdims=True)  # (N, top_k), renormalised over the picked

    out = np.zeros(tokens.shape, np.result_type(x, np.float32))   # (N, d_model)
    for e, (W_gate, W_up, W_down) in enumerate(experts):
        rows, slot = np.nonzero(picked == e)                 # the tokens that picked e, and in which slot
        if rows.size == 0:
            continue                                         # an expert nobody picked costs nothing
        t = tokens[rows]                                     # (n_e, d_model)
        gate = t @ W_gate                                    # (n_e, d_ff)
        z = np.exp(-np.abs(gate))                            # (n_e, d_ff), in (0, 1]: cannot overflow
        hidden = gate * np.where(gate >= 0, 1 / (1 + z), z / (1 + z)) * (t @ W_up)   # (n_e, d_ff)
        # a token picks e at most once, so `rows` has no repeats and += adds each row once
        out[rows] += weights[rows, slot, None] * (hidden @ W_down)   # (n_e, d_model)
    return out.reshape(x.shape)                              # the shape of x


def load_balancing_loss(router_logits, top_k=2):
    """The auxiliary loss that keeps a mixture-of-experts router from favouring a few experts.

    Task
        Trained on the language-model loss alone, a router learns to send nearly every
        token to a few favoured experts, and the rest never learn. The common
        open-weights Mixtral code adds, per layer, an auxiliary term that is smallest
        when the load is spread evenly. Compute it from one layer's router logits:

            probs = softmax(router_logits)               over the experts
            F_e   = (number of top_k picks of expert e over all N tokens) / N
            P_e   = mean over the N tokens of probs[:, e]
            loss  = n_experts * sum over e of F_e * P_e

    Shapes
        router_logits  (N, n_experts), float64 or float32: x @ W_router for N tokens
        top_k          int, 2 by default: experts per token, picked as in moe_layer
        F, P           (n_experts,) each
        returns        the loss, a Python float or a NumPy floating scalar (not an array)

    Conventions
        - Picks are those of moe_layer: the top_k highest probabilities, the lower index
          first on equal probabilities.
        - Perfectly uniform routing gives exactly top_k (up to rounding).
        - ValueError when top_k < 1 or top_k > n_experts.
        - Do not modify router_logits.

    What the grader checks
        agreement with the reference on several seeds and shapes in float64 and float32,
        including experts that no token picks and a token whose logits are all equal;
        that uniform routing gives top_k; logits in the thousands; thousands of tokens;
        that the result is a float or a NumPy floating scalar; the ValueErrors; that
        router_logits is left unchanged.
    """
    n_tokens, n_experts = router_logits.shape
    _check_top_k(top_k, n_experts)
    probs, picked = _route(router_logits, top_k)                     # (N, n_experts), (N, top_k)
    F = np.bincount(picked.ravel(), minlength=n_experts) / n_tokens  # (n_experts,) share of tokens per expert
    P = probs.mean(axis=0)                                           # (n_experts,) mean router probability
    return float(n_experts * (F @ P))


def _check_top_k(top_k, n_experts):
    if not 1 <= top_k <= n_experts:
        raise ValueError(f"top_k must be between 1 and n_experts={n_experts}, got {top_k}")


def _route(logits, top_k):
    """Softmax over the experts, then the top_k picks of each token (lower index first on ties)."""
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))         # (N, n_experts), largest exponent exp(0)
    probs = e / e.sum(axis=-1, keepdims=True)                        # (N, n_experts)
    # a stable sort of -probs keeps equal probabilities in index order
    picked = np.argsort(-probs, axis=-1, kind="stable")[:, :top_k]   # (N, top_k)
    return probs, picked
