"""What grading measured of an attempt's cost beside the reference's: the typed form of the
report's `efficiency` object, the rules that decide what is worth a remark, and their words.

    {"measured": true, "why": null,
     "functions": [{"function": "causal_mha",
                    "dimension": {"name": "T", "unit": "position", "sizes": [16, 32, 64], "note": ""},
                    "attempt": {"lines": [106, 202, 394], "lines_growth": "linear", "lines_rate": 6.0,
                                "capped": [false, false, false],
                                "loop": {"line": 14, "code": "for t in range(T):", "counts": [17, 33, 65],
                                         "growth": "linear", "rate": 1.0},
                                "memory": [13176, 32376, 95352], "memory_growth": "quadratic"},
                    "reference": {... the same keys ...},
                    "others": [{"dimension": {"name": "n_heads", "unit": "head", ...},
                                "attempt": {... no memory ...}, "reference": {...}}],
                    "time": {"size": 64, "attempt_seconds": 0.000785, "reference_seconds": 0.000121,
                             "ratio": 6.49, "indicative": true}}],
     "remarks": ["`causal_mha` loops over the positions in Python: ..."]}

`lines` are the line events run in the function's own file (the attempt's file; the
reference's file) at each size, `loop` the line whose count grows most (the innermost loop
over the dimension; null when no line's count grows), `capped` marks a size where counting
stopped (graders.engine.counting.LINE_CAP). A growth is "constant", "linear", "quadratic",
"cubic" or "unknown" (too few sizes counted), and a rate is per unit of the dimension
(linear) or per pair of units (quadratic). `memory` is the tracer's peak, in bytes, above
what was in use when the call began. Every figure but `time` is counted, so the same file
gives the same figures on any machine, under any load; `time` is labelled indicative.

Only the standard library may be imported here: the report and the command line use it.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from graders.engine.grammar import count, plural

CONSTANT, LINEAR, QUADRATIC, CUBIC, UNKNOWN = "constant", "linear", "quadratic", "cubic", "unknown"
RANK = {CONSTANT: 0, LINEAR: 1, QUADRATIC: 2, CUBIC: 3, UNKNOWN: 4}
POWERS = {LINEAR: "", QUADRATIC: " squared", CUBIC: " cubed"}
LOOPED = 0.25       # a loop runs at least once per this many units (per pair): not over blocks of them
WORSE = 4           # a loop this many times more often than the reference's, at the same growth, is worth a remark
MEMORY_STEP = 8 << 10      # a peak that grows less than this over the last step is too small to remark on
UNMEASURED = "it is measured once every check passes"


# ----------------------------------------------------------------------------- the figures

@dataclass
class Dimension:
    """A size the cost grows with: how it is named ("T"), one of it ("position"), the sizes
    measured and what grows with it (`note`, "block_size = T / 4")."""

    name: str
    unit: str
    sizes: list[int]
    note: str = ""

    def at(self, size: int) -> str:
        """'T = 64'."""
        return f"{self.name} = {size}"

    def to_dict(self) -> dict:
        return {"name": self.name, "unit": self.unit, "sizes": list(self.sizes), "note": self.note}

    @classmethod
    def from_dict(cls, d: dict) -> "Dimension":
        return cls(str(d.get("name") or "n"), str(d.get("unit") or "unit"), _ints(d.get("sizes")),
                   str(d.get("note") or ""))


@dataclass
class Loop:
    """The line whose count grows most with the dimension, its count at each size, and how it grows."""

    line: int
    code: str
    counts: list[int]
    growth: str
    rate: float

    def to_dict(self) -> dict:
        return {"line": self.line, "code": self.code, "counts": list(self.counts), "growth": self.growth,
                "rate": self.rate}

    @classmethod
    def from_dict(cls, d) -> "Loop | None":
        if not isinstance(d, dict):
            return None
        return cls(int(d.get("line") or 0), str(d.get("code") or ""), _ints(d.get("counts")),
                   _growth(d.get("growth")), float(d.get("rate") or 0.0))


@dataclass
class Cost:
    """One side's figures along one dimension: lines at each size, and (the main dimension) memory."""

    lines: list[int]
    lines_growth: str
    lines_rate: float
    capped: list[bool] = field(default_factory=list)
    loop: Loop | None = None
    memory: list[int] | None = None
    memory_growth: str | None = None

    def to_dict(self) -> dict:
        out = {"lines": list(self.lines), "lines_growth": self.lines_growth, "lines_rate": self.lines_rate,
               "capped": list(self.capped), "loop": self.loop.to_dict() if self.loop else None}
        if self.memory is not None:
            out.update(memory=list(self.memory), memory_growth=self.memory_growth)
        return out

    @classmethod
    def from_dict(cls, d) -> "Cost":
        d = d if isinstance(d, dict) else {}
        memory = d.get("memory")
        return cls(_ints(d.get("lines")), _growth(d.get("lines_growth")), float(d.get("lines_rate") or 0.0),
                   [bool(c) for c in d.get("capped") or []], Loop.from_dict(d.get("loop")),
                   _ints(memory) if isinstance(memory, list) else None,
                   _growth(d.get("memory_growth")) if isinstance(memory, list) else None)


@dataclass
class Along:
    """The attempt's cost and the reference's along one dimension."""

    dimension: Dimension
    attempt: Cost
    reference: Cost

    def to_dict(self) -> dict:
        return {"dimension": self.dimension.to_dict(), "attempt": self.attempt.to_dict(),
                "reference": self.reference.to_dict()}

    @classmethod
    def from_dict(cls, d: dict) -> "Along":
        return cls(Dimension.from_dict(d.get("dimension") or {}), Cost.from_dict(d.get("attempt")),
                   Cost.from_dict(d.get("reference")))


@dataclass
class Timing:
    """The attempt's time against the reference's at the largest size: indicative (it depends on
    the machine and what else runs on it), never a verdict."""

    size: int
    attempt_seconds: float
    reference_seconds: float

    @property
    def ratio(self) -> float:
        return self.attempt_seconds / self.reference_seconds if self.reference_seconds > 0 else 0.0

    def to_dict(self) -> dict:
        mine, theirs = round(self.attempt_seconds, 6), round(self.reference_seconds, 6)
        return {"size": self.size, "attempt_seconds": mine, "reference_seconds": theirs,
                "ratio": round(mine / theirs, 2) if theirs > 0 else 0.0, "indicative": True}

    @classmethod
    def from_dict(cls, d) -> "Timing | None":
        if not isinstance(d, dict):
            return None
        return cls(int(d.get("size") or 0), float(d.get("attempt_seconds") or 0.0),
                   float(d.get("reference_seconds") or 0.0))


@dataclass
class FunctionCost:
    """One function of the kata: its main dimension, the others measured in lines, and the time."""

    function: str
    main: Along
    others: list[Along] = field(default_factory=list)
    time: Timing | None = None

    def to_dict(self) -> dict:
        return {"function": self.function, **self.main.to_dict(), "others": [o.to_dict() for o in self.others],
                "time": self.time.to_dict() if self.time else None}

    @classmethod
    def from_dict(cls, d: dict) -> "FunctionCost":
        return cls(str(d.get("function") or ""), Along.from_dict(d),
                   [Along.from_dict(o) for o in d.get("others") or [] if isinstance(o, dict)],
                   Timing.from_dict(d.get("time")))


@dataclass
class Efficiency:
    """What grading measured of the attempt's cost beside the reference's, and the remarks
    (empty when there is nothing to say); `why` when it was not measured."""

    measured: bool
    why: str | None = None
    functions: list[FunctionCost] = field(default_factory=list)
    remarks: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"measured": self.measured, "why": self.why, "functions": [f.to_dict() for f in self.functions],
                "remarks": list(self.remarks)}

    @classmethod
    def from_dict(cls, d) -> "Efficiency | None":
        if not isinstance(d, dict):
            return None
        return cls(bool(d.get("measured")), d.get("why") if isinstance(d.get("why"), str) else None,
                   [FunctionCost.from_dict(f) for f in d.get("functions") or [] if isinstance(f, dict)],
                   [str(r) for r in d.get("remarks") or []])

    def looped(self) -> list[str]:
        """What loops in Python where the reference does not, a phrase each ("`causal_mha` loops
        over the positions (line 14)"): the katas `kata progress` lists as passed with loops."""
        return [loop_phrase(f.function, a) for f in self.functions for a in [f.main, *f.others] if blamed(a)]


def not_measured(why: str) -> Efficiency:
    return Efficiency(False, why)


def combined(reports: list[tuple[str, "Efficiency | None"]]) -> Efficiency:
    """The efficiency of several reports (a mock interview's questions) as one: each function and
    remark with its kata's name in front, measured when any of them was."""
    found = [(kata, e) for kata, e in reports if e is not None and e.measured]
    if not found:
        return not_measured(UNMEASURED)
    return Efficiency(True, None, [replace(f, function=f"{kata}: {f.function}") for kata, e in found for f in e.functions],
                      [f"{kata}: {r}" for kata, e in found for r in e.remarks])


def _ints(v) -> list[int]:
    return [int(x) for x in v if isinstance(x, (int, float)) and not isinstance(x, bool)] if isinstance(v, list) else []


def _growth(v) -> str:
    return v if v in RANK else UNKNOWN


# ----------------------------------------------------------------------------- what is worth a remark

def blamed(along: Along) -> bool:
    """The attempt loops over the dimension in Python where the reference does not, or far more
    often than the reference's own loop (a blockwise reference loops over blocks by design: a
    loop over blocks is not blamed, one over each unit is). Counting that stopped before two
    sizes were counted is blamed too: it runs more lines than can be counted."""
    mine, theirs = along.attempt, along.reference
    if mine.lines_growth == UNKNOWN:
        return True
    loop = mine.loop
    if loop is None or loop.growth == CONSTANT or loop.rate < LOOPED:
        return False
    ref = theirs.loop
    ref_rank = RANK[ref.growth] if ref is not None else 0
    if RANK[loop.growth] > ref_rank:
        return True
    return RANK[loop.growth] == ref_rank and ref is not None and ref.rate * WORSE <= loop.rate


def memory_blamed(along: Along) -> bool:
    """The attempt's peak memory grows faster than the reference's (as T squared where the
    reference's grows as T), by enough over the last step to be more than a few small objects,
    and is already above the reference's at the largest size."""
    mine, theirs = along.attempt, along.reference
    if not mine.memory or not theirs.memory or mine.memory_growth is None or theirs.memory_growth is None:
        return False
    if RANK[mine.memory_growth] <= RANK[theirs.memory_growth] or mine.memory_growth == UNKNOWN:
        return False
    return (len(mine.memory) >= 2 and mine.memory[-1] - mine.memory[-2] >= MEMORY_STEP
            and mine.memory[-1] > theirs.memory[-1])


def remarks(functions: list[FunctionCost]) -> list[str]:
    """The remarks an interviewer would make, a sentence each: a loop in Python where the
    reference has none (or a loop over each unit where the reference's is over blocks), memory
    that grows faster than the reference's. None for the reference itself or a blockwise loop."""
    out = []
    for f in functions:
        out += [lines_remark(f.function, a) for a in [f.main, *f.others] if blamed(a)]
        if memory_blamed(f.main):
            out.append(memory_remark(f.function, f.main))
    return out


# ----------------------------------------------------------------------------- words

def growth_words(growth: str, name: str) -> str:
    """'the same at every T', 'as T', 'as T squared', 'faster than could be counted'."""
    if growth == CONSTANT:
        return f"the same at every {name}"
    if growth == UNKNOWN:
        return "faster than could be counted"
    return f"as {name}{POWERS[growth]}"


def rate_text(rate: float) -> str:
    """A rate in two significant figures at most: '1,120', '3', '1.5', '0.19'."""
    if rate >= 10:
        return f"{rate:,.0f}"
    return f"{rate:.2g}"


def how_often(rate: float, one: str, many: str) -> str:
    """How often a line runs: 'once per position', 'twice per head', '3 times per position',
    'once per 4 positions' (`one` and `many`: the unit, and its plural)."""
    if rate <= 0:
        return "once"
    if rate < 0.9:
        return f"once per {rate_text(1 / rate)} {many}"
    whole = round(rate)
    if abs(rate - whole) < 0.1:
        word = {1: "once", 2: "twice"}.get(whole, f"{whole:,} times")
    else:
        word = f"{rate_text(rate)} times"
    return f"{word} per {one}"


def per_unit(along: Along, growth: str) -> tuple[str, str]:
    """The unit a rate of this growth is per, and its plural: ('position', 'positions'), or
    ('pair of positions', 'pairs of positions') for a quadratic growth."""
    unit, units = along.dimension.unit, plural(along.dimension.unit)
    return {QUADRATIC: (f"pair of {units}", f"pairs of {units}"),
            CUBIC: (f"triple of {units}", f"triples of {units}")}.get(growth, (unit, units))


def lines_rate_text(cost: Cost, along: Along) -> str:
    """'3 lines a position', '0.5 lines a pair of positions'; '' when the lines do not grow."""
    if cost.lines_growth in (CONSTANT, UNKNOWN):
        return ""
    one, _ = per_unit(along, cost.lines_growth)
    return f"{rate_text(cost.lines_rate)} {'line' if cost.lines_rate == 1 else 'lines'} a {one}"


def bytes_text(n: int) -> str:
    """'812 bytes', '35 KiB', '1.2 MiB'."""
    if n < 1024:
        return count(n, "byte")
    if n < 1 << 20:
        return f"{n / 1024:.2g} KiB" if n < 10 << 10 else f"{n / 1024:.0f} KiB"
    return f"{n / 2**20:.2g} MiB" if n < 10 << 20 else f"{n / 2**20:.0f} MiB"


def bytes_list(values: list[int]) -> str:
    """Sizes in one unit, the largest's: '32, 93, 312 KiB', '0.5, 1.2, 4.7 MiB', '812, 900, 1,000 bytes'."""
    if not values:
        return ""
    top = max(values)
    if top < 1024:
        return ", ".join(f"{v:,}" for v in values) + " bytes"
    scale, unit = (1024, "KiB") if top < 1 << 20 else (2**20, "MiB")
    return ", ".join(f"{v / scale:.2g}" if v < 10 * scale else f"{v / scale:.0f}" for v in values) + f" {unit}"


def _line(loop: Loop) -> str:
    return f"line {loop.line}" + (f" (`{loop.code}`)" if loop.code else "")


def loop_phrase(function: str, along: Along) -> str:
    """'`causal_mha` loops over the positions (line 14)'."""
    loop, units = along.attempt.loop, plural(along.dimension.unit)
    if along.attempt.lines_growth == UNKNOWN or loop is None:
        return f"`{function}` runs more Python lines than can be counted as {along.dimension.name} grows"
    over = f"pairs of {units}" if loop.growth == QUADRATIC else f"triples of {units}" if loop.growth == CUBIC \
        else f"the {units}"
    return f"`{function}` loops over {over} (line {loop.line})"


def lines_remark(function: str, along: Along) -> str:
    """A loop in Python where the reference has none, or one over each unit where the reference's
    is over blocks: what runs, how often, and what the reference does instead."""
    dim, mine, theirs = along.dimension, along.attempt, along.reference
    name, units, largest = dim.name, plural(dim.unit), dim.at(dim.sizes[-1])
    ref_lines = theirs.lines[-1] if theirs.lines else 0
    if mine.lines_growth == UNKNOWN or mine.loop is None:
        return (f"`{function}` runs more Python lines than can be counted as {name} grows (counting stops at "
                f"{max(mine.lines):,} a call): its {units} are looped over in Python; the reference runs "
                f"{ref_lines:,} lines at {largest}")
    loop, ref = mine.loop, theirs.loop
    runs = f"{_line(loop)} runs {how_often(loop.rate, *per_unit(along, loop.growth))} ({loop.counts[-1]:,} times at {largest})"
    total = lines_rate_text(mine, along)
    runs += f", {total} in all" if total else ""
    if ref is None or ref.growth == CONSTANT:
        instead = (f"the reference runs the same {count(ref_lines, 'line')} at any {name}, every "
                   f"{per_unit(along, loop.growth)[0]} at once in array operations")
    elif RANK[loop.growth] > RANK[ref.growth]:
        instead = (f"the reference's loop runs {how_often(ref.rate, *per_unit(along, ref.growth))} "
                   f"({_line(ref)}): {_fewer(loop, units)}")
    else:
        instead = (f"the reference's loop runs {how_often(ref.rate, *per_unit(along, ref.growth))}, a block of "
                   f"{units} at a time")
    if loop.growth == QUADRATIC:
        said = f"`{function}` loops over pairs of {units} in Python"
    elif loop.growth == CUBIC:
        said = f"`{function}` loops three deep over the {units} in Python"
    elif ref is not None and ref.growth == LINEAR:
        said = f"`{function}` loops over the {units} one at a time in Python"
    else:
        said = f"`{function}` loops over the {units} in Python"
    return f"{said}: {runs}; {instead}"


def _fewer(loop: Loop, units: str) -> str:
    if loop.growth in (QUADRATIC, CUBIC):
        return f"take the {units} a block at a time, each block in array operations"
    return f"take the {units} a block at a time"


def memory_remark(function: str, along: Along) -> str:
    """Peak memory that grows faster than the reference's: how much, and what it means."""
    dim, mine, theirs = along.dimension, along.attempt, along.reference
    name, largest = dim.name, dim.at(dim.sizes[-1])
    power = {QUADRATIC: 2, CUBIC: 3}.get(mine.memory_growth or "", 1)
    shape = " x ".join([name] * power)
    theirs_grow = (f"stays the same at every {name}" if theirs.memory_growth == CONSTANT else
                   f"grows {growth_words(theirs.memory_growth or UNKNOWN, name)}")
    return (f"`{function}`'s peak memory grows {growth_words(mine.memory_growth or UNKNOWN, name)} "
            f"({bytes_text(mine.memory[-1])} at {largest}, the reference's {bytes_text(theirs.memory[-1])}): "
            f"it holds something of {shape} entries at once, where the reference's {theirs_grow}; build only "
            f"what the result needs")
