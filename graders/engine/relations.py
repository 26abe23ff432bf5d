"""What a wrong answer is, observed: plain sentences relating the candidate's output to the
reference's.

When a grader finds that the candidate's output differs from the reference's for the same
call, `observe(got, want, ...)` tests a fixed list of exact relations between the two and
returns one short English sentence for each relation that holds, most specific first:

- a rearrangement of axes: the reference transposed, or any two axes swapped (also when the
  shapes differ by that swap);
- along one axis: the reference's slices in another order, every slice equal to the same
  slice of the reference, or the slices shifted by one position;
- a scalar factor (named when it is one of the case's constants, its inverse, 2, 1/2), the
  reference negated, a constant offset, an input of the call added or subtracted, the
  input itself, the reference renormalised along another axis, the output all zeros;
- the output summing to 1 along another axis than the reference;
- the pattern of the entries where the two agree: a triangle of the last two axes, the
  first or last k positions along an axis, some indices along an axis, the first or second
  half, the even or odd indices, else a count;
- for scalars, the exact ratio or difference of integers, a named factor, the opposite sign;
- for several outputs, which ones agree, and the relations of the others.

Every relation is verified on every entry within `rtol`/`atol` (entries where both are
NaN, or the same infinity, are left out), never fitted approximately, and a relation that
could hold by accident (a single entry, slices that repeat, a reference that is constant)
is not claimed. `observe` never raises: what cannot be compared gives no sentence.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from graders.engine import grammar
from graders.engine.array_relations import (
    agreement_pattern,
    all_close,
    along_axis_relations,
    axes_relation,
    close_entries,
    input_offsets,
    reweighted_relation,
    sums_relation,
    swapped_axes,
    tempered_relation,
    to_array,
    transposition,
    value_relations,
    zero_rows,
)
from graders.engine.kinds import key_relations, sizes_relation, type_relation
from graders.engine.masks import mask_relation, not_zero
from graders.engine.scales import clipped, slice_factors
from graders.engine.wording import (
    MAX_SENTENCES,
    R_CONSTANT,
    R_FACTOR,
    R_LEAD,
    R_OFFSET,
    R_SHAPE,
    R_SWAPPED_PARTS,
    Finding,
    Words,
    bare_name,
    known_constants,
    listing,
    number_text,
    ordinal_output,
    shape_text,
)

__all__ = ["observe", "Finding", "findings"]


# ----------------------------------------------------------------------------- one output

def _scalar(g: float, v: float, w: Words, every: bool = False) -> list[Finding]:
    if not (math.isfinite(g) and math.isfinite(v)):
        return []
    subj, rv = w.subject, w.ref_value
    is_ = w.verb("is", "are")
    if g == 0 and v != 0:
        return [Finding(R_CONSTANT, "zero", f"{subj} {is_} 0 where {rv} is {number_text(v)}", ("scalar",))]
    integral = g == int(g) and v == int(v) and abs(g) < 2 ** 53 and abs(v) < 2 ** 53
    if integral:
        gi, vi = int(g), int(v)
        pair = f"({gi} instead of {vi})"
        if vi != 0 and gi != 0 and gi % vi == 0:
            k = gi // vi
            if k == -1:
                return [Finding(R_FACTOR, "opposite_sign", f"{subj} {is_} {rv} with the opposite sign {pair}", (-1,))]
            return [Finding(R_FACTOR, "ratio", f"{subj} {is_} {w.number(k, generic=False)} times {rv} {pair}", (k,))]
        if vi != 0 and gi != 0 and vi % gi == 0:
            k = vi // gi
            frac = f"1/{k}" if k > 0 else f"-1/{-k}"
            _, names = w.names_of(1.0 / k, generic=False)
            frac += f" ({' or '.join(names)})" if names else ""
            return [Finding(R_FACTOR, "ratio", f"{subj} {is_} {frac} of {rv} {pair}", (1.0 / k,))]
        d = gi - vi
        more = "more" if d > 0 else "less"
        return [Finding(R_OFFSET, "difference", f"{subj} {is_} {w.number(abs(d), generic=False)} {more} "
                        f"than {rv} {pair}", (d,))]
    out: list[Finding] = []
    if v != 0:
        c = g / v
        if abs(c + 1.0) <= w.name_tol and math.isclose(g, -v, rel_tol=w.rtol, abs_tol=w.atol):
            return [Finding(R_FACTOR, "opposite_sign", f"{subj} {is_} {rv} with the opposite sign", (-1,))]
        known, _ = w.names_of(c)
        if known is not None and math.isclose(g, known * v, rel_tol=w.rtol, abs_tol=w.atol):
            out.append(Finding(R_FACTOR, "factor", f"{subj} {is_} {rv} times {w.number(c)}", (known,)))
        elif every and math.isfinite(c) and c != 0:  # any two numbers have a ratio: said only if a second case has it
            out.append(Finding(R_FACTOR, "factor", f"{subj} {is_} {rv} times {number_text(c)}", (c, "scalar")))
    d = g - v
    if not out and d != 0 and not every:
        known, _ = w.names_of(abs(d), generic=False)
        if known is not None and math.isclose(g, v + math.copysign(known, d), rel_tol=w.rtol, abs_tol=w.atol):
            sign = "plus" if d > 0 else "minus"
            out.append(Finding(R_OFFSET, "offset", f"{subj} {is_} {rv} {sign} {w.number(abs(d), generic=False)}",
                               (d,)))
    return out


def _shapes(G: np.ndarray, W: np.ndarray, w: Words) -> list[Finding]:
    gs, ws = G.shape, W.shape
    base = f"{w.subject} {w.verb('has', 'have')} shape {shape_text(gs)} where {w.ref} has {shape_text(ws)}"
    if G.size != W.size:
        return sizes_relation(G, W, w)
    empty = G.size == 0
    if len(gs) == len(ws) and sorted(gs) == sorted(ws):
        p = None if empty else transposition(G, W, w)
        if p is not None:
            swapped = swapped_axes(p, w)
            what = f"{swapped} are swapped" if swapped else f"it is {w.ref} with its axes in the order {shape_text(p)}"
            return [Finding(R_SHAPE, "transposed_shape", f"{base}: {what}", (p,))]
        return [Finding(R_SHAPE, "shape", base)]
    if [d for d in gs if d != 1] == [d for d in ws if d != 1]:
        if not empty and all_close(G.reshape(ws), W, w):
            extra = len(gs) > len(ws)
            long_, short = (gs, ws) if extra else (ws, gs)
            where = _unit_axes(long_, short)
            if where is not None and where:
                count = len(where)
                noun = "axis" if count == 1 else "axes"
                label = (", ".join(w.ax(i) for i in where) if not extra else
                         ", ".join(f"axis {i}" for i in where))
                kind = "an extra" if extra and count == 1 else "extra" if extra else \
                    "a missing" if count == 1 else "missing"
                return [Finding(R_SHAPE, "unit_axis", f"{base}: {kind} {noun} of size 1 ({label}), "
                                f"with the same values", (extra, tuple(where)))]
            return [Finding(R_SHAPE, "unit_axis", f"{base}: the same values, with axes of size 1 "
                            f"added or removed", ())]
        return [Finding(R_SHAPE, "shape", base)]
    if not empty and all_close(G.reshape(ws), W, w):
        return [Finding(R_SHAPE, "reshaped", f"{base}: the same values in the same order (a reshape of "
                        f"{w.ref})")]
    return []


def _unit_axes(long_: tuple, short: tuple) -> list[int] | None:
    """Positions in `long_` of the axes of length 1 that `short` does not have."""
    where, p = [], 0
    for i, d in enumerate(long_):
        if p < len(short) and d == short[p]:
            p += 1
        elif d == 1:
            where.append(i)
        else:
            return None
    return where if p == len(short) else None


def _not_zero(got: Any, want: Any, w: Words) -> list[Finding]:
    """An answer within the tolerance of the reference's that holds small numbers where the
    reference's is exactly 0 (graders.engine.masks.not_zero)."""
    G, W = to_array(got), to_array(want)
    if G is None or W is None or G.shape != W.shape or _is_bool(got) or _is_bool(want):
        return []
    return not_zero(G, W, w)


def _is_bool(x: Any) -> bool:
    return isinstance(x, (bool, np.bool_)) or (isinstance(x, np.ndarray) and x.dtype.kind == "b")


def _single(got: Any, want: Any, w: Words, inputs: dict[str, np.ndarray], every: bool = False,
            masked: bool = False) -> list[Finding]:
    """The relations between one output and the reference's. `every`: all that hold, the
    relations that say what and those that say only where alike (the caller picks)."""
    G, W = to_array(got), to_array(want)
    if G is None or W is None:
        return []
    if G.shape != W.shape:
        return _shapes(G, W, w)
    if G.size == 0:
        return []
    M = close_entries(G, W, w)
    if M.all():
        return not_zero(G, W, w)
    if G.size == 1:
        if _is_bool(got) or _is_bool(want):
            return []  # true and false are not numbers to relate
        g, v = float(G.flat[0]), float(W.flat[0])
        return input_offsets(g, v, w, inputs) + _scalar(g, v, w, every)
    exact = axes_relation(G, W, w) + along_axis_relations(G, W, w) + value_relations(G, W, w, inputs) + \
        zero_rows(G, W, M, w, inputs)
    if masked:
        mask = mask_relation(G, W, w, _is_bool(got) or _is_bool(want))
        if mask:  # a mask's shape, said as a mask: not as slices shifted or permuted
            exact = [f for f in exact if f.kind not in ("shift", "permutation", "same_slice")] + mask
    if not any(f.kind in ("factor", "negated", "renormalised") for f in exact):
        exact += slice_factors(G, W, w) or clipped(G, W, w)
    if every:
        return exact + tempered_relation(G, W, w) + reweighted_relation(G, W, w) + sums_relation(G, W, w) + \
            agreement_pattern(M, w)
    exact = exact or tempered_relation(G, W, w) or reweighted_relation(G, W, w)
    if exact:
        return exact
    return sums_relation(G, W, w) + agreement_pattern(M, w)


# ----------------------------------------------------------------------------- several outputs

def _agrees(got: Any, want: Any, w: Words) -> bool:
    if got is None and want is None:
        return True
    G, W = to_array(got), to_array(want)
    return G is not None and W is not None and all_close(G, W, w)


def _axes_for(axes: Any, i: int, name: str) -> dict | None:
    if isinstance(axes, (list, tuple)):
        return axes[i] if i < len(axes) and isinstance(axes[i], dict) else None
    if isinstance(axes, dict) and axes and all(isinstance(v, dict) for v in axes.values()):
        part = axes.get(name, axes.get(i))
        return part if isinstance(part, dict) else None
    return axes if isinstance(axes, dict) else None


def _ndim(x: Any) -> int:
    a = to_array(x)
    return a.ndim if a is not None else 0


def findings(got: Any, want: Any, *, inputs: dict | None = None, constants: dict | None = None,
             what: str = "the output", axes: dict | None = None, rtol: float = 1e-6, atol: float = 1e-9,
             names: tuple = (), every: bool = False, masks: tuple = ()) -> list[Finding]:
    """Every relation that holds, most specific first (`observe` keeps the first few texts).
    `every`: also those that only say where the answers differ when another says what (for a
    caller that confirms each on a second case before it picks). `masks`: the outputs (by name,
    "" for a single one) whose blocked entries are a mask to compare with the reference's."""
    rtol, atol = float(rtol), float(atol)
    if not (math.isfinite(rtol) and math.isfinite(atol)) or rtol < 0 or atol < 0:
        return []
    what = what if isinstance(what, str) and what else "the output"
    consts = known_constants(constants)
    arrays = {}
    for name, a in (inputs or {}).items():
        A = to_array(a)
        if A is not None and isinstance(name, str):
            arrays[name] = A

    def words(subject, ref, ref_value, part_axes, ndim):
        return Words(subject, ref, ref_value, part_axes, ndim, consts, rtol, atol)

    if isinstance(want, dict):
        return _dict_findings(got, want, what, lambda g, v, name: findings(
            g, v, inputs=inputs, constants=constants, what=name, axes=axes, rtol=rtol, atol=atol, every=every,
            masks=masks))
    typed = type_relation(got, want, what)
    seq = (tuple, list)
    if isinstance(want, seq):
        n = len(want)
        inner = {i: names[i][1] for i in range(min(n, len(names))) if isinstance(names[i], tuple)
                 and len(names[i]) == 2 and isinstance(names[i][0], str)}   # a part that is itself a tuple, named
        names = tuple(names[i][0] if i in inner else names[i] for i in range(len(names)))
        part_names = [names[i] if i < len(names) and isinstance(names[i], str) and names[i] else ordinal_output(i)
                      for i in range(n)]
        refs = [f"the reference's {bare_name(nm)}" for nm in part_names]
        if not isinstance(got, seq):
            w = words(what, "the reference", "the reference's value", None, _ndim(got))
            for j in range(n):
                if _agrees(got, want[j], w):
                    text = (f"{what} {w.verb('is', 'are')} a single result equal to {refs[j]}, where the reference "
                            f"returns {n} outputs ({', '.join(part_names)})")
                    return [Finding(R_LEAD, "one_part", text, (j,))]
            return []
        if len(got) != n:
            w = words(what, "the reference", "the reference's value", None, 0)
            parts = "part" if len(got) == 1 else "parts"
            return [Finding(R_LEAD, "length", f"{what} {w.verb('has', 'have')} {len(got)} {parts} where the "
                            f"reference has {n}", (len(got), n))]
        out: list[Finding] = []
        ok = []
        for i in range(n):
            w = words(part_names[i], refs[i], refs[i], _axes_for(axes, i, part_names[i]), _ndim(want[i]))
            ok.append(_agrees(got[i], want[i], w))
        # a part that is all ones or all zeros in the reference (the weights over one key) agrees
        # whatever the mistake: its agreeing says nothing, and is not said
        good = [part_names[i] for i in range(n) if ok[i] and not _trivial(want[i])]
        bad = [part_names[i] for i in range(n) if not ok[i]]
        if not bad:  # every part within the tolerance: an exact 0 that is not may still tell them apart
            return [replace(f, part=part_names[i]) for i in range(n)
                    for f in _not_zero(got[i], want[i], words(part_names[i], refs[i], refs[i], None, 0))]
        if good:
            agree = "agree" if len(good) > 1 or grammar.is_plural(good[0]) else "agrees"
            differ = "differ" if len(bad) > 1 or grammar.is_plural(bad[0]) else "differs"
            out.append(Finding(R_LEAD, "parts", f"{listing(good)} {agree} with the reference; "
                               f"{listing(bad)} {differ}", (tuple(good), tuple(bad))))
        for i in (i for i in range(n) if not ok[i]):
            w = words(part_names[i], refs[i], refs[i], _axes_for(axes, i, part_names[i]), _ndim(want[i]))
            other = next((j for j in range(n) if j != i and _agrees(got[i], want[j], w)), None)
            if other is not None:
                out.append(Finding(R_SWAPPED_PARTS, "other_part",
                                   f"{part_names[i]} {w.verb('equals', 'equal')} {refs[other]}", (i, other),
                                   part_names[i]))
                continue
            if i in inner and isinstance(want[i], seq) and isinstance(got[i], seq):  # each of its own parts, by name
                subnames = tuple(f"{sub} of {part_names[i]}" for sub in inner[i])
                out.extend(f for f in findings(got[i], want[i], inputs=inputs, constants=constants, what=part_names[i],
                                               axes=_axes_for(axes, i, part_names[i]), rtol=rtol, atol=atol,
                                               names=subnames, every=every, masks=masks) if f.kind != "parts")
                continue
            out.extend(replace(f, part=part_names[i])
                       for f in _single(got[i], want[i], w, arrays, every, part_names[i] in masks))
        return sorted(out, key=lambda f: f.rank)

    if isinstance(got, seq):
        w = words(what, "the reference", "the reference's value", axes, _ndim(want))
        G, W = to_array(got), to_array(want)
        if G is not None and W is not None and G.shape == W.shape:
            return sorted(_single(G, W, w, arrays, every, "" in masks), key=lambda f: f.rank)
        kind = "tuple" if isinstance(got, tuple) else "list"
        for i, part in enumerate(got):
            if _agrees(part, want, w):
                return [Finding(R_LEAD, "in_part", f"{what} {w.verb('is', 'are')} a {kind} of {len(got)} whose "
                                f"element {i} equals the reference", (i,))]
        return sorted(_single(G, W, w, arrays, every, "" in masks), key=lambda f: f.rank) if G is not None else []
    w = words(what, "the reference", "the reference's value", axes, _ndim(want))
    return sorted(typed + _single(got, want, w, arrays, every, "" in masks), key=lambda f: f.rank)


def _dict_findings(got: Any, want: dict, what: str, relate) -> list[Finding]:
    """A dict against the reference's: its missing and extra keys, which entries agree, and the
    relations of each entry that differs (`relate(got, want, name)`), about that key."""
    if not isinstance(got, dict):
        return type_relation(got, want, what) if not isinstance(got, (list, tuple)) else []
    out = key_relations(got, want, what)
    common = [k for k in want if k in got]
    if not common:
        return out
    bad = [k for k in common if relate(got[k], want[k], "") or not _same_entry(got[k], want[k])]
    good = [k for k in common if k not in bad]
    if good and bad:
        out.append(Finding(R_LEAD, "parts", f"{listing([repr(k) for k in good])} of {what} "
                           f"{'agree' if len(good) > 1 else 'agrees'} with the reference; "
                           f"{listing([repr(k) for k in bad])} {'differ' if len(bad) > 1 else 'differs'}",
                           (tuple(map(repr, good)), tuple(map(repr, bad)))))
    for k in bad:
        out.extend(replace(f, part=repr(k)) for f in relate(got[k], want[k], f"{what}[{k!r}]"))
    return sorted(out, key=lambda f: f.rank)


def _same_entry(a: Any, b: Any) -> bool:
    A, B = to_array(a), to_array(b)
    return A is not None and B is not None and A.shape == B.shape and bool(np.all(np.isclose(A, B, rtol=1e-6,
                                                                                             atol=1e-9)))


def _trivial(value: Any) -> bool:
    """Every entry 0, or every entry 1: what any answer of the right shape is likely to give."""
    A = to_array(value)
    if A is None or A.size == 0 or A.dtype.kind not in "biuf":
        return False
    first = A.flat[0]
    return bool(first in (0, 1) and np.all(A == first))


def observe(got: Any, want: Any, *, inputs: dict[str, np.ndarray] | None = None,
            constants: dict[str, float] | None = None, what: str = "the output",
            axes: dict[int, str] | None = None, rtol: float = 1e-6, atol: float = 1e-9,
            names: tuple[str, ...] = (), masks: tuple[str, ...] = ()) -> list[str]:
    """Short sentences, most specific first (at most four), each a relation between `got`
    (what the candidate returned) and `want` (what the reference returned for the same
    call) that was verified on every entry. [] when they agree or nothing holds.

    `inputs` are the call's arrays by name (for "plus the input x"); `constants` are named
    numbers of the case a factor could be ("sqrt(d_head)": 2.0), to which 2, 1/2, -1 and
    the inverse of each are added; `axes` names axes ({1: "heads"}; negative keys allowed;
    for several outputs also a list of such dicts, one per output, or a dict of them by
    name); `names` names several outputs ("y", "the weights")."""
    try:
        with np.errstate(all="ignore"):
            found = findings(got, want, inputs=inputs, constants=constants, what=what, axes=axes,
                             rtol=rtol, atol=atol, names=names, masks=masks)
    except Exception:  # an explanation is a courtesy: it never breaks a grading
        return []
    return [f.text for f in found[:MAX_SENTENCES]]
