"""Where a Llama-style decoder keeps its parameters, and what its weights weigh."""


def llama_param_counts(vocab_size, d_model, n_layers, n_heads, n_kv_heads, d_ff, tie_embeddings=False):
    """Count the parameters of a Llama-style decoder, component by component.

    Task
        An interviewer hands you the configuration of an open-weights decoder and asks
        where its parameters are. Count them by component and return a dict of ints.
        The model has no biases anywhere:
        - a token embedding table, one vector of width d_model per vocabulary entry;
        - n_layers identical blocks. Each block normalises its input with RMSNorm (one
          learned scale of width d_model) before attention and again before the
          feed-forward. Attention is grouped-query attention with a query projection,
          a key projection, a value projection and an output projection. The
          feed-forward is SwiGLU: a gate and an up projection from d_model to d_ff,
          and a down projection from d_ff back to d_model;
        - a final RMSNorm before the unembedding;
        - an unembedding that maps d_model to one score per vocabulary entry. With
          tie_embeddings=True it reuses the embedding table, so it adds nothing.
        Then write `weight_gib` (below).

    Arguments (ints, plus one bool)
        vocab_size      entries of the vocabulary
        d_model         width of the residual stream
        n_layers        number of blocks
        n_heads         query heads; d_head = d_model // n_heads (it may be odd)
        n_kv_heads      key/value heads, each shared by n_heads // n_kv_heads query
                        heads (n_kv_heads == n_heads is multi-head attention, 1 is
                        multi-query attention)
        d_ff            hidden width of the feed-forward
        tie_embeddings  False by default

    Returns
        a dict with exactly these eight keys, each an int (a Python or a NumPy
        integer, not a float):
        embedding       the token embedding table
        attention_q     the query projections of all n_layers blocks
        attention_kv    the key and the value projections of all blocks, together
        attention_out   the output projections of all blocks
        feed_forward    the feed-forward projections of all blocks
        norms           every RMSNorm scale in the model
        unembedding     the projection to the vocabulary (0 when tied)
        total           the sum of the seven entries above

    Conventions
        - ValueError when any of the six sizes is below 1 (checked first, before
          anything divides by them), when n_heads does not divide d_model, and when
          n_kv_heads does not divide n_heads.

    Example
        vocab_size=128256, d_model=4096, n_layers=32, n_heads=32, n_kv_heads=8,
        d_ff=14336 (a published 8B configuration): total == 8_030_261_248.

    What the grader checks
        exactly the eight keys, every value an int; the 8B configuration row by row;
        total equal to the sum of the entries; other configurations (multi-head,
        multi-query and other grouped ratios, odd d_head, sizes of 1, sizes that are
        not powers of two, a model of hundreds of billions of parameters); tied
        embeddings; the ValueErrors; and that each call's answer depends on its own
        arguments only (the function is called many times, in any order).

    Time budget: 15 minutes, weight_gib included.
    """
    sizes = {"vocab_size": vocab_size, "d_model": d_model, "n_layers": n_layers,
             "n_heads": n_heads, "n_kv_heads": n_kv_heads, "d_ff": d_ff}
    # sizes first: n_heads = 0 must be a ValueError, not a ZeroDivisionError below
    for name, size in sizes.items():
        if size < 1:
            raise ValueError(f"{name} must be at least 1, got {size}")
    if d_model % n_heads != 0:
        raise ValueError(f"n_heads={n_heads} does not divide d_model={d_model}")
    if n_heads % n_kv_heads != 0:
        raise ValueError(f"n_kv_heads={n_kv_heads} does not divide n_heads={n_heads}")
    d_head = d_model // n_heads          # integer division keeps every count an int

    counts = {
        "embedding": vocab_size * d_model,                              # (vocab, d_model) table
        "attention_q": n_layers * d_model * n_heads * d_head,           # W_q (d_model, n_heads*d_head)
        # keys and values: two matrices per layer, each only n_kv_heads heads wide
        "attention_kv": n_layers * 2 * d_model * n_kv_heads * d_head,   # W_k, W_v (d_model, n_kv_heads*d_head)
        "attention_out": n_layers * n_heads * d_head * d_model,         # W_o (n_heads*d_head, d_model)
        "feed_forward": n_layers * 3 * d_model * d_ff,                  # W_gate, W_up, W_down
        # two scales per block (before attention, before the feed-forward) and the final one
        "norms": (2 * n_layers + 1) * d_model,
        # a tied unembedding is the embedding table read transposed: no new parameters
        "unembedding": 0 if tie_embeddings else vocab_size * d_model,  # (d_model, vocab)
    }
    counts["total"] = sum(counts.values())
    return counts


def weight_gib(n_params, bits):
    """The memory that n_params weights take at `bits` bits each, in GiB.

    Task
        Serving a model starts with holding its weights. Given a parameter count and
        the bits stored per weight (16 for bfloat16, 8 or 4 when quantised), return
        how much memory the weights take, in GiB (gibibytes), as a float.

    Arguments
        n_params  int, the number of parameters (e.g. the `total` counted above)
        bits      int >= 1, bits per parameter

    Returns
        a float (a Python float or a NumPy floating scalar)

    Conventions
        - ValueError when bits is below 1.

    Example
        the 8B configuration above (8_030_261_248 parameters) at 16 bits: 14.96 GiB
        (14.957... before rounding); at 4 bits: 3.74 GiB.

    What the grader checks
        the 8B model at 16, 8 and 4 bits to the contract's float tolerance (not just to
        two decimals); other counts and widths, odd ones included; the ValueError.
    """
    if bits < 1:
        raise ValueError(f"bits must be at least 1, got {bits}")
    # bits -> bytes, then bytes -> GiB (2**30 bytes); true division gives a float
    return n_params * bits / 8 / 2**30
