"""SwiGLU feed-forward block."""
import numpy as np


def swiglu(x, W_gate, W_up, W_down):
    """The gated feed-forward block of current open-weights models: (silu(x W_gate) * x W_up) W_down.

    Task
        A transformer's feed-forward block works on each position on its own. The older
        form was up-project, GELU, down-project. SwiGLU up-projects the same x twice:
        one copy (the gate) goes through SiLU, the other (up) stays linear, the two are
        multiplied elementwise, and W_down brings the result back to d_model:

            swiglu(x)  = (silu(x @ W_gate) * (x @ W_up)) @ W_down
            silu(z)    = z * sigmoid(z)
            sigmoid(z) = 1 / (1 + exp(-z))

        Write it with NumPy only (no SciPy, no PyTorch).

    Shapes
        x        (..., d_model), float64 or float32: (d_model,), (T, d_model) or
                 (B, T, d_model); any leading axes are positions
        W_gate   (d_model, d_ff)   every weight is stored (in, out), as its shape says
        W_up     (d_model, d_ff)
        W_down   (d_ff, d_model)
        gate, up (..., d_ff)       x @ W_gate and x @ W_up
        hidden   (..., d_ff)       silu(gate) * up
        returns  (..., d_model)    hidden @ W_down
        d_ff differs from d_model (in a published 8B model, 14336 against 4096).

    Conventions
        - SiLU is also called swish; the formulas above define the block exactly.
        - Entries of x @ W_gate may reach 1e4 in magnitude, of either sign: the result
          must stay finite and correct, and NumPy must not warn of an overflow.
        - This is the block alone: no residual connection, no normalisation, no bias.
        - Do not modify x or the weights: return a new array.

    What the grader checks
        the output shape for (d_model,), (T, d_model) and (B, T, d_model) inputs with
        d_ff != d_model; agreement with the reference on several shapes and seeds in
        float64 and float32; which projection the activation acts on, with weights that
        tell the two apart; that the activation is SiLU, down to its far negative tail
        (silu(-25) is about -3.5e-10, and float64 is graded to within 1e-9); no NaN and
        no overflow warning when |x @ W_gate| reaches 1e4 (the attempt runs with NumPy's
        floating-point warnings switched on); 4097 rows in one call; the inputs are left
        unchanged; the same answers for inputs that are views, Fortran-ordered or
        read-only; calls that do not affect each other (the same shapes with other
        weights, other sizes, earlier results kept).

    Time budget: 15 minutes.
    """
    raise NotImplementedError("swiglu: not implemented yet")
