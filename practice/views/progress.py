"""`kata progress` as rich Text: readiness per group of the path, a small chart of each
kata's time to pass, the katas passed with Python loops, the weakest katas and follow-ups,
and what is due (the figures come from practice.progress)."""
from __future__ import annotations

from rich.text import Text

from graders.engine.grammar import count
from practice import catalogue, clock, schedule, term
from practice.progress import LAST, Figures, KataFigures
from practice.views.history import due_text, failed_mark, spark


def readiness(fig: Figures) -> Text:
    """`kata progress`: every section, from the figures of practice.progress."""
    t = clock.now()
    lines: list[Text | str] = [
        Text("Readiness by group of the path", style="bold"),
        term.wrap(f"(passed within budget: in time and without the solution; bars: time to pass "
                  f"against the budget over the last {LAST} attempts, "
                  f"{failed_mark()} not passed)", style="dim")]
    for g in fig["groups"]:
        lines += ["", Text(f"{g['group']}: {g['passed_within_budget']} of {g['total']} passed "
                           "within budget", style="bold"),
                  term.columns([_row(r) for r in g["katas"]], squeeze={2: 12})]
    lines += ["", Text("Passed, but with Python loops the reference does not have", style="bold")]
    lines.append(term.columns([["  " + w["kata"], "; ".join(w["loops"])] for w in fig["passed_with_loops"]],
                              squeeze={1: 16})
                 if fig["passed_with_loops"] else
                 term.wrap("none: every kata passed last runs its loops as the reference does "
                           "(`kata check` shows a passing kata's efficiency)", indent="  "))
    lines += ["", Text("Weakest katas", style="bold")]
    lines.append(term.columns([["  " + w["kata"], w["reason"]] for w in fig["weakest_katas"]],
                              squeeze={1: 12})
                 if fig["weakest_katas"] else term.wrap("none: every kata tried last went well",
                                                        indent="  "))
    lines += ["", Text("Weakest follow-up questions", style="bold")]
    if fig["weakest_follow_ups"]:
        rows = [[f"  {w['kata']} {w['question']}", w["rating"], w["text"]]
                for w in fig["weakest_follow_ups"]]
        lines.append(term.columns(rows, squeeze={2: 16}))
    else:
        lines.append(term.wrap("none rated missed or partly (`kata followups NAME` asks a kata's)",
                               indent="  "))
    lines += ["", Text("Due for review", style="bold"), _due(fig, t)]
    return term.join(lines)


def _row(r: KataFigures) -> list:
    k = catalogue.get(r["kata"])
    if not r["attempts"]:
        said = "not tried"
    elif r["best"] is None:
        said = f"not passed yet ({count(r['attempts'], 'attempt')})"
    else:
        said = f"best {clock.fmt(r['best'])} of {k.minutes} min" + (
            "" if r["passed_within_budget"] else ", never within budget")
    bars = spark([(a["passed"], a["time_used"], a["budget"], a["overtime"]) for a in r["last"]])
    return ["  " + r["kata"], bars if r["last"] else Text("-"), said]


def _due(fig: Figures, t: float) -> Text:
    if fig["due"]:
        rows = [["  " + d["kata"], "due now" if not d["overdue_days"] else
                 f"overdue by {count(d['overdue_days'], 'day')}", d["reason"]]
                for d in fig["due"]]
        return term.columns(rows, squeeze={2: 12})
    nxt = fig["next_due"]
    if nxt is None:
        return term.wrap("nothing yet: a kata comes due once an attempt at it ends", indent="  ")
    due = schedule.Due(nxt["kata"], True, nxt["due_at"], 0.0, nxt["reason"])
    return term.wrap(f"nothing due now; next: {nxt['kata']} {due_text(due, t)} "
                     f"({nxt['reason']})", indent="  ")
