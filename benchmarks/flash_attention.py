"""Time the flash_attention reference against plain attention and PyTorch's fused kernel.

Run from the repository root:

    python benchmarks/flash_attention.py

At T = 4096, d = 64, float64, causal and not, it times the reference
`solutions.flash_attention.flash_attention` (default block size), a plain full-matrix
NumPy attention, and, when PyTorch can be imported,
`torch.nn.functional.scaled_dot_product_attention` on the CPU with as many threads as
NumPy's BLAS uses. It also reports the tracemalloc peak of the two NumPy versions.

PyTorch is optional and never a dependency of the katas. To include it, install the CPU
build, best in a separate virtual environment:

    pip install torch==2.13.0

(on the project's machines that version is taken from a wheel already on disk). With
threadpoolctl installed (`pip install threadpoolctl`) the script reads NumPy's BLAS
thread count from it; without it, it assumes os.cpu_count().

Timings on a shared machine are only as good as its quietest moment: the script prints
the load average it started under.
"""
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from solutions.flash_attention import flash_attention  # noqa: E402

T, D = 4096, 64
REPEATS = 7


def full_attention(q, k, v, causal=True):
    """Textbook attention: the whole (T_q, T_k) score matrix at once."""
    t_q, t_k = q.shape[-2], k.shape[-2]
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])           # (..., T_q, T_k)
    if causal:
        s = np.where(np.triu(np.ones((t_q, t_k), bool), t_k - t_q + 1), -np.inf, s)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ v


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


def time_ms(fn):
    """(best, median) wall time in ms over REPEATS calls, after one warm-up call."""
    # OpenBLAS and PyTorch both keep idle worker threads spinning for a moment after a
    # call; let the last method's threads go to sleep so they do not steal this one's cores
    time.sleep(0.5)
    fn()
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return min(times), statistics.median(times)


def peak_mib(fn):
    """Peak memory tracemalloc sees during fn(), above what was in use when it began."""
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    fn()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak / 2**20


def describe_machine(threads, source, torch):
    """Print what the figures depend on: sizes, NumPy and its BLAS threads, the load, torch."""
    print(f"T = {T}, d = {D}, float64; best and median of {REPEATS} after a warm-up")
    print(f"numpy {np.__version__}, BLAS threads {threads} (from {source})")
    knobs = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")
    blas_env = {n: os.environ[n] for n in knobs if n in os.environ}
    if blas_env:
        print("environment: " + ", ".join(f"{n}={val}" for n, val in blas_env.items()))
    if hasattr(os, "getloadavg"):
        print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    if torch is None:
        print("torch not installed: its rows are skipped (see this script's docstring)")
    else:
        print(f"torch {torch.__version__}, torch.get_num_threads() = {torch.get_num_threads()}")
    print()


def measure(q, k, v, causal, torch, tensors):
    """Rows (name, causal, best ms, median ms, ratio to torch, peak MiB) for one masking."""
    methods = {
        "flash_attention (reference)": lambda: flash_attention(q, k, v, causal=causal),
        "full-matrix NumPy": lambda: full_attention(q, k, v, causal=causal),
    }
    if torch is not None:
        sdpa = torch.nn.functional.scaled_dot_product_attention
        methods["torch SDPA (CPU)"] = lambda: sdpa(*tensors, is_causal=causal)
    want = full_attention(q, k, v, causal=causal)
    err = np.abs(flash_attention(q, k, v, causal=causal) - want).max()
    note = f"causal={causal}: max |reference - full| = {err:.1e}"
    if torch is not None:
        got = methods["torch SDPA (CPU)"]().reshape(T, D).numpy()
        note += f", max |torch - full| = {np.abs(got - want).max():.1e}"
    print(note)
    timed = {name: time_ms(fn) for name, fn in methods.items()}
    torch_best = timed.get("torch SDPA (CPU)", (None,))[0]
    rows = []
    for name, (best, median) in timed.items():
        # tracemalloc sees NumPy's allocations, not PyTorch's
        peak = peak_mib(methods[name]) if not name.startswith("torch") else None
        rows.append((name, causal, best, median, best / torch_best if torch_best else None, peak))
    return rows


def main():
    threads, source = blas_threads()
    try:
        import torch
    except ImportError:
        torch = None
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((T, D)) for _ in range(3))
    tensors = None
    if torch is not None:
        torch.set_num_threads(threads)
        # (1, 1, T, d): the fused CPU kernel expects batch and head axes; a bare (T, d)
        # input is sent down the unfused path, several times slower.
        tensors = tuple(torch.from_numpy(a).reshape(1, 1, T, D) for a in (q, k, v))
    describe_machine(threads, source, torch)
    rows = [row for causal in (True, False) for row in measure(q, k, v, causal, torch, tensors)]
    print()
    header = (f"{'method':<28} {'causal':<6} {'best ms':>8} {'median ms':>10} "
              f"{'x torch':>8} {'peak MiB':>9}")
    print(header)
    print("-" * len(header))
    for name, causal, best, median, ratio, peak in rows:
        ratio_s = f"{ratio:.2f}" if ratio is not None else "-"
        peak_s = f"{peak:.1f}" if peak is not None else "-"
        print(f"{name:<28} {str(causal):<6} {best:8.1f} {median:10.1f} {ratio_s:>8} {peak_s:>9}")
    print("x torch: best time over torch's best; peak MiB: tracemalloc peak above the start "
          "(it does not see PyTorch's memory)")


if __name__ == "__main__":
    main()
