"""The pieces under the commands: the spaced-repetition schedule, clocks, safe file writes."""
from __future__ import annotations

from dataclasses import fields, replace

import pytest

from practice import paths, schedule
from practice.clock import elapsed
from practice.schedule import DAY
from practice.store import Attempt, Rating

NAMES = ["a", "b", "c", "d"]
NOW = 1_750_000_000.0


def record(kind, **given):
    """A record of the store with the fields given, the rest None."""
    return kind(**{f.name: None for f in fields(kind)} | given)


def done(kata, end, passed=True, used=60.0, budget=600.0, hints=0, viewed=0, over=0, **kw):
    return record(Attempt, **dict(kata=kata, ended_at=end, passed=passed, time_used=used, budget=budget,
                                  hints=hints, solution_viewed=viewed, overtime=over, n_gradings=1) | kw)


def interval(*attempts):
    (d,) = [x for x in schedule.plan(["a"], list(attempts), NOW) if x.kata == "a"]
    return d.interval_days


def test_a_lapsed_kata_comes_first_then_those_never_tried_in_catalogue_order():
    plan = schedule.plan(NAMES, [done("a", NOW - 30 * DAY, passed=False), done("d", NOW)], NOW)
    assert [d.kata for d in plan] == ["a", "b", "c", "d"]
    assert plan[0].reason == "not passed last time" and not plan[1].tried


def test_a_quick_clean_pass_comes_back_later_than_a_slow_or_helped_one():
    quick = interval(done("a", NOW))
    slow = interval(done("a", NOW, used=590))
    hinted = interval(done("a", NOW, hints=2))
    overtime = interval(done("a", NOW, used=700, over=1))
    viewed = interval(done("a", NOW, viewed=1))
    failed = interval(done("a", NOW, passed=False))
    assert quick > slow > hinted == overtime > 0
    assert viewed == failed == 0.0  # a lapse is due at once


def test_successive_passes_grow_the_interval_and_a_failure_resets_it():
    ends = [NOW - 40 * DAY, NOW - 30 * DAY, NOW - 10 * DAY]
    grown = [interval(*[done("a", e) for e in ends[:n]]) for n in (1, 2, 3)]
    assert grown[0] < grown[1] < grown[2]
    assert interval(*[done("a", e) for e in ends], done("a", NOW, passed=False)) == 0.0


def test_an_attempt_set_aside_unchecked_says_nothing():
    a = done("a", NOW, passed=False, end_reason="fresh", n_gradings=0)
    plan = schedule.plan(["a"], [a], NOW)
    assert not plan[0].tried


def test_due_katas_rank_by_how_overdue_they_are():
    attempts = [done("a", NOW - 3 * DAY, passed=False), done("b", NOW - 10 * DAY, passed=False),
                done("c", NOW), done("d", NOW - 1 * DAY, passed=False)]
    order = [d.kata for d in schedule.plan(NAMES, attempts, NOW)]
    assert order == ["b", "a", "d", "c"]  # c passed quickly just now: last
    passed = [done(k, NOW - n * DAY) for k, n in (("a", 30), ("b", 10), ("c", 0), ("d", 20))]
    assert [d.kata for d in schedule.plan(NAMES, passed, NOW)] == ["a", "d", "b", "c"]


def test_pick_is_repeatable_with_a_seed_and_prefers_the_most_needed():
    attempts = [done("a", NOW), done("b", NOW - 5 * DAY, passed=False)]
    plan = schedule.plan(NAMES, attempts, NOW)
    picks = {tuple(schedule.pick(plan, 3, NOW, s)) for s in range(30)}
    assert picks == {("b", "c", "d"), ("b", "d", "c")}  # the failed one, then never tried by seed
    assert schedule.pick(plan, 2, NOW, 5) == schedule.pick(plan, 2, NOW, 5)
    assert schedule.pick(plan, 4, NOW, 1)[3] == "a"


def test_clock_elapsed_counts_only_running_time():
    row = record(Attempt, clock="running", run_since=100.0, elapsed=50.0)
    assert elapsed(row, 130.0) == 80.0
    assert elapsed(replace(row, clock="paused", run_since=None), 1e9) == 50.0
    assert elapsed(replace(row, clock="solved", run_since=None), 1e9) == 50.0


def test_create_new_never_overwrites(tmp_path):
    p = tmp_path / "sub" / "x.py"
    assert paths.create_new(p, b"first")
    assert not paths.create_new(p, b"second")
    assert p.read_bytes() == b"first"
    assert [q.name for q in p.parent.iterdir()] == ["x.py"]  # no temp files left behind


def test_write_atomic_and_keep_copy(tmp_path):
    p = tmp_path / "x.py"
    paths.write_atomic(p, b"one")
    paths.write_atomic(p, b"two")
    assert p.read_bytes() == b"two"
    copies = [paths.keep_copy(p, tmp_path / "archive", "x") for _ in range(3)]
    assert len(set(copies)) == 3 and all(c.read_bytes() == b"two" for c in copies)
    assert sorted(q.name for q in tmp_path.iterdir()) == ["archive", "x.py"]


@pytest.mark.parametrize("seconds,text", [(0, "0:00"), (59.6, "1:00"), (754, "12:34"),
                                          (3725, "1:02:05"), (-3, "0:00")])
def test_clock_format(seconds, text):
    from practice import clock

    assert clock.fmt(seconds) == text


def test_follow_ups_answered_after_a_failed_attempt_do_not_clear_the_lapse():
    failed = done("a", NOW - DAY, passed=False)
    ratings = [record(Rating, kata="a", round=NOW - DAY + 60, at=NOW - DAY + 60, rating=r) for r in ("knew", "partly")]
    plan = schedule.plan(["b", "a"], [failed, done("b", NOW - 30 * DAY)], NOW, ratings=ratings)
    assert [d.kata for d in plan] == ["a", "b"] and plan[0].lapsed
    assert plan[0].reason.startswith("not passed last time") and plan[0].due_at <= NOW
