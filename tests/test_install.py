"""An installed copy: `pip install .` (not editable) into a fresh environment adds one
package, attention_katas, and the `kata` command, which works from any folder: start, check
and hint (the hint for the first failing check first), a work folder under the home folder
shown from ~, Tab completion of kata names answered without loading click, and `python -m
attention_katas`. The build leaves nothing in the folder it was installed from."""
from __future__ import annotations

import importlib.util
import os
import shutil
import site
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PARTS = ("__init__.py", "__main__.py", "kata.py", "setup.py", "pyproject.toml", "README.md", "katas", "solutions",
         "graders", "practice")
PROJECT = ("attention_katas", "__editable__", "kata.py", "katas", "solutions", "graders", "practice")


def copy_of_the_repository(to: Path) -> Path:
    """The files an install reads (a build writes beside its sources: not in the repository)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    to.mkdir(parents=True)
    for part in PARTS:
        if (REPO / part).is_dir():
            shutil.copytree(REPO / part, to / part, ignore=ignore)
        else:
            shutil.copy(REPO / part, to / part)
    return to


def fresh_environment(at: Path) -> tuple[Path, Path]:
    """(its python, its site-packages): a new venv that sees this environment's packages
    (NumPy, click, pip, setuptools...) through one .pth file, but nothing of this project."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(at)], check=True, timeout=120)
    python = at / "bin" / "python"
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    deps = at / "deps"
    deps.mkdir()
    for folder in map(Path, site.getsitepackages()):
        for entry in folder.iterdir() if folder.is_dir() else ():
            if not entry.name.startswith(PROJECT) and entry.suffix != ".pth" \
                    and not (deps / entry.name).exists():
                (deps / entry.name).symlink_to(entry)
    (purelib / "_dependencies.pth").write_text(f"{deps}\n")
    return python, purelib


def test_an_installed_copy_is_one_package_and_the_kata_command(tmp_path):
    src = copy_of_the_repository(tmp_path / "src")
    python, purelib = fresh_environment(tmp_path / "venv")
    before, bin_before = set(os.listdir(purelib)), set(os.listdir(python.parent))
    # Without build isolation when this environment can build a wheel itself (much faster).
    isolated = importlib.util.find_spec("wheel") is None
    started = time.monotonic()
    subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-compile", "-q",
                    *([] if isolated else ["--no-build-isolation"]), str(src)],
                   check=True, capture_output=True, timeout=600)
    print(f"pip install took {time.monotonic() - started:.1f} s"
          + (" (isolated build: this environment has no `wheel`)" if isolated else ""))
    assert set(os.listdir(purelib)) - before == {"attention_katas", "attention_katas-0.1.0.dist-info"}
    assert set(os.listdir(python.parent)) - bin_before == {"kata"}
    left = sorted(set(os.listdir(src)) - set(PARTS))  # no build/, no egg-info beside the sources
    assert left == [], left

    home = tmp_path / "home"
    elsewhere = home / "elsewhere"
    elsewhere.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KATA_", "PYTHON", "XDG_")) and k not in ("COLUMNS", "LINES", "FORCE_COLOR")}
    env.update(HOME=str(home), NO_COLOR="1")

    def kata(*args, **more):
        return subprocess.run([str(python.parent / "kata"), *args], cwd=elsewhere, env=dict(env, **more),
                              capture_output=True, text=True, timeout=120)

    started = kata("start", "softmax")
    assert started.returncode == 0, started.stderr
    assert "Edit:  ~/.local/share/attention-katas/softmax.py" in started.stdout
    from graders.engine import bugs

    no_shift = next(b for b in bugs.load("softmax") if b.name == "no_max_shift")
    (home / ".local/share/attention-katas/softmax.py").write_text(no_shift.source)
    checked = kata("check")
    assert checked.returncode == 1 and "✗ stays finite and correct for huge logits" in checked.stdout, \
        checked.stdout + checked.stderr
    hint = kata("hint")  # not the first hint (keepdims): the one about the shift
    assert "Hint 1 of 4 for softmax" in hint.stdout and "exp(1e4) is inf" in hint.stdout, hint.stdout
    assert "✗ stays finite and correct for huge logits" in hint.stdout

    as_module = subprocess.run([str(python), "-m", "attention_katas", "help", "pause"], cwd=elsewhere, env=env,
                               capture_output=True, text=True, timeout=60, check=False)
    assert as_module.returncode == 0 and as_module.stdout.startswith("Usage: kata pause"), as_module.stderr

    dev = kata("dev", "check")  # an installed copy is not the repository the dev commands work on
    assert dev.returncode == 2 and "works in a clone of the repository" in dev.stderr, dev.stdout + dev.stderr

    tab = subprocess.run([str(python), "-X", "importtime", str(python.parent / "kata")], cwd=elsewhere,
                         env=dict(env, _KATA_COMPLETE="bash_complete", COMP_WORDS="kata start so", COMP_CWORD="2"),
                         capture_output=True, text=True, timeout=60)
    assert tab.stdout == "plain,softmax\n"
    assert not [ln for ln in tab.stderr.splitlines() if ln.rstrip().endswith(("| click", "| practice.catalogue"))]

    names = subprocess.run([str(python), "-c", "import sys, attention_katas, importlib.util as u; "
                                               "print(attention_katas.HERE in sys.path, [n for n in "
                                               "('kata', 'katas', 'solutions', 'graders', 'practice') if u.find_spec(n)])"],
                           cwd=elsewhere, env=env, capture_output=True, text=True, timeout=60)
    assert names.stdout.strip() == "False []"  # importing the package changes no path, shows no generic name


def test_the_copy_holds_what_the_install_needs(tmp_path):
    """Every folder of a kata is a package the install finds (setup.py), the catalogue
    included; nothing the tests or benchmarks hold is part of it."""
    src = copy_of_the_repository(tmp_path / "src")
    found = subprocess.run([sys.executable, "-c", "import setuptools, runpy; setuptools.setup = lambda **kw: "
                                                  "print(sorted(kw['packages'])); runpy.run_path('setup.py')"],
                           cwd=src, capture_output=True, text=True, check=True, timeout=60).stdout
    for name in ("attention_katas", "attention_katas.katas", "attention_katas.graders.engine",
                 "attention_katas.graders.softmax.alternatives", "attention_katas.practice"):
        assert f"'{name}'" in found
    assert "tests" not in found and "benchmarks" not in found and "__pycache__" not in found
