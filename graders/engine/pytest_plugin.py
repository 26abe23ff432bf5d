"""Plain pytest runs a grader, for people who live in their editor's test runner.

    pytest graders/softmax/grader.py                 # grades the reference solution
    pytest graders/softmax/grader.py --impl my.py    # grades my.py

Each check of the grader is one test item, in the grader's order, with the checks marked
slow last (skipped once another check has failed, as `kata check` does). The attempt runs
in its own process here too (graders/engine/sandbox.py), restarted after a check that
hangs or crashes it; the checks and the reference run in pytest's process. A failing
check reports its own message and repro, not a traceback of the grader.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from graders.engine import files, grammar, judge, sandbox
from graders.engine.failures import CheckFailed, NotApplicable
from graders.engine.harness import static_checks
from graders.engine.limits import check_seconds, load_seconds
from graders.engine.recorder import Candidate, Grading


def pytest_addoption(parser):
    parser.addoption("--impl", action="store", default=None,
                     help="the attempt to grade (default: the kata's reference solution); a folder "
                          "grades FOLDER/KATA.py against each kata's grader")


def pytest_collect_file(file_path: Path, parent):
    if file_path.name == "grader.py" and file_path.parent.parent == files.GRADERS \
            and files.has_grader(file_path.parent.name):
        return GraderFile.from_parent(parent, path=file_path)
    return None


class GraderFile(pytest.File):
    """graders/KATA/grader.py: one item per check, the slow ones last."""

    def collect(self):
        self.kata = self.path.parent.name
        self.session_state = None
        self.failed = False
        self.failed_ids: set[str] = set()
        tests = judge.checks_of(files.grader(self.kata))
        for test in [t for t in tests if not t.slow] + [t for t in tests if t.slow]:
            item = CheckItem.from_parent(self, name=test.__name__, check=test)
            # a backstop only: the sandbox enforces each check's limit from outside
            item.add_marker(pytest.mark.timeout((test.timeout or check_seconds()) + 30))
            yield item

    def state(self) -> tuple:
        """(sandbox, path graded, why it cannot run or "", candidate): started on first use."""
        if self.session_state is None:
            path = Path(self.config.getoption("--impl") or files.reference_path(self.kata)).resolve()
            if path.is_dir():
                path = path / f"{self.kata}.py"
            source = path.read_bytes()
            problem = "; ".join(c.message for c in static_checks(source, str(path)))
            box = sandbox.Sandbox(source, str(path), self.kata, getattr(files.grader(self.kata), "WORKER_SETUP", ()))
            self.session_state = (box, path, problem, Candidate(box, [], str(path), Grading()))
            self.session.config.add_cleanup(box.close)
        return self.session_state


class CheckItem(pytest.Item):
    def __init__(self, *, check, **kwargs):
        super().__init__(**kwargs)
        self.check = check

    def runtest(self):
        parent: GraderFile = self.parent
        box, path, problem, candidate = parent.state()
        if problem:
            pytest.fail(problem, pytrace=False)
        if self.check.slow and parent.failed:
            pytest.skip(f"not run: it runs once every other check passes ({self.check.slow})")
        blocked = [a for a in self.check.after if a in parent.failed_ids]
        if blocked:
            pytest.skip(f"not run: it runs once {' and '.join(blocked)} {grammar.verb(len(blocked), 'passes', 'pass')}")
        if box.gone is not None or box.chan is None:
            box.start()
            try:
                box.wait_loaded(time.monotonic() + load_seconds(check_seconds()))
            except sandbox.AttemptGone as exc:
                pytest.fail(f"the file does not load: {exc.message}", pytrace=False)
            failure = judge.loaded_message(box.loaded)
            if failure:
                pytest.fail(failure, pytrace=False)
            candidate.functions = set(box.functions)
        candidate.grading.deadline = time.monotonic() + (self.check.timeout or check_seconds())
        try:
            self.check(candidate, files.reference(parent.kata))
        except NotApplicable as exc:
            pytest.skip(f"nothing to check: {exc}")
        except BaseException as exc:
            if not isinstance(exc, pytest.skip.Exception):
                parent.failed = True
                parent.failed_ids.add(self.check.__name__)
            raise

    def repr_failure(self, excinfo, style=None):
        text = _failure_text(excinfo.value, self.parent.state()[3])
        return text if text is not None else super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"{self.parent.kata}: {self.check.check_name}"


def _failure_text(exc: BaseException, candidate: Candidate) -> str | None:
    """What a failed check says under pytest: its message and repro, or how the attempt's
    process stopped. None for anything else."""
    if isinstance(exc, CheckFailed):
        text = exc.message
        if exc.repro:
            text += "\n\nTo reproduce:\n" + "\n".join("    " + line for line in exc.repro.splitlines())
        return text
    if isinstance(exc, sandbox.AttemptGone):
        what = "did not finish in time" if isinstance(exc, sandbox.CallTimedOut) else exc.message
        return f"{candidate.last_call()}: {what}"
    return None
