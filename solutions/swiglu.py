"""SwiGLU feed-forward block."""
import numpy as np


def swiglu(x, W_gate, W_up, W_down):
    """The gated feed-forward block of current open-weights models: (silu(x W_gate) * x W_up) W_down.

    Task
        A transformer's feed-forward block works on each position on its own. The older
        form was up-project, GELU, down-project. SwiGLU up-projects the same x twice:
        one copy (the gate) goes through SiLU, the other (up) stays linear, the two are
        multiplied elementwise, and W_down brings the result back to d_model:

            swiglu(x) = (silu(x @ W_gate) * (x @ W_up)) @ W_down
            silu(z)   = z * sigmoid(z) = z / (1 + exp(-z))

        Write it with NumPy only (no SciPy, no PyTorch).

    Shapes
        x        (..., d_model), float64 or float32: (d_model,), (T, d_model) or
                 (B, T, d_model); any leading axes are positions
        W_gate   (d_model, d_ff)   stored (in, out): x @ W_gate, no transpose
        W_up     (d_model, d_ff)
        W_down   (d_ff, d_model)
        gate, up (..., d_ff)       x @ W_gate and x @ W_up
        hidden   (..., d_ff)       silu(gate) * up
        returns  (..., d_model)    hidden @ W_down
        d_ff differs from d_model (in a published 8B model, 14336 against 4096).

    Conventions
        - Only the gate goes through SiLU; up is multiplied in unchanged. Swapping the two
          is a different function.
        - SiLU (also called swish) is z * sigmoid(z), not sigmoid(z) alone.
        - No overflow warnings for |z| up to 1e4: written as 1 / (1 + exp(-z)), exp(-z)
          overflows for z near -1e4 (exp(710) is inf in float64, exp(89) in float32).
          exp(-|z|) never overflows: sigmoid(z) is 1 / (1 + exp(-|z|)) for z >= 0 and
          exp(-|z|) / (1 + exp(-|z|)) for z < 0.
        - This is the block alone: no residual connection, no normalisation, no bias.
        - Do not modify x or the weights: return a new array.

    What the grader checks
        the output shape for (d_model,), (T, d_model) and (B, T, d_model) inputs with
        d_ff != d_model; agreement with the reference on several shapes and seeds in
        float64 and float32; that the SiLU acts on x @ W_gate, not on x @ W_up; that the
        activation is z * sigmoid(z) (a plain sigmoid, ReLU or GELU is named); no NaN and
        no overflow warning when |x @ W_gate| reaches 1e4 (the attempt runs with NumPy's
        floating-point warnings switched on); the inputs are left unchanged.

    Time budget: 15 minutes.
    """
    gate = x @ W_gate                                   # (..., d_ff)
    up = x @ W_up                                       # (..., d_ff)
    # sigmoid from e = exp(-|gate|), which lies in (0, 1]: neither sign can overflow
    e = np.exp(-np.abs(gate))                           # (..., d_ff)
    sigmoid = np.where(gate >= 0, 1 / (1 + e), e / (1 + e))   # (..., d_ff)
    hidden = gate * sigmoid * up                        # (..., d_ff): silu(gate) * up
    return hidden @ W_down                              # (..., d_model)
