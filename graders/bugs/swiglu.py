"""Mistakes candidates make in a SwiGLU feed-forward block."""
from graders.bugs import Bug


BUGS = [
    Bug("gate_and_up_swapped", "test_gate_branch",
        "the gate and up projections are swapped: SiLU must act on x @ W_gate, and x @ W_up is the linear "
        "branch it multiplies",
        """
        def swiglu(x, W_gate, W_up, W_down):
            gate = x @ W_gate
            up = x @ W_up
            e = np.exp(-np.abs(up))
            sig = np.where(up >= 0, 1 / (1 + e), e / (1 + e))
            return (up * sig * gate) @ W_down
        """),
    Bug("plain_sigmoid", "test_activation",
        "a plain sigmoid as the gate: SiLU (swish) is z * sigmoid(z), so the gate value itself multiplies in",
        """
        def swiglu(x, W_gate, W_up, W_down):
            gate = x @ W_gate
            e = np.exp(-np.abs(gate))
            sig = np.where(gate >= 0, 1 / (1 + e), e / (1 + e))
            return (sig * (x @ W_up)) @ W_down
        """),
    Bug("overflowing_sigmoid", "test_huge",
        "an exp that overflows for z near -1e4, as in 1 / (1 + exp(-z)) or an np.where whose discarded "
        "branch still computes it: the values survive, but NumPy warns; build the sigmoid from exp(-|z|), "
        "which never overflows",
        """
        def swiglu(x, W_gate, W_up, W_down):
            gate = x @ W_gate
            silu = gate / (1 + np.exp(-gate))
            return (silu * (x @ W_up)) @ W_down
        """),
    Bug("sigmoid_as_exp_ratio", "test_huge",
        "sigmoid written as exp(z) / (1 + exp(z)): for z near +1e4 that is inf / inf = NaN; use exp(-|z|) "
        "and pick the form by the sign of z",
        """
        def swiglu(x, W_gate, W_up, W_down):
            gate = x @ W_gate
            ez = np.exp(gate)
            silu = gate * ez / (1 + ez)
            return (silu * (x @ W_up)) @ W_down
        """),
    Bug("relu_gate", "test_activation",
        "ReLU as the gate: the Sw in SwiGLU is swish, SiLU(z) = z * sigmoid(z), which is smooth and lets "
        "small negative values through",
        """
        def swiglu(x, W_gate, W_up, W_down):
            gate = np.maximum(x @ W_gate, 0)
            return (gate * (x @ W_up)) @ W_down
        """),
    Bug("gelu_gate", "test_activation",
        "GELU as the gate (that is GeGLU, or the older two-matrix block's activation); SwiGLU uses "
        "SiLU(z) = z * sigmoid(z)",
        """
        def swiglu(x, W_gate, W_up, W_down):
            g = x @ W_gate
            gelu = 0.5 * g * (1 + np.tanh(np.sqrt(2 / np.pi) * (g + 0.044715 * g ** 3)))
            return (gelu * (x @ W_up)) @ W_down
        """),
    Bug("silu_on_both_branches", "test_gate_branch",
        "SiLU is applied to both projections: only the gate goes through it, and x @ W_up multiplies in "
        "unchanged",
        """
        def silu(z):
            e = np.exp(-np.abs(z))
            return z * np.where(z >= 0, 1 / (1 + e), e / (1 + e))

        def swiglu(x, W_gate, W_up, W_down):
            return (silu(x @ W_gate) * silu(x @ W_up)) @ W_down
        """),
    Bug("silu_after_product", "test_gate_branch",
        "SiLU is applied to the product gate * up: it acts on the gate alone, and the product comes after",
        """
        def silu(z):
            e = np.exp(-np.abs(z))
            return z * np.where(z >= 0, 1 / (1 + e), e / (1 + e))

        def swiglu(x, W_gate, W_up, W_down):
            return silu((x @ W_gate) * (x @ W_up)) @ W_down
        """),
    Bug("down_projection_missing", "test_shape",
        "the hidden layer silu(gate) * up, shape (..., d_ff), is returned without the final @ W_down",
        """
        def swiglu(x, W_gate, W_up, W_down):
            gate = x @ W_gate
            e = np.exp(-np.abs(gate))
            silu = gate * np.where(gate >= 0, 1 / (1 + e), e / (1 + e))
            return silu * (x @ W_up)
        """),
    Bug("down_before_product", "test_agrees",
        "each branch is projected down before the product: W_down comes last, applied once to "
        "silu(gate) * up (the product of projections is not the projection of the product)",
        """
        def swiglu(x, W_gate, W_up, W_down):
            gate = x @ W_gate
            e = np.exp(-np.abs(gate))
            silu = gate * np.where(gate >= 0, 1 / (1 + e), e / (1 + e))
            return (silu @ W_down) * ((x @ W_up) @ W_down)
        """),
    Bug("weights_transposed", "test_shape",
        "the weights are read as PyTorch's nn.Linear (out, in) and transposed; here they are stored (in, out), "
        "so it is x @ W_gate with no .T (square test weights would have hidden this)",
        """
        def swiglu(x, W_gate, W_up, W_down):
            gate = x @ W_gate.T
            e = np.exp(-np.abs(gate))
            silu = gate * np.where(gate >= 0, 1 / (1 + e), e / (1 + e))
            return (silu * (x @ W_up.T)) @ W_down.T
        """),
    Bug("unpacks_three_axes", "test_leading_axes",
        "`B, T, d_model = x.shape` assumes a 3-D input; the block works on any leading axes, which "
        "x @ W_gate already broadcasts over",
        """
        def swiglu(x, W_gate, W_up, W_down):
            B, T, d_model = x.shape
            gate = np.einsum("btd,df->btf", x, W_gate)
            up = np.einsum("btd,df->btf", x, W_up)
            e = np.exp(-np.abs(gate))
            silu = gate * np.where(gate >= 0, 1 / (1 + e), e / (1 + e))
            return np.einsum("btf,fd->btd", silu * up, W_down)
        """),
    Bug("reshapes_x_in_place", "test_inputs_unchanged",
        "`x.shape = (-1, d_model)` reshapes the caller's array itself, which stays 2-D after the call; "
        "x.reshape(-1, d_model) gives a new view instead (and @ broadcasts over leading axes anyway)",
        """
        def swiglu(x, W_gate, W_up, W_down):
            lead, d_model = x.shape[:-1], x.shape[-1]
            x.shape = (-1, d_model)
            gate = x @ W_gate
            e = np.exp(-np.abs(gate))
            silu = gate * np.where(gate >= 0, 1 / (1 + e), e / (1 + e))
            return ((silu * (x @ W_up)) @ W_down).reshape(*lead, d_model)
        """),
    Bug("residual_added_in_place", "test_inputs_unchanged",
        "`x += ...` adds a residual connection the block does not have, and writes it into the caller's "
        "array; the block returns (silu(gate) * up) @ W_down alone, as a new array",
        """
        def swiglu(x, W_gate, W_up, W_down):
            gate = x @ W_gate
            e = np.exp(-np.abs(gate))
            silu = gate * np.where(gate >= 0, 1 / (1 + e), e / (1 + e))
            x += (silu * (x @ W_up)) @ W_down
            return x
        """),
]
