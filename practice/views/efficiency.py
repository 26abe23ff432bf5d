"""The efficiency a grading measured (graders.engine.costs), as rich Text: the figures, the
attempt's beside the reference's, and the remarks.

      Efficiency, counted (the same on any machine); the time is indicative:
        causal_mha at T = 16, 32, 64
          Python lines  yours      106, 202, 394    as T: 6 lines a position
                        reference  18, 18, 18       the same at every T
          peak memory   yours      13, 32, 93 KiB   as T squared
                        reference  22, 74, 276 KiB  as T squared
          the same Python lines at n_heads = 2, 4, 8 and B = 2, 4, 8, yours and the reference's
          time at T = 64: 7.1 times the reference's (indicative: it depends on the machine)
      Remark: `causal_mha` loops over the positions in Python: ...

`kata check` shows it under the checks (a strict mock interview: the figures, no remark),
`kata compare` under the code, and a mock interview's report one line a function.
"""
from __future__ import annotations

from rich.text import Text

from graders.engine.costs import (
    CONSTANT,
    UNKNOWN,
    UNMEASURED,
    Along,
    Cost,
    Efficiency,
    FunctionCost,
    bytes_list,
    growth_words,
    lines_rate_text,
)
from graders.engine.grammar import verb
from practice import term

HEADING = "Efficiency, counted (the same on any machine); the time is indicative:"


def section(e: Efficiency | None, remarks: bool = True) -> list[Text]:
    """The figures of each function, then the remarks (none when `remarks` is False: a strict
    mock interview shows the figures only); nothing when the efficiency was not measured
    because a check fails, one line when it could not be measured."""
    if e is None or (not e.measured and not e.functions and _waits(e)):
        return []
    if not e.measured:
        return [Text(f"  Efficiency: not measured ({e.why})", style="dim")]
    lines = [Text(f"  {HEADING}", style="bold")]
    for f in e.functions:
        lines.append(table(f))
    if remarks:
        lines += remark_lines(e)
    return lines


def _waits(e: Efficiency) -> bool:
    """Not measured only because the checks do not all pass yet."""
    return e.why in (None, UNMEASURED)


def remark_lines(e: Efficiency) -> list[Text]:
    return [Text(f"  Remark: {r}", style="yellow") for r in e.remarks]


def table(f: FunctionCost, indent: int = 4) -> Text:
    """One function's figures, yours above the reference's, a figure two rows."""
    pad = " " * indent
    main, dim = f.main, f.main.dimension
    head = f"{f.function} at {dim.name} = {_listed(dim.sizes)}" + (f" ({dim.note})" if dim.note else "")
    rows = _pair("Python lines", main, _lines)
    if main.attempt.memory is not None and main.reference.memory is not None:
        rows += _pair("peak memory", main, _memory)
    flat = [o for o in f.others if CONSTANT == o.attempt.lines_growth == o.reference.lines_growth]
    for other in f.others:
        if other not in flat:
            rows += _pair(f"{other.dimension.name} = {_listed(other.dimension.sizes)}", other, _lines)
    lines = [Text(pad + head, style="bold"), term.columns([[pad + "  " + r[0], *r[1:]] for r in rows])]
    if flat:
        said = " and ".join(f"{o.dimension.name} = {_listed(o.dimension.sizes)}" for o in flat)
        lines.append(Text(f"{pad}  the same Python lines at {said}, yours and the reference's", style="dim"))
    if f.time is not None:
        lines.append(Text(f"{pad}  time at {dim.at(f.time.size)}: {_ratio(f.time.ratio)} "
                          "(indicative: it depends on the machine)", style="dim"))
    return term.join(lines)


def _pair(label: str, along: Along, figures) -> list[list[str]]:
    """Two rows: the attempt's figures, then the reference's."""
    mine, theirs = figures(along.attempt, along), figures(along.reference, along)
    return [[label, "yours", *mine], ["", "reference", *theirs]]


def _listed(sizes: list[int]) -> str:
    return ", ".join(str(n) for n in sizes)


def _lines(cost: Cost, along: Along) -> list[str]:
    """['235, 459, 907', 'as T: 7 lines a position'], ['18, 18, 18', 'the same at every T']."""
    shown = ", ".join(("over " if stopped else "") + f"{n:,}"
                      for n, stopped in zip(cost.lines, cost.capped or [False] * len(cost.lines)))
    name = along.dimension.name
    growth = growth_words(cost.lines_growth, name)
    rate = lines_rate_text(cost, along)
    return [shown, f"{growth}: {rate}" if rate else growth]


def _memory(cost: Cost, along: Along) -> list[str]:
    """['32, 93, 312 KiB', 'as T squared']."""
    return [bytes_list(cost.memory or []), growth_words(cost.memory_growth or UNKNOWN, along.dimension.name)]


def _ratio(ratio: float) -> str:
    if ratio <= 0:
        return "not timed"
    if 2 / 3 <= ratio <= 1.5:
        return "about the reference's"
    return f"{ratio:.2g} times the reference's" if ratio < 10 else f"{ratio:.0f} times the reference's"


def summary(f: FunctionCost) -> str:
    """One function's figures in a line, for a mock interview's report: 'Python lines grow as T
    (7 a position), the reference's are the same at every T; peak memory as T squared, the
    reference's as T squared; time 6.2 times the reference's (indicative)'."""
    main = f.main
    name = main.dimension.name
    mine, theirs = main.attempt, main.reference
    said = [f"Python lines {_grow(mine.lines_growth, name, True)}"
            + (f" ({lines_rate_text(mine, main)})" if lines_rate_text(mine, main) else "")
            + f", the reference's {_grow(theirs.lines_growth, name, True)}"]
    for other in f.others:
        if other.attempt.lines_growth != CONSTANT:
            said.append(f"lines {_grow(other.attempt.lines_growth, other.dimension.name, True)}, the reference's "
                        f"{_grow(other.reference.lines_growth, other.dimension.name, True)}")
    if mine.memory_growth and theirs.memory_growth:
        said.append(f"peak memory {_grow(mine.memory_growth, name, False)}, the reference's "
                    f"{_grow(theirs.memory_growth, name, False)}")
    if f.time is not None and f.time.ratio > 0:
        said.append(f"time {_ratio(f.time.ratio)} (indicative)")
    return "; ".join(said)


def _grow(growth: str, name: str, many: bool) -> str:
    """'grow as T', 'are the same at every T' (`many`: of a plural subject), 'grows as T squared'."""
    words = growth_words(growth, name)
    if growth == CONSTANT:
        return f"{verb(2 if many else 1, 'is', 'are')} {words}"
    return f"{verb(2 if many else 1, 'grows', 'grow')} {words}"


def compared(report, edited: bool) -> Text:
    """`kata compare`, under the code: the efficiency of the attempt's last grading beside the
    reference's (`report`: None when it was never graded; `edited`: the file changed since),
    its prose wrapped as the code is."""
    e = report.efficiency if report is not None else None
    if e is None or not e.measured:
        why = (e.why if e is not None and e.why else UNMEASURED)
        return term.wrap(f"Efficiency: not measured in your last grading ({why}); `kata check` measures it.",
                         style="dim")
    head = "Efficiency of your last grading, beside the reference's" + (
        " (the file changed since: `kata check` measures it again)" if edited else "") + ":"
    return term.join([term.wrap(head, style="bold"), *[table(f, indent=2) for f in e.functions],
                      *[term.wrap(f"Remark: {r}", style="yellow") for r in e.remarks]])
