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


def optional_torch(threads: int):
    """PyTorch set to `threads` threads, or None when it is not installed (its rows are skipped)."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(threads)
    return torch


def describe_machine(sizes: str, repeats: int, threads: int, source: str, torch) -> None:
    """Print what the figures depend on: sizes, NumPy and its BLAS threads, the load, torch."""
    import numpy as np

    print(f"{sizes}, float64; best and median of {repeats} runs after a warm-up")
    print(f"numpy {np.__version__}, BLAS threads {threads} (from {source})")
    knobs = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")
    blas_env = {n: os.environ[n] for n in knobs if n in os.environ}
    if blas_env:
        print("environment: " + ", ".join(f"{n}={val}" for n, val in blas_env.items()))
    if hasattr(os, "getloadavg"):
        print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    if torch is None:
        print("torch not installed: its rows are skipped (see the script's docstring)")
    else:
        print(f"torch {torch.__version__}, torch.get_num_threads() = {torch.get_num_threads()}")
    print()
