"""How long an attempt may take: a check's time limit, and its top-level code's."""
from __future__ import annotations

import os


class SettingError(ValueError):
    """An environment setting that grading cannot use (a usage error, not the attempt's fault)."""


def check_seconds() -> float:
    """Seconds a check may take (KATA_CHECK_SECONDS, default 10)."""
    text = os.environ.get("KATA_CHECK_SECONDS", "10")
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise SettingError(f"KATA_CHECK_SECONDS must be a positive number of seconds, not {text!r}")
    return value


def load_seconds(check_seconds: float) -> float:
    """Seconds the attempt's top-level code may take: a check's limit, and never less than 2 s,
    since a fresh process also has to start."""
    return max(check_seconds, 2.0)
