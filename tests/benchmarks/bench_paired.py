"""Benchmark: the paired statistics (scipy.stats) as ratios to plain numpy forms measured in
the same run.

Run from the repository root (a script, not a test; pytest does not collect this folder):

    python tests/benchmarks/bench_paired.py
    python tests/benchmarks/bench_paired.py --json OUT.json

Per query count n (16: the largest exact test; 70: revisited Oxford; 3,368: Market-1501;
20,000), seeded normal deltas:

Randomization test, 100,000 sign assignments (all 2^16 at n = 16):
``ours_s``: :func:`irviewer.core.paired.randomization_test` (``scipy.stats.monte_carlo_test``
of the sign bits, drawn a byte per 8 queries and looked up in a table of partial sums; at
n = 16 the numpy enumeration); ``plain_s``: the textbook form, a random +-1 matrix in blocks
times the deltas (float64); ``scipy_perm_s``: ``scipy.stats.permutation_test`` with
``permutation_type="samples"`` flipping the deltas' signs itself (exact at n = 16).
``ratio`` = ours / plain (at n = 16: ours / scipy_perm).

Bootstrap, 10,000 resamples: ``bootstrap_s``: :func:`irviewer.core.paired.bootstrap_interval`
(``scipy.stats.bootstrap``, percentile); ``numpy_boot_s``: the same resamples as a numpy
loop (the code before scipy: index rows, row means, ``np.quantile``); ``boot_ratio``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from irviewer.core.paired import (  # noqa: E402
    BOOTSTRAP_RESAMPLES,
    PERMUTATIONS,
    TIE_TOLERANCE,
    bootstrap_interval,
    randomization_test,
)


def plain(d: np.ndarray, permutations: int, seed: int) -> float:
    """Return the Monte Carlo p of the textbook sign-matrix product."""
    n = len(d)
    rng = np.random.default_rng(seed)
    threshold = abs(d.sum()) - TIE_TOLERANCE * np.abs(d).sum()
    block = max(1, (1 << 20) // n)
    extreme = 0
    for start in range(0, permutations, block):
        rows = min(block, permutations - start)
        signs = rng.integers(0, 2, size=(rows, n)).astype(np.float64) * 2.0 - 1.0
        extreme += int(np.count_nonzero(np.abs(signs @ d) >= threshold))
    return (extreme + 1) / (permutations + 1)


def scipy_permutation(d: np.ndarray, permutations: int, seed: int) -> float:
    """Return the p of ``scipy.stats.permutation_test`` flipping the deltas' signs."""
    exact = len(d) <= 16
    return float(stats.permutation_test(
        (d,), lambda x, axis=-1: np.abs(x.sum(axis=axis)), permutation_type="samples",
        vectorized=True, n_resamples=np.inf if exact else permutations,
        batch=None if exact else max(1, (1 << 20) // len(d)), alternative="greater",
        rng=np.random.default_rng(seed)).pvalue)


def numpy_bootstrap(d: np.ndarray, resamples: int, seed: int) -> tuple[float, float]:
    """Return the percentile interval by the numpy loop irviewer used before scipy."""
    n = len(d)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    block = max(1, (1 << 21) // n)
    for start in range(0, resamples, block):
        stop = min(resamples, start + block)
        means[start:stop] = d[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    return float(lo), float(hi)


def best_of(f, repeats: int = 3) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    randomization_test(np.ones(20), 10)  # scipy.stats imported before any timing
    rows = []
    for n in (16, 70, 3368, 20000):
        d = np.random.default_rng(n).normal(0.01, 0.2, n)
        big = 1 if n > 5000 else 3
        ours = best_of(lambda d=d: randomization_test(d, PERMUTATIONS, 0))
        base = (float("nan") if n <= 16 else
                best_of(lambda d=d: plain(d, PERMUTATIONS, 0), repeats=big))
        perm = best_of(lambda d=d: scipy_permutation(d, PERMUTATIONS, 0), repeats=big)
        boot = best_of(lambda d=d: bootstrap_interval(d))
        nboot = best_of(lambda d=d: numpy_bootstrap(d, BOOTSTRAP_RESAMPLES, 0))
        ratio = ours / (perm if n <= 16 else base)
        rows.append({"n": n, "ours_s": round(ours, 4), "plain_s": round(base, 4),
                     "scipy_perm_s": round(perm, 4), "ratio": round(ratio, 3),
                     "bootstrap_s": round(boot, 4), "numpy_boot_s": round(nboot, 4),
                     "boot_ratio": round(boot / nboot, 3)})
        print(f"n={n:>6}  ours {ours:7.3f} s  plain {base:7.3f} s  scipy permutation_test "
              f"{perm:7.3f} s  ratio {ratio:.3f}  |  bootstrap {boot:6.3f} s  numpy loop "
              f"{nboot:6.3f} s  ratio {boot / nboot:.3f}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
