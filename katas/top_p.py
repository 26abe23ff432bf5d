"""Temperature and nucleus (top-p) sampling."""
import numpy as np


def top_p_probs(logits, temperature=1.0, top_p=1.0):
    """The distribution a language model samples its next token from: temperature, softmax, nucleus.

    Task
        The model's last layer gives one raw score (logit) per vocabulary entry. Turn a row
        of logits into the probabilities a sampler draws from:
          1. divide the logits by `temperature`,
          2. softmax,
          3. keep the nucleus: the smallest set of most probable tokens whose
             probabilities add up to at least `top_p`,
          4. set every other token to 0 and renormalise the kept ones to sum to 1.
        Then write `sample_top_p` (below), which draws token ids from these probabilities.
        NumPy only.

    Shapes
        logits       (..., V) float64 or float32: (V,) for one step, (B, V) for a batch;
                     every leading axis is an independent row
        p            (..., V) softmax(logits / temperature) along the last axis
        returns      (..., V) the same shape as logits: 0 outside the nucleus, every row
                     sums to 1

    Conventions
        - p_i is proportional to exp(z_i / T) for logits z and temperature T. Lower T
          sharpens the distribution, higher T flattens it.
        - temperature == 0 is greedy: a one-hot on the argmax, the lowest index among
          equal maxima.
        - The nucleus is never empty: at least one token survives. top_p = 1 keeps
          every token.
        - Among tokens of equal probability, the lower index enters the nucleus first.
        - Worked example: logits [8.2, 6.9, 5.4, 4.8, 4.1, 3.7, 2.2, 1.0] at temperature 1
          give p = [0.7155, 0.1950, 0.0435, ...]. With top_p = 0.9 exactly the first two
          tokens survive, renormalised to [0.7858, 0.2142, 0, 0, 0, 0, 0, 0].
        - Logits may reach 1e4 and temperatures may be as small as 0.002: the result
          must stay finite and correct.
        - ValueError for temperature < 0, and for top_p outside (0, 1], NaN included,
          at any temperature (0 too).
        - Do not modify `logits`.

    What the grader checks
        shapes for (V,), (B, V) and more leading axes, V = 1 included; agreement with the
        reference in float64 and float32; the worked example; rows sum to 1; only the
        nucleus is non-zero; the token that reaches top_p is kept, also where a
        cumulative sum equals top_p exactly (equal logits give exactly 0.25 each);
        top_p = 1 keeps every token; temperature divides the logits (ratios of
        log-probabilities); lower temperature sharpens; temperature 0 gives the one-hot
        on the first argmax; ties keep the lower index first; batches row by row; finite,
        correct results for logits of 1e4, for rows whose logits all lie near -800, and
        at a temperature of 0.002 (where logits 0.002 apart still differ by a factor e);
        a vocabulary of 4097 tokens; the ValueErrors; logits unchanged; the same answers
        for logits that are views, Fortran-ordered or read-only; calls that do not affect
        each other (the same shape with other values, other sizes, earlier results
        kept). Then sample_top_p (see its docstring).

    Time budget: 25 minutes.
    """
    raise NotImplementedError("top_p_probs: not implemented yet")


def sample_top_p(logits, temperature=1.0, top_p=1.0, rng=None):
    """Draw one token id per row of `logits` from top_p_probs(logits, temperature, top_p).

    Task
        Sample the next token: one draw per row from the probabilities that
        `top_p_probs` returns, using the random Generator you are given.

    Shapes
        logits    (..., V) float64 or float32
        rng       a numpy.random.Generator (np.random.default_rng(seed)); when None, make a
                  fresh one with np.random.default_rng()
        returns   (...) an int array of token ids in [0, V), one per row; for logits of
                  shape (V,) an integer scalar (a Python int or np.int64), not an array

    Conventions
        - Every random number comes from `rng`: the same seed must give the same draws,
          whatever else the program does, and NumPy's global random state plays no part.
        - Rows are drawn independently, each from its own probabilities.
        - The same ValueErrors as top_p_probs. Do not modify `logits`.

    What the grader checks
        the return type and shape; the same seed gives the same draws; different seeds
        give different draws and NumPy's global random state plays no part (drawing from it
        raises an error during grading); no draw outside the nucleus; rng=None works;
        temperature 0 always draws the argmax; over thousands of draws the frequencies match
        top_p_probs (a chi-square test that a correct sampler fails with probability below
        1e-6, however it uses the Generator); logits that are views, Fortran-ordered or
        read-only; earlier results that stay as they were returned.
    """
    raise NotImplementedError("sample_top_p: not implemented yet")
