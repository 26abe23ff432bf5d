"""Naming the likely mistake: the known bug that behaves exactly like the attempt.

A catalogued bug is named when, replayed here (graders.engine.replay), it gives what the
attempt gave on the calls that failed and on the calls that passed (those with small
arguments: a reviewer's sample), as a reviewer would check it. Only the functions the bug changes count: a bug in `top_p_probs`
is judged on the calls of `top_p_probs` (and of the functions that call it), so another
function still a stub does not hide it. When two entries fit, neither is named (the
observed relations say what the attempt does); when none fits, nothing is. A wrong name
sends the candidate after a mistake they did not make.

Only bugs whose own check failed are tried: a bug that gives what the attempt gave on every
call of a check gets the same verdict there. The work is a number of replays, never a
number of seconds: the same file gets the same likely cause on an idle and a busy machine.
"""
from __future__ import annotations

import ast
import contextlib
from functools import lru_cache

import numpy as np

from graders.engine import bugs as bug_catalogue
from graders.engine.files import reference
from graders.engine.recorder import Call, Raised
from graders.engine.replay import Replayer

FAILING = 24            # failing calls a bug must reproduce (the smallest failing cases hold few)
SAMPLE_BYTES = 1 << 16  # the passing calls it must reproduce too: those with arguments this small


def diagnose(kata: str, failing: list[Call], history: list[Call], named: list[str] = (),
             setup: tuple[str, ...] = (), failed: set[str] | None = None) -> dict | None:
    """{'bug': name, 'message': lesson} for the known bug behind the failures, or None.

    `named` are bugs that a check recognised from what it measured (a memory peak, a
    warning): the answer when the failing calls' values are right (the reference explains
    them) and so no replay can tell. `failed`: the checks the attempt failed (their functions
    in the grader), when known; only bugs known to fail one of them are tried.
    """
    catalogue = [b for b in bug_catalogue.load(kata) if failed is None or b.fails in failed]
    failing = [c for c in failing if _replayable(c)][:FAILING]
    history = [c for c in history if _replayable(c)]
    with _guards(setup):
        if not failing or _reference_explains(kata, failing):
            return _named(kata, named)
        fitting = [b for b in catalogue if _quietly(lambda: _fits(kata, b, failing, history))]
    if len(fitting) == 1:
        return {"bug": fitting[0].name, "message": fitting[0].likely}
    return _several(kata, fitting, failing)


def _several(kata: str, fitting: list, failing: list[Call]) -> dict | None:
    """Two mistakes or more, each in functions of its own (a bug in gqa and one in kv_cache_bytes):
    each fits the calls of the functions it changes, and together they cover every failing
    call. When two fitting bugs change a function in common, they are two explanations of one
    mistake, and neither is named."""
    if len(fitting) < 2:
        return None
    touched = [touched_functions(kata, b) for b in fitting]
    if any(a & b for i, a in enumerate(touched) for b in touched[i + 1:]):
        return None
    if not {c.function for c in failing} <= set().union(*touched):
        return None
    names = [b.name for b in fitting]
    lessons = "; and ".join(f"{b.likely} ({', '.join(sorted(t))})" for b, t in zip(fitting, touched))
    return {"bug": ", ".join(names), "message": f"{len(fitting)} mistakes, one in each function: {lessons}"}


def _replayable(call: Call) -> bool:
    """A call a bug can be replayed on here: kept, and not one that ran the attempt's process
    out of memory (a bug replayed on it would do the same to this one)."""
    return call.recorded and call.kept and not (isinstance(call.outcome, Raised) and call.outcome.is_a(MemoryError))


def _guards(setup: tuple[str, ...]):
    """Replays meet the attempt's process as it was set up: memory from np.empty reads as
    zeros there, and NumPy's global samplers may be refused."""
    from graders.engine.worker import refusing_global_random, zeroed_empty

    stack = contextlib.ExitStack()
    stack.enter_context(zeroed_empty(np))
    if "refuse_global_random" in setup:
        stack.enter_context(refusing_global_random(np))
    return stack


def _fits(kata: str, bug, failing: list[Call], history: list[Call]) -> bool:
    """The bug gives what the attempt gave on the failing calls and on a sample of the others,
    counting only the calls of the functions it changes."""
    touched = touched_functions(kata, bug)
    mine = [c for c in failing if c.function in touched]
    if not mine:
        return False
    if not bug.stateful:  # a call passed a result back got the attempt's own object, as earlier calls left it:
        # only a replay of every call in order (a bug that keeps state) meets it so
        mine = [c for c in mine if not c.passed]
        history = [c for c in history if not c.passed]
        if not mine:
            return False
    if bug.stateful:  # its answers depend on the calls before: all of them, in order, a fresh module per process
        ids = {c.id for c in mine}
        processes: dict[int, list[Call]] = {}
        for c in history:
            processes.setdefault(c.process, []).append(c)
        # in the order the attempt's process made them: a call's id (calls sent ahead are
        # numbered when sent, and recorded when a case takes them)
        return all(Replayer(bug.fresh_module()).agrees_in_order(sorted(calls, key=lambda c: c.id),
                                                                lambda c: c.function in touched)
                   for calls in processes.values() if any(c.id in ids for c in calls) or
                   any(c.function in touched for c in calls))
    replay = Replayer(bug.module, cache=True)
    by_id = {c.id: c for c in history}

    def agrees(c: Call) -> bool:
        if c.args_from is None:
            return replay.agrees(c)
        # made on the objects an earlier call was given (and may have changed): the two, in order
        source = by_id.get(c.args_from)
        return source is None or Replayer(bug.module).agrees_in_order([source, c], lambda x: x is c)

    return all(agrees(c) for c in mine) and all(agrees(c) for c in sample(history, mine, touched))


def sample(history: list[Call], failing: list[Call], touched: set[str]) -> list[Call]:
    """The passing calls of the touched functions whose arguments are small (SAMPLE_BYTES):
    the checks make a fixed number of them, so the replays are a number, not a time."""
    ids = {c.id for c in failing}
    return [c for c in history if c.id not in ids and c.function in touched and _size(c) <= SAMPLE_BYTES]


def _size(call: Call) -> int:
    return sum(v.nbytes for v in (*call.args, *call.kwargs.values()) if isinstance(v, np.ndarray))


def touched_functions(kata: str, bug) -> set[str]:
    """The functions a bug changes, compared with the correct answer it is edited from (the
    base from which it differs least), and every function that calls one of them."""
    return set(_touched(kata, bug.name, bug.source))


@lru_cache(maxsize=None)
def _touched(kata: str, name: str, source: str) -> tuple[str, ...]:
    mine = _functions(source)
    bases = [_functions(code) for code in bug_catalogue.bases(kata).values()] or [{}]
    changed = min(({f for f in mine if f not in base or base[f][0] != mine[f][0]} for base in bases), key=len)
    grew = True
    while grew:
        more = {f for f, (_, names) in mine.items() if names & changed} - changed
        changed |= more
        grew = bool(more)
    return tuple(sorted(changed or mine))


@lru_cache(maxsize=1024)
def _functions(source: str) -> dict[str, tuple[str, set[str]]]:
    """Top-level functions by name: (their source text, the names they read). A bug is an edit
    of its base's text, so a function it did not edit has the same text."""
    tree = ast.parse(source)
    return {n.name: (ast.get_source_segment(source, n), {m.id for m in ast.walk(n) if isinstance(m, ast.Name)})
            for n in tree.body if isinstance(n, ast.FunctionDef)}


def _quietly(test) -> bool:
    """A replay that fails in an unforeseen way fits nothing."""
    try:
        return bool(test())
    except Exception:
        return False


def _reference_explains(kata: str, failing: list[Call]) -> bool:
    replay = Replayer(reference(kata), cache=True)
    try:
        return all(replay.agrees(c) for c in failing)
    except Exception:
        return False


def _named(kata: str, named) -> dict | None:
    known = {b.name: b for b in bug_catalogue.load(kata)}
    for name in named:
        if name in known:
            return {"bug": name, "message": known[name].likely}
    return None
