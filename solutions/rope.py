"""Rotary position embeddings (RoPE), half-split pairing."""
import numpy as np


def rope(x, positions=None, base=10000.0):
    """Rotate the features of `x` by angles proportional to each token's position.

    Task
        Apply rotary position embeddings to queries or keys. Attention on its own sees
        a set, not a sequence; RoPE supplies the order by turning each pair of features
        of the vector at position p through an angle proportional to p. A rotated query
        at position m and a rotated key at position n then have a dot product that
        depends only on the gap m - n: relative distance falls out of the arithmetic,
        nothing is added to the values, and no table of positions caps the length.
        Write it with NumPy only.

    Shapes
        x          (..., T, d), float64 or float32: any leading axes, e.g. plain (T, d)
                   or queries split into heads (B, n_heads, T, d_head); d is even
        positions  int array (T,): the position of each of the T rows; None means
                   np.arange(T). Need not be sorted, may repeat, may exceed T (a
                   decoding step at position 4095 with T = 1)
        base       the frequency base, 10000.0 by default
        returns    the same shape as x

    Conventions
        - Half-split pairing, as in the common open-weights Llama code: for i in
          0..d/2-1 the pair is (x[..., i], x[..., i + d/2]), not the neighbours
          (x[..., 2i], x[..., 2i+1]) of the interleaved layout.
        - Pair i at position p turns by angle p * base ** (-2*i/d).
        - With c = cos(angle), s = sin(angle):
              out[..., i]       = x[..., i] * c - x[..., i + d/2] * s
              out[..., i + d/2] = x[..., i + d/2] * c + x[..., i] * s
        - The result must be as accurate as x's dtype allows, for positions up to
          100000 as well as small ones.
        - An odd d raises ValueError (the features cannot be split into pairs).
        - Do not modify x or positions: return a new array.

    What the grader checks
        the output shape; agreement with the reference on several shapes, seeds and
        dtypes (T = 1, odd T, d = 2, float32 and float64); that feature i is paired with
        feature i + d/2, not i + 1; position 0 is the identity; every pair
        (x_i, x_{i+d/2}) keeps its length; the score between a rotated query at m and a
        rotated key at n depends only on m - n (shifting both changes nothing); custom
        positions (unsorted, repeated, up to 100000), in float32 as well as float64; a
        sequence of 4097 positions; leading batch and head axes; a base other than
        10000; ValueError for an odd d; x and positions left unchanged; the same answers
        for inputs that are views, Fortran-ordered or read-only; calls that do not
        affect each other (the same shape with other positions or another base, other
        sizes, earlier results kept).

    Time budget: 25 minutes.
    """
    *lead, T, d = x.shape
    if d % 2:
        raise ValueError(f"rope needs an even feature size d to form pairs, got d={d}")
    half = d // 2
    if positions is None:
        positions = np.arange(T)
    pos = np.asarray(positions, dtype=np.float64)                # (T,)
    # pair i turns at base**(-2i/d) radians per position: fast pairs first, slow last
    freqs = base ** (-2.0 * np.arange(half) / d)                 # (d/2,)
    angles = pos[:, None] * freqs[None, :]                       # (T, d/2)
    cos, sin = np.cos(angles), np.sin(angles)                    # (T, d/2) each, broadcast over lead axes
    x1, x2 = x[..., :half], x[..., half:]                        # (..., T, d/2) each: the two halves of every pair
    out = np.concatenate([x1 * cos - x2 * sin,                   # (..., T, d/2) first members
                          x2 * cos + x1 * sin], axis=-1)         # (..., T, d)
    return out.astype(x.dtype, copy=False)                       # (..., T, d) in x's dtype
