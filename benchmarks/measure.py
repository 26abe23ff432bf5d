"""What the benchmarks share: BLAS threads, wall time over repeated calls, tracemalloc peaks."""
from __future__ import annotations

import os
import statistics
import time
import tracemalloc


def blas_threads():
    """Threads NumPy's BLAS will use, and where the number came from."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return os.cpu_count() or 1, "os.cpu_count(); threadpoolctl not installed"
    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    mine = [i for i in blas if "numpy" in i.get("filepath", "")] or blas
    if not mine:
        return os.cpu_count() or 1, "os.cpu_count(); no BLAS seen by threadpoolctl"
    return mine[0]["num_threads"], f"threadpoolctl ({mine[0].get('internal_api')})"


def time_ms(fn, repeats: int):
    """(best, median) wall time in ms over `repeats` calls after a warm-up call, and the last result."""
    # OpenBLAS and PyTorch both keep idle worker threads spinning for a moment after a call;
    # let the last method's threads go to sleep so they do not steal this one's cores
    time.sleep(0.5)
    out = fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - start) * 1e3)
    return min(times), statistics.median(times), out


def peak_mib(fn):
    """(peak MiB that tracemalloc sees during fn(), above what was in use when it began; fn's ms; its result)."""
    time.sleep(0.5)
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()
    out = fn()
    ms = (time.perf_counter() - start) * 1e3
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak / 2**20, ms, out
