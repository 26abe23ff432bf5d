"""Sessions: the clock, attempts, checks, hints, mock interviews and history.

The rules, all enforced here (kata.py only parses and prints):
- One practice clock runs at a time: starting or resuming a kata pauses the one running.
- A clock stops when an attempt first passes every check, and starts again if a later
  grading of that attempt fails. Nothing resets a clock: `--fresh` and `kata reset` close
  the old attempt with its time and open a new one that says it is a restart.
- No attempt file is ever deleted or overwritten: before the stub is copied over a file,
  the file is copied into archive/NAME/ and the database records where.
- A mock interview runs one clock that nothing pauses; any command after its deadline ends
  it, grading each attempt as it stood at the deadline.
Every write to the database is one transaction; files are written whole (temp + rename).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from practice import catalogue, clock, grading, paths, schedule
from practice.store import Store


class SessionError(Exception):
    """The user asked for something the session rules do not allow; the message says why."""


class NothingToGrade(SessionError):
    """No attempt to grade (a usage error on the command line)."""


def _fault(point: str) -> None:
    """Fault injection for tests: KATA_FAULT=POINT kills this process at POINT."""
    if os.environ.get("KATA_FAULT") == point:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


def elapsed(row: dict, t: float) -> float:
    """Seconds on a clock (attempt or mock) at time t."""
    run = t - row["run_since"] if row["clock"] == "running" and row["run_since"] else 0.0
    return row["elapsed"] + max(0.0, run)


class Practice:
    def __init__(self, store: Store):
        self.store = store
        self.home = store.home

    # -- reading -------------------------------------------------------------------
    def attempt(self, attempt_id: int) -> dict:
        return dict(self.store.one("SELECT * FROM attempts WHERE id = ?", (attempt_id,)))

    def running_mock(self) -> dict | None:
        row = self.store.one("SELECT * FROM mocks WHERE state = 'running' ORDER BY id DESC")
        return dict(row) if row else None

    def mock_attempts(self, mock_id: int) -> list[dict]:
        rows = self.store.all(
            "SELECT * FROM attempts WHERE mock_id = ? ORDER BY position", (mock_id,))
        return [dict(r) for r in rows]

    def open_attempts(self) -> list[dict]:
        rows = self.store.all(
            "SELECT * FROM attempts WHERE state = 'open' ORDER BY touched_at DESC, id DESC")
        return [dict(r) for r in rows]

    def current(self) -> dict | None:
        """The attempt of the open session: the running mock's, else the practice attempt
        last started, resumed or checked."""
        mock = self.running_mock()
        opened = [a for a in self.open_attempts()
                  if (a["mock_id"] == mock["id"] if mock else a["mode"] == "practice")]
        running = [a for a in opened if a["clock"] == "running"]
        return (running or opened or [None])[0]

    def attempt_for(self, kata: str) -> dict | None:
        """The attempt `kata check NAME` grades: the open one, else the latest whose file
        is still in place."""
        mock = self.running_mock()
        opened = [a for a in self.open_attempts() if a["kata"] == kata]
        if mock:
            in_mock = [a for a in opened if a["mock_id"] == mock["id"]]
            if in_mock:
                return in_mock[0]
        practice = [a for a in opened if a["mode"] == "practice"]
        if practice:
            return practice[0]
        row = self.store.one(
            "SELECT * FROM attempts WHERE kata = ? AND archive IS NULL "
            "ORDER BY started_at DESC, id DESC", (kata,))
        return dict(row) if row else None

    def checks(self, attempt_id: int) -> list[dict]:
        rows = self.store.all(
            "SELECT * FROM checks WHERE attempt_id = ? ORDER BY at, id", (attempt_id,))
        return [dict(r) for r in rows]

    def last_check(self, attempt_id: int) -> dict | None:
        row = self.store.one(
            "SELECT * FROM checks WHERE attempt_id = ? ORDER BY at DESC, id DESC LIMIT 1",
            (attempt_id,))
        return dict(row) if row else None

    def n_checks(self, attempt_id: int) -> int:
        return self.store.one(
            "SELECT count(*) FROM checks WHERE attempt_id = ?", (attempt_id,))[0]

    def ever_passed(self, kata: str) -> bool:
        row = self.store.one(
            "SELECT 1 FROM attempts a WHERE a.kata = ? AND (a.passed = 1 OR a.solved_at IS NOT NULL"
            " OR EXISTS (SELECT 1 FROM checks c WHERE c.attempt_id = a.id AND c.passed = 1))",
            (kata,))
        return row is not None

    # -- writing helpers -------------------------------------------------------------
    def _event(self, db, kind: str, kata=None, attempt_id=None, mock_id=None, detail=None):
        db.execute(
            "INSERT INTO events (at, kata, attempt_id, mock_id, kind, detail) VALUES (?,?,?,?,?,?)",
            (clock.now(), kata, attempt_id, mock_id, kind, detail))

    def _pause_running(self, db, t: float, because: str, keep: int | None = None) -> list[dict]:
        paused = []
        rows = db.execute(
            "SELECT * FROM attempts WHERE state = 'open' AND clock = 'running' AND mode = 'practice'"
        ).fetchall()
        for r in rows:
            r = dict(r)
            if r["id"] == keep:
                continue
            e = elapsed(r, t)
            db.execute("UPDATE attempts SET clock = 'paused', run_since = NULL, elapsed = ? "
                       "WHERE id = ?", (e, r["id"]))
            self._event(db, "pause", r["kata"], r["id"], detail=because)
            r.update(clock="paused", elapsed=e, run_since=None)
            paused.append(r)
        return paused

    def _close(self, db, a: dict, t: float, state: str, reason: str, passed: bool,
               archive: str | None = None) -> dict:
        used = elapsed(a, t)  # a solved clock stopped at the solve
        db.execute(
            "UPDATE attempts SET state = ?, end_reason = ?, ended_at = ?, clock = 'stopped', "
            "run_since = NULL, elapsed = ?, passed = ?, time_used = ?, overtime = ?, "
            "archive = COALESCE(?, archive) WHERE id = ?",
            (state, reason, t, used, int(passed), used, int(used > a["budget"]), archive, a["id"]))
        return self.attempt_in(db, a["id"])

    @staticmethod
    def attempt_in(db, attempt_id: int) -> dict:
        return dict(db.execute("SELECT * FROM attempts WHERE id = ?", (attempt_id,)).fetchone())

    def _archive_file(self, live: Path, kata: str, label: str) -> Path | None:
        """Copy the file at `live` (if any) into archive/KATA/; never touches `live`."""
        if not live.exists():
            return None
        return paths.keep_copy(live, paths.archive_dir(self.home, kata), label)

    def _put_stub(self, k: catalogue.Kata, live: Path, archived: Path | None) -> None:
        """Put the stub at `live`; whatever is there has been archived as `archived`."""
        stub = k.stub.read_bytes()
        for _ in range(5):
            if paths.create_new(live, stub):
                return
            # Something is there: replace it only if it is exactly what we archived.
            current = live.read_bytes()
            if current == stub:
                return
            if archived is None or current != archived.read_bytes():
                archived = self._archive_file(live, k.name, "unsaved")
            paths.write_atomic(live, stub)
            if live.read_bytes() == stub:
                return
        raise SessionError(f"{paths.shown(live)} keeps changing; close the editor and retry")

    # -- start, pause, resume ----------------------------------------------------------
    def start(self, k: catalogue.Kata, minutes: float | None = None, fresh: bool = False) -> dict:
        if self.running_mock():
            raise SessionError(
                "a mock interview is running; `kata submit` ends it (or wait for its deadline)")
        if not k.stub.is_file():
            raise SessionError(f"the stub for {k.name} ({k.stub}) is missing from this checkout")
        t = clock.now()
        live = paths.attempt_path(self.home, k.name)
        existing = self.store.one(
            "SELECT * FROM attempts WHERE kata = ? AND state = 'open' AND mode = 'practice' "
            "ORDER BY touched_at DESC", (k.name,))
        existing = dict(existing) if existing else None
        if existing and not fresh:
            return self._resume_attempt(existing, k, t, minutes_ignored=minutes is not None)

        # A file that no attempt owns (written by hand, or left when the database was
        # set aside) becomes the new attempt as it is; fresh=True archives it instead.
        owned = self.store.one(
            "SELECT 1 FROM attempts WHERE path = ? AND archive IS NULL", (str(live),))
        adopt = not existing and not fresh and live.is_file() and owned is None
        # Otherwise keep a copy of whatever is at the attempt path before anything else
        # (an untouched stub left by `kata reset` needs no copy unless an attempt owns it).
        archived = None
        if not adopt and (existing or not (live.exists()
                                           and live.read_bytes() == k.stub.read_bytes())):
            archived = self._archive_file(live, k.name, k.name)
        if not live.exists():  # the file exists before any record points at it
            paths.create_new(live, k.stub.read_bytes())
        _fault("after-archive-copy")
        budget = 60.0 * (minutes if minutes is not None else k.minutes)
        with self.store.tx() as db:
            closed = None
            if existing:
                passed = existing["solved_at"] is not None and existing["clock"] == "solved"
                closed = self._close(db, existing, t, "archived", "fresh", passed,
                                     str(archived) if archived else None)
                self._event(db, "restart", k.name, existing["id"],
                            detail=f"archived as {archived}" if archived else "file was missing")
            elif archived:
                prev = db.execute(
                    "SELECT id FROM attempts WHERE path = ? AND archive IS NULL AND state != 'open' "
                    "ORDER BY id DESC LIMIT 1", (str(live),)).fetchone()
                if prev:
                    db.execute("UPDATE attempts SET archive = ? WHERE id = ?",
                               (str(archived), prev["id"]))
                self._event(db, "archive", k.name, prev["id"] if prev else None,
                            detail=str(archived))
            paused = self._pause_running(db, t, f"started {k.name}")
            cur = db.execute(
                "INSERT INTO attempts (kata, mode, path, restarted_from, started_at, touched_at, "
                "budget, clock, run_since, elapsed, state) "
                "VALUES (?, 'practice', ?, ?, ?, ?, ?, 'running', ?, 0, 'open')",
                (k.name, str(live), existing["id"] if existing else None, t, t, budget, t))
            new_id = cur.lastrowid
            self._event(db, "start", k.name, new_id, detail=f"budget {budget:.0f}s"
                        + (", with the file already there" if adopt else ""))
        _fault("after-start-commit")
        if not adopt:
            self._put_stub(k, live, archived)
        return {"attempt": self.attempt(new_id), "resumed": False, "archived": archived,
                "closed": closed, "paused": paused, "adopted": adopt}

    def _resume_attempt(self, a: dict, k: catalogue.Kata, t: float,
                        minutes_ignored: bool = False) -> dict:
        live = Path(a["path"])
        recreated = False
        if not live.exists():
            recreated = paths.create_new(live, k.stub.read_bytes())
        with self.store.tx() as db:
            a = self.attempt_in(db, a["id"])
            paused = self._pause_running(db, t, f"resumed {k.name}", keep=a["id"])
            was = a["clock"]
            if was == "paused":
                db.execute("UPDATE attempts SET clock = 'running', run_since = ? WHERE id = ?",
                           (t, a["id"]))
                self._event(db, "unpause", k.name, a["id"])
            db.execute("UPDATE attempts SET touched_at = ? WHERE id = ?", (t, a["id"]))
            self._event(db, "resume", k.name, a["id"],
                        detail="file recreated from the stub" if recreated else None)
            a = self.attempt_in(db, a["id"])
        return {"attempt": a, "resumed": True, "was": was, "paused": paused,
                "recreated": recreated, "minutes_ignored": minutes_ignored}

    def pause(self) -> dict:
        mock = self.running_mock()
        if mock:
            raise SessionError("a mock interview's clock does not stop, as in a real "
                               "interview; `kata submit` ends it")
        a = self.current()
        if a is None:
            raise SessionError("no kata is in progress")
        if a["clock"] != "running":
            why = {"paused": "it is already paused",
                   "solved": "it stopped when every check passed"}.get(a["clock"], a["clock"])
            raise SessionError(f"{a['kata']}'s clock is not running: {why}")
        t = clock.now()
        with self.store.tx() as db:
            self._pause_running(db, t, "kata pause")
            return self.attempt_in(db, a["id"])

    def resume(self, kata: str | None = None) -> dict:
        if self.running_mock():
            raise SessionError("a mock interview is running; its clock never stopped")
        if kata:
            a = next((x for x in self.open_attempts()
                      if x["kata"] == kata and x["mode"] == "practice"), None)
            if a is None:
                raise SessionError(f"{kata} is not in progress; `kata start {kata}` starts it")
        else:
            a = self.current()
            if a is None:
                raise SessionError("no kata is in progress; `kata start NAME` starts one")
        return self._resume_attempt(a, catalogue.get(a["kata"]), clock.now())

    # -- grading -----------------------------------------------------------------------
    def target(self, kata: str | None) -> dict:
        """The attempt `kata check [NAME]` grades; NothingToGrade when there is none."""
        if kata:
            a = self.attempt_for(kata)
            if a is None:
                raise NothingToGrade(
                    f"nothing to grade: {kata} has no attempt yet; `kata start {kata}` makes one "
                    f"(or `kata check {kata} --file PATH` grades any file)")
            return a
        a = self.current()
        if a is None:
            raise NothingToGrade(
                "nothing to grade: no kata is in progress; name one (`kata check NAME`) "
                "or start one (`kata start NAME`)")
        return a

    def grade(self, a: dict, source: str = "check") -> tuple[dict, dict]:
        """Grade an attempt's file and record the check. Returns (report, attempt after)."""
        path = Path(a["path"])
        if not path.is_file():
            raise NothingToGrade(
                f"nothing to grade: {paths.shown(path)} is missing "
                f"(`kata start {a['kata']}` puts the stub back; archived attempts are in "
                f"{paths.shown(paths.archive_dir(self.home, a['kata']))})")
        code = path.read_text(encoding="utf-8", errors="replace")
        report = grading.grade(a["kata"], path)
        return report, self.record(a["id"], report, code, source)

    def record(self, attempt_id: int, report: dict, code: str, source: str) -> dict:
        t = clock.now()
        n_pass, n_total = grading.counts(report)
        passed = bool(report.get("passed"))
        with self.store.tx() as db:
            a = self.attempt_in(db, attempt_id)
            on_clock = elapsed(a, t)
            if a["mode"] == "mock":  # an interview ends at its deadline, whenever it is graded
                on_clock = min(on_clock, a["budget"])
            db.execute(
                "INSERT INTO checks (attempt_id, at, clock, source, passed, not_implemented, "
                "n_passed, n_total, code, report) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (attempt_id, t, on_clock, source, int(passed),
                 int(bool(report.get("not_implemented"))), n_pass, n_total, code,
                 json.dumps(report)))
            if a["state"] == "open":
                db.execute("UPDATE attempts SET touched_at = ? WHERE id = ?", (t, attempt_id))
                if passed and a["clock"] in ("running", "paused"):
                    db.execute(
                        "UPDATE attempts SET clock = 'solved', run_since = NULL, elapsed = ?, "
                        "solved_at = COALESCE(solved_at, ?) WHERE id = ?",
                        (on_clock, on_clock, attempt_id))
                    self._event(db, "solved", a["kata"], attempt_id, a["mock_id"],
                                detail=f"{on_clock:.1f}")
                elif not passed and a["clock"] == "solved":
                    db.execute("UPDATE attempts SET clock = 'running', run_since = ? WHERE id = ?",
                               (t, attempt_id))
                    self._event(db, "unsolved", a["kata"], attempt_id, a["mock_id"])
                if a["mock_id"] is not None:
                    self._settle_mock_clock(db, a["mock_id"], t)
            return self.attempt_in(db, attempt_id)

    def _settle_mock_clock(self, db, mock_id: int, t: float) -> None:
        m = dict(db.execute("SELECT * FROM mocks WHERE id = ?", (mock_id,)).fetchone())
        if m["state"] != "running":
            return
        clocks = [r[0] for r in db.execute(
            "SELECT clock FROM attempts WHERE mock_id = ?", (mock_id,))]
        all_solved = all(c == "solved" for c in clocks)
        if all_solved and m["clock"] == "running":
            db.execute("UPDATE mocks SET clock = 'solved', run_since = NULL, elapsed = ? "
                       "WHERE id = ?", (elapsed(m, t), mock_id))
        elif not all_solved and m["clock"] == "solved":
            db.execute("UPDATE mocks SET clock = 'running', run_since = ? WHERE id = ?",
                       (t, mock_id))

    # -- submit -------------------------------------------------------------------------
    def submit(self, kata: str | None = None) -> dict:
        """Final grading. In a mock interview, ends the interview (see end_mock)."""
        mock = self.running_mock()
        if mock and (kata is None or any(a["kata"] == kata for a in self.mock_attempts(mock["id"]))):
            return {"mock": self.end_mock(mock, "submitted")}
        if kata:
            a = next((x for x in self.open_attempts()
                      if x["kata"] == kata and x["mode"] == "practice"), None)
            if a is None:
                raise SessionError(f"{kata} is not in progress; nothing to submit")
        else:
            a = self.current()
            if a is None:
                raise SessionError("no kata is in progress; nothing to submit")
        report, a = self.grade(a, "submit")
        t = clock.now()
        with self.store.tx() as db:
            a = self.attempt_in(db, a["id"])
            a = self._close(db, a, t, "submitted", "submitted", bool(report.get("passed")))
            self._event(db, "submit", a["kata"], a["id"],
                        detail="passed" if a["passed"] else "not passed")
        return {"attempt": a, "report": report, "n_checks": self.n_checks(a["id"])}

    # -- hints and the reference ---------------------------------------------------------------
    def _refuse_in_mock(self, what: str) -> None:
        if self.running_mock():
            raise SessionError(f"{what} are not available during a mock interview; "
                               "`kata submit` ends it")

    def hint(self, k: catalogue.Kata) -> dict:
        self._refuse_in_mock("hints")
        a = next((x for x in self.open_attempts()
                  if x["kata"] == k.name and x["mode"] == "practice"), None)
        with self.store.tx() as db:
            if a:
                used = db.execute("SELECT count(*) FROM events WHERE kind = 'hint' AND "
                                  "attempt_id = ?", (a["id"],)).fetchone()[0]
            else:
                used = db.execute(
                    "SELECT count(*) FROM events WHERE kind = 'hint' AND kata = ? "
                    "AND attempt_id IS NULL", (k.name,)).fetchone()[0]
            total = len(k.hints)
            if used >= total:
                return {"index": total, "total": total, "hint": None, "all": list(k.hints),
                        "attempt": a}
            if a and self.attempt_in(db, a["id"])["clock"] != "solved":
                db.execute("UPDATE attempts SET hints = hints + 1 WHERE id = ?", (a["id"],))
            self._event(db, "hint", k.name, a["id"] if a else None, detail=str(used + 1))
        return {"index": used + 1, "total": total, "hint": k.hints[used], "all": None,
                "attempt": a}

    def spoiler_free(self, kata: str) -> bool:
        """True when showing the reference spoils nothing: the kata has been passed, or
        the open attempt's time is up."""
        if self.ever_passed(kata):
            return True
        a = self.attempt_for(kata)
        return bool(a and a["state"] == "open" and elapsed(a, clock.now()) >= a["budget"])

    def record_viewing(self, kata: str, kind: str) -> None:
        """Record that the reference was shown (`solution` or `compare`)."""
        self._refuse_in_mock("solutions")
        spoiler = not self.spoiler_free(kata)
        a = next((x for x in self.open_attempts()
                  if x["kata"] == kata and x["mode"] == "practice"), None)
        with self.store.tx() as db:
            if a and spoiler:
                db.execute("UPDATE attempts SET solution_viewed = 1 WHERE id = ?", (a["id"],))
            self._event(db, kind, kata, a["id"] if a else None,
                        detail="before passing" if spoiler else "after passing or time up")

    # -- reset ------------------------------------------------------------------------------
    def reset(self, k: catalogue.Kata) -> dict:
        """Back to the stub: archive the current file, close its attempt, reopen nothing."""
        mock = self.running_mock()
        if mock and any(a["kata"] == k.name for a in self.mock_attempts(mock["id"])):
            raise SessionError(f"{k.name} is part of the running mock interview")
        live = paths.attempt_path(self.home, k.name)
        archived = self._archive_file(live, k.name, k.name)
        t = clock.now()
        with self.store.tx() as db:
            a = db.execute(
                "SELECT * FROM attempts WHERE kata = ? AND state = 'open' AND mode = 'practice' "
                "ORDER BY touched_at DESC", (k.name,)).fetchone()
            closed = None
            if a:
                a = dict(a)
                passed = a["clock"] == "solved"
                closed = self._close(db, a, t, "archived", "reset", passed,
                                     str(archived) if archived else None)
            elif archived:
                prev = db.execute(
                    "SELECT id FROM attempts WHERE path = ? AND archive IS NULL "
                    "ORDER BY id DESC LIMIT 1", (str(live),)).fetchone()
                if prev:
                    db.execute("UPDATE attempts SET archive = ? WHERE id = ?",
                               (str(archived), prev["id"]))
            self._event(db, "reset", k.name, a["id"] if a else None,
                        detail=str(archived) if archived else None)
        _fault("after-reset-commit")
        self._put_stub(k, live, archived)
        return {"archived": archived, "closed": closed, "path": live}

    # -- mock interviews ------------------------------------------------------------------
    def plan(self) -> list[schedule.Due]:
        rows = self.store.all(
            "SELECT a.*, (SELECT count(*) FROM checks c WHERE c.attempt_id = a.id) AS n_checks "
            "FROM attempts a WHERE state != 'open'")
        return schedule.plan(catalogue.names(), [dict(r) for r in rows], clock.now())

    def start_mock(self, count: int, minutes: float, seed: int | None) -> dict:
        if self.running_mock():
            raise SessionError("a mock interview is already running; `kata status` shows it")
        if seed is None:
            seed = int.from_bytes(os.urandom(4), "big") % 1_000_000
        t = clock.now()
        ready = [d for d in self.plan() if catalogue.get(d.kata).stub.is_file()]
        names = schedule.pick(ready, count, t, seed)
        with self.store.tx() as db:
            paused = self._pause_running(db, t, "mock interview")
            cur = db.execute(
                "INSERT INTO mocks (started_at, budget, seed, clock, run_since, elapsed, state) "
                "VALUES (?, ?, ?, 'running', ?, 0, 'running')", (t, 60.0 * minutes, seed, t))
            mock_id = cur.lastrowid
            for pos, name in enumerate(names):
                path = paths.mock_attempt_path(self.home, mock_id, name)
                # Written before the commit, so no record ever points at a missing file.
                stub = catalogue.get(name).stub.read_bytes()
                if not paths.create_new(path, stub) and path.read_bytes() != stub:
                    self._archive_file(path, name, f"mock{mock_id}-{name}")
                    paths.write_atomic(path, stub)
                db.execute(
                    "INSERT INTO attempts (kata, mode, mock_id, position, path, started_at, "
                    "touched_at, budget, clock, run_since, elapsed, state) "
                    "VALUES (?, 'mock', ?, ?, ?, ?, ?, ?, 'running', ?, 0, 'open')",
                    (name, mock_id, pos, str(path), t, t - pos * 1e-3, 60.0 * minutes, t))
            self._event(db, "mock-start", mock_id=mock_id, detail=",".join(names))
        mock = dict(self.store.one("SELECT * FROM mocks WHERE id = ?", (mock_id,)))
        return {"mock": mock, "attempts": self.mock_attempts(mock_id), "paused": paused}

    def expire_mock(self) -> dict | None:
        """End the running mock interview if its deadline has passed; its report, or None."""
        mock = self.running_mock()  # its clock never pauses: the deadline is wall time
        if mock and clock.now() - mock["started_at"] >= mock["budget"]:
            return self.end_mock(mock, "deadline")
        return None

    def end_mock(self, mock: dict, reason: str) -> dict:
        """Grade every attempt of the interview (as it stood at the deadline), close them,
        and return the interview report."""
        deadline = mock["started_at"] + mock["budget"]
        results = []
        for a in self.mock_attempts(mock["id"]):
            path = Path(a["path"])
            late = reason == "deadline" and path.exists() and path.stat().st_mtime > deadline
            report, note = None, None
            if late:
                before = self.store.one(
                    "SELECT * FROM checks WHERE attempt_id = ? AND at <= ? "
                    "ORDER BY at DESC, id DESC LIMIT 1", (a["id"], deadline))
                note = "edited after the deadline: the last check before it counts"
                if before:
                    report = json.loads(before["report"])
            elif path.is_file():
                report, a = self.grade(a, "mock-end")
            results.append({"attempt": a, "report": report, "note": note})
        t = clock.now()
        with self.store.tx() as db:
            m = dict(db.execute("SELECT * FROM mocks WHERE id = ?", (mock["id"],)).fetchone())
            if m["state"] != "running":  # another process ended it meanwhile
                return self.mock_report(m["id"])
            used = min(elapsed(m, t), m["budget"]) if reason == "deadline" else elapsed(m, t)
            db.execute(
                "UPDATE mocks SET state = 'ended', clock = 'stopped', run_since = NULL, "
                "elapsed = ?, ended_at = ?, end_reason = ?, time_used = ? WHERE id = ?",
                (used, t, reason, used, m["id"]))
            for r in results:
                a = self.attempt_in(db, r["attempt"]["id"])
                passed = bool(r["report"] and r["report"].get("passed"))
                a_used = a["solved_at"] if (passed and a["solved_at"] is not None) else used
                db.execute(
                    "UPDATE attempts SET state = 'submitted', end_reason = 'mock-ended', "
                    "ended_at = ?, clock = 'stopped', run_since = NULL, elapsed = ?, passed = ?, "
                    "time_used = ?, overtime = ? WHERE id = ?",
                    (t, a_used, int(passed), a_used, int(a_used > a["budget"]), a["id"]))
            self._event(db, "mock-end", mock_id=m["id"], detail=reason)
        return self.mock_report(mock["id"], {r["attempt"]["id"]: r for r in results})

    def mock_report(self, mock_id: int, graded: dict | None = None) -> dict:
        m = dict(self.store.one("SELECT * FROM mocks WHERE id = ?", (mock_id,)))
        rows = []
        for a in self.mock_attempts(mock_id):
            last = self.last_check(a["id"])
            report = (graded or {}).get(a["id"], {}).get("report")
            if report is None and last:
                report = json.loads(last["report"])
            rows.append({
                "attempt": a,
                "kata": catalogue.get(a["kata"]),
                "n_checks": self.n_checks(a["id"]),
                "report": report,
                "failing": grading.failing(report) if report else [],
                "note": (graded or {}).get(a["id"], {}).get("note"),
            })
        return {"mock": m, "rows": rows}

    # -- history ---------------------------------------------------------------------------
    def attempts_of(self, kata: str | None = None) -> list[dict]:
        """Every attempt, oldest first, each numbered within its kata (`n`)."""
        rows = self.store.all(
            "SELECT a.*, "
            " ROW_NUMBER() OVER (PARTITION BY a.kata ORDER BY a.started_at, a.id) AS n, "
            " (SELECT count(*) FROM checks c WHERE c.attempt_id = a.id) AS n_checks "
            "FROM attempts a ORDER BY a.started_at, a.id")
        out = [dict(r) for r in rows]
        return [r for r in out if kata is None or r["kata"] == kata]

    def best_times(self) -> dict[str, float]:
        rows = self.store.all(
            "SELECT kata, MIN(COALESCE(time_used, solved_at)) AS best FROM attempts "
            "WHERE passed = 1 OR solved_at IS NOT NULL GROUP BY kata")
        return {r["kata"]: r["best"] for r in rows}

    def last_results(self) -> dict[str, dict]:
        rows = self.store.all(
            "SELECT a.kata, c.passed, c.not_implemented, c.n_passed, c.n_total, c.at "
            "FROM checks c JOIN attempts a ON a.id = c.attempt_id "
            "WHERE c.id = (SELECT c2.id FROM checks c2 JOIN attempts a2 ON a2.id = c2.attempt_id "
            "              WHERE a2.kata = a.kata ORDER BY c2.at DESC, c2.id DESC LIMIT 1)")
        return {r["kata"]: dict(r) for r in rows}

    def statuses(self) -> dict[str, str]:
        out = {}
        for k in catalogue.katas():
            out[k.name] = "not started"
        for r in self.store.all("SELECT DISTINCT kata FROM attempts"):
            out[r["kata"]] = "not passed"
        for kata in list(out):
            if out[kata] != "not started" and self.ever_passed(kata):
                out[kata] = "passed"
        for a in self.open_attempts():
            out[a["kata"]] = "in progress"
        return out
