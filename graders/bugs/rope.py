"""Mistakes candidates make in rotary position embeddings."""
from graders.bugs import Bug


BUGS = [
    Bug("interleaved_pairing", "test_pairing",
        "the interleaved pairing: features are paired with their neighbours (x[2i], x[2i+1]), as in the "
        "original RoFormer paper and complex-number code; the contract's half-split pairing rotates x[i] "
        "with x[i + d/2], as the Llama code does",
        """
        def rope(x, positions=None, base=10000.0):
            T, d = x.shape[-2:]
            if d % 2:
                raise ValueError("d must be even")
            if positions is None:
                positions = np.arange(T)
            freqs = base ** (-2.0 * np.arange(d // 2) / d)
            angles = np.outer(positions, freqs)
            cos, sin = np.cos(angles), np.sin(angles)
            even, odd = x[..., 0::2], x[..., 1::2]
            out = np.empty(x.shape)
            out[..., 0::2] = even * cos - odd * sin
            out[..., 1::2] = odd * cos + even * sin
            return out
        """),
    Bug("freqs_minus_i_over_d", "test_agrees",
        "the frequencies are base ** (-i/d) for i in 0..d/2-1: the exponent needs 2i/d (or "
        "np.arange(0, d, 2) / d), otherwise the slowest pair turns far too fast",
        """
        def rope(x, positions=None, base=10000.0):
            T, d = x.shape[-2:]
            if d % 2:
                raise ValueError("d must be even")
            half = d // 2
            if positions is None:
                positions = np.arange(T)
            freqs = base ** (-np.arange(half) / d)
            angles = np.outer(positions, freqs)
            cos, sin = np.cos(angles), np.sin(angles)
            x1, x2 = x[..., :half], x[..., half:]
            return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
        """),
    Bug("positive_exponent", "test_agrees",
        "the frequencies are base ** (2i/d), a positive exponent: they must shrink with i, "
        "base ** (-2i/d) (or 1 / base ** (2i/d))",
        """
        def rope(x, positions=None, base=10000.0):
            T, d = x.shape[-2:]
            if d % 2:
                raise ValueError("d must be even")
            half = d // 2
            if positions is None:
                positions = np.arange(T)
            freqs = base ** (np.arange(0, d, 2) / d)
            angles = np.outer(positions, freqs)
            cos, sin = np.cos(angles), np.sin(angles)
            x1, x2 = x[..., :half], x[..., half:]
            return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
        """),
    Bug("freqs_off_by_one", "test_agrees",
        "the frequency index starts at 1 (np.arange(1, d/2 + 1)): pair 0 must turn at exactly one "
        "radian per position, base ** 0",
        """
        def rope(x, positions=None, base=10000.0):
            T, d = x.shape[-2:]
            if d % 2:
                raise ValueError("d must be even")
            half = d // 2
            if positions is None:
                positions = np.arange(T)
            freqs = 1.0 / base ** (2 * np.arange(1, half + 1) / d)
            angles = np.outer(positions, freqs)
            cos, sin = np.cos(angles), np.sin(angles)
            x1, x2 = x[..., :half], x[..., half:]
            return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
        """),
    Bug("sign_flipped", "test_agrees",
        "the rotation runs backwards (by -angle): out_i = x_i cos - x_{i+d/2} sin and "
        "out_{i+d/2} = x_{i+d/2} cos + x_i sin, and rotate_half is concatenate([-x2, x1]), not [x2, -x1]",
        """
        def rope(x, positions=None, base=10000.0):
            T, d = x.shape[-2:]
            if d % 2:
                raise ValueError("d must be even")
            half = d // 2
            if positions is None:
                positions = np.arange(T)
            freqs = base ** (-2.0 * np.arange(half) / d)
            angles = np.outer(positions, freqs)
            cos, sin = np.cos(angles), np.sin(angles)
            x1, x2 = x[..., :half], x[..., half:]
            return np.concatenate([x1 * cos + x2 * sin, x2 * cos - x1 * sin], axis=-1)
        """),
    Bug("sign_slip_second_half", "test_pair_norms",
        "a sign slip in the second half (x_{i+d/2} cos - x_i sin with the first half as usual): that is "
        "not a rotation, so lengths and relative positions are lost",
        """
        def rope(x, positions=None, base=10000.0):
            T, d = x.shape[-2:]
            if d % 2:
                raise ValueError("d must be even")
            half = d // 2
            if positions is None:
                positions = np.arange(T)
            freqs = base ** (-2.0 * np.arange(half) / d)
            angles = np.outer(positions, freqs)
            cos, sin = np.cos(angles), np.sin(angles)
            x1, x2 = x[..., :half], x[..., half:]
            return np.concatenate([x1 * cos - x2 * sin, x2 * cos - x1 * sin], axis=-1)
        """),
    Bug("positions_ignored", "test_custom_positions",
        "the positions argument is ignored and np.arange(T) always used: a cached decoding step at "
        "position 4095 with T = 1 would be rotated as position 0",
        """
        def rope(x, positions=None, base=10000.0):
            T, d = x.shape[-2:]
            if d % 2:
                raise ValueError("d must be even")
            half = d // 2
            freqs = base ** (-2.0 * np.arange(half) / d)
            angles = np.outer(np.arange(T), freqs)
            cos, sin = np.cos(angles), np.sin(angles)
            x1, x2 = x[..., :half], x[..., half:]
            return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
        """),
    Bug("table_sized_T", "test_custom_positions",
        "the cos/sin table is built for positions 0..T-1 and then indexed by `positions`: positions are "
        "any ints (with a cache, far beyond T), so build the angles from the positions themselves",
        """
        def rope(x, positions=None, base=10000.0):
            T, d = x.shape[-2:]
            if d % 2:
                raise ValueError("d must be even")
            half = d // 2
            freqs = base ** (-2.0 * np.arange(half) / d)
            table = np.outer(np.arange(T), freqs)
            if positions is not None:
                table = table[positions]
            cos, sin = np.cos(table), np.sin(table)
            x1, x2 = x[..., :half], x[..., half:]
            return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
        """),
    Bug("positions_from_one", "test_position_zero",
        "the default positions start at 1 (np.arange(1, T + 1)): the first token sits at position 0, "
        "and a rotation by angle 0 leaves it unchanged",
        """
        def rope(x, positions=None, base=10000.0):
            T, d = x.shape[-2:]
            if d % 2:
                raise ValueError("d must be even")
            half = d // 2
            if positions is None:
                positions = np.arange(1, T + 1)
            freqs = base ** (-2.0 * np.arange(half) / d)
            angles = np.outer(positions, freqs)
            cos, sin = np.cos(angles), np.sin(angles)
            x1, x2 = x[..., :half], x[..., half:]
            return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
        """),
    Bug("cos_sin_repeated", "test_agrees",
        "the (T, d) cos/sin tables were built with np.repeat (f0 f0 f1 f1 ...), the interleaved layout; "
        "with rotate_half the two halves need the same angles, so concatenate the (T, d/2) table with itself",
        """
        def rope(x, positions=None, base=10000.0):
            T, d = x.shape[-2:]
            if d % 2:
                raise ValueError("d must be even")
            half = d // 2
            if positions is None:
                positions = np.arange(T)
            freqs = base ** (-2.0 * np.arange(half) / d)
            angles = np.repeat(np.outer(positions, freqs), 2, axis=-1)
            cos, sin = np.cos(angles), np.sin(angles)
            rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
            return x * cos + rotated * sin
        """),
    Bug("angle_table_reshaped", "test_agrees",
        "the (d/2, T) angle table was reshaped to (T, d/2) instead of transposed: reshape keeps the memory "
        "order, so positions end up spread along the features (use .T, or build it as positions[:, None] * freqs)",
        """
        def rope(x, positions=None, base=10000.0):
            T, d = x.shape[-2:]
            if d % 2:
                raise ValueError("d must be even")
            half = d // 2
            if positions is None:
                positions = np.arange(T)
            freqs = base ** (-2.0 * np.arange(half) / d)
            angles = (freqs[:, None] * positions[None, :]).reshape(T, half)
            cos, sin = np.cos(angles), np.sin(angles)
            x1, x2 = x[..., :half], x[..., half:]
            return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
        """),
    Bug("T_from_first_axis", "test_leading_axes",
        "T and d are read as x.shape (or len(x)), which only holds for a plain (T, d) array: with batch "
        "and head axes the sequence is x.shape[-2] and the features x.shape[-1]",
        """
        def rope(x, positions=None, base=10000.0):
            T = len(x)
            d = x.shape[-1]
            if d % 2:
                raise ValueError("d must be even")
            half = d // 2
            if positions is None:
                positions = np.arange(T)
            freqs = base ** (-2.0 * np.arange(half) / d)
            angles = np.outer(positions, freqs)
            cos, sin = np.cos(angles), np.sin(angles)
            x1, x2 = x[..., :half], x[..., half:]
            return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
        """),
    Bug("base_ignored", "test_base",
        "the base is hard-coded as 10000 instead of using the `base` argument (models with long "
        "contexts raise it to 500000 or more)",
        """
        def rope(x, positions=None, base=10000.0):
            T, d = x.shape[-2:]
            if d % 2:
                raise ValueError("d must be even")
            half = d // 2
            if positions is None:
                positions = np.arange(T)
            freqs = 10000.0 ** (-2.0 * np.arange(half) / d)
            angles = np.outer(positions, freqs)
            cos, sin = np.cos(angles), np.sin(angles)
            x1, x2 = x[..., :half], x[..., half:]
            return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
        """),
    Bug("float32_angles", "test_custom_positions",
        "the angle table is computed in float32 (np.arange(..., dtype=np.float32)): at position 100000 a "
        "float32 angle is only good to about 0.004 radians; compute positions * freqs in float64",
        """
        def rope(x, positions=None, base=10000.0):
            T, d = x.shape[-2:]
            if d % 2:
                raise ValueError("d must be even")
            half = d // 2
            if positions is None:
                positions = np.arange(T)
            t = np.asarray(positions).astype(np.float32)
            freqs = (1.0 / base ** (np.arange(0, d, 2, dtype=np.float32) / d)).astype(np.float32)
            angles = np.outer(t, freqs).astype(np.float32)
            cos, sin = np.cos(angles), np.sin(angles)
            x1, x2 = x[..., :half], x[..., half:]
            return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
        """),
    Bug("in_place_views", "test_inputs_unchanged",
        "the first half is written back into x before the second half is computed from it: x1 is a view "
        "of x, so it already holds the new values (and the caller's array is overwritten); build a new array",
        """
        def rope(x, positions=None, base=10000.0):
            T, d = x.shape[-2:]
            if d % 2:
                raise ValueError("d must be even")
            half = d // 2
            if positions is None:
                positions = np.arange(T)
            freqs = base ** (-2.0 * np.arange(half) / d)
            angles = np.outer(positions, freqs)
            cos, sin = np.cos(angles), np.sin(angles)
            x1, x2 = x[..., :half], x[..., half:]
            x[..., :half] = x1 * cos - x2 * sin
            x[..., half:] = x2 * cos + x1 * sin
            return x
        """),
    Bug("in_place_write", "test_inputs_unchanged",
        "the result is written into x itself: the values are right, but the caller's queries or keys are "
        "overwritten; allocate the output (np.empty_like(x) or np.concatenate)",
        """
        def rope(x, positions=None, base=10000.0):
            T, d = x.shape[-2:]
            if d % 2:
                raise ValueError("d must be even")
            half = d // 2
            if positions is None:
                positions = np.arange(T)
            freqs = base ** (-2.0 * np.arange(half) / d)
            angles = np.outer(positions, freqs)
            cos, sin = np.cos(angles), np.sin(angles)
            x1, x2 = x[..., :half].copy(), x[..., half:].copy()
            x[..., :half] = x1 * cos - x2 * sin
            x[..., half:] = x2 * cos + x1 * sin
            return x
        """),
    Bug("assert_not_valueerror", "test_odd_d",
        "an assert checks that d is even: it raises AssertionError (and vanishes under python -O); "
        "raise ValueError as the contract says",
        """
        def rope(x, positions=None, base=10000.0):
            T, d = x.shape[-2:]
            assert d % 2 == 0, "d must be even"
            half = d // 2
            if positions is None:
                positions = np.arange(T)
            freqs = base ** (-2.0 * np.arange(half) / d)
            angles = np.outer(positions, freqs)
            cos, sin = np.cos(angles), np.sin(angles)
            x1, x2 = x[..., :half], x[..., half:]
            return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
        """),
    Bug("no_odd_check", "test_odd_d",
        "nothing checks that d is even: the loop over d // 2 pairs silently leaves the last feature "
        "unrotated; raise ValueError for an odd d",
        """
        def rope(x, positions=None, base=10000.0):
            T, d = x.shape[-2:]
            half = d // 2
            if positions is None:
                positions = np.arange(T)
            pos = np.asarray(positions, dtype=np.float64)
            out = np.array(x, dtype=np.float64)
            for i in range(half):
                theta = pos * base ** (-2.0 * i / d)
                a, b = x[..., i], x[..., i + half]
                out[..., i] = a * np.cos(theta) - b * np.sin(theta)
                out[..., i + half] = b * np.cos(theta) + a * np.sin(theta)
            return out
        """),
]
