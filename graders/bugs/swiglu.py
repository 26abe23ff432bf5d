"""Mistakes candidates make in a SwiGLU feed-forward block: each is BASE, a correct answer,
with one mistake edited in."""
from graders.bugs import Bug, edited


BASE = """import numpy as np


def silu(z):
    e = np.exp(-np.abs(z))   # exp of a non-positive number never overflows
    return z * np.where(z >= 0, 1 / (1 + e), e / (1 + e))


def swiglu(x, W_gate, W_up, W_down):
    gate, up = x @ W_gate, x @ W_up
    return (silu(gate) * up) @ W_down
"""

SILU = ("    e = np.exp(-np.abs(z))   # exp of a non-positive number never overflows\n"
        "    return z * np.where(z >= 0, 1 / (1 + e), e / (1 + e))\n")
OUT = "    return (silu(gate) * up) @ W_down\n"


BUGS = [
    Bug("gate_and_up_swapped", "test_gate_branch",
        "the gate and up projections are swapped: SiLU must act on x @ W_gate, and x @ W_up is the linear "
        "branch it multiplies",
        edited(BASE, ("silu(gate) * up", "silu(up) * gate"))),
    Bug("plain_sigmoid", "test_activation",
        "a plain sigmoid as the gate: SiLU (swish) is z * sigmoid(z), so the gate value itself multiplies in",
        edited(BASE, ("return z * np.where", "return np.where"))),
    Bug("overflowing_sigmoid", "test_huge",
        "an exp that overflows for z near -1e4, as in 1 / (1 + exp(-z)) or an np.where whose discarded "
        "branch still computes it: the values survive, but NumPy warns; build the sigmoid from exp(-|z|), "
        "which never overflows",
        edited(BASE, (SILU, "    return z / (1 + np.exp(-z))\n"))),
    Bug("sigmoid_as_exp_ratio", "test_huge",
        "sigmoid written as exp(z) / (1 + exp(z)): for z near +1e4 that is inf / inf = NaN; use exp(-|z|) "
        "and pick the form by the sign of z",
        edited(BASE, (SILU, "    ez = np.exp(z)\n    return z * ez / (1 + ez)\n"))),
    Bug("relu_gate", "test_activation",
        "ReLU as the gate: the Sw in SwiGLU is swish, SiLU(z) = z * sigmoid(z), which is smooth and lets "
        "small negative values through",
        edited(BASE, (SILU, "    return np.maximum(z, 0)\n"))),
    Bug("gelu_gate", "test_activation",
        "GELU as the gate (that is GeGLU, or the older two-matrix block's activation); SwiGLU uses "
        "SiLU(z) = z * sigmoid(z)",
        edited(BASE, (SILU, "    return 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z ** 3)))\n"))),
    Bug("silu_on_both_branches", "test_gate_branch",
        "SiLU is applied to both projections: only the gate goes through it, and x @ W_up multiplies in "
        "unchanged",
        edited(BASE, ("silu(gate) * up", "silu(gate) * silu(up)"))),
    Bug("silu_after_product", "test_gate_branch",
        "SiLU is applied to the product gate * up: it acts on the gate alone, and the product comes after",
        edited(BASE, ("silu(gate) * up", "silu(gate * up)"))),
    Bug("down_projection_missing", "test_shape",
        "the hidden layer silu(gate) * up, shape (..., d_ff), is returned without the final @ W_down",
        edited(BASE, (OUT, "    return silu(gate) * up\n"))),
    Bug("down_before_product", "test_agrees",
        "each branch is projected down before the product: W_down comes last, applied once to "
        "silu(gate) * up (the product of projections is not the projection of the product)",
        edited(BASE, (OUT, "    return (silu(gate) @ W_down) * (up @ W_down)\n"))),
    Bug("weights_transposed", "test_shape",
        "the weights are read as PyTorch's nn.Linear (out, in) and transposed; here they are stored (in, out), "
        "so it is x @ W_gate with no .T (square test weights would have hidden this)",
        edited(BASE, ("x @ W_gate, x @ W_up", "x @ W_gate.T, x @ W_up.T"), ("@ W_down", "@ W_down.T"))),
    Bug("unpacks_three_axes", "test_leading_axes",
        "`B, T, d_model = x.shape` assumes a 3-D input; the block works on any leading axes, which "
        "x @ W_gate already broadcasts over",
        edited(BASE, ("    gate, up =", "    B, T, d_model = x.shape\n    gate, up ="))),
    Bug("reshapes_x_in_place", "test_inputs_unchanged",
        "`x.shape = (-1, d_model)` reshapes the caller's array itself, which stays 2-D after the call; "
        "x.reshape(-1, d_model) gives a new view instead (and @ broadcasts over leading axes anyway)",
        edited(BASE, ("    gate, up =", "    lead, d_model = x.shape[:-1], x.shape[-1]\n"
                                       "    x.shape = (-1, d_model)\n    gate, up ="),
               (OUT, "    return ((silu(gate) * up) @ W_down).reshape(*lead, d_model)\n"))),
    Bug("residual_added_in_place", "test_inputs_unchanged",
        "`x += ...` adds a residual connection the block does not have, and writes it into the caller's "
        "array; the block returns (silu(gate) * up) @ W_down alone, as a new array",
        edited(BASE, (OUT, "    x += (silu(gate) * up) @ W_down\n    return x\n"))),
]
