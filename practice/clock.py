"""The one source of time. Everything calls `clock.now()`; tests replace it (no sleeping)."""
from __future__ import annotations

import time


def now() -> float:
    """Seconds since the epoch (tests monkeypatch this function)."""
    return time.time()


def fmt(seconds: float) -> str:
    """12:05, or 1:02:05 past an hour."""
    s = int(max(0.0, seconds) + 0.5)
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def when(ts: float) -> str:
    """A timestamp as local date and time, e.g. 2025-03-01 14:02."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


def elapsed(row, t: float) -> float:
    """Seconds on a clock (an attempt's or a mock interview's) at time t: the seconds
    banked before it last started, plus the running stretch since then."""
    run = t - row.run_since if row.clock == "running" and row.run_since else 0.0
    return row.elapsed + max(0.0, run)
