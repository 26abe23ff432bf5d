"""How quickly `kata check` answers, against the floor of importing what grading needs.

    python benchmarks/check_speed.py [--runs 15] [--kata softmax]

Times, as whole processes, `kata check KATA --file solutions/KATA.py` (a passing attempt)
and `python -c "import numpy, click"` (nothing can grade faster than loading these: the
command needs click, the judge and the attempt's process each need NumPy), alternating
the two so that drift in the machine's speed hits both alike, and prints the median of
each and their ratio. The aim is a ratio of at most 2.

The project's modules are compiled to bytecode first (`compileall`), as any install whose
Python may write its caches has them after one run: with PYTHONDONTWRITEBYTECODE set, as on
some machines, every `kata` would otherwise compile its sources anew, while NumPy's and
click's bytecode came with their install.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(cmd: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="timed runs of each command")
    parser.add_argument("--kata", default="softmax", help="which kata's reference to grade")
    args = parser.parse_args()

    kata_cmd = shutil.which("kata") or str(Path(sys.executable).with_name("kata"))
    check = [kata_cmd, "check", args.kata, "--file", f"solutions/{args.kata}.py"]
    floor = [sys.executable, "-c", "import numpy, click"]
    env = dict(os.environ, KATA_HOME=tempfile.mkdtemp(prefix="kata-bench-"))

    subprocess.run([sys.executable, "-m", "compileall", "-q", "kata.py", "practice", "graders", "solutions"],
                   cwd=ROOT, stdout=subprocess.DEVNULL, check=False)
    for cmd in (check, floor):  # warm the file cache
        timed(cmd, env)
    a, b = [], []
    for _ in range(args.runs):
        a.append(timed(check, env))
        b.append(timed(floor, env))
    ratios = [x / y for x, y in zip(a, b)]
    print(f"{'command':46} {'min':>7} {'median':>7} {'max':>7}  (seconds, {args.runs} runs)")
    for name, xs in ((" ".join(check[1:]), a), ("python -c 'import numpy, click'", b)):
        print(f"{name:46} {min(xs):7.3f} {statistics.median(xs):7.3f} {max(xs):7.3f}")
    print(f"{'ratio, pair by pair':46} {min(ratios):7.2f} {statistics.median(ratios):7.2f} {max(ratios):7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
