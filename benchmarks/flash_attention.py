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
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from measure import blas_threads, describe_machine, optional_torch, peak_mib, time_ms  # noqa: E402

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
    timed = {name: time_ms(fn, REPEATS)[:2] for name, fn in methods.items()}
    torch_best = timed.get("torch SDPA (CPU)", (None,))[0]
    rows = []
    for name, (best, median) in timed.items():
        # tracemalloc sees NumPy's allocations, not PyTorch's
        peak = peak_mib(methods[name])[0] if not name.startswith("torch") else None
        rows.append((name, causal, best, median, best / torch_best if torch_best else None, peak))
    return rows


def main():
    threads, source = blas_threads()
    torch = optional_torch(threads)
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((T, D)) for _ in range(3))
    tensors = None
    if torch is not None:
        # (1, 1, T, d): the fused CPU kernel expects batch and head axes; a bare (T, d)
        # input is sent down the unfused path, several times slower.
        tensors = tuple(torch.from_numpy(a).reshape(1, 1, T, D) for a in (q, k, v))
    describe_machine(f"T = {T}, d = {D}", REPEATS, threads, source, torch)
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
