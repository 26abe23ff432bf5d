"""How long grading a correct answer takes, kata by kata, with the attempt's interpreter warm.

    python benchmarks/grade_speed.py [--runs 5] [KATA ...]

Grades each kata's reference solution (`graders.engine.harness.grade`) --runs times after one
warm-up in this process, as `kata watch` and the test suite do, and prints the minimum
and the median of the report's seconds, and the judge's own CPU seconds (the attempt's
process runs beside it). The bar is for the whole command: `kata check NAME --file
solutions/NAME.py` within 1.5 s for every kata (0.28 to 1.01 s measured on two idle cores,
top_p the slowest); this shows which part of that is the grading itself.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from graders.engine import sandbox  # noqa: E402
from graders.engine.harness import grade  # noqa: E402
from practice import catalogue  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("katas", nargs="*", help="katas to time (default: all)")
    parser.add_argument("--runs", type=int, default=5, help="timed gradings of each reference")
    args = parser.parse_args()
    sandbox.warm_up()
    print(f"{'kata':24} {'min s':>7} {'median s':>9} {'judge cpu s':>12}  ({args.runs} runs, warm)")
    for name in args.katas or catalogue.names():
        path = catalogue.get(name).solution
        report = grade(name, path)  # warm-up: imports the grader and the reference
        if not report["passed"]:
            print(f"{name:24} the reference fails its grader")
            continue
        walls, cpus = [], []
        for _ in range(args.runs):
            cpu = time.process_time()
            walls.append(grade(name, path)["seconds"])
            cpus.append(time.process_time() - cpu)
        print(f"{name:24} {min(walls):7.3f} {statistics.median(walls):9.3f} {statistics.median(cpus):12.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
