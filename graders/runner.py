"""The grading child: `python -m graders.runner KATA ATTEMPT RESULTS`.

Runs the kata's grader under pytest on the attempt, with a memory limit, writing JSON
lines to RESULTS (see graders.plugin). Started by graders.harness, never by hand.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UNUSED_PLUGINS = ("doctest", "junitxml", "pastebin", "unittest", "stepwise", "logging",
                  "setuponly", "setupplan", "faulthandler")
MEMORY_LIMIT_MB = int(os.environ.get("KATA_MEMORY_LIMIT_MB", "6144"))


def limit_memory(megabytes: int) -> None:
    """Cap the address space so a runaway allocation fails one check, not the machine."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return
    limit = megabytes << 20
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def main(argv: list[str]) -> int:
    kata, attempt, results = argv
    limit_memory(MEMORY_LIMIT_MB)
    import pytest

    grader = ROOT / "graders" / f"test_{kata}.py"
    args = [
        str(grader), "--impl", attempt, "--results", results,
        "-p", "graders.plugin", "-p", "pytest_timeout", "-p", "no:cacheprovider",
        "-q", "--tb=no", "--no-header", "--rootdir", str(ROOT), "-c", os.devnull,
        "--timeout-method", "signal", "-W", "ignore", "--assert=plain",
        # built-in plugins that grading never uses cost start-up time
        *[arg for p in UNUSED_PLUGINS for arg in ("-p", f"no:{p}")],
    ]
    return int(pytest.main(args))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
