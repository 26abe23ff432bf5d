"""What `kata followups` (and the end of a mock interview) shows around its prompts: the
invitation, each question (and, for a number, in what unit), the verdict on an answer, the
model answer, what the end of the input left unanswered, and the line on a round.
"""
from __future__ import annotations

import textwrap

from rich.text import Text

from practice import catalogue, term

SAID = {"knew": "knew it", "partly": "partly", "missed": "missed"}
INVITE = ("Say each answer aloud, then rate it: k (knew it), p (partly), m (missed); a question "
          "that asks for a number takes the number. Enter skips one.")


def heading(k: catalogue.Kata) -> Text:
    """Over `kata followups NAME`'s round."""
    return term.wrap(f"Follow-up questions on {k.name}: {k.title}", style="bold")


def question(i: int, f: catalogue.FollowUp, indent: int = 2) -> Text:
    """'  1. The question...', wrapped, and for a question answered with a number, in what."""
    pad = " " * indent
    text = Text(textwrap.fill(f.question, width=min(88, term.width()), initial_indent=f"{pad}{i}. ",
                              subsequent_indent=pad + "   ", break_on_hyphens=False))
    if f.numeric:
        unit = prose(f"(a number: {f.unit})", pad=pad + "   ")
        unit.stylize("dim")
        text += Text("\n") + unit
    return text


def model_answer(f: catalogue.FollowUp, indent: int = 5) -> Text:
    """The model answer, under its question."""
    return prose("Model answer: " + (f.answer or "(none yet)"), "Model answer:", "green",
                  " " * indent)


def verdict(f: catalogue.FollowUp, got, kata: str, answers: bool) -> Text:
    """What is said of an answer (`got`: its practice.followups.Rated): recorded, right, or not
    right (and where the answer is shown)."""
    if got.answer is None:
        return prose(f"Recorded: {SAID[got.rating]}.")
    if got.rating == "knew":
        return prose(f"Right: {figure(f)}.", "Right", "bold green")
    later = "" if answers else f" (`kata followups {kata} --answers` shows the answer)"
    return prose(f"Not right: {got.answer} is not the answer; recorded as missed{later}.",
                  "Not right", "bold red")


def ended(left: int, then: list[str]) -> Text:
    """What the end of the input left unanswered: `left` questions, and the follow-ups of
    the katas `then`."""
    these = ("this question" if left == 1 else "this question and the next" if left == 2
             else f"this question and the {left - 1} after it")
    more = f"; the follow-ups of {' and '.join(then)} were not asked either" if then else ""
    return prose(f"The input ended: {these} went unanswered, and nothing is recorded for "
                  f"{'it' if left == 1 and not then else 'them'}{more}.", "The input ended:", "yellow")


def figure(f: catalogue.FollowUp) -> str:
    """The answer of a numeric follow-up as said: '131,072 bytes per token', '4.2 times ...'."""
    tolerance = f" (answers within {f.tolerance:g} count)" if f.tolerance else ""
    return f"{f.number:,} {f.unit}{tolerance}"


def prose(text: str, lead: str = "", style: str = "", pad: str = "     ") -> Text:
    """A sentence under its question, wrapped; its first words (`lead`) in `style`."""
    out = Text(textwrap.fill(text, width=min(88, term.width()), initial_indent=pad,
                             subsequent_indent=pad, break_on_hyphens=False))
    out.stylize(style, len(pad), len(pad) + len(lead))
    return out


def summary(k: catalogue.Kata, rated: list) -> Text:
    """One line on a round: how many were rated, and how (`rated`: practice.followups.Rated)."""
    counts = {r: sum(1 for x in rated if x.rating == r) for r in SAID}
    said = ", ".join(f"{SAID[r]} {n}" for r, n in counts.items() if n)
    return prose(f"Rated {len(rated)} of {len(k.follow_ups)} follow-ups of {k.name}: {said}. "
                  "`kata progress` lists the weakest.", pad="")
