"""Benchmark: irviewer.evaluate on arrays, as a ratio to the bare matrix multiply and to the
same evaluation read from a descriptor file, measured in one run; and its peak memory, to
show that the gallery is ranked where it lies (no copy of it).

Run from the repository root (a script, not a test; pytest does not collect this folder):

    python tests/benchmarks/bench_api.py            # 1,000 x 10,000 x 512 float32
    python tests/benchmarks/bench_api.py --market   # 3,368 x 19,732 x 2048, Market-1501's size

A Market-1501-like re-identification set (person ids, 6 cameras, id 0 distractors, id -1
junk) given as arrays: ``irviewer.evaluate(queries, gallery, query_labels=...,
gallery_labels=..., query_cams=..., gallery_cams=...)``, the whole call (the dataset built
from the labels, the arrays' sha256, ranking, the market1501 protocol, the document).
``arrays_s`` is the same arrays given with that dataset once built (``evaluate(dataset,
queries=..., gallery=..., query_names=..., gallery_names=...)``, as a training loop gives
them every epoch), ``file_s`` the same vectors in an uncompressed .npz given by path
(``descriptors=``) with the same dataset: the difference is what arrays save, or cost,
against a file. ``gemm_s`` is the bare product of the normalised float32 queries with the
gallery, the floor. Each is the best of the repeats, interleaved. ``peak_mb`` is the peak
anonymous memory (RssAnon) above the level before the call, for arrays and for the file,
against ``gallery_mb``, the size of the gallery array: a copy of the gallery would show as
much again above the file's (whose pages are mapped or read into memory the call frees).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_eval import PeakMemory, bare_gemm, clustered  # noqa: E402

import irviewer  # noqa: E402


def market_arrays(rng: np.random.Generator, n_q: int, n_g: int, dim: int
                  ) -> dict[str, np.ndarray]:
    """Return the arrays of a Market-1501-like set (the proportions of Market-1501's ids,
    distractors and junk images)."""
    n_ids = max(2, n_g * 751 // 19732)
    centers = rng.standard_normal((n_ids + 1, dim), dtype=np.float32)
    g_pid = rng.integers(1, n_ids + 1, n_g)
    g_pid[: n_g * 2798 // 19732] = -1
    g_pid[n_g * 2798 // 19732: n_g * 5798 // 19732] = 0
    q_pid = rng.integers(1, n_ids + 1, n_q)
    return {"queries": clustered(rng, centers, q_pid, noise=3.0),
            "gallery": clustered(rng, centers, g_pid, noise=3.0),
            "query_labels": q_pid, "gallery_labels": g_pid,
            "query_cams": rng.integers(1, 7, n_q), "gallery_cams": rng.integers(1, 7, n_g)}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--market", action="store_true", help="Market-1501's size")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    n_q, n_g, dim = (3368, 19732, 2048) if args.market else (1000, 10000, 512)
    a = market_arrays(np.random.default_rng(0), n_q, n_g, dim)
    labels = {k: a[k] for k in ("query_labels", "gallery_labels", "query_cams",
                                "gallery_cams")}
    first = irviewer.evaluate(a["queries"], a["gallery"], **labels)
    dataset = first._opened.dataset
    q_unit = a["queries"] / np.linalg.norm(a["queries"], axis=1, keepdims=True)
    with tempfile.TemporaryDirectory() as tmp:
        npz = Path(tmp) / "desc.npz"
        np.savez(npz, queries=a["queries"], gallery=a["gallery"],
                 query_names=np.array(dataset.query_names), gallery_names=np.array(
                     [f"g{i}" for i in range(n_g)]))
        names = {"query_names": np.array(dataset.query_names),
                 "gallery_names": np.array(dataset.gallery)}
        times: dict[str, list[float]] = {"gemm_s": [], "labels_s": [], "arrays_s": [],
                                         "file_s": []}
        peaks = {"arrays": 0.0, "file": 0.0}
        for _ in range(args.repeats):
            times["gemm_s"].append(bare_gemm(q_unit, a["gallery"]))
            t = time.perf_counter()
            result = irviewer.evaluate(a["queries"], a["gallery"], **labels)
            times["labels_s"].append(time.perf_counter() - t)
            with PeakMemory() as memory:
                t = time.perf_counter()
                arrays = irviewer.evaluate(dataset, queries=a["queries"], gallery=a["gallery"],
                                           **names)
                times["arrays_s"].append(time.perf_counter() - t)
            peaks["arrays"] = max(peaks["arrays"], memory.peak)
            with PeakMemory() as memory:
                t = time.perf_counter()
                by_file = irviewer.evaluate(dataset, descriptors=npz)
                times["file_s"].append(time.perf_counter() - t)
            peaks["file"] = max(peaks["file"], memory.peak)
    for other in (arrays, by_file):
        for mine, theirs in zip(result.to_dict()["evaluations"],
                                other.to_dict()["evaluations"], strict=True):
            assert {**mine, "method": ""} == {**theirs, "method": ""}
    best = {k: min(v) for k, v in times.items()}
    print(f"{n_q:,} x {n_g:,} x {dim}: mAP {100 * result.summary['mAP']:.2f}, "
          f"CMC@1 {100 * result.summary['CMC@1']:.2f} (the same numbers three ways)")
    print("  " + "  ".join(f"{k} {v:.3f}" for k, v in best.items()))
    print(f"  labels / gemm {best['labels_s'] / best['gemm_s']:.2f}   "
          f"arrays / gemm {best['arrays_s'] / best['gemm_s']:.2f}   "
          f"file / gemm {best['file_s'] / best['gemm_s']:.2f}   "
          f"arrays / file {best['arrays_s'] / best['file_s']:.2f}")
    print(f"  peak_mb arrays {peaks['arrays']:.0f}, file {peaks['file']:.0f} above the start; "
          f"gallery_mb {a['gallery'].nbytes / 2**20:.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
