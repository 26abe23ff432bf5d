"""`kata dev check`: whether every kata of a repository is whole, and what is wrong where not.

As rustlings' `dev check` and exercism's `configlet lint` do for theirs, it reads, without
grading anything: the catalogue against its schema, every kata's files (stub, reference,
grader, domain, known bugs, alternatives) and nothing orphaned, every follow-up with a model
answer, stub and reference agreeing in signatures and question, no trap phrase in a stub, the
README's table of katas, each grader's plain agreement check, each bug and each hint naming
checks that exist, and each domain covering the explorer's dimensions for the arguments its
functions take and declaring the size each function's cost grows with (the efficiency
measured once every check passes, graders.engine.efficiency). `kata dev new`
(practice.dev_new) writes the files of a new kata, which this then says how to finish.
"""
from __future__ import annotations

import ast
import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from graders.engine.grammar import count
from practice import catalogue

TEMPLATE_MARK = "TODO(kata dev new)"
MIN_BUGS = 6  # a catalogue of known bugs is broad: an interviewer has seen at least this many


@dataclass(frozen=True)
class Fault:
    kata: str       # the kata, or "catalogue", "README.md", "files"
    what: str


def _catalogue(root: Path) -> dict:
    with open(root / "katas" / "catalogue.toml", "rb") as f:
        return tomllib.load(f)


def entries(root: Path) -> list[catalogue.Entry]:
    """The catalogue's entries of the repository at `root` (those with a name)."""
    return [e for e in _catalogue(Path(root)).get("kata", []) if isinstance(e, dict) and isinstance(e.get("name"), str)]


def names(root: Path) -> list[str]:
    """The katas of the repository at `root`, by its own catalogue."""
    return [e["name"] for e in entries(root)]


def check(root: Path) -> list[Fault]:
    """Every fault of the repository at `root`."""
    root = Path(root)
    try:
        data = _catalogue(root)
    except (OSError, tomllib.TOMLDecodeError) as e:
        return [Fault("catalogue", f"katas/catalogue.toml cannot be read: {e}")]
    faults = [Fault(k, w) for k, w in catalogue.problems(data)]
    entries = [e for e in data.get("kata", []) if isinstance(e, dict) and isinstance(e.get("name"), str)]
    names = [e["name"] for e in entries]
    faults += _orphans(root, names)
    groups = [catalogue.GROUPS.index(e["group"]) for e in entries if e.get("group") in catalogue.GROUPS]
    if groups != sorted(groups):
        faults.append(Fault("catalogue", "the katas are not in the order of the path, group by group"))
    for entry in entries:
        faults += [Fault(entry["name"], what) for what in _kata(root, entry)]
        faults += [Fault(entry["name"], f"has {len(entry.get(key) or [])} {key}; a kata needs at least 2")
                   for key in ("hints", "follow_ups") if len(entry.get(key) or []) < 2]
        faults += [Fault(entry["name"], f"its trap {t!r} is not lower case (a stub is searched for it in lower case)")
                   for t in entry.get("traps") or [] if isinstance(t, str) and t != t.lower()]
        faults += [Fault(entry["name"], what) for what in _follow_ups(entry)]
        if entry.get("group") not in catalogue.GROUPS:
            faults.append(Fault(entry["name"], f"has no group of the path ({', '.join(catalogue.GROUPS)})"))
        if TEMPLATE_MARK in repr(entry):
            faults.append(Fault(entry["name"], f"its catalogue entry is still the template ({TEMPLATE_MARK})"))
    faults += _readme(root, entries)
    from practice import dev_update

    for path in dev_update.drift(root, entries):
        rel = path.relative_to(root).as_posix()
        owner = path.stem if path.parent.name in ("katas", "solutions") else "README.md"
        faults.append(Fault(owner, f"{rel} is not what `kata dev update` writes from the catalogue and the "
                                   f"references (run it)"))
    return faults


def _follow_ups(entry: catalogue.Entry) -> list[str]:
    """Every follow-up is a table with a model answer (`kata followups NAME --answers` shows
    it); one answered with a number says what the number counts, for the prompt."""
    out = []
    for i, f in enumerate(entry.get("follow_ups") or [], 1):
        if not isinstance(f, dict) or not str(f.get("answer", "")).strip():
            out.append(f"its follow-up {i} has no model answer (a [[kata.follow_ups]] table with `answer`)")
        elif "number" in f and not str(f.get("unit", "")).strip():
            out.append(f"its follow-up {i} is answered with a number but has no `unit` to ask for it in")
        elif ("unit" in f or "tolerance" in f) and "number" not in f:
            out.append(f"its follow-up {i} has a `unit` or a `tolerance` but no `number`")
    return out


def _orphans(root: Path, names: list[str]) -> list[Fault]:
    known = set(names)
    found = [p.relative_to(root) for folder in ("katas", "solutions") for p in (root / folder).glob("*.py")
             if p.stem != "__init__" and p.stem not in known]
    found += [p.relative_to(root) for p in (root / "graders").iterdir()
              if p.is_dir() and p.name not in known and p.name not in ("engine", "__pycache__")]
    return [Fault("files", f"{p} belongs to no kata of the catalogue") for p in sorted(found)]


def _kata(root: Path, entry: catalogue.Entry) -> list[str]:
    name = entry["name"]
    paths = {"stub": root / "katas" / f"{name}.py", "reference": root / "solutions" / f"{name}.py",
             "grader": root / "graders" / name / "grader.py", "domain": root / "graders" / name / "domain.py",
             "bugs": root / "graders" / name / "bugs.py"}
    out = [f"its {what} {p.relative_to(root)} is missing" for what, p in paths.items() if not p.is_file()]
    out += [f"{p.relative_to(root)} is still the template: {TEMPLATE_MARK} marks what to fill in"
            for p in [*paths.values(), *(root / "graders" / name / "alternatives").glob("*.py")]
            if p.is_file() and TEMPLATE_MARK in p.read_text(encoding="utf-8", errors="replace")]
    alternatives = list((root / "graders" / name / "alternatives").glob("*.py"))
    if len(alternatives) < 2:
        out.append(f"graders/{name}/alternatives holds {len(alternatives)} correct answers; at least 2 are needed")
    if paths["stub"].is_file() and paths["reference"].is_file():
        out += _stub(paths["stub"], paths["reference"], entry)
    if paths["grader"].is_file():
        checks = _check_ids(paths["grader"])
        known = checks | set(explorer_checks())  # what a bug or a hint may name
        out += _grader(checks, known, paths["bugs"])
        out += _hint_checks(entry, known)
    if paths["domain"].is_file() and paths["reference"].is_file():
        out += _domain(name, paths["domain"], paths["reference"])
    return out


def _functions(path: Path) -> dict[str, ast.FunctionDef]:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, ValueError, UnicodeDecodeError) as e:
        return {"<file>": e}
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")}


def _stub(stub: Path, reference: Path, entry: catalogue.Entry) -> list[str]:
    asked, answered = _functions(stub), _functions(reference)
    for path, fns in ((stub, asked), (reference, answered)):
        if "<file>" in fns:
            return [f"{path.name} does not parse: {fns['<file>']}"]
    out = []
    if set(asked) != set(answered):
        out.append(f"the stub defines {sorted(asked)} and the reference {sorted(answered)}")
    for fname in sorted(set(asked) & set(answered)):
        s, r = asked[fname], answered[fname]
        if ast.dump(s.args) != ast.dump(r.args):
            out.append(f"`{fname}` takes other arguments in the stub than in the reference")
        doc = ast.get_docstring(r, clean=False) or ""
        if ast.get_docstring(s, clean=False) != doc:
            out.append(f"`{fname}`: the stub's docstring is not the reference's (both are the question)")
        if len(doc) < 200:
            out.append(f"`{fname}`: the docstring is too short to be the interview question")
        if not (isinstance(s.body[-1], ast.Raise) and "NotImplementedError" in ast.unparse(s.body[-1])):
            out.append(f"`{fname}` in the stub does not end in `raise NotImplementedError`")
        budgets = [int(m) for m in re.findall(r"Time budget: (\d+) minutes", doc)]
        if budgets and budgets[0] != entry.get("minutes"):
            out.append(f"`{fname}` says {budgets[0]} minutes, the catalogue {entry.get('minutes')}")
    docs = [ast.get_docstring(n) or "" for n in ast.walk(ast.parse(stub.read_text(encoding="utf-8")))
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef))]
    if not any("Time budget" in d for d in docs):
        out.append("the stub states no 'Time budget: N minutes'")
    out += [f"the stub gives a trap away: {trap!r} (it belongs in the hints)"
            for trap in entry.get("traps", []) if isinstance(trap, str) and any(trap in d.lower() for d in docs)]
    return out


def explorer_checks() -> tuple[str, ...]:
    """The ids of the explorer's checks, which a bug or a hint may name too."""
    from graders.engine.explorer import CHECK_IDS

    return CHECK_IDS


def _check_ids(grader: Path) -> set[str]:
    """The ids of the grader's own checks: its @check functions' names."""
    tree = ast.parse(grader.read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and any(
        isinstance(d, ast.Call) and getattr(d.func, "id", "") == "check" for d in n.decorator_list)}


def _hint_checks(entry: catalogue.Entry, known: set[str]) -> list[str]:
    """Every hint names the checks it helps with, and each of them exists."""
    hints, lists = entry.get("hints") or [], entry.get("hint_checks")
    if not isinstance(lists, list):
        return ["has no `hint_checks` (for each hint, the ids of the checks it helps with)"]
    out = [] if len(lists) == len(hints) else [
        f"has {count(len(hints), 'hint')} and {count(len(lists), 'list')} of `hint_checks`: one list for each hint"]
    for n, ids in enumerate(lists, 1):
        if isinstance(ids, list) and not ids:
            out.append(f"hint {n} names no check it helps with (`hint_checks`)")
        out += [f"hint {n} names the check {i!r}, which the grader does not have"
                for i in (ids if isinstance(ids, list) else []) if isinstance(i, str) and i not in known]
    return out


def _grader(checks: set[str], known: set[str], bugs: Path) -> list[str]:
    out = [] if "agrees" in checks else ["its grader has no check `agrees` (plain agreement with the reference)"]
    if not bugs.is_file():
        return out
    btree = ast.parse(bugs.read_text(encoding="utf-8"))
    assigned = {t.id for n in btree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    out += [f"its bugs.py defines no {name}" for name in ("BASE", "BUGS", "NEAR_MISSES") if name not in assigned]
    named = [c.args[0].value for node in btree.body if isinstance(node, ast.Assign)
             and any(getattr(t, "id", "") == "BUGS" for t in node.targets)
             for c in ast.walk(node.value) if isinstance(c, ast.Call) and getattr(c.func, "id", "") == "Bug"
             and c.args and isinstance(c.args[0], ast.Constant)]
    if len(named) < MIN_BUGS:
        out.append(f"its bugs.py knows {count(len(named), 'bug')}; an interviewer has seen at least {MIN_BUGS}")
    out += [f"its bugs.py names the bug {b!r} twice" for b in sorted({b for b in named if named.count(b) > 1})]
    for call in ast.walk(btree):
        if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "Bug" and len(call.args) >= 2 and \
                all(isinstance(a, ast.Constant) for a in call.args[:2]):
            bug, fails = call.args[0].value, call.args[1].value
            if fails not in known:
                out.append(f"its bug {bug!r} names the check {fails!r}, which the grader does not have")
    return out


def _domain(name: str, path: Path, reference: Path) -> list[str]:
    try:
        domain = _load(f"_dev_domain_{name}", path).DOMAIN
    except Exception as e:  # a domain that does not load is a fault to report, not a crash
        return [f"graders/{name}/domain.py does not load: {type(e).__name__}: {e}"]
    functions = _functions(reference)
    declared = {ex.function: ex for ex in domain.functions}
    out = [f"its domain declares no `{f}`" for f in functions if f not in declared]
    out += [f"its domain declares `{f}`, which the reference does not define" for f in declared if f not in functions]
    source = reference.read_text(encoding="utf-8")
    for fname, node in functions.items():
        ex = declared.get(fname)
        if ex is not None:
            out += [f"`{fname}`: {what}" for what in _coverage(ex, node, ast.get_source_segment(source, node) or "")]
    return out


def _coverage(ex, node: ast.FunctionDef, code: str) -> list[str]:
    """What the explorer cannot range over for this function, given the arguments it takes."""
    out = []
    doc = ast.get_docstring(node) or ""
    params = [a.arg for a in node.args.args]
    defaults = dict(zip(params[len(params) - len(node.args.defaults):], node.args.defaults))
    if not ex.dims:
        out.append("the domain names no sizes to explore")
    if "(..." in doc and not ex.lead:
        out.append("takes leading axes ('(...') but the domain explores none (lead=0)")
    if "axis" in params and ex.axis is None:
        out.append("takes an axis but the domain does not range over it (axis=...)")
    if not ex.families and not ex.scalars:
        out.append("the domain explores no special values and no scalar at the ends of its range")
    for param, default in defaults.items():
        value = default.value if isinstance(default, ast.Constant) else None
        if isinstance(value, (int, float)) and param not in ex.scalars:
            out.append(f"the domain does not explore `{param}` (scalars={{'{param}': (...)}})")
    if "raise ValueError" in code and not ex.invalid:
        out.append("raises ValueError in the reference but the domain declares no invalid call")
    if not ex.big:
        out.append("the domain has no case past a cheap boundary (big=...)")
    return out + _growth(ex) + _adversary(ex, params, defaults)


def _growth(ex) -> list[str]:
    """What the efficiency cannot measure: a function that takes arrays (whose sizes grow)
    with no main size declared (grows=...), and each size declared that does not give valid
    calls at sizes growing by one factor."""
    from graders.engine.explorer import base_case
    from graders.engine.inputs import Inputs

    try:
        plain = base_case(ex, 0)
        values = ex.draw(Inputs(0), plain)
    except Exception as e:  # a domain whose plain case cannot be drawn is a fault to report, not a crash
        return [f"its plain case cannot be drawn: {type(e).__name__}: {e}"]
    out = []
    if not ex.grows and any(_arrays(v) for v in values.values()):
        out.append("takes arrays, but the domain declares no size its cost grows with (grows=(Grows(...),))")
    for g in ex.grows:
        sizes = list(g.sizes)
        factors = {b / a for a, b in zip(sizes, sizes[1:]) if a > 0}
        if len(sizes) < 2 or len(factors) != 1 or min(factors) <= 1:
            out.append(f"grows {g.name}: its sizes {sizes} do not grow by one factor (2 or more sizes, each "
                       f"the one before times the same number)")
        if not g.name or not g.unit:
            out.append("grows: a size needs a name and a unit (\"T\", \"position\")")
        for n in sizes:
            try:
                valid = ex.allows(dict(plain, **g.case(n)))
            except Exception:
                valid = False
            if not valid:
                out.append(f"grows {g.name}: the case at {g.name} = {n} is not a valid call")
    return out


def _adversary(ex, params: list[str], defaults: dict) -> list[str]:
    """What the explorer as an adversary needs declared: the pairs of factors that interact (each
    a factor of the case), the contract's words for every limit, the unbounded parameters, a
    case that draws many numbers where a default is random, and modes that make valid cases."""
    from graders.engine.explorer import base_case
    from graders.engine.palettes import palettes

    out = []
    factors = palettes(ex)
    if not ex.pairs:
        out.append("the domain declares no pairs of factors that interact (pairs=((..., ...), ...))")
    for a, b in ex.pairs:
        out += [f"its pair ({a!r}, {b!r}) names {f!r}, which is not a factor of its cases ({', '.join(factors)})"
                for f in (a, b) if f not in factors]
    out += [f"the domain cites no words of the contract for the limits of `{k}` (cites={{'{k}': ...}})"
            for k in [*ex.dims, *ex.scalars] if not ex.cites.get(k)]
    out += [f"`{p}` has no upper bound in the contract, but the domain does not explore 2**31 and 10**12 "
            f"(counts=('{p}',))" for p in ("block_size", "window") if p in params and p not in ex.counts]
    randomized = [p for p, d in defaults.items() if isinstance(d, ast.Constant) and d.value is None and p == "rng"]
    if randomized and not ex.random:
        out.append(f"`{randomized[0]}` defaults to fresh randomness, but the domain gives no case that draws many "
                   f"numbers (random={{...}}), so two new processes are not compared")
    for mode in ex.modes:
        try:
            made = mode.make(dict(base_case(ex, 4)))
            fine = made is None or ex.allows(made)
        except Exception:  # noqa: BLE001  (a mode that fails is a fault to report)
            fine = False
        if not fine:
            out.append(f"its mode {mode.name!r} makes no case the domain allows")
    return out


def _arrays(value) -> bool:
    """Whether a drawn argument is an array, or holds one (a list of experts' weights, a cache)."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return True
    if isinstance(value, (list, tuple)):
        return any(_arrays(v) for v in value)
    if isinstance(value, dict):
        return any(_arrays(v) for v in value.values())
    return False


def _load(module_name: str, path: Path):
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(module_name, None)
    return module


def _readme(root: Path, entries: list[catalogue.Entry]) -> list[Fault]:
    try:
        text = (root / "README.md").read_text(encoding="utf-8")
    except OSError:
        return [Fault("README.md", "there is no README.md")]
    rows = re.findall(r"^\| `(\w+)` \|.*\| (\w+) \| (\d+) \|\s*$", text, re.M)
    out = []
    table = {name: (level, int(minutes)) for name, level, minutes in rows}
    for e in entries:
        if e["name"] not in table:
            out.append(Fault("README.md", f"the table of katas has no row for {e['name']}"))
        elif table[e["name"]] != (e.get("difficulty"), e.get("minutes")):
            out.append(Fault("README.md", f"the row of {e['name']} says {table[e['name']][0]}, "
                                          f"{table[e['name']][1]} min; the catalogue {e.get('difficulty')}, "
                                          f"{e.get('minutes')} min"))
    out += [Fault("README.md", f"the table of katas has a row for {n}, which the catalogue does not know")
            for n in table if n not in {e["name"] for e in entries}]
    if [n for n, _, _ in rows if n in {e["name"] for e in entries}] != [e["name"] for e in entries if e["name"] in table]:
        out.append(Fault("README.md", "the table of katas is not in the catalogue's order"))
    return out
