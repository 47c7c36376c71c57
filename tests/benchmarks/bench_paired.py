"""Benchmark: the Monte Carlo randomization test as a ratio to the plain sign-matrix product,
measured in one run.

Run from the repository root (a script, not a test; pytest does not collect this folder):

    python tests/benchmarks/bench_paired.py
    python tests/benchmarks/bench_paired.py --json OUT.json

Per query count n (70: revisited Oxford; 3,368: Market-1501; 20,000), 100,000 sign
assignments of n seeded normal deltas:

``ours_s``: :func:`irviewer.core.paired.randomization_test` (a byte per 8 queries, looked
up in a table of partial sums); ``plain_s``: the textbook form, a random +-1 matrix in
blocks times the deltas (float64), the same number of assignments; ``ratio`` = ours / plain.
``bootstrap_s``: the 10,000-resample percentile interval of the same deltas.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from irviewer.core.paired import (  # noqa: E402
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
    rows = []
    for n in (70, 3368, 20000):
        d = np.random.default_rng(n).normal(0.01, 0.2, n)
        ours = best_of(lambda d=d: randomization_test(d, PERMUTATIONS, 0))
        base = best_of(lambda d=d: plain(d, PERMUTATIONS, 0), repeats=1 if n > 5000 else 3)
        boot = best_of(lambda d=d: bootstrap_interval(d))
        rows.append({"n": n, "ours_s": round(ours, 3), "plain_s": round(base, 3),
                     "ratio": round(ours / base, 3), "bootstrap_s": round(boot, 3)})
        print(f"n={n:>6}  ours {ours:7.3f} s  plain {base:7.3f} s  ratio {ours / base:.3f}"
              f"  bootstrap {boot:6.3f} s", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
