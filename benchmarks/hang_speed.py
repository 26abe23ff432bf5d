"""How long `kata check` takes to come back from an attempt that never returns.

    python benchmarks/hang_speed.py [--runs 3] [--seconds 10]

Times, as a whole process, `kata check softmax --file F` where F loops forever, with each
check's time limit at --seconds (KATA_CHECK_SECONDS, 10 by default). The check that hangs
costs one limit; the checks after it are not run. The aim: back within the limit and about
two seconds more, with one message that names the call and the line it was running.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENDLESS = "def softmax(z, axis=-1):\n    while True:\n        pass\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs")
    parser.add_argument("--seconds", type=float, default=10.0, help="each check's time limit")
    args = parser.parse_args()
    kata_cmd = shutil.which("kata") or str(Path(sys.executable).with_name("kata"))
    work = Path(tempfile.mkdtemp(prefix="kata-hang-bench-"))
    path = work / "softmax.py"
    path.write_text(ENDLESS)
    env = dict(os.environ, KATA_HOME=str(work / "home"), KATA_CHECK_SECONDS=str(args.seconds))
    times, report = [], {}
    for _ in range(args.runs):
        start = time.perf_counter()
        r = subprocess.run([kata_cmd, "check", "softmax", "--file", str(path), "--json"], env=env, cwd=work,
                           capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - start)
        report = json.loads(r.stdout)
    failed = [c["message"] for c in report["checks"] if not c["passed"]]
    print(f"an endless loop, each check limited to {args.seconds:g} s: back in {min(times):.2f} s at best, "
          f"{statistics.median(times):.2f} s median, {max(times):.2f} s at worst ({args.runs} runs)")
    print(f"{len(failed)} failed check(s), {len(report['skipped'])} not run; the message:\n  {failed[0] if failed else '-'}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
