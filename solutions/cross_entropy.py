"""Cross-entropy of next-token logits against target ids, and its gradient with respect to the logits."""
import numpy as np


def cross_entropy(logits, targets, ignore_index=-100):
    """Mean cross-entropy of `logits` against the integer `targets`, and its gradient.

    Task
        Write the loss a language model is trained on. Every position holds one score
        per vocabulary entry (its logits) and the id of the token that really came
        next (its target). The loss at a position is minus the log of the probability
        that the softmax of its logits gives to its target; the loss of the batch is
        the mean over the positions that count. Return it together with its gradient
        with respect to the logits, worked out by hand (there is no autograd here).
        NumPy only.

    Shapes
        logits        (..., V), float64 or float32: any number of leading axes, e.g.
                      (B, T, V), (N, V), or a single position (V,)
        targets       int array (...), the leading shape of logits (a 0-d array for a
                      single position): the target id of each position
        ignore_index  int, -100 by default: a position whose target equals it counts
                      neither in the loss nor in the number of positions (padding,
                      prompt tokens)
        returns       (loss, dlogits): loss a Python float or a NumPy floating scalar
                      (not an array); dlogits the same shape as logits
        useful intermediate: the log-sum-exp of each position's logits, (N,) once the
        leading axes are flattened to N positions

    Conventions
        - loss = the mean, over the n positions p whose target is not ignore_index, of
          logsumexp(logits[p]) - logits[p, targets[p]], where logsumexp(z) is
          log(sum(exp(z))) over the V entries of one position.
        - dlogits[p] = (softmax(logits[p]) - one_hot(targets[p])) / n at a counted
          position, and exactly 0 at an ignored one.
        - An ignore_index inside [0, V) ignores that class, as in PyTorch (a padding
          token with id 0, say).
        - Logits of magnitude 1e4, and positions whose logits all lie far below zero,
          give a finite loss and gradient, correct to the precision of the dtype.
        - Raise ValueError for a target outside [0, V) that is not ignore_index, and
          when no position is counted: every target is ignore_index, or the batch is
          empty (PyTorch returns NaN there; this function says why).
        - Do not modify logits or targets, and return a new dlogits each call: the
          caller keeps earlier results.

    What the grader checks
        the shapes, and that the loss is a scalar; agreement with the reference on
        several shapes, seeds and dtypes (one position, V = 1, odd sizes, float32 and
        float64); dlogits against finite differences of the loss (float64); every
        counted row of dlogits sums to 0 and every ignored row is exactly 0;
        ignore_index left out of both the sum and the count, inside [0, V) too; logits
        of magnitude 1e4, float64 and float32; targets whose probability is far below
        1e-30 (losses of 40 to 800 at one position); any leading axes; the ValueErrors;
        inputs that are views, Fortran-ordered or read-only; large sizes (4100
        positions, and a vocabulary of 32000); a result stays as it was when the
        function is called again (it is called many times); logits and targets left
        unchanged.

    Time budget: 20 minutes.
    """
    V = logits.shape[-1]
    targets = np.asarray(targets)
    if targets.shape != logits.shape[:-1]:
        raise ValueError(f"targets {targets.shape} do not match the leading axes of logits {logits.shape}")
    z = logits.reshape(-1, V)                             # (N, V): one row per position, only read
    t = targets.reshape(-1)                               # (N,) target ids
    counted = t != ignore_index                           # (N,) the positions that enter the loss
    stray = counted & ((t < 0) | (t >= V))
    if np.any(stray):
        raise ValueError(f"target {t[stray][0]} is outside [0, {V}) and is not ignore_index={ignore_index}")
    n = int(np.count_nonzero(counted))
    if n == 0:
        raise ValueError("no position is counted: every target is ignore_index, or the batch is empty")

    rows = np.arange(len(t))                              # (N,)
    cls = np.where(counted, t, 0)                         # (N,) a valid index at the ignored rows too
    # log-softmax through the row maximum: exp only sees numbers <= 0, and the log is taken
    # of a sum >= 1, so nothing overflows and no probability underflows into log(0)
    shifted = z - z.max(axis=-1, keepdims=True)           # (N, V), 0 at each row's max
    e = np.exp(shifted)                                   # (N, V) in [0, 1]
    total = e.sum(axis=-1)                                # (N,) in [1, V]
    nll = np.log(total) - shifted[rows, cls]              # (N,) logsumexp - target logit, per position
    loss = np.sum(nll, where=counted) / n                 # mean over the counted positions only

    dz = e / total[:, None]                               # (N, V) softmax
    dz[rows, cls] -= 1                                    # softmax - one_hot(target)
    dz = np.where(counted[:, None], dz / n, 0)            # (N, V): ignored rows exactly 0, dtype kept
    return float(loss), dz.reshape(logits.shape)          # dlogits (..., V)
