"""Practice sessions: attempts, their clocks and their gradings.

The rules, all enforced here (kata.py only parses and prints):
- One practice clock runs at a time: starting or resuming a kata pauses the one running.
- A clock stops when an attempt first passes every check, and starts again if a later
  grading of that attempt fails. Nothing resets a clock: `--fresh` and `kata reset` close
  the old attempt with its time and open a new one that says it is a restart.
- No attempt file is ever deleted or overwritten: before the stub is copied over a file,
  the file is copied into archive/NAME/ (practice.archive) and the database records where.
- A grading reads the attempt's bytes once: they are graded and recorded as they are.
Mock interviews follow their own rules in practice.mock; hints and the reference are in
practice.aids; which attempt a command means is decided in practice.targets. Every write
to the database is one transaction (its statements are in practice.store.records); files are
written whole.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from graders.engine.report import Report
from practice import archive, catalogue, clock, grading, mock, paths, strict, targets
from practice.clock import elapsed
from practice.errors import MockRefusal, NothingToGrade, SessionError
from practice.store import Attempt, Mock, Store, StoreError, records


def _fault(point: str) -> None:
    """Fault injection for tests: KATA_FAULT=POINT kills this process at POINT."""
    if os.environ.get("KATA_FAULT") == point:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


@dataclass(frozen=True)
class Started:
    """What `start` or `resume` did: the attempt now open, and what happened around it."""
    attempt: Attempt                   # the attempt, as recorded now
    paused: list[Attempt]              # the other clocks it paused
    resumed: bool = False              # an attempt in progress was resumed, not a new one opened
    was: str | None = None             # resumed: its clock before ("running", "paused", "solved")
    recreated: bool = False            # resumed: its file was missing and the stub went back
    minutes_ignored: bool = False      # resumed: --minutes was given, and applies only to new attempts
    archived: Path | None = None       # new: where the file that was there was kept
    closed: Attempt | None = None      # new, with --fresh: the attempt it closed
    adopted: bool = False              # new: a file already there, with no session, is the attempt


@dataclass(frozen=True)
class Submitted:
    """What `submit` did for a practice attempt: the final grading and what was recorded."""
    attempt: Attempt                   # the attempt, closed (as it was, when nothing was recorded)
    report: Report                     # the final grading
    n_gradings: int = 0                # times the attempt was graded, this one included (0: not recorded)
    note: str | None = None            # why nothing was recorded (then nothing was submitted)

    @property
    def recorded(self) -> bool:
        return self.note is None


@dataclass(frozen=True)
class Reset:
    """What `reset` did: the stub is at `path` again."""
    path: Path
    archived: Path | None = None       # where the file that was there was kept
    closed: Attempt | None = None      # the attempt in progress it closed


@dataclass
class Grading:
    """One grading of an attempt: the report, the attempt after it was recorded, the
    bytes graded, and the error that kept it from being recorded (None when it was)."""
    report: Report
    attempt: Attempt
    code: bytes
    error: StoreError | None = None

    @property
    def recorded(self) -> bool:
        return self.error is None

    @property
    def note(self) -> str | None:
        return None if self.error is None else f"this grading was not recorded: {self.error}"


class Practice:
    def __init__(self, store: Store):
        self.store = store
        self.home = store.home
        self._told: set[int] = set()  # attempts whose file elsewhere was pointed out

    def elsewhere(self, a: Attempt) -> str | None:
        """Where the attempt's file is, when the store records it outside the work folder
        (a record an older version made there, or written by hand); None when it is in it."""
        if not paths.outside(self.home, a.path):
            return None
        return (f"{a.kata}'s attempt is recorded at {paths.shown(a.path)}, outside the "
                f"work folder {paths.shown(self.home)}")

    def _say_where(self, a: Attempt) -> None:
        """Warn, once a command, that the attempt's file is outside the work folder."""
        where = self.elsewhere(a)
        if where and a.id not in self._told:
            self._told.add(a.id)
            self.store.warn(f"{where}; that file is the one used")

    # -- reading -------------------------------------------------------------------
    def attempt(self, attempt_id: int) -> Attempt:
        return records.attempt(self.store, attempt_id)

    def running_mock(self) -> Mock | None:
        return records.running_mock(self.store)

    def mock_attempts(self, mock_id: int) -> list[Attempt]:
        return records.mock_attempts(self.store, mock_id)

    # -- writing helpers -------------------------------------------------------------
    def pause_running(self, s, t: float, because: str, keep: int | None = None) -> list[Attempt]:
        """Pause every running practice clock but `keep`'s (inside a transaction)."""
        paused = []
        for r in records.running_practice(s):
            if r.id == keep:
                continue
            e = elapsed(r, t)
            records.set_clock(s, r.id, "paused", None, e)
            records.add_event(s, "pause", r.kata, r.id, detail=because)
            paused.append(replace(r, clock="paused", elapsed=e, run_since=None))
        return paused

    def close(self, s, a: Attempt, t: float, state: str, reason: str, passed: bool,
              archive: str | None = None, used: float | None = None) -> Attempt:
        """End an attempt (inside a transaction): its clock stops at `used`, by default
        the time on it (a solved clock stopped at the solve)."""
        used = elapsed(a, t) if used is None else used
        records.close_attempt(s, a.id, t, state, reason, passed, used,
                              used > a.budget, archive)
        records.touch(s, a.id, t)  # the attempt worked on last (`kata compare`)
        return records.attempt(s, a.id)

    def archive_file(self, live: Path, kata: str, label: str) -> Path | None:
        return archive.keep(self.home, live, kata, label)

    def _set_aside(self, s, kata: str, live: Path, existing: Attempt | None,
                   archived: Path | None, t: float, reason: str) -> Attempt | None:
        """The bookkeeping of a file copied into the archive before the stub goes back:
        the open attempt is closed with it, else the finished attempt that owned the
        file learns where it went. The closed attempt, if any."""
        if existing:
            return self.close(s, existing, t, "archived", reason,
                              existing.clock == "solved", str(archived) if archived else None)
        if archived:
            owner = records.note_archive(s, str(live), str(archived))
            records.add_event(s, "archive", kata, owner, detail=paths.stored(self.home, archived))
        return None

    def _put_stub(self, k: catalogue.Kata, live: Path, archived: Path | None) -> None:
        try:
            archive.put_stub(self.home, k.name, k.stub, live, archived)
        except archive.KeepsChanging as e:
            raise SessionError(str(e)) from None

    # -- start, pause, resume ----------------------------------------------------------
    def start(self, k: catalogue.Kata, minutes: float | None = None, fresh: bool = False) -> Started:
        """Start a practice attempt at `k`, or resume the one in progress. From the lookup
        to the new record it is one transaction, so starts at the same moment make one
        attempt and the others resume it."""
        self.store.require_writable()
        if not k.stub.is_file():
            raise SessionError(f"the stub for {k.name} ({k.stub}) is missing from this checkout")
        live = paths.attempt_path(self.home, k.name)
        with self.store.tx() as s:
            t = clock.now()
            if records.running_mock(s):
                raise SessionError("a mock interview is running; `kata submit` ends it (or "
                                   "wait for its deadline)")
            existing = records.open_practice_attempt(s, k.name)
            if existing and not fresh:
                return self._resume_in(s, existing, k, t, minutes_ignored=minutes is not None)
            adopt, archived = archive.before_start(
                self.home, k.name, k.stub, live, records.owns_path(s, str(live)),
                replacing=existing is not None, fresh=fresh)
            _fault("after-archive-copy")
            budget = 60.0 * (minutes if minutes is not None else k.minutes)
            closed = self._set_aside(s, k.name, live, existing, archived, t, "fresh")
            if existing:
                records.add_event(s, "restart", k.name, existing.id, detail=(
                    f"archived as {paths.stored(self.home, archived)}" if archived else "file was missing"))
            paused = self.pause_running(s, t, f"started {k.name}")
            new_id = records.insert_attempt(s, k.name, "practice", str(live), t, budget,
                                            restarted_from=existing and existing.id)
            records.add_event(s, "start", k.name, new_id, detail=f"budget {budget:.0f}s"
                              + (", with the file already there" if adopt else ""))
        _fault("after-start-commit")
        if not adopt:
            self._put_stub(k, live, archived)
        return Started(self.attempt(new_id), paused, archived=archived, closed=closed,
                       adopted=adopt)

    def _resume_in(self, s, a: Attempt, k: catalogue.Kata, t: float,
                   minutes_ignored: bool = False) -> Started:
        """Resume an open practice attempt (inside a transaction): its clock runs again,
        any other pauses, and a missing file gets the stub back."""
        live = Path(a.path)
        self._say_where(a)
        recreated = not live.exists() and paths.create_new(live, k.stub.read_bytes())
        paused = self.pause_running(s, t, f"resumed {k.name}", keep=a.id)
        was = a.clock
        if was == "paused":
            records.set_clock(s, a.id, "running", t)
            records.add_event(s, "unpause", k.name, a.id)
        records.touch(s, a.id, t)
        records.add_event(s, "resume", k.name, a.id,
                          detail="file recreated from the stub" if recreated else None)
        return Started(records.attempt(s, a.id), paused, resumed=True, was=was,
                       recreated=recreated, minutes_ignored=minutes_ignored)

    def pause(self, kata: str | None = None) -> Attempt:
        if self.running_mock():
            raise MockRefusal("a mock interview's clock does not stop, as in a real "
                               "interview; `kata submit` ends it")
        a = targets.in_progress(self.store, kata, "nothing to pause")
        if a.clock != "running":
            why = {"paused": "it is already paused",
                   "solved": "it stopped when every check passed"}.get(a.clock, a.clock)
            raise SessionError(f"{a.kata}'s clock is not running: {why}")
        with self.store.tx() as s:
            self.pause_running(s, clock.now(), "kata pause")
            return records.attempt(s, a.id)

    def resume(self, kata: str | None = None) -> Started:
        if self.running_mock():
            raise SessionError("a mock interview is running; its clock never stopped")
        with self.store.tx() as s:
            a = targets.in_progress(s, kata, f"`kata start {kata}` starts it" if kata
                                    else "`kata start NAME` starts one")
            return self._resume_in(s, a, catalogue.get(a.kata), clock.now())

    # -- grading -----------------------------------------------------------------------
    def grade(self, a: Attempt, origin: str = "check", progress=None) -> Grading:
        """Grade an attempt's file and record the grading with the bytes graded; `origin`
        is the command that asked (check, watch, submit, mock-end), `progress` hears of
        each check as it ends. A grading that cannot be recorded (a full disk, a read-only
        folder) is still returned."""
        path = Path(a.path)
        try:
            code = paths.read_attempt(path)  # the one read: these bytes are graded and recorded
        except (FileNotFoundError, IsADirectoryError):
            elsewhere = (f", and the store records it outside the work folder "
                         f"{paths.shown(self.home)}" if self.elsewhere(a) else "")
            raise NothingToGrade(
                f"nothing to grade: {paths.shown(path)} is missing{elsewhere} "
                f"(`kata start {a.kata}` puts the stub back; archived attempts are in "
                f"{paths.shown(paths.archive_dir(self.home, a.kata))})") from None
        self._say_where(a)
        again = strict.before_grading(self.store, a, origin, code)  # a strict interview's rules
        if again is not None:
            return Grading(again, a, code)
        more = {"progress": progress} if progress else {}  # tests' stand-ins may take no progress
        report = strict.shown(self.store, a, grading.grade(a.kata, path, source=code, **more))
        try:
            return Grading(report, self.record(a.id, report, code, origin), code)
        except StoreError as e:
            return Grading(report, a, code, error=e)

    def record(self, attempt_id: int, report: Report, code: bytes, origin: str) -> Attempt:
        t = clock.now()
        passed = report.passed
        with self.store.tx() as s:
            a = records.attempt(s, attempt_id)
            strict.allow(s, a, origin)  # once more, now that no other `kata` can grade it meanwhile
            on_clock = elapsed(a, t)
            if a.mode == "mock":  # an interview ends at its deadline, whenever it is graded
                on_clock = min(on_clock, records.mock(s, a.mock_id).budget)
            records.insert_grading(s, attempt_id, t, on_clock, origin, report, code)
            if a.state == "open":
                records.touch(s, attempt_id, t)
                if passed and a.clock in ("running", "paused"):
                    records.mark_solved(s, attempt_id, on_clock)
                    records.add_event(s, "solved", a.kata, attempt_id, a.mock_id,
                                      detail=f"{on_clock:.1f}")
                elif not passed and a.clock == "solved":
                    records.set_clock(s, attempt_id, "running", t)
                    records.add_event(s, "unsolved", a.kata, attempt_id, a.mock_id)
                if a.mock_id is not None:
                    mock.settle_clock(s, a.mock_id, t)
            return records.attempt(s, attempt_id)

    # -- submit -------------------------------------------------------------------------
    def submit(self, kata: str | None = None
               ) -> Submitted | mock.MockReport | strict.QuestionSubmitted:
        """Final grading. In a mock interview, ends the interview and returns its report
        (see practice.mock); in a strict one, `kata` alone is submitted (practice.strict)."""
        interview = self.running_mock()
        if interview and (kata is None or any(a.kata == kata
                                              for a in self.mock_attempts(interview.id))):
            if interview.strict and kata is not None:
                return strict.submit_question(self, interview, kata)
            return mock.end(self, interview, "submitted")
        a = targets.in_progress(self.store, kata, "nothing to submit")
        g = self.grade(a, "submit")
        if not g.recorded:  # nothing is submitted, and the report is not lost
            return Submitted(a, g.report, note=g.note)
        report, a = g.report, g.attempt
        t = clock.now()
        with self.store.tx() as s:
            a = self.close(s, records.attempt(s, a.id), t, "submitted", "submitted",
                           report.passed)
            records.add_event(s, "submit", a.kata, a.id,
                              detail="passed" if a.passed else "not passed")
        return Submitted(a, report, records.n_gradings(self.store, a.id))

    # -- reset ------------------------------------------------------------------------------
    def reset(self, k: catalogue.Kata) -> Reset:
        """Back to the stub: archive the current file, close its attempt, reopen nothing."""
        self.store.require_writable()
        interview = self.running_mock()
        if interview and any(a.kata == k.name for a in self.mock_attempts(interview.id)):
            raise SessionError(f"{k.name} is part of the running mock interview")
        live = paths.attempt_path(self.home, k.name)
        archived = self.archive_file(live, k.name, k.name)
        t = clock.now()
        with self.store.tx() as s:
            a = records.open_practice_attempt(s, k.name)
            closed = self._set_aside(s, k.name, live, a, archived, t, "reset")
            records.add_event(s, "reset", k.name, a.id if a else None,
                              detail=paths.stored(self.home, archived) if archived else None)
        _fault("after-reset-commit")
        self._put_stub(k, live, archived)
        return Reset(live, archived, closed)
