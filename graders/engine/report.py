"""The grading report: a small typed form, and the JSON it becomes.

    {"version": 3, "kata": "softmax", "passed": false, "not_implemented": false,
     "checks": [{"name": ..., "passed": ..., "status": "failed", "message": ...,
                 "repro": ..., "id": "agrees", "function": "softmax", "picture": null}],
     "skipped": [{"name": ..., "why": ..., "id": "long_rows", "position": 9}],
     "diagnosis": ..., "bug": ..., "observed": [...],
     "stdout": ..., "stdout_bytes": 0, "seconds": 0.12,
     "efficiency": {"measured": ..., "why": ..., "functions": [...], "remarks": [...]}}

`kata check --json` prints this object (a superset of the contract's keys: kata, passed,
checks with name, passed and message, diagnosis, bug, observed, skipped, efficiency: its
shape is graders/engine/costs.py's; not measured, with why, until every check passes). `version`
changes when a key changes meaning. A check that did not run is a CheckResult with
Status.SKIPPED in `Report.checks`, in its place; in the JSON it is not under `checks` but
under `skipped`, with why it did not run and its place among the checks (`position`),
and it counts as neither passed nor failed.

`Report.from_dict` reads every form ever written: version 3; version 2, whose skipped
checks are inside `checks`; and the unversioned reports before it, which may lack
`status`, `stdout_bytes`, `function` and `picture`; also the object that combines the
reports of a mock interview's questions (`Report.combine`).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from graders.engine.costs import UNMEASURED, Efficiency, combined, not_measured

FORMAT_VERSION = 3
# The keys a report's JSON has; any other key is kept as it was (`Report.extra`).
KEYS = ("version", "kata", "passed", "not_implemented", "checks", "skipped", "diagnosis", "bug",
        "observed", "stdout", "stdout_bytes", "seconds", "reports", "efficiency")


class Status(str, enum.Enum):
    PASSED = "passed"
    FAILED = "failed"
    NOT_IMPLEMENTED = "not_implemented"   # the function still raises NotImplementedError
    SKIPPED = "skipped"                   # not run (the grading ran out of time, say)


@dataclass
class CheckResult:
    name: str                         # the property, as the candidate reads it
    status: Status
    message: str = ""                 # one line: what was observed (for a skipped check: why not run)
    repro: str | None = None          # Python that rebuilds the failing case
    id: str | None = None             # the check's function in the grader, e.g. "agrees"
    function: str | None = None       # the candidate's function the failure concerns
    picture: dict | None = None       # weights to draw as a grid: {"title", "values", "marked", "rows", "cols"}

    @property
    def passed(self) -> bool:
        return self.status is Status.PASSED

    def to_dict(self) -> dict:
        return {"name": self.name, "passed": self.passed, "status": self.status.value,
                "message": self.message, "repro": self.repro, "id": self.id,
                "function": self.function, "picture": self.picture}

    @classmethod
    def from_dict(cls, d: dict) -> CheckResult:
        """A check as any version wrote it (older ones may lack status, function, picture)."""
        passed = bool(d.get("passed"))
        try:
            status = Status(d.get("status") or ("passed" if passed else "failed"))
        except ValueError:  # a status this version does not know
            status = Status.PASSED if passed else Status.FAILED
        return cls(d.get("name") or "check", status, d.get("message") or "", d.get("repro"),
                   d.get("id"), d.get("function"), d.get("picture"))

    def skipped_dict(self, position: int) -> dict:
        """A check that did not run, as the report's `skipped` lists it."""
        return {"name": self.name, "why": self.message, "id": self.id, "position": position}

    @classmethod
    def from_skipped(cls, d: dict) -> CheckResult:
        return cls(d.get("name") or "check", Status.SKIPPED, d.get("why") or "", id=d.get("id"))


class Counts(NamedTuple):
    """How the checks of a report went; `total` counts every check, those not run included."""
    passed: int
    failed: int
    not_implemented: int
    skipped: int

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.not_implemented + self.skipped


@dataclass
class Report:
    kata: str
    checks: list[CheckResult]         # every check, in the grader's order, those not run included
    diagnosis: str | None = None      # the likely cause, completing "Likely cause: ..."
    bug: str | None = None            # the catalogued bug it names
    stdout: str = ""                  # the tail of what the attempt printed
    stdout_bytes: int = 0             # how much it printed in all
    seconds: float = 0.0
    observed: list[str] = field(default_factory=list)   # relations to the reference's output the grader found
    extra: dict[str, Any] = field(default_factory=dict)  # keys of other versions, kept as they were
    parts: list[Report] = field(default_factory=list)    # a combined report's reports (Report.combine)
    efficiency: Efficiency | None = None   # the attempt's cost beside the reference's (graders.engine.efficiency)

    @property
    def ran(self) -> list[CheckResult]:
        """The checks that ran (the JSON's `checks`)."""
        return [c for c in self.checks if c.status is not Status.SKIPPED]

    @property
    def skipped(self) -> list[CheckResult]:
        """The checks that did not run (the JSON's `skipped`)."""
        return [c for c in self.checks if c.status is Status.SKIPPED]

    @property
    def counts(self) -> Counts:
        n = {s: 0 for s in Status}
        for c in self.checks:
            n[c.status] += 1
        return Counts(n[Status.PASSED], n[Status.FAILED], n[Status.NOT_IMPLEMENTED], n[Status.SKIPPED])

    @property
    def passed(self) -> bool:
        """Every check that ran passed (a check is not run only after another failed, or when it has
        nothing to check): a check that did not run counts as neither passed nor failed."""
        if self.parts:
            return all(p.passed for p in self.parts)
        return bool(self.ran) and all(c.passed for c in self.ran)

    @property
    def not_implemented(self) -> bool:
        """Nothing was judged on its merits: every check that ran found a stub."""
        if self.parts:
            return all(p.not_implemented for p in self.parts)
        statuses = {c.status for c in self.checks}
        return Status.NOT_IMPLEMENTED in statuses and statuses <= {Status.NOT_IMPLEMENTED, Status.SKIPPED}

    @property
    def untouched(self) -> bool:
        """An untouched stub: something is not implemented yet and nothing passed."""
        return self.not_implemented and self.counts.passed == 0

    @property
    def failing(self) -> list[str]:
        """The names of the checks that ran and failed (not those not implemented or not run)."""
        return [c.name for c in self.checks if c.status is Status.FAILED]

    def to_dict(self) -> dict:
        if self.parts:
            return self._combined_dict()
        return {"version": FORMAT_VERSION, "kata": self.kata, "passed": self.passed,
                "not_implemented": self.not_implemented, "checks": [c.to_dict() for c in self.ran],
                "skipped": [c.skipped_dict(i) for i, c in enumerate(self.checks) if c.status is Status.SKIPPED],
                "diagnosis": self.diagnosis, "bug": self.bug, "observed": list(self.observed),
                "stdout": self.stdout, "stdout_bytes": self.stdout_bytes, "seconds": round(self.seconds, 3),
                "efficiency": (self.efficiency or not_measured(UNMEASURED)).to_dict(), **self.extra}

    @classmethod
    def from_dict(cls, d: dict) -> Report:
        """A report as any version wrote it (see the module's docstring)."""
        if d.get("reports"):
            return cls.combine([cls.from_dict(r) for r in d["reports"]])
        checks = [CheckResult.from_dict(c) for c in d.get("checks") or []]
        for s in sorted(d.get("skipped") or [], key=lambda s: s.get("position", len(checks))):
            checks.insert(min(s.get("position", len(checks)), len(checks)), CheckResult.from_skipped(s))
        stdout = d.get("stdout") or ""
        stdout_bytes = d.get("stdout_bytes")
        return cls(d.get("kata") or "", checks, d.get("diagnosis"), d.get("bug"), stdout,
                   len(stdout.encode("utf-8", "replace")) if stdout_bytes is None else stdout_bytes,
                   d.get("seconds") or 0.0, list(d.get("observed") or []),
                   {k: v for k, v in d.items() if k not in KEYS}, efficiency=Efficiency.from_dict(d.get("efficiency")))

    @classmethod
    def combine(cls, reports: list[Report]) -> Report:
        """Several reports (the questions of a mock interview) as one: `kata` names them
        all, each check has its kata's name in front, and each report is kept whole."""
        def each(what) -> list:
            return [f"{r.kata}: {x}" for r in reports for x in what(r)]

        return cls(",".join(r.kata for r in reports),
                   [replace(c, name=f"{r.kata}: {c.name}") for r in reports for c in r.checks],
                   "; ".join(each(lambda r: [r.diagnosis] if r.diagnosis else [])) or None,
                   "; ".join(each(lambda r: [r.bug] if r.bug else [])) or None,
                   observed=each(lambda r: r.observed), parts=list(reports),
                   efficiency=combined([(r.kata, r.efficiency) for r in reports]))

    def _combined_dict(self) -> dict:
        """The contract's keys for all the questions together (every check with its kata
        named in front and under `kata`), and each report whole under `reports`."""
        one = [p.to_dict() for p in self.parts]
        return {"version": FORMAT_VERSION, "kata": self.kata, "passed": self.passed,
                "not_implemented": self.not_implemented,
                "checks": [dict(c, name=f"{r['kata']}: {c['name']}", kata=r["kata"]) for r in one for c in r["checks"]],
                "skipped": [dict(c, name=f"{r['kata']}: {c['name']}", kata=r["kata"]) for r in one for c in r["skipped"]],
                "diagnosis": self.diagnosis, "bug": self.bug, "observed": list(self.observed), "reports": one,
                "efficiency": (self.efficiency or not_measured(UNMEASURED)).to_dict()}


def failed(name: str, message: str, **kw) -> CheckResult:
    return CheckResult(name, Status.FAILED, message, **kw)
