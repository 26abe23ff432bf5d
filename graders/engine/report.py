"""The grading report: a small typed form, and the JSON it becomes.

    {"version": 2, "kata": "softmax", "passed": false, "not_implemented": false,
     "checks": [{"name": ..., "passed": ..., "status": "failed", "message": ...,
                 "repro": ..., "id": "test_agrees", "function": "softmax", "picture": null}],
     "diagnosis": ..., "bug": ..., "stdout": ..., "stdout_bytes": 0, "seconds": 0.12}

`kata check --json` prints this object (a superset of the contract's keys: kata, passed,
checks with name, passed and message). `version` changes when a key changes meaning.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

FORMAT_VERSION = 2


class Status(str, enum.Enum):
    PASSED = "passed"
    FAILED = "failed"
    NOT_IMPLEMENTED = "not_implemented"   # the function still raises NotImplementedError
    SKIPPED = "skipped"                   # not run (the grading ran out of time, say)


@dataclass
class CheckResult:
    name: str                         # the property, as the candidate reads it
    status: Status
    message: str = ""                 # one line: what was observed
    repro: str | None = None          # Python that rebuilds the failing case
    id: str | None = None             # the check's function in the grader, e.g. "test_agrees"
    function: str | None = None       # the candidate's function the failure concerns
    picture: dict | None = None       # weights to draw as a grid: {"title", "values", "marked", "rows", "cols"}

    @property
    def passed(self) -> bool:
        return self.status is Status.PASSED

    def to_dict(self) -> dict:
        return {"name": self.name, "passed": self.passed, "status": self.status.value,
                "message": self.message, "repro": self.repro, "id": self.id,
                "function": self.function, "picture": self.picture}


@dataclass
class Report:
    kata: str
    checks: list[CheckResult]
    diagnosis: str | None = None      # the likely cause, completing "Likely cause: ..."
    bug: str | None = None            # the catalogued bug it names
    stdout: str = ""                  # the tail of what the attempt printed
    stdout_bytes: int = 0             # how much it printed in all
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """Every check that ran passed (a check is not run only after another failed, or when it has
        nothing to check)."""
        ran = [c for c in self.checks if c.status is not Status.SKIPPED]
        return bool(ran) and all(c.passed for c in ran)

    @property
    def not_implemented(self) -> bool:
        """Nothing was judged on its merits: every check that ran found a stub."""
        statuses = {c.status for c in self.checks}
        return Status.NOT_IMPLEMENTED in statuses and statuses <= {Status.NOT_IMPLEMENTED, Status.SKIPPED}

    def to_dict(self) -> dict:
        return {"version": FORMAT_VERSION, "kata": self.kata, "passed": self.passed,
                "not_implemented": self.not_implemented, "checks": [c.to_dict() for c in self.checks],
                "diagnosis": self.diagnosis, "bug": self.bug, "stdout": self.stdout,
                "stdout_bytes": self.stdout_bytes, "seconds": round(self.seconds, 3), **self.extra}


def failed(name: str, message: str, **kw) -> CheckResult:
    return CheckResult(name, Status.FAILED, message, **kw)
