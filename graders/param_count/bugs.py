"""Mistakes candidates make when counting a decoder's parameters and sizing its weights.

Every entry is BASE, a plain correct answer, with one edit. NEAR_MISSES are mistakes
next to a catalogued one (a wrong constant where the catalogued bug drops it, an extra
norm where it forgets one): each fails the grader and must not be named as the bug it
resembles.
"""
from graders.engine.bugs import Bug, edited

BASE = """
def llama_param_counts(vocab_size, d_model, n_layers, n_heads, n_kv_heads, d_ff, tie_embeddings=False):
    for size in (vocab_size, d_model, n_layers, n_heads, n_kv_heads, d_ff):
        if size < 1:
            raise ValueError("every size must be at least 1")
    if d_model % n_heads != 0:
        raise ValueError("n_heads must divide d_model")
    if n_heads % n_kv_heads != 0:
        raise ValueError("n_kv_heads must divide n_heads")
    d_head = d_model // n_heads
    counts = {
        "embedding": vocab_size * d_model,
        "attention_q": n_layers * d_model * n_heads * d_head,
        "attention_kv": n_layers * 2 * d_model * n_kv_heads * d_head,
        "attention_out": n_layers * n_heads * d_head * d_model,
        "feed_forward": n_layers * 3 * d_model * d_ff,
        "norms": (2 * n_layers + 1) * d_model,
        "unembedding": 0 if tie_embeddings else vocab_size * d_model,
    }
    counts["total"] = sum(counts.values())
    return counts


def weight_gib(n_params, bits):
    if bits < 1:
        raise ValueError("bits must be at least 1")
    return n_params * bits / 8 / 2**30
"""

SIZE_CHECK = """    for size in (vocab_size, d_model, n_layers, n_heads, n_kv_heads, d_ff):
        if size < 1:
            raise ValueError("every size must be at least 1")
"""
DIVIDES = """    if d_model % n_heads != 0:
        raise ValueError("n_heads must divide d_model")
    if n_heads % n_kv_heads != 0:
        raise ValueError("n_kv_heads must divide n_heads")
"""
KV_CHECK = """    if n_heads % n_kv_heads != 0:
        raise ValueError("n_kv_heads must divide n_heads")
"""
KV = '"attention_kv": n_layers * 2 * d_model * n_kv_heads * d_head,'
NORMS = '"norms": (2 * n_layers + 1) * d_model,'
UNEMBED = '"unembedding": 0 if tie_embeddings else vocab_size * d_model,'
GIB = "return n_params * bits / 8 / 2**30"
FFN = '"feed_forward": n_layers * 3 * d_model * d_ff,'


BUGS = [
    # --- attention
    Bug("kv_counted_once", "table_8b",
        "keys and values were counted as one matrix per layer; W_k and W_v are two matrices of "
        "(d_model, n_kv_heads * d_head) each, hence the factor 2",
        edited(BASE, (KV, '"attention_kv": n_layers * d_model * n_kv_heads * d_head,'))),
    Bug("kv_with_n_heads", "table_8b",
        "the key and value projections were sized with n_heads; in grouped-query attention they have "
        "only n_kv_heads heads, which is the whole saving of GQA",
        edited(BASE, (KV, '"attention_kv": n_layers * 2 * d_model * n_heads * d_head,'))),
    Bug("out_with_kv_heads", "table_8b",
        "the output projection was sized with n_kv_heads; W_o maps the concatenated query heads, "
        "n_heads * d_head of them, back to d_model",
        edited(BASE, ('"attention_out": n_layers * n_heads * d_head * d_model,',
                      '"attention_out": n_layers * n_kv_heads * d_head * d_model,'))),
    Bug("attention_per_layer_only", "table_8b",
        "the attention entries count one layer; each entry covers all n_layers blocks",
        edited(BASE, ('"attention_q": n_layers * d_model', '"attention_q": d_model'),
               ('"attention_kv": n_layers * 2 *', '"attention_kv": 2 *'),
               ('"attention_out": n_layers * n_heads', '"attention_out": n_heads'))),
    # github.com/ayush9818/MLDS-FQ2 parameter calculator (attention_bias = config.get('attention_bias', True),
    # mlp_bias = config.get('mlp_bias', True)); lynx-cortex.pages.dev ("modern Llama removes biases")
    Bug("counts_biases", "table_8b",
        "a bias vector was counted with every linear layer (one per output feature); the Llama family's "
        "projections and feed-forward have no biases, only their weight matrices",
        edited(BASE, ('"attention_q": n_layers * d_model * n_heads * d_head,',
                      '"attention_q": n_layers * (d_model + 1) * n_heads * d_head,'),
               (KV, '"attention_kv": n_layers * 2 * (d_model + 1) * n_kv_heads * d_head,'),
               ('"attention_out": n_layers * n_heads * d_head * d_model,',
                '"attention_out": n_layers * (n_heads * d_head + 1) * d_model,'),
               (FFN, '"feed_forward": n_layers * (2 * (d_model + 1) * d_ff + (d_ff + 1) * d_model),'))),
    # --- feed-forward and norms
    Bug("ffn_two_matrices", "table_8b",
        "the feed-forward was counted with two matrices, the GELU layout of 2017; SwiGLU has three "
        "(gate, up and down)",
        edited(BASE, (FFN, '"feed_forward": n_layers * 2 * d_model * d_ff,'))),
    Bug("norms_final_missing", "table_8b",
        "the final RMSNorm before the unembedding is missing: two scales per block plus one, "
        "(2 * n_layers + 1) * d_model",
        edited(BASE, (NORMS, '"norms": 2 * n_layers * d_model,'))),
    # lynx-cortex.pages.dev mini-GPT derivation ("RMSNorm has no β"); the chapter ("RMSNorm ... drops the
    # mean and the shift")
    Bug("norms_with_bias", "table_8b",
        "each norm was counted as a LayerNorm, with a scale and a shift: RMSNorm has a scale only, "
        "d_model weights per norm, (2 * n_layers + 1) * d_model in all",
        edited(BASE, (NORMS, '"norms": 2 * (2 * n_layers + 1) * d_model,'))),
    Bug("norms_not_times_layers", "table_8b",
        "the norms were counted for one block (two scales plus the final one) instead of every block: "
        "(2 * n_layers + 1) * d_model",
        edited(BASE, (NORMS, '"norms": 3 * d_model,'))),
    # --- embeddings
    Bug("unembedding_when_tied", "tied",
        "tie_embeddings is ignored: a tied unembedding reuses the embedding table and adds 0",
        edited(BASE, (UNEMBED, '"unembedding": vocab_size * d_model,'))),
    # github.com/ayush9818/MLDS-FQ2 parameter calculator (tie_word_embeddings = config.get('tie_word_embeddings',
    # True))
    Bug("always_tied", "table_8b",
        "the unembedding was counted as 0 whatever tie_embeddings says, as if every model tied it to the "
        "embedding: untied (the default) it is a second vocab_size x d_model matrix",
        edited(BASE, (UNEMBED, '"unembedding": 0,'))),
    Bug("total_ignores_tie", "tied",
        "the unembedding entry is 0 when tied but the total is written out as its own formula that still "
        "counts two vocabulary matrices; sum the entries instead",
        edited(BASE, ('counts["total"] = sum(counts.values())',
                      'counts["total"] = sum(counts.values()) - counts["unembedding"] + vocab_size * d_model'))),
    # --- the shape of the answer
    Bug("float_d_head", "integers",
        "d_head = d_model / n_heads is a float, so every count that uses it is a float; use // so that "
        "counts stay exact ints",
        edited(BASE, ("d_head = d_model // n_heads", "d_head = d_model / n_heads"))),
    Bug("k_and_v_keys", "keys",
        "the dict has separate 'attention_k' and 'attention_v' entries; the contract asks for one "
        "'attention_kv' holding both",
        edited(BASE, (KV, '"attention_k": n_layers * d_model * n_kv_heads * d_head,\n'
                      '        "attention_v": n_layers * d_model * n_kv_heads * d_head,'))),
    # --- state kept between calls
    Bug("memo_ignores_tie", "calls_independent",
        "a module-level memo is keyed on the six sizes but not on tie_embeddings, so a tied call after an "
        "untied one on the same sizes (or the other way round) gets the stale answer; key it on every "
        "argument, or drop it",
        edited(BASE, ("def llama_param_counts(", "_MEMO = {}\n\n\ndef llama_param_counts("),
               (SIZE_CHECK, SIZE_CHECK + "    key = (vocab_size, d_model, n_layers, n_heads, n_kv_heads, d_ff)\n"
                                         "    if key in _MEMO:\n        return dict(_MEMO[key])\n"),
               ("    return counts\n", "    _MEMO[key] = dict(counts)\n    return counts\n")), stateful=True),
    # --- ValueErrors
    Bug("divides_before_size_check", "sizes_below_one",
        "d_model % n_heads runs before the sizes are checked, so n_heads = 0 raises ZeroDivisionError "
        "instead of ValueError; check every size first",
        edited(BASE, (SIZE_CHECK + DIVIDES, DIVIDES + SIZE_CHECK))),
    Bug("odd_d_head_raises", "odd_d_head",
        "an odd d_head raises ValueError (the RoPE rule); counting parameters allows any d_head",
        edited(BASE, ("    d_head = d_model // n_heads\n",
                      "    d_head = d_model // n_heads\n    if d_head % 2:\n"
                      "        raise ValueError(\"d_head must be even\")\n"))),
    Bug("kv_heads_not_checked", "divisibility",
        "nothing checks that n_kv_heads divides n_heads, so a configuration whose query heads cannot be "
        "grouped evenly gets counted; raise ValueError",
        edited(BASE, (KV_CHECK, ""))),
    # --- weight_gib
    Bug("gib_as_1e9", "gib_8b",
        "the bytes were divided by 1e9 (a GB); a GiB is 2**30 bytes, 7% more",
        edited(BASE, (GIB, "return n_params * bits / 8 / 1e9"))),
    Bug("bits_not_divided_by_8", "gib_8b",
        "bits were used as bytes: divide by 8 to get bytes per weight",
        edited(BASE, (GIB, "return n_params * bits / 2**30"))),
    Bug("gib_rounded", "gib_8b",
        "the result is rounded to two decimals; 14.96 is how the figure is printed, the function returns "
        "the exact quotient",
        edited(BASE, (GIB, "return round(n_params * bits / 8 / 2**30, 2)"))),
    Bug("gib_floor_division", "gib_8b",
        "// floors the GiB to a whole number (14 for 14.96); use true division",
        edited(BASE, (GIB, "return n_params * bits // 8 // 2**30"))),
    Bug("bits_not_checked", "gib_value_error",
        "bits below 1 are not refused: raise ValueError",
        edited(BASE, ("    if bits < 1:\n        raise ValueError(\"bits must be at least 1\")\n", ""))),
]


NEAR_MISSES = [
    Bug("kv_sized_by_group", "agrees",
        "the key and value projections were sized with the group size n_heads // n_kv_heads instead of "
        "n_kv_heads; the two agree only when n_kv_heads**2 == n_heads, as in the 8B model's halving, "
        "which is why a model with groups of 3 shows it",
        edited(BASE, (KV, '"attention_kv": n_layers * 2 * d_model * (n_heads // n_kv_heads) * d_head,')),
        says=('scale', 'parts')),
    Bug("norms_extra_embedding_norm", "table_8b",
        "one norm too many, (2 * n_layers + 2) * d_model: a norm after the embedding (as in some older "
        "models) is not part of this one; the final norm is the only one outside the blocks",
        edited(BASE, (NORMS, '"norms": (2 * n_layers + 2) * d_model,')), says=('offset',)),
    Bug("tied_table_under_unembedding", "tied",
        "when tied, the shared table was booked under 'unembedding' and 'embedding' set to 0; the total is "
        "right but the table belongs to the embedding and the tied unembedding adds 0",
        edited(BASE, ('"embedding": vocab_size * d_model,',
                      '"embedding": 0 if tie_embeddings else vocab_size * d_model,'),
               (UNEMBED, '"unembedding": vocab_size * d_model,')), says=('offset', 'parts')),
    Bug("ffn_width_assumed_4x", "agrees",
        "the feed-forward width was taken as 4 * d_model (the 2017 default) instead of the given d_ff; "
        "three matrices, but of the wrong width",
        edited(BASE, (FFN, '"feed_forward": n_layers * 3 * d_model * 4 * d_model,')), says=('scale', 'offset', 'parts')),
    Bug("gib_bits_fixed_at_16", "gib_8b",
        "the bytes per weight were fixed at 2 (16-bit) instead of bits / 8: right at 16 bits only",
        edited(BASE, (GIB, "return n_params * 2 / 2**30")), says=('needs@bits', 'scale')),
    Bug("gib_bytes_floored", "gib_8b",
        "bits // 8 floors the bytes per weight, so 4-bit weights weigh 0 and 12-bit ones 1 byte; bits / 8 "
        "keeps the fraction",
        edited(BASE, (GIB, "return n_params * (bits // 8) / 2**30")), says=('needs@bits', 'scale')),
    Bug("gib_in_mib", "gib_8b",
        "divided by 2**20, which gives MiB; a GiB is 2**30 bytes",
        edited(BASE, (GIB, "return n_params * bits / 8 / 2**20")), says=('scale',)),
    Bug("sizes_zero_allowed", "sizes_below_one",
        "the size check refuses negative sizes but lets 0 through (size < 0 instead of size < 1)",
        edited(BASE, ("        if size < 1:\n", "        if size < 0:\n")), says=('conduct',)),
]

# Catalogued mistakes with their trigger moved (another unit, another count): no entry above is them, and
# the report must say what each is without a name.
VARIANTS = [
    Bug("gib_in_kib", "gib_8b",
        "divided by 2**10, which gives KiB; a GiB is 2**30 bytes",
        edited(BASE, (GIB, "return n_params * bits / 8 / 2**10")), says=("scale",)),
    Bug("norms_three_per_layer", "table_8b",
        "three norms per layer, (3 * n_layers + 1) * d_model: a Llama layer has two, before attention and before "
        "the feed-forward block",
        edited(BASE, (NORMS, '"norms": (3 * n_layers + 1) * d_model,')), says=("offset",)),
]
