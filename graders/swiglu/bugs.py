"""Mistakes candidates make in a SwiGLU feed-forward block: each is BASE, a correct answer,
with one mistake edited in. Entries marked stateful keep something at module level between
calls (a buffer, fused weights). NEAR_MISSES are mistakes close to a catalogued one that the
grader must fail without naming."""
from graders.engine.bugs import Bug, edited

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
    Bug("gate_and_up_swapped", "gate_branch",
        "the gate and up projections are swapped: SiLU must act on x @ W_gate, and x @ W_up is the linear "
        "branch it multiplies",
        edited(BASE, ("silu(gate) * up", "silu(up) * gate"))),
    Bug("plain_sigmoid", "activation",
        "a plain sigmoid as the gate: SiLU (swish) is z * sigmoid(z), so the gate value itself multiplies in",
        edited(BASE, ("return z * np.where", "return np.where"))),
    Bug("overflowing_sigmoid", "huge",
        "an exp that overflows for z near -1e4, as in 1 / (1 + exp(-z)) or an np.where whose discarded "
        "branch still computes it: the values survive, but NumPy warns; build the sigmoid from exp(-|z|), "
        "which never overflows",
        edited(BASE, (SILU, "    return z / (1 + np.exp(-z))\n"))),
    Bug("sigmoid_as_exp_ratio", "huge",
        "sigmoid written as exp(z) / (1 + exp(z)): for z near +1e4 that is inf / inf = NaN; use exp(-|z|) "
        "and pick the form by the sign of z",
        edited(BASE, (SILU, "    ez = np.exp(z)\n    return z * ez / (1 + ez)\n"))),
    Bug("relu_gate", "activation",
        "ReLU as the gate: the Sw in SwiGLU is swish, SiLU(z) = z * sigmoid(z), which is smooth and lets "
        "small negative values through",
        edited(BASE, (SILU, "    return np.maximum(z, 0)\n"))),
    Bug("gelu_gate", "activation",
        "GELU as the gate (that is GeGLU, or the older two-matrix block's activation); SwiGLU uses "
        "SiLU(z) = z * sigmoid(z)",
        edited(BASE, (SILU, "    return 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z ** 3)))\n"))),
    Bug("silu_on_both_branches", "gate_branch",
        "SiLU is applied to both projections: only the gate goes through it, and x @ W_up multiplies in "
        "unchanged",
        edited(BASE, ("silu(gate) * up", "silu(gate) * silu(up)"))),
    Bug("silu_after_product", "gate_branch",
        "SiLU is applied to the product gate * up: it acts on the gate alone, and the product comes after",
        edited(BASE, ("silu(gate) * up", "silu(gate * up)"))),
    Bug("down_projection_missing", "shape",
        "the hidden layer silu(gate) * up, shape (..., d_ff), is returned without the final @ W_down",
        edited(BASE, (OUT, "    return silu(gate) * up\n"))),
    Bug("down_before_product", "agrees",
        "each branch is projected down before the product: W_down comes last, applied once to "
        "silu(gate) * up (the product of projections is not the projection of the product)",
        edited(BASE, (OUT, "    return (silu(gate) @ W_down) * (up @ W_down)\n"))),
    Bug("weights_transposed", "shape",
        "the weights are read as PyTorch's nn.Linear (out, in) and transposed; here they are stored (in, out), "
        "so it is x @ W_gate with no .T (square test weights would have hidden this)",
        edited(BASE, ("x @ W_gate, x @ W_up", "x @ W_gate.T, x @ W_up.T"), ("@ W_down", "@ W_down.T"))),
    Bug("unpacks_three_axes", "leading_axes",
        "`B, T, d_model = x.shape` assumes a 3-D input; the block works on any leading axes, which "
        "x @ W_gate already broadcasts over",
        edited(BASE, ("    gate, up =", "    B, T, d_model = x.shape\n    gate, up ="))),
    Bug("reshapes_x_in_place", "inputs_unchanged",
        "`x.shape = (-1, d_model)` reshapes the caller's array itself, which stays 2-D after the call; "
        "x.reshape(-1, d_model) gives a new view instead (and @ broadcasts over leading axes anyway)",
        edited(BASE, ("    gate, up =", "    lead, d_model = x.shape[:-1], x.shape[-1]\n"
                                       "    x.shape = (-1, d_model)\n    gate, up ="),
               (OUT, "    return ((silu(gate) * up) @ W_down).reshape(*lead, d_model)\n"))),
    Bug("residual_added_in_place", "inputs_unchanged",
        "`x += ...` adds a residual connection the block does not have, and writes it into the caller's "
        "array; the block returns (silu(gate) * up) @ W_down alone, as a new array",
        # stateful for the replay: what it returns is the caller's x, which later calls on the same
        # argument objects write into again
        edited(BASE, (OUT, "    x += (silu(gate) * up) @ W_down\n    return x\n")), stateful=True),
    # vllm-project/vllm PR #29273 (gpt-oss's interleaved gate/up layout applied to de-interleaved weights)
    Bug("fused_split_interleaved", "gate_branch",
        "x @ [W_gate | W_up] is split into gate and up by alternate columns ([..., 0::2] and [..., 1::2], the "
        "interleaved layout of some fused checkpoints): with the two matrices side by side, gate and up are "
        "its first and second halves",
        edited(BASE, ("    gate, up = x @ W_gate, x @ W_up\n",
                      "    gu = x @ np.concatenate([W_gate, W_up], axis=1)\n"
                      "    gate, up = gu[..., 0::2], gu[..., 1::2]\n"))),
    # tolerance edges: a clipped exp is exact enough for most z, not for the far negative tail
    Bug("silu_clipped", "negative_tail",
        "z is clipped to [-20, 20] before the exp: sigmoid(-20) is 2e-9, so silu(-25) comes out as -5e-8 "
        "instead of -3.5e-10 (and silu(-1e4) as -2e-5 instead of 0); the exp needs no clipping when it only "
        "ever sees -|z|",
        edited(BASE, (SILU, "    zc = np.clip(z, -20, 20)   # keeps exp from overflowing\n"
                            "    return z / (1 + np.exp(-zc))\n"))),
    # state across calls: kept at module level
    Bug("output_buffer_reused", "repeated_calls",
        "every call with the same output shape writes into the same module-level buffer (matmul(..., out=)) and "
        "returns it, so the next call overwrites a result the caller still holds; return a new array",
        edited(BASE, ("def swiglu(", "_out = None\n\n\ndef swiglu("),
               (OUT, "    global _out\n"
                     "    hidden = silu(gate) * up\n"
                     "    shape = hidden.shape[:-1] + W_down.shape[1:]\n"
                     "    if _out is None or _out.shape != shape or _out.dtype != hidden.dtype:\n"
                     "        _out = np.empty(shape, dtype=hidden.dtype)\n"
                     "    return np.matmul(hidden, W_down, out=_out)\n")), stateful=True),
    Bug("fused_weights_cached_by_shape", "repeated_calls",
        "W_gate and W_up are concatenated once per shape and cached: a later call with other weights of the "
        "same shape uses the first call's; fuse them on every call (or not at all)",
        edited(BASE, ("def swiglu(", "_fused = {}\n\n\ndef swiglu("),
               ("    gate, up = x @ W_gate, x @ W_up\n",
                "    if W_gate.shape not in _fused:\n"
                "        _fused[W_gate.shape] = np.concatenate([W_gate, W_up], axis=1)\n"
                "    h = x @ _fused[W_gate.shape]\n"
                "    gate, up = h[..., :W_gate.shape[1]], h[..., W_gate.shape[1]:]\n")), stateful=True),
    # sizes: rows in blocks, the count of blocks rounded down
    Bug("rows_in_blocks_drop_tail", "large_sizes",
        "the rows are processed in blocks of 1024 and the number of blocks is rounded down, so the rows after "
        "the last full block stay 0; round up, range(0, n, 1024)",
        edited(BASE, ("    gate, up = x @ W_gate, x @ W_up\n" + OUT,
                      "    rows = x.reshape(-1, x.shape[-1])\n"
                      "    out = np.zeros((len(rows), W_down.shape[1]))\n"
                      "    for b in range(max(1, len(rows) // 1024)):\n"
                      "        block = rows[b * 1024:(b + 1) * 1024]\n"
                      "        out[b * 1024:(b + 1) * 1024] = (silu(block @ W_gate) * (block @ W_up)) @ W_down\n"
                      "    return out.reshape(x.shape[:-1] + W_down.shape[1:])\n"))),
]

# Close to a catalogued bug, but a different mistake: the grader must fail each one without
# naming any entry of BUGS.
NEAR_MISSES = [
    Bug("residual_added", "gate_branch",
        "the block's input is added to its output, x + (silu(gate) * up) @ W_down, as a new array: the block "
        "has no residual connection",
        edited(BASE, (OUT, "    return x + (silu(gate) * up) @ W_down\n")), says=('input',)),
    Bug("silu_clipped_at_10", "negative_tail",
        "z is clipped to [-10, 10] before the exp: silu(-15) comes out as -7e-4 instead of -5e-6",
        edited(BASE, (SILU, "    return z / (1 + np.exp(-np.clip(z, -10, 10)))\n")), says=('needs@scale', 'clip')),
    Bug("fused_weights_from_first_call", "repeated_calls",
        "W_gate and W_up are concatenated at the first call and kept for every later one, whatever its shapes",
        edited(BASE, ("def swiglu(", "_fused = None\n\n\ndef swiglu("),
               ("    gate, up = x @ W_gate, x @ W_up\n",
                "    global _fused\n"
                "    if _fused is None:\n"
                "        _fused = np.concatenate([W_gate, W_up], axis=1)\n"
                "    h = x @ _fused\n"
                "    gate, up = h[..., :_fused.shape[1] // 2], h[..., _fused.shape[1] // 2:]\n")), stateful=True,
        says=('history',)),
    Bug("hard_swish", "activation",
        "hard swish, z * relu6(z + 3) / 6, the piecewise-linear stand-in for SiLU: SwiGLU uses "
        "z * sigmoid(z) itself",
        edited(BASE, (SILU, "    return z * np.clip(z + 3, 0, 6) / 6\n")), says=('needs@scale', 'constant', 'clip')),
    Bug("gelu_sigmoid_approximation", "activation",
        "z * sigmoid(1.702 z), the sigmoid approximation of GELU: SiLU is z * sigmoid(z)",
        edited(BASE, ("np.exp(-np.abs(z))", "np.exp(-np.abs(1.702 * z))")),
        says=('needs@scale', 'scale', 'constant', 'clip')),
]

# Catalogued mistakes with their trigger moved (another clip, another sign): no entry above is them, and
# the report must say what each is without a name.
VARIANTS = [
    Bug("silu_clipped_at_20", "negative_tail",
        "z is clipped to [-20, 20] before the exp: silu(-30) comes out as -4e-8 instead of -3e-12",
        edited(BASE, (SILU, "    z_c = np.clip(z, -20.0, 20.0)\n    return z_c / (1 + np.exp(-z_c))\n")),
        says=("needs@scale", "clip")),
    Bug("residual_subtracted", "agrees",
        "the block's input is subtracted from its output: the block has no residual connection at all",
        edited(BASE, (OUT, "    return (silu(gate) * up) @ W_down - x\n")), says=("input",)),
]
