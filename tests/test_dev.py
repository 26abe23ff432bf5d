"""`kata dev check` holds the repository to what a kata needs, and `kata dev new` starts one."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from practice import dev, dev_new

ROOT = Path(__file__).resolve().parent.parent


def _copy(tmp_path: Path) -> Path:
    """The repository's katas, solutions, graders, practice, catalogue and README, copied."""
    root = tmp_path / "repo"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in ("katas", "solutions", "graders", "practice"):
        shutil.copytree(ROOT / part, root / part, ignore=ignore)
    for part in ("kata.py", "README.md"):
        shutil.copy(ROOT / part, root / part)
    return root


def _faults(root: Path) -> list[str]:
    return [f"{f.kata}: {f.what}" for f in dev.check(root)]


def test_a_missing_catalogue_key_is_named_with_its_kata(tmp_path):
    root = _copy(tmp_path)
    toml = root / "katas" / "catalogue.toml"
    text = toml.read_text()
    start = text.index('name = "rope"')
    toml.write_text(text[:start] + text[start:].replace("difficulty = ", "level = ", 1))
    faults = _faults(root)
    assert "rope: has no `difficulty` (one of easy, medium, hard)" in faults, faults
    assert "rope: has a key the catalogue does not know: `level`" in faults, faults


def test_a_narrow_catalogue_of_bugs_and_a_name_given_twice_are_named(tmp_path):
    root = _copy(tmp_path)
    bugs = root / "graders" / "swiglu" / "bugs.py"
    text = bugs.read_text()
    names = re.findall(r'^    Bug\("([a-z_]+)"', text, flags=re.M)
    bugs.write_text(text.replace(f'Bug("{names[1]}"', f'Bug("{names[0]}"', 1))
    assert f"swiglu: its bugs.py names the bug {names[0]!r} twice" in _faults(root)
    starts = [m.start() for m in re.finditer(r"^    Bug\(", text, flags=re.M)]
    bugs.write_text(text[:starts[5]] + text[text.index("\n]", starts[5]) + 1:])  # the first five bugs only
    assert "swiglu: its bugs.py knows 5 bugs; an interviewer has seen at least 6" in _faults(root)


def test_a_missing_solution_is_named_with_its_kata(tmp_path):
    root = _copy(tmp_path)
    (root / "solutions" / "swiglu.py").unlink()
    assert "swiglu: its reference solutions/swiglu.py is missing" in _faults(root)


def test_a_trap_copied_into_a_stub_is_named_and_the_command_exits_1(tmp_path):
    root = _copy(tmp_path)
    stub = root / "katas" / "softmax.py"
    stub.write_text(stub.read_text().replace("Time budget:", "Hint: subtract the max first.\n\n    Time budget:", 1))
    run = subprocess.run([sys.executable, "kata.py", "dev", "check"], cwd=root, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 1
    assert "softmax: the stub gives a trap away: 'subtract the max'" in run.stdout, run.stdout


def test_an_orphan_and_a_readme_row_out_of_step_are_named(tmp_path):
    root = _copy(tmp_path)
    (root / "solutions" / "lost.py").write_text("x = 1\n")
    readme = root / "README.md"
    readme.write_text(readme.read_text().replace("| `rms_norm(x, weight, eps=1e-6)` | easy | 10 |",
                                                 "| `rms_norm(x, weight, eps=1e-6)` | easy | 12 |"))
    faults = _faults(root)
    assert "files: solutions/lost.py belongs to no kata of the catalogue" in faults
    assert any(f.startswith("README.md: the row of rms_norm says easy, 12 min") for f in faults), faults


def test_a_new_kata_is_written_from_templates_and_dev_check_says_what_is_left(tmp_path):
    root = _copy(tmp_path)
    written = dev_new.new(root, "mini_kata", minutes=15)
    assert root / "graders" / "mini_kata" / "domain.py" in written
    assert dev_new.existing(root, "mini_kata")  # dev new refuses it from now on (a usage error)
    mine = [f for f in _faults(root) if f.startswith("mini_kata:") or "mini_kata" in f]
    assert "mini_kata: katas/mini_kata.py is still the template: TODO(kata dev new) marks what to fill in" in mine
    assert "README.md: the table of katas has no row for mini_kata" in mine
    assert "mini_kata: its catalogue entry is still the template (TODO(kata dev new))" in mine


@pytest.mark.parametrize("key", ["minutes", "hints"])
def test_the_catalogue_refuses_to_load_without_a_key_and_says_which(tmp_path, key):
    from practice import catalogue

    data = {"kata": [{"name": "softmax", "title": "x", "group": "attention", "difficulty": "easy", "minutes": 10,
                      "hints": ["a", "b"], "follow_ups": ["a", "b"]}]}
    del data["kata"][0][key]
    [(kata, what)] = catalogue.problems(data)
    assert kata == "softmax" and what.startswith(f"has no `{key}`")


def test_a_follow_up_without_a_model_answer_is_named(tmp_path):
    for folder in ("katas", "solutions", "graders"):
        (tmp_path / folder).mkdir()
    (tmp_path / "katas" / "catalogue.toml").write_text(
        '[[kata]]\nname = "mini"\ntitle = "Mini"\ngroup = "block"\ndifficulty = "easy"\nminutes = 5\n'
        'hints = ["a", "b"]\n\n[[kata.follow_ups]]\nquestion = "Why?"\n\n'
        '[[kata.follow_ups]]\nquestion = "How many?"\nanswer = "Four."\nnumber = 4\n')
    faults = _faults(tmp_path)
    assert "mini: its follow-up 1 has no model answer (a [[kata.follow_ups]] table with `answer`)" in faults
    assert "mini: its follow-up 2 is answered with a number but has no `unit` to ask for it in" in faults


def test_dev_works_on_the_clone_it_is_run_in_whichever_copy_of_kata_runs_it(tmp_path):
    root = _copy(tmp_path)
    (root / "solutions" / "swiglu.py").unlink()
    here = subprocess.run([sys.executable, str(ROOT / "kata.py"), "dev", "check"], cwd=root / "graders",
                          capture_output=True, text=True, timeout=60)
    assert here.returncode == 1 and "swiglu: its reference solutions/swiglu.py is missing" in here.stdout, here.stdout
    nowhere = subprocess.run([sys.executable, str(ROOT / "kata.py"), "dev", "check"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=60)
    assert nowhere.returncode == 2 and "works in a clone of the repository" in nowhere.stderr, nowhere.stderr


def test_dev_new_refuses_a_kata_that_exists(tmp_path):
    root = _copy(tmp_path)
    before = sorted(p.name for p in (root / "graders" / "softmax" / "alternatives").iterdir())
    run = subprocess.run([sys.executable, "kata.py", "dev", "new", "softmax"], cwd=root, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 2 and "there is a kata softmax already" in run.stderr, run.stderr
    assert sorted(p.name for p in (root / "graders" / "softmax" / "alternatives").iterdir()) == before


def test_dev_update_writes_what_is_derived_and_dev_check_reports_drift(tmp_path):
    root = _copy(tmp_path)

    def kata(*args):
        return subprocess.run([sys.executable, "kata.py", "dev", *args], cwd=root, capture_output=True, text=True,
                              timeout=60)

    toml = root / "katas" / "catalogue.toml"
    text = toml.read_text()
    start = text.index('name = "softmax"')
    toml.write_text(text[:start] + text[start:].replace("minutes = 10", "minutes = 12", 1))
    reference = root / "solutions" / "rope.py"
    reference.write_text(reference.read_text().replace("), half-split pairing", "), the half-split pairing", 1))
    check = kata("check")
    assert check.returncode == 1
    for what in ("softmax: solutions/softmax.py is not what `kata dev update` writes",
                 "softmax: katas/softmax.py is not what `kata dev update` writes",
                 "README.md: README.md is not what `kata dev update` writes",
                 "rope: katas/rope.py is not what `kata dev update` writes"):
        assert what in check.stdout, check.stdout
    update = kata("update")
    assert update.returncode == 0 and "wrote katas/rope.py" in update.stdout, update.stdout
    assert kata("check").returncode == 0
    assert "Time budget: 12 minutes." in (root / "katas" / "softmax.py").read_text()
    assert "Time budget: 12 minutes." in (root / "solutions" / "softmax.py").read_text()
    assert "| easy | 12 |" in (root / "README.md").read_text()
    assert "(RoPE), the half-split pairing" in (root / "katas" / "rope.py").read_text()
    assert kata("update").stdout.strip() == "every derived file is up to date"


def test_a_function_that_takes_arrays_must_say_what_its_cost_grows_with(tmp_path):
    root = _copy(tmp_path)
    domain = root / "graders" / "softmax" / "domain.py"
    text = domain.read_text()
    declared = '    grows=(Grows("N", "row", lambda n: {"m": n, "n": 8, "lead": 1, "axis": -1}),),\n'
    assert declared in text
    domain.write_text(text.replace(declared, ""))
    assert "softmax: `softmax`: takes arrays, but the domain declares no size its cost grows with " \
           "(grows=(Grows(...),))" in _faults(root)
    domain.write_text(text.replace("lambda n: {\"m\": n, \"n\": 8, \"lead\": 1, \"axis\": -1}),",
                                   "lambda n: {\"m\": n, \"n\": 8, \"lead\": 1, \"axis\": -1}, (32, 64, 100)),"))
    faults = _faults(root)
    assert "softmax: `softmax`: grows N: its sizes [32, 64, 100] do not grow by one factor (2 or more sizes, each " \
           "the one before times the same number)" in faults
    domain.write_text(text.replace('"lead": 1, "axis": -1}', '"lead": 1, "axis": 5}'))
    assert "softmax: `softmax`: grows N: the case at N = 32 is not a valid call" in _faults(root)


def test_a_domain_without_what_the_adversary_needs_is_named(tmp_path):
    """A domain that declares no pairs, cites nothing for a limit, names a pair of no factor, does
    not explore an unbounded parameter at 2**31 and 10**12, or gives a random default no case
    that draws many numbers: each is named."""
    root = _copy(tmp_path)
    for name, edits in {
        "softmax": [('    pairs=(("values", "axis"), ("values", "lead"), ("values", "dtype"), ("n", "values"), '
                     '("axis", "numbers")),\n', '    pairs=(("values", "colour"),),\n'),
                    ('"m": SIZES_OF_ONE,', '')],
        "flash_attention": [('    counts=("block_size",),\n', '')],
        "top_p": [('            random={"m": 4096, "lead": 1, "values": "normal", "temperature": 1.0, "top_p": 1.0},\n',
                   '')],
        "rms_norm": [('    pairs=(("eps", "values"), ("eps", "numbers"), ("values", "dtype"), ("d", "values"), '
                      '("values", "lead")),\n', '')],
    }.items():
        path = root / "graders" / name / "domain.py"
        text = path.read_text()
        for old, new in edits:
            assert old in text, (name, old)
            text = text.replace(old, new)
        path.write_text(text)
    faults = _faults(root)
    assert any(f.startswith("softmax: `softmax`: its pair ('values', 'colour') names 'colour'") for f in faults), faults
    assert "softmax: `softmax`: the domain cites no words of the contract for the limits of `m` (cites={'m': ...})" \
        in faults, faults
    assert any(f.startswith("flash_attention: `flash_attention`: `block_size` has no upper bound") for f in faults)
    assert any(f.startswith("top_p: `sample_top_p`: `rng` defaults to fresh randomness") for f in faults), faults
    assert "rms_norm: `rms_norm`: the domain declares no pairs of factors that interact (pairs=((..., ...), ...))" \
        in faults, faults
