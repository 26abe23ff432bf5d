"""Mock interviews: several katas on one clock that nothing pauses, no hints, a report.

- `start` picks the katas (practice.schedule), writes their stubs under mock/ID/ and
  starts one clock for the whole interview, pausing any practice clock.
- The interview's clock stops while every question passes and runs again when one fails.
- `end` closes it: on `kata submit`, or on any command after the deadline, when each
  question is graded as it stood at the deadline (a file edited later counts by its last
  grading before the deadline).
`p` is the `practice.sessions.Practice` the command opened.
"""
from __future__ import annotations

import os
from pathlib import Path

from practice import catalogue, clock, history, paths, records, schedule
from practice.clock import elapsed
from practice.errors import SessionError


def ready() -> list[str]:
    """The katas an interview can ask: every one whose stub is in this checkout."""
    return [k.name for k in catalogue.katas() if k.stub.is_file()]


def pick(p, count: int, seed: int | None) -> tuple[list[str], int, bool]:
    """(katas, seed, seeded): drawn by `seed` alone when one is given, whatever the
    history; else the katas most in need of practice, ties broken by a drawn seed."""
    if seed is not None:
        return schedule.draw(ready(), count, seed), seed, True
    drawn = int.from_bytes(os.urandom(4), "big") % 1_000_000
    due = [d for d in history.plan(p.store) if d.kata in set(ready())]
    return schedule.pick(due, count, clock.now(), drawn), drawn, False


def start(p, count: int, minutes: float | None, seed: int | None) -> dict:
    """Start an interview of `count` katas on one clock: `minutes`, or the sum of the
    picked katas' own budgets."""
    p.store.require_writable()
    if p.running_mock():
        raise SessionError("a mock interview is already running; `kata status` shows it")
    names, seed, seeded = pick(p, count, seed)
    if minutes is None:
        minutes = sum(catalogue.get(n).minutes for n in names)
    t = clock.now()
    with p.store.tx() as s:
        paused = p.pause_running(s, t, "mock interview")
        mock_id = records.insert_mock(s, t, 60.0 * minutes, seed, seeded)
        for pos, name in enumerate(names):
            path = paths.mock_attempt_path(p.home, mock_id, name)
            # Written before the commit, so no record ever points at a missing file.
            stub = catalogue.get(name).stub.read_bytes()
            if not paths.create_new(path, stub) and path.read_bytes() != stub:
                p.archive_file(path, name, f"mock{mock_id}-{name}")
                paths.write_atomic(path, stub)
            records.insert_attempt(s, name, "mock", str(path), t, 60.0 * minutes,
                                   mock_id=mock_id, position=pos, touched_at=t - pos * 1e-3)
        records.add_event(s, "mock-start", mock_id=mock_id, detail=",".join(names))
    return {"mock": records.mock(p.store, mock_id), "attempts": p.mock_attempts(mock_id),
            "paused": paused}


def interview(s, a: dict) -> dict | None:
    """For a question of a mock interview: the interview and how many of its questions
    pass ({"mock", "solved", "total"}); None for a practice attempt."""
    if a["mock_id"] is None:
        return None
    questions = records.mock_attempts(s, a["mock_id"])
    return {"mock": records.mock(s, a["mock_id"]), "total": len(questions),
            "solved": sum(1 for q in questions if q["clock"] == "solved")}


def settle_clock(s, mock_id: int, t: float) -> None:
    """Inside a transaction after a grading: the interview's clock stops while every
    question is solved and runs again as soon as one is not."""
    m = records.mock(s, mock_id)
    if m["state"] != "running":
        return
    all_solved = all(a["clock"] == "solved" for a in records.mock_attempts(s, mock_id))
    if all_solved and m["clock"] == "running":
        records.set_mock_clock(s, mock_id, "solved", None, elapsed(m, t))
    elif not all_solved and m["clock"] == "solved":
        records.set_mock_clock(s, mock_id, "running", t)


def expire(p) -> dict | None:
    """End the running mock interview if its deadline has passed; its report, or None."""
    mock = p.running_mock()  # its clock never pauses: the deadline is wall time
    if mock and clock.now() - mock["started_at"] >= mock["budget"]:
        return end(p, mock, "deadline")
    return None


def _final_grading(p, a: dict, reason: str, deadline: float) -> dict:
    """Grade one question for the end of the interview: as it stands, or by its last
    grading before the deadline when the file was edited after it."""
    path = Path(a["path"])
    if reason == "deadline" and path.exists() and path.stat().st_mtime > deadline:
        before = records.last_grading(p.store, a["id"], before=deadline)
        return {"attempt": a, "report": records.stored_report(before) if before else None,
                "note": "edited after the deadline: its last grading before it counts"}
    report = None
    if path.is_file():
        g = p.grade(a, "mock-end")
        if not g.recorded:  # the interview cannot end without its record
            raise g.error
        report, a = g.report, g.attempt
    return {"attempt": a, "report": report, "note": None}


def end(p, mock: dict, reason: str) -> dict:
    """Grade every question (as it stood at the deadline), close them and the interview,
    and return the interview report."""
    deadline = mock["started_at"] + mock["budget"]
    results = [_final_grading(p, a, reason, deadline) for a in p.mock_attempts(mock["id"])]
    t = clock.now()
    with p.store.tx() as s:
        m = records.mock(s, mock["id"])
        if m["state"] != "running":  # another process ended it meanwhile
            return report(p, m["id"])
        used = min(elapsed(m, t), m["budget"]) if reason == "deadline" else elapsed(m, t)
        records.end_mock(s, m["id"], t, reason, used)
        for r in results:
            a = records.attempt(s, r["attempt"]["id"])
            passed = bool(r["report"] and r["report"].passed)
            a_used = a["solved_at"] if (passed and a["solved_at"] is not None) else used
            p.close(s, a, t, "submitted", "mock-ended", passed, used=a_used)
        records.add_event(s, "mock-end", mock_id=m["id"], detail=reason)
    return report(p, mock["id"], {r["attempt"]["id"]: r for r in results})


def report(p, mock_id: int, graded: dict | None = None) -> dict:
    """The interview report: the interview, and for each question its attempt, kata,
    number of gradings, last report, failing checks and any note."""
    rows = []
    for a in p.mock_attempts(mock_id):
        mine = (graded or {}).get(a["id"], {})
        rep = mine.get("report")
        if rep is None:
            last = records.last_grading(p.store, a["id"])
            rep = records.stored_report(last) if last else None
        rows.append({"attempt": a, "kata": catalogue.get(a["kata"]),
                     "n_gradings": records.n_gradings(p.store, a["id"]), "report": rep,
                     "failing": rep.failing if rep else [], "note": mine.get("note")})
    return {"mock": records.mock(p.store, mock_id), "rows": rows}
