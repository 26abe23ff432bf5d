"""What the report says about a failure, with its structure: each sentence of `Observed:` is a
`Said`, a kind (what sort of explanation it is), a part (what it is about) and the text.

The kinds are few and coarse, so that a catalogue entry can declare the explanation a reader
should get ("mask@the weights": a sentence about the weights' mask; "needs@T": what the
failure needs of T) and the project's tests can count the entries explained right:

    scale      a factor, a softmax at another temperature, the opposite sign, a ratio
    offset     a constant added, a difference of whole numbers, a statistic of an input added
    clip       every entry beyond one number brought back to it (a floor, a ceiling)
    input      an input of the call added, missing, or returned; rows zeroed where an input's are
    held       an intermediate the grader holds (the masked scores, a product of other operands)
    axes       axes swapped or transposed, slices in another order, one slice everywhere
    shift      slices shifted by one position
    mask       the entries an answer blocks, against the reference's (shifted, transposed, wider, not exactly 0)
    normalised sums or a renormalisation along another axis, each key reweighted in every row
    shape      another shape (a missing or extra axis, a reshape, other sizes)
    parts      which outputs agree, which differ, which one is another's
    keys       a dict's missing or extra keys
    type       a result of another type (a float for an int, a list for an array)
    precision  agreement only to float32's accuracy, or an eps-sized difference
    constant   zeros everywhere, one number everywhere
    where      only some positions agree (where the difference shows, not what it is)
    needs      what the failure needs: the nearest case that passes
    history    a call right alone and wrong after an earlier one
    conduct    raises, returns where a ValueError is due, writes into an input, shares memory
    memory     what a check measured of the memory a call holds
"""
from __future__ import annotations

from dataclasses import dataclass

# the family of each relation the finder reports (graders.engine.relations, .masks, .kinds)
FAMILY = {
    "factor": "scale", "tempered": "scale", "slice_factor": "scale", "negated": "scale", "ratio": "scale",
    "opposite_sign": "scale",
    "offset": "offset", "difference": "offset", "input_offset": "offset", "floor": "clip", "ceiling": "clip",
    "input": "input", "plus_input": "input", "minus_input": "input", "zero_rows": "input",
    "held": "held", "held_transposed": "held",
    "transpose": "axes", "permutation": "axes", "rolled": "axes", "same_slice": "axes",
    "transposed_shape": "axes",
    "shift": "shift",
    "mask": "mask",
    "sums": "normalised", "renormalised": "normalised", "reweighted": "normalised",
    "shape": "shape", "unit_axis": "shape", "reshaped": "shape", "sizes": "shape", "length": "shape",
    "parts": "parts", "other_part": "parts", "one_part": "parts", "in_part": "parts", "element": "parts",
    "keys": "keys", "type": "type",
    "precision": "precision", "eps": "precision", "grows": "precision",
    "zero": "constant", "constant": "constant", "memory": "memory",
    "lower_diag": "where", "lower_strict": "where", "diagonal": "where", "upper_diag": "where",
    "upper_strict": "where", "prefix": "where", "suffix": "where", "first_half": "where",
    "second_half": "where", "even": "where", "odd": "where", "indices": "where", "count": "where",
}


@dataclass(frozen=True)
class Said:
    """One sentence of `Observed:`, with what it is: see the module's docstring."""

    kind: str
    part: str
    text: str
    weak: bool = False    # true, but it says little of what the mistake is (a factor that changes with the case)


def family(kind: str) -> str:
    """The family a relation's kind belongs to ("tempered" -> "scale")."""
    return FAMILY.get(kind, kind)


def matches(said: list[Said], spec: str) -> bool:
    """Whether one of `said` is the explanation `spec` declares: "kind" or "kind@part"."""
    kind, _, part = spec.partition("@")
    return any(s.kind == kind and (not part or part in (s.part, *s.part.split(", "))) for s in said)
