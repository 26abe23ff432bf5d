"""What the report says was observed, worked out once every check has run, while the attempt's
process can still be called: each sentence is tested on the smallest failing case and
confirmed on a second one, and each repro is made to show what the check saw.

In order, for the first failing checks:
- history (graders.engine.history): the first wrong call is made alone, as the first call of
  a new process; when it is right there, the failure needs the calls before it, and the one
  earlier call that matters is found, said and written into the repro;
- what the failure needs (graders.engine.contrast): the neighbours of the smallest failing
  case that pass, each confirmed on a second failing case;
- what the answer is (graders.engine.confirm): the relations between the failing call and the
  reference's answer (graders.engine.relations) that hold on a second failing case of other,
  larger sizes too; when the smallest case is too small to show any, those that hold on two
  larger ones, said with the case they were seen on.
The first check that says what the answer is speaks for the grading; else the first that
says what the failure needs or where it shows; else what a failing call did that the
reference's does not (raise, return, write into an input). What the first failing check's call
did comes before sentences that only say where the answers differ.

Every repro of a failing check prints the reference's answer beside the attempt's, and one
that NumPy's refusal of its global samplers made fail makes the same refusal
(graders.engine.repros).

The calls made here go to new processes of the attempt and stay out of the grading's record:
the verdicts and the likely cause are decided before and without them. Their number is
bounded by counts, never by seconds, so the same file gets the same sentences on any machine.
"""
from __future__ import annotations

import contextlib
import inspect
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from graders.engine import calls as make
from graders.engine import contrast, history
from graders.engine import observed as conduct_of
from graders.engine.cases import second_cases, varied_calls
from graders.engine.compared import Compared, arguments, comparable, compare, explored
from graders.engine.confirm import confirmed, varying
from graders.engine.contrast import Budget, Failing, disagrees, error_ratio, neighbours_that_pass, passes
from graders.engine.failures import AttemptRaised, CheckFailed
from graders.engine.recorder import Raised, clone
from graders.engine.repros import with_expected, with_refusal, without_unused
from graders.engine.said import Said, family
from graders.engine.sandbox import AttemptGone

CHECKS_LOOKED_AT = 3    # failing checks whose failing call is compared
CALLS = 30              # calls of the attempt an explanation makes at most (a grading makes 200 to 550)
# failures that say what is wrong in their own words: a value kept or shared across calls, an input
# written into, a ValueError due, a memory rule
SAID_BY_THEMSELVES = ("stale", "shared", "mutated", "raises", "memory", "missing", "not_implemented")
MAX_OBSERVED = 4        # sentences in a report at most


@dataclass
class Explanation:
    """What the report says was observed, and the repros rewritten, by check id."""

    said: list[Said] = field(default_factory=list)
    repros: dict[str, str] = field(default_factory=dict)


def explain(failures: list[tuple[str, CheckFailed]], candidate, ref, domain, seconds: float) -> Explanation:
    """The sentences of `Observed:` for a grading's failures, each attached to every failure
    (`failure.explained`) and to the grading (`Grading.explanation`), and the repros that show
    more than the check's own. Never raises: an explanation is a help, never a reason for a
    grading to fail."""
    g = candidate.grading
    marks = (len(g.history), len(g.mutations), len(g.shared))
    record = list(g.history)
    out = Explanation()
    try:
        g.deadline = time.monotonic() + seconds
        with _fresh(candidate) as other, np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = _explained(failures, candidate, other, ref, domain, record, Budget(g, CALLS))
    except (Exception, AttemptGone):  # noqa: BLE001  (an explanation never breaks a grading)
        out = Explanation()
    finally:
        del g.history[marks[0]:], g.mutations[marks[1]:], g.shared[marks[2]:]
        g.deadline = float("inf")
    if not out.said:
        out.said = _conduct(ref, failures)
    elif not any(s.kind not in ("where", "parts") for s in out.said):   # where it shows, not what it is:
        out.said = _conduct(ref, failures[:1]) + out.said[:MAX_OBSERVED - 1]   # what the first failure did, first
    out.said = out.said[:MAX_OBSERVED]
    out.repros = {**_shown(failures, ref), **out.repros}
    g.explanation = out.said
    for _, failure in failures:
        failure.explained = out.said
    return out


@contextlib.contextmanager
def _fresh(candidate):
    """A new process of the attempt, with nothing of the grading's calls behind it."""
    other = candidate.fresh()
    try:
        yield other
    finally:
        other.box.close()


def _explained(failures, candidate, other, ref, domain, record, budget: Budget) -> Explanation:
    looked = failures[:CHECKS_LOOKED_AT]
    found = _history(looked, candidate, other, ref, record)
    if found is not None:
        return found
    return Explanation(_said([(i, f) for i, f in looked if f.kind not in SAID_BY_THEMSELVES], other, ref, domain,
                             budget))


def _history(looked, candidate, other, ref, record) -> Explanation | None:
    """When the first wrong call of the failing checks is right alone: the earlier call it needs."""
    for ident, failure in looked:
        call = next((c for c in reversed(failure.calls) if history.wrong(c, ref) is not None), None)
        if call is None:
            continue
        if not history.right_alone(call, other, ref):
            return None
        earlier = history.shrink(call, record, candidate, ref)
        found = history.explained(call, earlier, ref, candidate.path)
        repros = {ident: found.repro} if found.repro else {}
        return Explanation([Said("history", found.share, found.text)], repros)
    return None


def _said(looked, other, ref, domain, budget: Budget) -> list[Said]:
    """The sentences of the first failing check that says what the answer is, else of the
    first that says what the failure needs or where it shows (and, when the check that says what
    the failure needs shows no relation, where a later one shows it). What a failure needs is asked
    only when no relation says what the answer is on the smallest failing case, and of the first
    failing check only."""
    best: list[Said] = []
    contrasted = False
    for _, failure in looked:
        call = failing_call(failure)
        if call is None or getattr(failure, "rerun", None) is None:
            continue
        one = compare(ref, domain, call, failure.case or {}, every_size=True)
        if one is None:
            continue
        larger = _Larger(_seconds(failure, one, other, ref, domain, budget))
        relations, smallest = _relations(failure, one, larger, other, ref, domain)
        what = [s for s in relations if s.kind not in ("where", "parts")]
        if what and not all(s.weak for s in what) and (smallest or contrasted):
            return what + [s for s in relations if s not in what][:1]
        needs = []
        # a factor that changes from case to case says little, and what only larger cases show says nothing of
        # the smallest one: what the failure needs is asked too (of one check only)
        if not contrasted and disagrees(call, ref):
            contrasted = True
            needs = _needs(failure, one, larger, other, ref, domain, budget)
        if what:
            return needs + what + [s for s in relations if s not in what][:1]
        found = needs + relations
        if needs and not any(s.kind == "needs" for s in best):
            best = found
        elif relations and best and all(s.kind == "needs" for s in best):   # where a later check shows it
            best = best + relations[:2]
        best = best or found
    return best


def _relations(failure, one: Compared, larger, other, ref, domain) -> tuple[list[Said], bool]:
    """The relations of the smallest case confirmed on a second one; else those of two larger
    cases; else those of the weights behind the answer (a probe), on two larger cases. And
    whether the smallest case shows what they say."""
    two = larger.get(0)
    if two is None:
        return [], True
    relations = [_said_of(f) for f in confirmed(one, two)]
    if _says_what(relations) or larger.get(1) is None:
        return relations, True
    on_larger = [_said_of(f, f" [on a larger case: {_described(failure, two)}]")   # the smallest case may be
                 for f in confirmed(two, larger.get(1))]                              # too small
    relations = on_larger if _says_what(on_larger) or not relations else relations
    if not _says_what(relations):  # the weights behind y, when it hides them
        seen = _probed(two, other, ref, domain), _probed(larger.get(1), other, ref, domain)
        if seen[0] is not None and seen[1] is not None:
            probed = [_said_of(f, f" [seen with v = the identity, on a larger case: {_described(failure, two)}]",
                               "the weights") for f in confirmed(*seen)]
            relations = probed if _says_what(probed) or not relations else relations
    return relations, False


def _needs(failure, one: Compared, larger, other, ref, domain, budget: Budget) -> list[Said]:
    """What the failure needs: the neighbours of the smallest case that pass, confirmed on a
    second failing case that keeps the sizes they change; else those of a larger case,
    confirmed on another."""
    passing = neighbours_that_pass(Failing(failure.case, one.call, failure.rerun), other, ref, domain, budget)
    keep = tuple(n.dimension for n in passing if n.on_case is not None)
    kept = _Larger(_seconds(failure, one, other, ref, domain, budget, keep)) if keep else larger
    two = kept.get(0)
    if two is None:
        return []
    at = Failing(two.case, two.call, failure.rerun)
    needs = contrast.said([n for n in passing if passes(n, at, other, ref)])
    if needs or passing or kept.get(1) is None:
        return needs
    again = neighbours_that_pass(at, other, ref, domain, budget)   # too small to show what it needs: two larger
    three = Failing(kept.get(1).case, kept.get(1).call, failure.rerun)
    return [Said(s.kind, s.part, f"{s.text} [on a larger case: {_described(failure, two)}]")
            for s in contrast.said([n for n in again if passes(n, three, other, ref)])]


class _Larger:
    """The second failing cases, made as they are first asked for."""

    def __init__(self, made):
        self.made, self.found = made, []

    def get(self, i: int) -> Compared | None:
        while len(self.found) <= i:
            nxt = next(self.made, None)
            if nxt is None:
                return None
            self.found.append(nxt)
        return self.found[i]


def _probed(c: Compared, other, ref, domain) -> Compared | None:
    """The attention weights behind a failing call's answer, the attempt's beside the reference's:
    the call made again with the domain's probe (graders.engine.probes), None without one."""
    ex = explored(domain, c.call.function)
    probe = ex.probe(clone(arguments(ref, c.call))) if ex is not None and ex.probe is not None else None
    if probe is None:
        return None
    params = list(inspect.signature(getattr(ref, c.call.function)).parameters)
    args = tuple(probe.values[p] for p in params[:len(c.call.args)])
    kwargs = {k: probe.values[k] for k in c.call.kwargs}
    want = make.expected(ref, c.call.function, args, kwargs)
    if want is make.REFUSED:
        return None
    try:
        got = getattr(other, c.call.function)(*args, **kwargs)
    except CheckFailed:
        return None
    G, W = probe.weights(got), probe.weights(want)
    if G is None or W is None or G.shape != W.shape:
        return None
    return Compared(c.call, G, W, {}, c.constants, "the weights", axes={-2: "query positions", -1: "key positions"},
                    masks=("",), case=c.case)


def _said_of(f, note: str = "", part: str | None = None) -> Said:
    """A confirmed relation as a sentence of `Observed:`; weak when its number changes with the case,
    when it says only that two masks differ, or that a single number is 0 (what the check's own
    message says: what the failure needs says more)."""
    weak = varying(f.text) or (f.kind == "mask" and f.detail == ("differs",)) or (f.kind == "zero" and
                                                                                 f.detail == ("scalar",))
    return Said(family(f.kind), f.part if part is None else part, f.text + note, weak)


def _says_what(said: list[Said]) -> bool:
    return any(s.kind not in ("where", "parts") for s in said)


def _described(failure: CheckFailed, c: Compared) -> str:
    return failure.rerun.describe({k: v for k, v in c.case.items() if k != "seed"})


def failing_call(failure: CheckFailed):
    """The last call of the failing case whose answer can be compared, or None."""
    return next((c for c in reversed(failure.calls) if comparable(c)), None)


def _seconds(failure: CheckFailed, one: Compared, other, ref, domain, budget: Budget, keep: tuple = ()):
    """The same failure on cases of other, larger sizes (but those in `keep`, which the failure
    needs), made in `other`: each failing call beside the reference's answer, as they come."""
    rerun = failure.rerun
    made = 0
    for case in second_cases(failure.case, rerun.allows, rerun.frozen, keep):
        if not budget.left():
            return
        again = rerun.attempt(other, case)
        if again is None or not rerun.same(again, failure):
            continue
        call = failing_call(again)
        if call is None or call.function != one.call.function:
            continue
        found = compare(ref, domain, call, case, every_size=True)
        if found is not None:
            made += 1
            yield found
    if made or not budget.left():   # no case of other sizes fails so: the same sizes with other values
        return
    # a failure within the tolerance (an exact 0 that is not) is matched by an answer that differs at all
    least = 1.0 if error_ratio(one.got, one.want, _dtype(one)) > 1 else 0.0
    for args, kwargs in varied_calls(*clone((one.call.args, one.call.kwargs))):  # other values, own objects
        if not budget.left():
            return
        want = make.expected(ref, one.call.function, *clone((args, kwargs)))
        if want is make.REFUSED:
            continue
        try:
            getattr(other, one.call.function)(*args, **kwargs)
        except CheckFailed:
            continue
        call = other.grading.calls[-1]
        found = compare(ref, domain, call, failure.case, every_size=True)
        if found is not None and error_ratio(found.got, found.want, _dtype(found)) > least:
            yield found


def _conduct(ref, failures) -> list[Said]:
    """What a failing call of the first failing checks did that the reference's does not, or what a
    check measured of it (the memory it holds)."""
    for _, failure in failures[:CHECKS_LOOKED_AT]:
        if getattr(failure, "observation", None):
            return [Said(failure.kind, "", failure.observation)]
    for _, failure in failures[:CHECKS_LOOKED_AT]:
        for call in reversed(failure.calls):
            sentence = conduct_of.conduct(ref, call)
            if sentence:
                return [Said("conduct", "", sentence)]
    return []


def _shown(failures, ref) -> dict[str, str]:
    """Each failing check's repro with the reference's answer printed beside the attempt's, and
    NumPy's global samplers refused when the grader's refusal made it fail."""
    out = {}
    for ident, failure in failures:
        repro = getattr(failure, "repro", None)
        if not repro:
            continue
        raised = getattr(failure, "original", None) if isinstance(failure, AttemptRaised) else None
        if isinstance(raised, Raised) and raised.type_name == "GlobalRandomState":
            repro = with_refusal(repro, raised.message)
        call = next((c for c in reversed(failure.calls) if history.wrong(c, ref) is not None), None)
        want = history.wrong(call, ref) if call is not None else None
        if want is not None:
            got = None if isinstance(call.outcome, Raised) else call.outcome
            repro = with_expected(repro, call, want, got)
        repro = without_unused(repro)
        if repro != failure.repro:
            out[ident] = repro
    return out


def _dtype(c: Compared):
    return next((a.dtype for a in c.inputs.values()), np.float64)
