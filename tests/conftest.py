"""Fixtures for the command-line tests: a work folder, a clock that tests move by hand,
a stand-in grader and stand-in stubs, so these tests never sleep and never depend on a
real grader (tests/test_cli_round.py runs the real ones)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

T0 = 1_750_000_000.0  # a fixed "now" for the clock
TERMINAL_ENV = ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES", "TERM")


class FakeClock:
    def __init__(self, t: float = T0):
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


def stand_in_report(kata: str, path, source: bytes | None = None):
    """A report of the real type, decided by markers in the file's bytes (`source`, as the
    caller read them, else the file): NotImplementedError, `# PASS`, else a failure with a
    message, a repro and a diagnosis."""
    from graders.engine.report import CheckResult, Report, Status

    raw = Path(path).read_bytes() if source is None else source
    code = raw.decode("utf-8", errors="replace")
    ok = [CheckResult("output shapes", Status.PASSED, id="shape"),
          CheckResult("agrees with the reference", Status.PASSED, id="agrees"),
          CheckResult("rows sum to 1", Status.PASSED, id="sums_to_one")]
    if "# PASS" in code:
        return Report(kata, ok, stdout="", seconds=0.01)
    if "raise NotImplementedError" in code:
        return Report(kata, [CheckResult(
            "implemented", Status.NOT_IMPLEMENTED,
            f"not implemented yet: `{kata}` still raises NotImplementedError", function=kata)],
            seconds=0.01)
    return Report(kata, [
        ok[0],
        CheckResult("rows sum to 1", Status.FAILED, "weights row 3 sums to 0.74, expected 1",
                    "import numpy as np\nx = np.ones((1, 4, 8))\nf(x)", "sums_to_one", kata),
        CheckResult("agrees with the reference", Status.FAILED, "largest difference 0.31",
                    id="agrees", function=kata)],
        "future weights zeroed after the softmax without renormalising", seconds=0.01,
        observed=["the weights are the reference's with the future zeroed"])


def make_tree(root: Path) -> Path:
    """Stand-in stubs and references for every kata under root/katas and root/solutions."""
    from practice import catalogue

    for k in catalogue.katas():
        stub = root / "katas" / f"{k.name}.py"
        ref = root / "solutions" / f"{k.name}.py"
        stub.parent.mkdir(parents=True, exist_ok=True)
        ref.parent.mkdir(parents=True, exist_ok=True)
        doc = f'"""{k.title}.\n\nQUESTION {k.name}: write it with NumPy."""'
        stub.write_text(f"{doc}\nimport numpy as np\n\n\ndef {k.name}(x):\n"
                        f'    """Shapes: (T, d) -> (T, d)."""\n    raise NotImplementedError\n')
        ref.write_text(f"{doc}\nimport numpy as np\n\n\ndef {k.name}(x):\n"
                       f'    """Shapes: (T, d) -> (T, d)."""\n    return x * 1.0  # PASS\n')
    return root


def install_stand_ins(root: Path, calls: list | None = None) -> None:
    """Point the catalogue at a stand-in tree and grade with the stand-in (used in-process
    through monkeypatch, and by subprocesses started with `stand_in_command`)."""
    from practice import catalogue, grading

    catalogue.ROOT = Path(root)

    def grade(kata, path, source=None, progress=None):
        from graders.engine.report import Report

        if calls is not None:
            calls.append((kata, str(path)))
        report = Report.from_dict(stand_in_report(kata, path, source).to_dict())  # as sent by the grading process
        for check in report.checks if progress else ():
            progress(check)
        return report

    grading.grade = grade
    grading.prepare = lambda hints=(): None  # nothing to start: the stand-in grades in-process


def stand_in_command(root: Path, *args: str) -> list[str]:
    """argv that runs the real `kata` command in a new process with the stand-ins (their
    source is copied in, so the child does not pay for importing pytest)."""
    import inspect

    src = "\n".join(inspect.getsource(f) for f in (stand_in_report, install_stand_ins))
    code = (f"import sys\nsys.path.insert(0, {str(REPO)!r})\nfrom pathlib import Path\n"
            f"{src}\ninstall_stand_ins({str(root)!r})\n"
            "import kata\nkata.cli(prog_name='kata')\n")
    return [sys.executable, "-c", code, *args]


class KataEnv:
    """One user's world: KATA_HOME in tmp_path, a fake clock, the stand-in grader."""

    def __init__(self, home: Path, root: Path, clock: FakeClock, calls: list):
        self.home, self.root, self.clock, self.calls = home, root, clock, calls

    def run(self, *args: str, input: str | None = None, env: dict | None = None):
        from click.testing import CliRunner

        import kata

        try:
            runner = CliRunner(mix_stderr=False)
        except TypeError:  # click >= 8.2 always keeps stderr apart
            runner = CliRunner()
        result = runner.invoke(kata.cli, list(args), input=input, env=env,
                               catch_exceptions=True, prog_name="kata")
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception  # a traceback for the user is a bug: fail loudly
        return result

    def attempt(self, name: str) -> Path:
        return self.home / f"{name}.py"

    def write(self, name: str, text: str) -> Path:
        p = self.attempt(name)
        p.write_text(text)
        return p

    def db(self):
        import sqlite3

        con = sqlite3.connect(self.home / "kata.sqlite3")
        con.row_factory = sqlite3.Row
        return con


@pytest.fixture
def kenv(tmp_path, monkeypatch) -> KataEnv:
    from graders.engine.report import Report
    from practice import catalogue, clock, grading

    home = tmp_path / "home"
    root = make_tree(tmp_path / "tree")
    fake = FakeClock()
    calls: list = []
    monkeypatch.setenv("KATA_HOME", str(home))
    for name in TERMINAL_ENV + ("KATA_FAULT",):  # output as to a pipe, whatever runs the tests
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(clock, "now", fake)
    monkeypatch.setattr(catalogue, "ROOT", root)

    def grade(kata, path, source=None, progress=None):
        calls.append((kata, str(path)))
        report = Report.from_dict(stand_in_report(kata, path, source).to_dict())  # as sent by the grading process
        for check in report.checks if progress else ():
            progress(check)
        return report

    monkeypatch.setattr(grading, "grade", grade)
    monkeypatch.setattr(grading, "prepare", lambda hints=(): None)
    return KataEnv(home, root, fake, calls)


@pytest.fixture
def subprocess_env(tmp_path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("KATA_") and k not in TERMINAL_ENV}
    env["KATA_HOME"] = str(tmp_path / "home")
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["NO_COLOR"] = "1"
    return env


def pytest_addoption(parser):
    parser.addoption("--kata", action="append", default=[], metavar="NAME",
                     help="run only the tests about this kata (its grader, bugs, near misses, alternatives, "
                          "stub, reference and prompt); may be given more than once")


def pytest_collection_modifyitems(config, items):
    wanted = set(config.getoption("--kata"))
    if not wanted:
        return
    from kata_files import kata_for_alternative

    def about(item) -> str | None:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "kata" in params:
            return params["kata"]
        if "path" in params:
            return kata_for_alternative(Path(params["path"]))
        return None

    keep = [item for item in items if about(item) in wanted]
    config.hook.pytest_deselected(items=[item for item in items if item not in keep])
    items[:] = keep


# Figures of the standard each kata is held to, printed at the end of a run (tests/kata_figures.py).
import kata_figures  # noqa: E402
from kata_figures import pytest_terminal_summary, pytest_unconfigure  # noqa: E402,F401


def pytest_configure(config):
    kata_figures.pytest_configure(config)
    if not hasattr(config, "workerinput"):  # once, in the process that runs the others
        _compile_sources()
    if getattr(config.option, "dist", "no") == "load":
        # a worker that is done takes tests from the others' queues: no long test left alone at the end
        config.option.dist = "worksteal"


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, unknown without it
def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one test process more than there are cores. Some tests mostly wait (a time
    limit running out, `kata` processes starting); the one more keeps the cores busy then.
    PYTEST_XDIST_AUTO_NUM_WORKERS still decides when it is set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return (os.cpu_count() or 1) + 1


def _compile_sources() -> None:
    """Write the project's bytecode once: the hundreds of `kata` and grading processes the
    tests start then read it instead of compiling the same sources each time (they do not
    write it themselves where PYTHONDONTWRITEBYTECODE is set)."""
    import compileall

    for part in ("kata.py", "practice", "graders", "solutions", "katas"):
        path = REPO / part
        if path.is_dir():
            compileall.compile_dir(str(path), quiet=1)
        else:
            compileall.compile_file(str(path), quiet=1)
