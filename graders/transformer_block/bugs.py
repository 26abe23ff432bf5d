"""Mistakes candidates make when they assemble the pre-norm decoder layer.

Every entry but one is BASE, a plain correct answer, with one small edit.
"""
from graders.engine.bugs import Bug, edited

BASE = '''
import numpy as np


def transformer_block(x, params, n_heads, n_kv_heads, positions=None, eps=1e-6, base=10000.0):
    B, T, d_model = x.shape
    W_q, W_k, W_v, W_o = params["W_q"], params["W_k"], params["W_v"], params["W_o"]
    if W_q.shape[1] % n_heads != 0:
        raise ValueError("n_heads must divide W_q.shape[1]")
    if n_heads % n_kv_heads != 0:
        raise ValueError("n_kv_heads must divide n_heads")
    d_head = W_q.shape[1] // n_heads
    if d_head % 2 != 0:
        raise ValueError("d_head must be even for RoPE")
    group = n_heads // n_kv_heads
    half = d_head // 2
    if positions is None:
        positions = np.arange(T)
    freqs = base ** (-2.0 * np.arange(half) / d_head)
    angles = np.outer(positions, freqs)
    cos, sin = np.cos(angles), np.sin(angles)

    def rms_norm(t, w):
        return t / np.sqrt(np.mean(t ** 2, axis=-1, keepdims=True) + eps) * w

    def rope(t):
        t1, t2 = t[..., :half], t[..., half:]
        return np.concatenate([t1 * cos - t2 * sin, t2 * cos + t1 * sin], axis=-1)

    a = rms_norm(x, params["attn_norm"])
    q = (a @ W_q).reshape(B, T, n_heads, d_head).transpose(0, 2, 1, 3)
    k = (a @ W_k).reshape(B, T, n_kv_heads, d_head).transpose(0, 2, 1, 3)
    v = (a @ W_v).reshape(B, T, n_kv_heads, d_head).transpose(0, 2, 1, 3)
    q, k = rope(q), rope(k)
    k = np.repeat(k, group, axis=1)
    v = np.repeat(v, group, axis=1)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_head)
    mask = np.triu(np.ones((T, T), dtype=bool), k=1)
    scores = np.where(mask, -np.inf, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    attn = (weights @ v).transpose(0, 2, 1, 3).reshape(B, T, n_heads * d_head)
    h = x + attn @ W_o
    f = rms_norm(h, params["ffn_norm"])
    gate = f @ params["W_gate"]
    up = f @ params["W_up"]
    silu = gate * np.exp(-np.logaddexp(0.0, -gate))
    return h + (silu * up) @ params["W_down"]
'''


def _variant(*changes: tuple[str, str]) -> str:
    return edited(BASE, *changes)


ROPE_QK = "    q, k = rope(q), rope(k)\n"
ROPE_DEF = ("        t1, t2 = t[..., :half], t[..., half:]\n"
            "        return np.concatenate([t1 * cos - t2 * sin, t2 * cos + t1 * sin], axis=-1)\n")
ANGLES = "    angles = np.outer(positions, freqs)\n"
FREQS = "    freqs = base ** (-2.0 * np.arange(half) / d_head)\n"
ATTN_RESIDUAL = "    h = x + attn @ W_o\n"
FFN_RESIDUAL = '    return h + (silu * up) @ params["W_down"]\n'
SOFTMAX = ("    scores = scores - scores.max(axis=-1, keepdims=True)\n"
           "    weights = np.exp(scores)\n")
SCALE = "scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_head)"

# A loop over heads that checks nothing: a width that n_heads does not divide loses columns,
# a KV head count that does not divide n_heads is mapped anyway, and an odd d_head is rotated.
LOOP_WITHOUT_CHECKS = '''
import numpy as np


def transformer_block(x, params, n_heads, n_kv_heads, positions=None, eps=1e-6, base=10000.0):
    B, T, d_model = x.shape
    d = params["W_q"].shape[1] // n_heads
    pos = np.arange(T) if positions is None else positions
    ang = np.outer(pos, base ** (-2.0 * np.arange(d // 2) / d))
    c, s = np.cos(ang), np.sin(ang)

    def norm(t, w):
        return t / np.sqrt((t * t).mean(-1, keepdims=True) + eps) * w

    def rope(t):
        a, b = t[..., :d // 2], t[..., d // 2:]
        return np.concatenate([a * c - b * s, b * c + a * s], axis=-1)

    a = norm(x, params["attn_norm"])
    q_all, k_all, v_all = a @ params["W_q"], a @ params["W_k"], a @ params["W_v"]
    outs = []
    for h in range(n_heads):
        g = h * n_kv_heads // n_heads
        q = rope(q_all[..., h * d:(h + 1) * d])
        k = rope(k_all[..., g * d:(g + 1) * d])
        sc = q @ k.transpose(0, 2, 1) / np.sqrt(d)
        sc = np.where(np.triu(np.ones((T, T), dtype=bool), 1), -np.inf, sc)
        p = np.exp(sc - sc.max(-1, keepdims=True))
        outs.append(p / p.sum(-1, keepdims=True) @ v_all[..., g * d:(g + 1) * d])
    h = x + np.concatenate(outs, axis=-1) @ params["W_o"]
    f = norm(h, params["ffn_norm"])
    gate = f @ params["W_gate"]
    return h + (gate / (1 + np.exp(-gate)) * (f @ params["W_up"])) @ params["W_down"]
'''

BUGS = [
    # --- RoPE
    Bug("rope_on_values", "shift",
        "RoPE turns the values too; it belongs on queries and keys only, whose dot product then depends on "
        "the gap between positions, while turned values carry each token's absolute position into the output",
        _variant((ROPE_QK, "    q, k, v = rope(q), rope(k), rope(v)\n"))),
    Bug("rope_interleaved", "agrees",
        "RoPE with the interleaved pairing (x[2i], x[2i+1]); the contract's half-split pairing turns feature i "
        "with feature i + d_head/2 of the same head, as the Llama code does",
        _variant((ROPE_DEF,
                  "        t1, t2 = t[..., 0::2], t[..., 1::2]\n"
                  "        out = np.empty(t.shape)\n"
                  "        out[..., 0::2] = t1 * cos - t2 * sin\n"
                  "        out[..., 1::2] = t2 * cos + t1 * sin\n"
                  "        return out\n"))),
    Bug("rope_over_all_heads", "agrees",
        "RoPE was applied to the whole projection (n_heads * d_head features) before the split into heads; it "
        "turns each head of size d_head on its own, pairing feature i with feature i + d_head/2 of that head",
        _variant((ROPE_DEF,
                  "        w = t.shape[-1]\n"
                  "        ang = np.outer(positions, base ** (-2.0 * np.arange(w // 2) / w))\n"
                  "        t1, t2 = t[..., :w // 2], t[..., w // 2:]\n"
                  "        c, s = np.cos(ang), np.sin(ang)\n"
                  "        return np.concatenate([t1 * c - t2 * s, t2 * c + t1 * s], axis=-1)\n"),
                 ("    q = (a @ W_q).reshape", "    q = rope(a @ W_q).reshape"),
                 ("    k = (a @ W_k).reshape", "    k = rope(a @ W_k).reshape"),
                 (ROPE_QK, ""))),
    Bug("no_rope", "agrees",
        "no RoPE at all: the layer cannot tell positions apart; turn every query and key head by its position "
        "before the scores",
        _variant((ROPE_QK, ""))),
    # pytorch/executorch PR #2010 (the cache branch must slice start_pos: start_pos + seqlen); panbanda/higgs PR #60
    Bug("positions_ignored", "positions_base_eps",
        "the positions argument is ignored and arange(T) is always used, so a chunk decoded after a cache (or "
        "any positions given) is rotated as if it started at 0; use positions when it is given",
        _variant(("    if positions is None:\n        positions = np.arange(T)\n", "    positions = np.arange(T)\n"))),
    Bug("rope_table_4096", "shift",
        "the angles come from a table of 4096 positions, so a position beyond it raises IndexError; RoPE "
        "needs no table: compute the angles from the positions given, whatever their size",
        _variant((ANGLES, "    table = np.outer(np.arange(4096), freqs)\n    angles = table[positions]\n"))),
    Bug("rope_angles_float32", "shift",
        "the angle table is computed in float32: at a position near 1e5 an angle of that size keeps only about "
        "two decimals of a radian; compute positions * freqs in float64 and cast cos and sin afterwards",
        _variant((ANGLES, "    angles = np.outer(positions, freqs).astype(np.float32)\n"))),
    # the frequencies of the first base seen for a head size are kept for every later call
    Bug("freqs_cached_by_head_size", "positions_base_eps",
        "the RoPE frequencies are kept in a module-level cache keyed by the head size alone, so a later call "
        "with another base reuses the first call's; compute them on every call (they cost d_head/2 powers)",
        _variant(("import numpy as np\n", "import numpy as np\n\n_FREQS = {}\n"),
                 (FREQS, "    if d_head not in _FREQS:\n"
                         "        _FREQS[d_head] = base ** (-2.0 * np.arange(half) / d_head)\n"
                         "    freqs = _FREQS[d_head]\n")),
        stateful=True),
    # the result is written into a module-level buffer kept per shape, so the next call of the
    # same shape overwrites what the last one returned
    Bug("output_buffer_reused", "repeated_calls",
        "the output is written into a buffer kept between calls (one per shape) and returned as it is: the "
        "next call of the same shape overwrites the result the caller still holds; return a new array",
        _variant(("import numpy as np\n", "import numpy as np\n\n_OUT = {}\n"),
                 (FFN_RESIDUAL, '    out = _OUT.setdefault(x.shape, np.empty(x.shape))\n'
                                '    np.add(h, (silu * up) @ params["W_down"], out=out)\n'
                                '    return out\n')),
        stateful=True),
    Bug("table_of_1024_positions", "long_sequence",
        "something is cut from a table built once for 1024 positions (here the causal mask, as a fixed "
        "block size does), so a longer sequence cannot use it; build what the call needs for its own T",
        _variant(("import numpy as np\n",
                  "import numpy as np\n\n_MASK = np.triu(np.ones((1024, 1024), dtype=bool), k=1)\n"),
                 ("    mask = np.triu(np.ones((T, T), dtype=bool), k=1)\n", "    mask = _MASK[:T, :T]\n"))),
    # --- where the norms and the residuals go
    Bug("post_norm", "zero_sublayers",
        "RMSNorm is applied after each residual add (post-norm, the 2017 layout): the pre-norm layer normalises "
        "only the copy each sub-layer reads, h = x + attention(rms_norm(x)), and leaves the stream itself alone",
        _variant(("    a = rms_norm(x, params[\"attn_norm\"])\n", "    a = x\n"),
                 (ATTN_RESIDUAL, "    h = rms_norm(x + attn @ W_o, params[\"attn_norm\"])\n"),
                 ("    f = rms_norm(h, params[\"ffn_norm\"])\n", "    f = h\n"),
                 (FFN_RESIDUAL, "    return rms_norm(h + (silu * up) @ params[\"W_down\"], params[\"ffn_norm\"])\n"))),
    Bug("attention_residual_missing", "residuals",
        "the attention output replaces the stream instead of being added to it: h = x + attention(...)",
        _variant((ATTN_RESIDUAL, "    h = attn @ W_o\n"))),
    Bug("ffn_residual_missing", "residuals",
        "the feed-forward output is returned alone; it is added to the stream: out = h + swiglu(...)",
        _variant((FFN_RESIDUAL, '    return (silu * up) @ params["W_down"]\n'))),
    # strutive07/transformer-tensorflow2.0#14 (layer_norm_2(tf.add(inputs, output)), marked Incorrect)
    Bug("ffn_residual_from_block_input", "residuals",
        "the feed-forward output is added to the block's input x instead of to h = x + attention(...), so the "
        "attention output is dropped from the stream: out = h + swiglu(rms_norm(h))",
        _variant((FFN_RESIDUAL, '    return x + (silu * up) @ params["W_down"]\n'))),
    # Project-MONAI/MONAI PR #9011 review (x = self.norm(x) reassigns x); tracel-ai/burn PR #1054
    Bug("ffn_residual_from_normalised", "zero_sublayers",
        "the feed-forward output is added to the normalised copy rms_norm(h) instead of to h (x = norm(x); "
        "x = x + FF(x) overwrites the stream): out = h + FF(rms_norm(h))",
        _variant((FFN_RESIDUAL, '    return f + (silu * up) @ params["W_down"]\n'))),
    Bug("norm_scales_swapped", "agrees",
        "the two RMSNorm scales are swapped: attn_norm belongs to the norm before attention, ffn_norm to the "
        "norm before the feed-forward block",
        _variant(('    a = rms_norm(x, params["attn_norm"])', '    a = rms_norm(x, params["ffn_norm"])'),
                 ('    f = rms_norm(h, params["ffn_norm"])', '    f = rms_norm(h, params["attn_norm"])'))),
    # kekzl/imp PR #1289 ("scaled by W instead of 1 + W"); linkedin/Liger-Kernel#74
    Bug("norm_weight_offset_one", "agrees",
        "RMSNorm multiplies by (1 + w), the Gemma storage convention; here the weight is the scale itself: "
        "rms_norm(x) * w",
        _variant(("+ eps) * w", "+ eps) * (1 + w)"))),
    Bug("rms_norm_without_eps", "zero_row",
        "RMSNorm divides by sqrt(mean(x**2)) with no eps: an all-zero row (a padding position) becomes 0/0 = "
        "NaN, and attention carries the NaN to every later row; eps goes under the root",
        _variant(("+ eps) * w", ") * w"))),
    Bug("eps_ignored", "positions_base_eps",
        "RMSNorm uses a fixed 1e-5 instead of the eps it is given",
        _variant(("+ eps) * w", "+ 1e-5) * w"))),
    # --- attention
    Bug("kv_heads_tiled", "agrees",
        "np.tile (or KV head h % n_kv_heads) interleaves the groups; query head h uses KV head "
        "h // (n_heads // n_kv_heads), which np.repeat(k, group, axis=1) gives",
        _variant(("    k = np.repeat(k, group, axis=1)\n    v = np.repeat(v, group, axis=1)\n",
                  "    k = np.tile(k, (1, group, 1, 1))\n    v = np.tile(v, (1, group, 1, 1))\n"))),
    Bug("scale_by_sqrt_d_model", "agrees",
        "the scores were divided by sqrt(d_model); the scale is sqrt(d_head), the length of one head's dot product",
        _variant((SCALE, "scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_model)"))),
    # NeuraLegion/shainet PR #176 ("the missing query scale"); flexflow/flexflow-train#467
    Bug("no_scaling", "agrees",
        "the scores are not divided by sqrt(d_head), so the softmax is too sharp for larger heads; divide "
        "q @ k.T by sqrt(d_head)",
        _variant((SCALE, "scores = q @ k.transpose(0, 1, 3, 2)"))),
    Bug("no_causal_mask", "causal",
        "no causal mask: every row also attends to the rows after it",
        _variant(("    scores = np.where(mask, -np.inf, scores)\n", ""))),
    Bug("softmax_without_max_shift", "large_scores",
        "exp of the raw scores: scores in the thousands overflow to inf, or a row far below zero underflows to "
        "all zeros, and either way the softmax is NaN; subtract each row's max first",
        _variant((SOFTMAX, "    weights = np.exp(scores)\n"))),
    Bug("scores_clipped_before_exp", "large_scores",
        "the scores are clipped to [-50, 50] before exp: that avoids overflow but changes every weight whose "
        "score lies outside, so large scores give wrong weights; subtracting the row max is exact",
        _variant((SOFTMAX, "    weights = np.exp(np.clip(scores, -50, 50))\n"))),
    # --- the contract
    Bug("no_value_errors", "raises_heads",
        "nothing checks the head counts: a loop over heads quietly drops columns that n_heads does not divide, "
        "maps query heads to KV heads that do not divide them, and rotates an odd d_head; raise ValueError",
        LOOP_WITHOUT_CHECKS),
    Bug("odd_head_not_checked", "raises_odd_head",
        "an odd d_head is not refused: RoPE needs pairs of features, so raise ValueError when d_head is odd",
        _variant(('    if d_head % 2 != 0:\n        raise ValueError("d_head must be even for RoPE")\n', ""))),
    # --- inputs
    Bug("residual_added_through_reshape", "inputs_unchanged",
        "the residual is added in place into x.reshape(...), which is a view of x: the caller's x changes; "
        "h = x + ... builds a new array",
        _variant((ATTN_RESIDUAL, "    h = x.reshape(B * T, d_model)\n"
                                 "    h += (attn @ W_o).reshape(B * T, d_model)\n"
                                 "    h = h.reshape(B, T, d_model)\n"))),
    Bug("flatten_assumes_contiguous", "layouts",
        "setting .shape on a view of x assumes x is contiguous: a Fortran-ordered or sliced x raises "
        "AttributeError; x.reshape(...) copies when it must",
        _variant(('    a = rms_norm(x, params["attn_norm"])\n',
                  '    flat = x.view()\n    flat.shape = (B * T, d_model)\n'
                  '    a = rms_norm(flat, params["attn_norm"]).reshape(B, T, d_model)\n'))),
    # A cos/sin table stored in params under a new key is caught by test_inputs_unchanged too, but the
    # diagnosis cannot tell it from scale_folded_into_params: both give the right first result and both
    # write into params, and what they write is not compared.
    Bug("scale_folded_into_params", "inputs_unchanged",
        "1/sqrt(d_head) is folded into params[\"W_q\"], which writes into the caller's dict (and scales again on "
        "every call); keep the scaled matrix in a local variable",
        _variant(("    group = n_heads // n_kv_heads\n",
                  "    group = n_heads // n_kv_heads\n"
                  "    params[\"W_q\"] = params[\"W_q\"] / np.sqrt(d_head)\n    W_q = params[\"W_q\"]\n"),
                 (SCALE, "scores = q @ k.transpose(0, 1, 3, 2)")),
        stateful=True),   # a later call on the same dict reads the scaled W_q: replayed in order
]

# Close to a catalogued bug, but another mistake: none of these may be named as one of BUGS.
NEAR_MISSES = [
    Bug("rope_on_queries_only", "shift",
        "RoPE turns the queries but not the keys, so a score depends on the query's absolute position; both "
        "queries and keys are turned (not: no RoPE, not: RoPE on the values)",
        _variant((ROPE_QK, "    q = rope(q)\n")), says=('needs@positions', 'held')),
    Bug("extra_norm_on_output", "zero_sublayers",
        "the block is pre-norm but also normalises its own output (the model's final norm belongs after the "
        "last layer, not inside each block); not post-norm, which drops the norms before the sub-layers",
        _variant((FFN_RESIDUAL, '    out = h + (silu * up) @ params["W_down"]\n'
                                "    return out / np.sqrt(np.mean(out ** 2, axis=-1, keepdims=True) + eps)\n")),
        says=('scale',)),
    Bug("residual_from_normalised_input", "zero_sublayers",
        "the attention output is added to the normalised copy rms_norm(x) instead of to x; the residual is "
        "there but starts from the wrong tensor",
        _variant((ATTN_RESIDUAL, "    h = a + attn @ W_o\n")), says=('held', 'input')),
    Bug("scale_by_d_head", "agrees",
        "the scores were divided by d_head rather than sqrt(d_head); the size is right, the square root is missing",
        _variant((SCALE, "scores = q @ k.transpose(0, 1, 3, 2) / d_head")), says=('scale',)),
    Bug("rope_turns_backwards", "agrees",
        "RoPE turns each pair the wrong way (by -angle): still relative, but the signs of sin are swapped "
        "(out_i = x_i cos - x_{i+d/2} sin, out_{i+d/2} = x_{i+d/2} cos + x_i sin)",
        _variant((ROPE_DEF, "        t1, t2 = t[..., :half], t[..., half:]\n"
                            "        return np.concatenate([t1 * cos + t2 * sin, t2 * cos - t1 * sin], axis=-1)\n")),
        says=('needs@positions', 'held')),
    Bug("freqs_over_d_model", "agrees",
        "the RoPE frequencies use d_model in the exponent, base ** (-2i/d_model); the head is what is rotated, "
        "so the exponent is -2i/d_head",
        _variant((FREQS, "    freqs = base ** (-2.0 * np.arange(half) / d_model)\n")),
        says=('needs@positions', 'held')),
]

# Catalogued mistakes with their trigger moved (another cache key, another buffer): no entry above is
# them, and the report must say what each is without a name.
VARIANTS = [
    Bug("mask_cached_by_batch", "agrees",
        "the causal mask is cached by the batch size, so a later call with as many sequences and another T gets "
        "a mask of the earlier T",
        edited(BASE, ("def transformer_block(", "_MASKS = {}\n\n\ndef transformer_block("),
               ("    mask = np.triu(np.ones((T, T), dtype=bool), k=1)\n",
                "    if B not in _MASKS:\n        _MASKS[B] = np.triu(np.ones((T, T), dtype=bool), k=1)\n"
                "    mask = _MASKS[B]\n")),
        stateful=True, says=("history",)),
    Bug("angles_cached_by_length", "repeated_calls",
        "the RoPE angles are cached by (T, d_head), so a later call with other positions or another base gets the "
        "first call's angles",
        edited(BASE, ("def transformer_block(", "_ANGLES = {}\n\n\ndef transformer_block("),
               (ANGLES, "    angles = _ANGLES.setdefault((T, d_head), np.outer(positions, freqs))\n")),
        stateful=True, says=("history",)),
]
