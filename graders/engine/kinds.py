"""Relations that depend on the kind of result: a dict (its keys, then its values key by key),
a number of another type (a float where an int is due), and an array of other sizes (fewer
positions along one axis, and which of the reference's they are)."""
from __future__ import annotations

from typing import Any

import numpy as np

from graders.engine import grammar
from graders.engine.wording import R_LEAD, R_SHAPE, Finding, Words


def key_relations(got: dict, want: dict, what: str) -> list[Finding]:
    """A dict's missing and extra keys, against the reference's."""
    missing = [k for k in want if k not in got]
    extra = [k for k in got if k not in want]
    if not (missing or extra):
        return []
    parts = []
    if missing:
        parts.append(f"lacks the key{'s' if len(missing) > 1 else ''} {_keys(missing)}")
    if extra:
        parts.append(f"has the extra key{'s' if len(extra) > 1 else ''} {_keys(extra)}")
    return [Finding(R_LEAD, "keys", f"{what} {' and '.join(parts)}, against the reference's keys {_keys(list(want))}",
                    (tuple(map(repr, missing)), tuple(map(repr, extra))))]


def _keys(keys: list) -> str:
    shown = ", ".join(repr(k) for k in keys[:8])
    return shown + (f", … ({len(keys)} in all)" if len(keys) > 8 else "")


def type_relation(got: Any, want: Any, what: str) -> list[Finding]:
    """A number or an array of another kind than the reference's: a float for an int, an int
    array for a float one, a bool for a number."""
    g, r = _kind(got), _kind(want)
    if g is None or r is None or g == r or r in ("float", "float array"):
        return []  # a float result may come as any number type: its dtype is not graded
    same = _same_value(got, want)
    text = f"{what} is {_shown(got, g)} where the reference returns {_article(r)}" + (
        " (the same value)" if same else "")
    return [Finding(R_LEAD, "type", text, (g, r))]


def _kind(v: Any) -> str | None:
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, (int, np.integer)):
        return "int"
    if isinstance(v, (float, np.floating)):
        return "float"
    if isinstance(v, np.ndarray) and v.dtype.kind in "biuf":
        return {"b": "bool array", "i": "int array", "u": "int array", "f": "float array"}[v.dtype.kind]
    return None


def _shown(v: Any, kind: str) -> str:
    if kind.endswith("array"):
        return f"{_article(kind)} ({v.dtype})"
    return f"{_article(kind)} ({v!r})" if len(repr(v)) < 30 else _article(kind)


def _article(kind: str) -> str:
    return grammar.a(kind)


def _same_value(a: Any, b: Any) -> bool:
    try:
        return bool(np.array_equal(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)))
    except (TypeError, ValueError):
        return False


def sizes_relation(G: np.ndarray, W: np.ndarray, w: Words) -> list[Finding]:
    """The same number of axes, one of another length: how many entries each has along it
    (named after the case's numbers), and whether the answer's are the first or the last of
    the reference's."""
    if G.ndim != W.ndim or G.ndim == 0:
        return []
    differ = [k for k in range(G.ndim) if G.shape[k] != W.shape[k]]
    if len(differ) != 1:
        return []
    k = differ[0]
    n, m = G.shape[k], W.shape[k]
    which = ""
    if 0 < n < m:
        idx = [slice(None)] * W.ndim
        for name, part in (("first", slice(0, n)), ("last", slice(m - n, m))):
            idx[k] = part
            with np.errstate(all="ignore"):
                if np.allclose(G, W[tuple(idx)], rtol=w.rtol, atol=w.atol, equal_nan=True):
                    which = name
                    break
    text = (f"{w.subject} {w.verb('has', 'have')} {_count(n, w)} along {w.ax(k)} where {w.ref} has {_count(m, w)}")
    if which:
        text += f": they are the {which} {n} of its {m}, the others are missing"
    return [Finding(R_SHAPE, "sizes", text, (k, which, n, m))]


def _count(n: int, w: Words) -> str:
    """'3 (t_new)': a length, and the case's numbers it is, when one name fits it alone."""
    names = [name for name, v in w.constant_items() if v == n and not name.startswith("sqrt")]
    return f"{n} ({names[0]})" if len(names) == 1 else str(n)
