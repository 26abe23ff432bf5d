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
    raise NotImplementedError("cross_entropy: not implemented yet")
