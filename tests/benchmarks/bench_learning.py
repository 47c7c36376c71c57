"""Benchmark: a leave-one-out set the size of Stanford Online Products' test split (60,502
images x 512 dims, 11,316 products of 2 to 12 images), ranked and scored, as a ratio to the
bare matrix multiply of the same vectors measured in the same run.

Run from the repository root (a script, not a test; pytest does not collect this folder):

    python tests/benchmarks/bench_learning.py                 # SOP size, 2 repeats
    python tests/benchmarks/bench_learning.py --n 12000       # a smaller set, same shape
    python tests/benchmarks/bench_learning.py --json OUT.json --repeats 3

Every image is a query against all the others: the multiply is 60,502 x 60,502 x 512 (about
3.7 TFLOP), never held whole (14.6 GB in float32). ``gemm_s`` is that product made block by
block into one reused buffer of the ranking's block size (the floor every exact ranking
pays); ``eval_s`` is matching the descriptors to the dataset (with the row checks), ranking
(top 200 per query and the exact rank of every same-product image) and the ``sop``
protocol's metrics (MAP@R, R-precision, P@1, Recall@1, 10, 100, 1000, mAP). Both are timed
interleaved (multiply, evaluation, multiply, ...), the best of the repeats kept. Apart:
``dataset_s`` building the dataset from the 60,502 labels
(:func:`irviewer.core.label_sets.leave_one_out_dataset`), ``ties_s`` the tie bounds and
``conventions_s`` the conventions table's rows (``eval --conventions``), each also as a
ratio to the multiply. ``peak_mb`` is the peak anonymous memory (RssAnon) above the level
before the evaluation, sampled every 20 ms; the descriptors themselves (124 MB) are
allocated before it.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

importlib.import_module("irviewer")  # sets up the BLAS threads, as `python -m irviewer`
import numpy as np  # noqa: E402
from bench_eval import PeakMemory, clustered, figures  # noqa: E402

from irviewer.core.conventions import all_conventions  # noqa: E402
from irviewer.core.descriptors import (  # noqa: E402
    Descriptors,
    DescriptorTable,
    align,
    normalise_rows,
)
from irviewer.core.evaluation import evaluate  # noqa: E402
from irviewer.core.label_sets import leave_one_out_dataset  # noqa: E402
from irviewer.core.protocols import get_protocol  # noqa: E402
from irviewer.core.ranking import rank  # noqa: E402
from irviewer.core.ranking.ranker import SCORE_BLOCK_BYTES  # noqa: E402

SOP_IMAGES, SOP_PRODUCTS = 60_502, 11_316


def sop_like(rng: np.random.Generator, n: int, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (labels, vectors) of ``n`` images in products of 2 to 12 images (SOP's range,
    about 5.3 on average), each image its product's centre plus noise."""
    sizes: list[int] = []
    while sum(sizes) < n:
        sizes.append(int(rng.choice(np.arange(2, 13), p=_size_weights())))
    sizes[-1] -= sum(sizes) - n
    if sizes[-1] < 2:
        sizes[-2] += sizes.pop()
    labels = np.repeat(np.arange(len(sizes)), sizes)
    rng.shuffle(labels)
    centers = rng.standard_normal((len(sizes), dim), dtype=np.float32)
    return labels, clustered(rng, centers, labels, noise=2.0)


def _size_weights() -> np.ndarray:
    """Weights of product sizes 2..12 whose mean is about SOP's 60,502 / 11,316 = 5.35."""
    w = np.exp(-0.28 * np.arange(11))
    return w / w.sum()


def bare_gemm_blocks(x: np.ndarray) -> tuple[float, float]:
    """Return (wall, CPU) seconds of x @ x.T made a block of rows at a time into one reused
    buffer of the ranking's block size (:data:`SCORE_BLOCK_BYTES`)."""
    rows = max(1, SCORE_BLOCK_BYTES // (4 * len(x)))
    out = np.empty((rows, len(x)), dtype=np.float32)
    t, c = time.perf_counter(), time.process_time()
    for a in range(0, len(x), rows):
        b = min(a + rows, len(x))
        np.matmul(x[a:b], x.T, out=out[:b - a])
    return time.perf_counter() - t, time.process_time() - c


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=SOP_IMAGES, help="images (default: SOP's)")
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--json", type=Path, metavar="OUT")
    args = parser.parse_args()
    rng = np.random.default_rng(11)
    labels, x = sop_like(rng, args.n, args.dim)
    t = time.perf_counter()
    dataset = leave_one_out_dataset(labels, names=[f"im{i}" for i in range(args.n)],
                                    protocols=("sop",))
    dataset_s = time.perf_counter() - t
    descriptors = Descriptors(path=Path("sop-like.npy"), dim=args.dim,
                              tables=(DescriptorTable(dataset.gallery, x),))
    xn = normalise_rows(x)
    protocol = get_protocol("sop")
    gemm = gemm_cpu = best = best_cpu = ties = table = float("inf")
    peak, summary = 0.0, {}
    for _ in range(args.repeats):
        wall, cpu = bare_gemm_blocks(xn)
        gemm, gemm_cpu = min(gemm, wall), min(gemm_cpu, cpu)
        with PeakMemory() as mem:
            t, c = time.perf_counter(), time.process_time()
            ev = evaluate(dataset, rank(align(descriptors, dataset), dataset), protocol)
            elapsed, cpu = time.perf_counter() - t, time.process_time() - c
        best, best_cpu, peak = min(best, elapsed), min(best_cpu, cpu), max(peak, mem.peak)
        summary = {k: round(100 * float(v), 2) for k, v in ev.summary.items()
                   if not k.startswith("n_")}
        t = time.perf_counter()
        _ = ev.ties
        ties = min(ties, time.perf_counter() - t)
        t = time.perf_counter()
        all_conventions(ev)
        table = min(table, time.perf_counter() - t)
        print(f"  repeat: multiply {wall:.1f} s, evaluation {elapsed:.1f} s", file=sys.stderr)
    out = {"case": f"{args.n:,} x {args.n:,} x {args.dim} leave-one-out (sop)",
           **figures(best, gemm, best_cpu, gemm_cpu, peak),
           "dataset_s": round(dataset_s, 3), "dataset_ratio": round(dataset_s / gemm, 4),
           "ties_s": round(ties, 3), "ties_ratio": round(ties / gemm, 4),
           "conventions_s": round(table, 3), "conventions_ratio": round(table / gemm, 4),
           "summary": summary}
    print(json.dumps(out, indent=1))
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
