"""How quickly `kata check` says what is wrong: a failing grading of every catalogued bug, as
a whole process, against the floor of importing what grading needs.

    python benchmarks/fail_speed.py [--per-kata 5] [KATA ...]

Times `kata check KATA --file BUG.py` (shrinking, the likely cause and the observed relations
included) for each catalogued bug of each kata (the first --per-kata of them; 0: all), each
run beside a run of `python -c "import numpy, click"` so that drift in the machine's speed
hits both alike, and prints, kata by kata, the median and the worst time and their ratio to
the floor's median. The aims: a median of at most 2.5 times the floor (about half a second),
the worst at most 6 times.
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
sys.path.insert(0, str(ROOT))

from graders.engine import bugs as catalogue  # noqa: E402
from practice import catalogue as katas  # noqa: E402


def timed(cmd: list[str], env: dict, cwd) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("katas", nargs="*", help="katas to time (default: all)")
    parser.add_argument("--per-kata", type=int, default=5, help="bugs timed per kata (0: every one)")
    args = parser.parse_args()

    kata_cmd = shutil.which("kata") or str(Path(sys.executable).with_name("kata"))
    floor_cmd = [sys.executable, "-c", "import numpy, click"]
    work = Path(tempfile.mkdtemp(prefix="kata-fail-bench-"))
    env = dict(os.environ, KATA_HOME=str(work / "home"))
    subprocess.run([sys.executable, "-m", "compileall", "-q", "kata.py", "practice", "graders", "solutions"],
                   cwd=ROOT, stdout=subprocess.DEVNULL, check=False)
    timed(floor_cmd, env, work)
    floors, rows, every = [], [], []
    print(f"{'kata':24} {'bugs':>5} {'median s':>9} {'worst s':>8} {'median x':>9} {'worst x':>8}")
    for name in args.katas or katas.names():
        bugs = catalogue.load(name)[:args.per_kata or None]
        times = []
        for bug in bugs:
            path = work / bug.name / f"{name}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(bug.source)
            times.append(timed([kata_cmd, "check", name, "--file", str(path)], env, work))
            floors.append(timed(floor_cmd, env, work))
        floor = statistics.median(floors)
        every += times
        rows.append((name, len(times), statistics.median(times), max(times)))
        print(f"{name:24} {len(times):5} {rows[-1][2]:9.3f} {rows[-1][3]:8.3f} {rows[-1][2] / floor:9.2f} "
              f"{rows[-1][3] / floor:8.2f}")
    floor = statistics.median(floors)
    print(f"{'every kata':24} {len(every):5} {statistics.median(every):9.3f} {max(every):8.3f} "
          f"{statistics.median(every) / floor:9.2f} {max(every) / floor:8.2f}")
    print(f"floor: python -c 'import numpy, click', median {floor:.3f} s over {len(floors)} runs")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
