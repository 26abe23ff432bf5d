"""Time the sliding_window reference against full-matrix NumPy and PyTorch's attention with a band mask.

Run from the repository root:

    python benchmarks/sliding_window.py

At T = 4096 and T = 16384, window = 256, d = 64, float64, it times the reference
`solutions.sliding_window.sliding_window_attention`, a full-matrix NumPy attention that
masks everything outside the band, and, when PyTorch can be imported,
`torch.nn.functional.scaled_dot_product_attention` on the CPU with a boolean band mask
and as many threads as NumPy's BLAS uses. It also reports the tracemalloc peak of the two
NumPy versions: the reference's grows linearly with T, the full matrix's with T squared.

The full-matrix version needs about three T x T float64 arrays at once, 6 GiB at
T = 16384. It runs there only when the machine reports that much memory free (with room to
spare), and then once rather than REPEATS times; otherwise its row says why it was skipped.

PyTorch is optional and never a dependency of the katas. To include it, install the CPU
build, best in a separate virtual environment:

    pip install torch==2.13.0

(on the project's machines that version is taken from a wheel already on disk). With
threadpoolctl installed (`pip install threadpoolctl`) the script reads NumPy's BLAS thread
count from it; without it, it assumes os.cpu_count().

Timings on a shared machine are only as good as its quietest moment: the script prints the
load average it started under.
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from measure import blas_threads, describe_machine, optional_torch, peak_mib, time_ms  # noqa: E402

from solutions.sliding_window import sliding_window_attention  # noqa: E402

LENGTHS = (4096, 16384)
WINDOW, D = 256, 64
REPEATS = 5


def full_band_attention(q, k, v, window):
    """Textbook attention with the whole (T, T) score matrix, everything outside the band masked."""
    T = q.shape[-2]
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])            # (T, T)
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    s = np.where((j <= i) & (j > i - window), s, -np.inf)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ v


def free_bytes():
    """Memory the system reports as available, or None where it cannot say."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None








def methods_at(T, q, k, v, torch, notes):
    """{name: (function, repeats)} of what can run at length T; reasons for what cannot go to notes."""
    methods = {"sliding_window (reference)": (lambda: sliding_window_attention(q, k, v, WINDOW), REPEATS)}
    need, free = 3 * 8 * T * T, free_bytes()
    if T <= 4096:
        methods["full-matrix NumPy"] = (lambda: full_band_attention(q, k, v, WINDOW), REPEATS)
    elif free is not None and free > 1.5 * need:
        methods["full-matrix NumPy"] = (lambda: full_band_attention(q, k, v, WINDOW), 1)
        notes.append(f"T={T}: full-matrix NumPy run once, not {REPEATS} times (it needs about "
                     f"{need / 2**30:.0f} GiB; {free / 2**30:.0f} GiB free)")
    else:
        shown = "unknown" if free is None else f"{free / 2**30:.1f} GiB"
        notes.append(f"T={T}: full-matrix NumPy skipped: it needs about {need / 2**30:.0f} GiB, free: {shown}")
    if torch is not None:
        band = np.arange(T)[None, :] <= np.arange(T)[:, None]
        band &= np.arange(T)[None, :] > np.arange(T)[:, None] - WINDOW      # True: may attend
        mask = torch.from_numpy(band).reshape(1, 1, T, T)
        # (1, 1, T, d): the fused CPU kernels expect batch and head axes
        tq, tk, tv = (torch.from_numpy(a).reshape(1, 1, T, D) for a in (q, k, v))
        sdpa = torch.nn.functional.scaled_dot_product_attention
        methods["torch SDPA, band mask (CPU)"] = (lambda: sdpa(tq, tk, tv, attn_mask=mask), REPEATS)
    return methods


def measure(T, torch, notes):
    """Rows (T, name, best, median, peak MiB or None, runs) and a line on the results' agreement."""
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((T, D)) for _ in range(3))
    rows, outputs = [], {}
    for name, (fn, repeats) in methods_at(T, q, k, v, torch, notes).items():
        if repeats == 1:     # one run, timed while tracemalloc watches its peak
            peak, best, out = peak_mib(fn)
            median = best
        else:
            best, median, out = time_ms(fn, repeats)
            # tracemalloc sees NumPy's allocations, not PyTorch's
            peak = peak_mib(fn)[0] if not name.startswith("torch") else None
        outputs[name] = np.asarray(out).reshape(T, D)
        rows.append((T, name, best, median, peak, repeats))
    mine = outputs.pop("sliding_window (reference)")
    agree = ", ".join(f"max |reference - {name.split(' (')[0].split(',')[0]}| = {np.abs(mine - out).max():.1e}"
                      for name, out in outputs.items())
    return rows, f"T={T}: {agree}"


def main():
    threads, source = blas_threads()
    torch = optional_torch(threads)
    describe_machine(f"window = {WINDOW}, d = {D}", REPEATS, threads, source, torch)

    rows, notes = [], []
    for T in LENGTHS:
        found, agree = measure(T, torch, notes)
        rows += found
        print(agree)
    print()

    header = f"{'T':>6} {'method':<28} {'best ms':>9} {'median ms':>10} {'runs':>5} {'peak MiB':>9}"
    print(header)
    print("-" * len(header))
    for T, name, best, median, peak, repeats in rows:
        peak_s = f"{peak:.1f}" if peak is not None else "-"
        print(f"{T:>6} {name:<28} {best:9.1f} {median:10.1f} {repeats:>5} {peak_s:>9}")
    for note in notes:
        print(note)
    print("peak MiB: tracemalloc peak above the start (it does not see PyTorch's memory)")


if __name__ == "__main__":
    main()
