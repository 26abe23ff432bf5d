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
    raise NotImplementedError("moe_layer: not implemented yet")


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
    raise NotImplementedError("load_balancing_loss: not implemented yet")
