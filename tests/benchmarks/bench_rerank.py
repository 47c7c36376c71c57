"""Benchmark: ``irviewer eval --rerank k-reciprocal`` as a whole process, against the query x
gallery multiply and the all-pairs multiply of the same vectors measured in the same run.

Run from the repository root (a script, not a test):

    python tests/benchmarks/bench_rerank.py                   # Market-1501 size
    python tests/benchmarks/bench_rerank.py --msmt            # also MSMT17 size (about 10 min)
    python tests/benchmarks/bench_rerank.py --reference DIR   # also the authors' function
    python tests/benchmarks/bench_rerank.py --no-market --msmt   # only the MSMT17 size

Sizes (synthetic, clustered 2048-d float32 descriptors of person ids; folders in the
Market-1501 layout, one tiny JPEG per image, built once in ``--workdir``):

* Market-1501: 3,368 queries x 19,732 gallery images (2,798 of id -1, removed for every
  query and, as torchreid drops them, no part of the re-ranking), the folder and .npz of
  ``bench_eval.py``'s case (d);
* MSMT17: 11,659 queries x 82,161 gallery images (no id -1).

Figures: ``eval_s`` the wall time of the whole ``python -m irviewer eval DATASET -d F.npz
--rerank k-reciprocal --json OUT`` process (reading, re-ranking, scoring, writing), ``gemm_s``
the bare float32 product of the normalised queries with the gallery (the floor of any exact
ranking), ``ratio`` their ratio (target at Market size: <= 10), ``cpu_ratio`` the ratio of their
CPU seconds (all threads; much less disturbed by other processes on a shared machine),
``peak_mb`` the process's
peak resident memory, VmHWM (targets: <= 2048 MB at Market size, <= 4096 MB at MSMT size).
The process and the multiply are interleaved and the best of ``--repeats`` each is kept.
``all_pairs_s`` is the bare float32 product of every image the re-ranking relates (the
queries and the gallery without id -1) with every other, in blocks of rows (best of two,
after the repeats; once at MSMT17 size), and the second ``ratio`` the process's time over it.

``--reference DIR``: DIR holds ``re_ranking_ranklist.py`` of zhunzhong07/person-re-ranking
(``python-version/``), fetched by you; it is not part of irviewer. Its ``re_ranking`` is run
once at Market size in a separate process (about 12.5 GB and several minutes: run it when
nothing else heavy runs) on float32 Euclidean distances of the same unit vectors, active
gallery only; its time and peak are printed, and its distances are compared with irviewer's
(the largest difference, and how many entries differ by more than 1e-6).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from bench_eval import (  # noqa: E402
    bare_gemm,
    bare_gemm_times,
    clustered,
    file_arrays,
    market_folder,
    process_env,
    run_process,
    vm_hwm_mb,
    write_reid_set,
)

SPEC = "k-reciprocal"
MSMT_QUERIES, MSMT_GALLERY, MSMT_IDS = 11_659, 82_161, 3_060


def msmt_folder(workdir: Path, n_q: int = MSMT_QUERIES,
                n_g: int = MSMT_GALLERY) -> tuple[Path, Path]:
    """Return (folder, descriptor file) of an MSMT17-sized set in the Market-1501 layout,
    built once in ``workdir``: ids 1..3,060 on cameras 1..15, clustered 2048-d vectors
    (``n_q`` queries and ``n_g`` gallery images, MSMT17's by default; the ids in proportion
    for other sizes)."""
    stem = ("msmt17-like" if (n_q, n_g) == (MSMT_QUERIES, MSMT_GALLERY)
            else f"msmt17-like-{n_q}x{n_g}")
    root, npz = workdir / stem, workdir / f"{stem}.npz"
    if (root / "DONE").exists() and npz.exists():
        return root, npz
    print(f"  building the MSMT17-shaped folder and .npz, {n_q:,} x {n_g:,} (once) ...",
          file=sys.stderr)
    n_ids = max(2, round(MSMT_IDS * n_g / MSMT_GALLERY))
    rng = np.random.default_rng(17)

    def names(pids: np.ndarray, frame0: int) -> list[str]:
        cams = rng.integers(1, 16, len(pids))
        return [f"{pid:04d}_c{cam}s1_{frame0 + i:06d}_00.jpg"
                for i, (pid, cam) in enumerate(zip(pids.tolist(), cams.tolist(), strict=True))]

    g_pid = rng.integers(1, n_ids + 1, n_g)
    q_pid = rng.integers(1, n_ids + 1, n_q)
    g_names, q_names = names(g_pid, 0), names(q_pid, 500_000)
    g_order, q_order = np.argsort(g_names), np.argsort(q_names)
    centers = rng.standard_normal((n_ids + 1, 2048), dtype=np.float32)
    gallery = clustered(rng, centers, g_pid[g_order], noise=3.0)
    queries = clustered(rng, centers, q_pid[q_order], noise=3.0)
    write_reid_set(root, npz, q_names, g_names, queries, gallery, "bench_rerank.py")
    return root, npz


def process_case(folder: Path, npz: Path, workdir: Path, repeats: int,
                 all_pairs_runs: int = 2) -> dict[str, float]:
    """Return the whole ``eval --rerank`` process's best time and peak, the query x gallery
    multiply's (interleaved with the process, best of ``repeats`` each), and the all-pairs
    multiply's (:func:`all_pairs_gemm`, after them, best of ``all_pairs_runs``)."""
    command = ["eval", str(folder), "-d", str(npz), "--rerank", SPEC,
               "--json", str(workdir / "rerank-out.json")]
    q, g = file_arrays(npz)
    bare_gemm(q, g)
    gemm = best = gemm_cpu = best_cpu = float("inf")
    peak = 0.0
    for _ in range(repeats):
        wall, cpu = bare_gemm_times(q, g)
        gemm, gemm_cpu = min(gemm, wall), min(gemm_cpu, cpu)
        elapsed, cpu, hwm = run_process(command)
        best, best_cpu, peak = min(best, elapsed), min(best_cpu, cpu), max(peak, hwm)
    del q, g
    all_pairs = min(all_pairs_gemm(npz) for _ in range(all_pairs_runs))
    summary = json.loads((workdir / "rerank-out.json").read_text())["evaluations"][0]["summary"]
    print(f"  mAP with {SPEC}: {100 * summary['mAP']:.2f} %", file=sys.stderr)
    return {"eval_s": round(best, 2), "gemm_s": round(gemm, 3),
            "ratio": round(best / gemm, 2), "cpu_ratio": round(best_cpu / gemm_cpu, 2),
            "peak_mb": round(peak, 1), "all_pairs_s": round(all_pairs, 3),
            "all_pairs_ratio": round(best / all_pairs, 2)}


def all_pairs_gemm(npz: Path, block_bytes: int = 1 << 30) -> float:
    """Return the wall seconds of the bare all-pairs product of the images a k-reciprocal
    re-ranking relates (the unit queries and the gallery without id -1,
    :func:`active_unit_vectors`) with themselves, float32, in blocks of rows (each product
    at most ``block_bytes``) into one reused buffer: every cosine the neighbour lists need,
    computed once."""
    q, g = active_unit_vectors(npz)
    every = np.concatenate([q, g])
    del q, g
    rows = max(1, min(len(every), block_bytes // (4 * len(every))))
    out = np.empty((rows, len(every)), dtype=np.float32)
    t = time.perf_counter()
    for a in range(0, len(every), rows):
        b = min(len(every), a + rows)
        np.matmul(every[a:b], every.T, out=out[:b - a])
    return time.perf_counter() - t


_REFERENCE_RUN = """
import sys, time, numpy as np
sys.path.insert(0, sys.argv[1])
from re_ranking_ranklist import re_ranking
data = np.load(sys.argv[2])
q, g = data["q"], data["g"]
def dist(a, b):
    return np.sqrt(np.maximum(2 - 2 * (a @ b.T), 0)).astype(np.float32)
t = time.perf_counter()
final = re_ranking(dist(q, g), dist(q, q), dist(g, g), 20, 6, 0.3)
print(time.perf_counter() - t)
np.save(sys.argv[3], final)
"""


def active_unit_vectors(npz: Path) -> tuple[np.ndarray, np.ndarray]:
    """Return the unit queries and the unit gallery without id -1 (as irviewer re-ranks)."""
    from irviewer.core.descriptors import normalise_rows

    with np.load(npz) as archive:
        keep = ~np.char.startswith(archive["gallery_names"], "-1_")
        return normalise_rows(archive["queries"]), normalise_rows(archive["gallery"][keep])


def reference_case(reference: Path, npz: Path, workdir: Path) -> dict[str, float]:
    """Run the authors' ``re_ranking`` once at Market size in its own process; return its
    time (the function alone, and the process), peak resident memory, and its agreement
    with irviewer's distances on the same vectors."""
    from irviewer.core.rerank.kreciprocal import iter_encode_joined

    q, g = active_unit_vectors(npz)
    vectors = workdir / "reference-input.npz"
    np.savez(vectors, q=q, g=g)
    out = workdir / "reference-final.npy"
    t = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", _REFERENCE_RUN, str(reference),
                              str(vectors), str(out)], env=process_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = 0.0
    while child.poll() is None:
        peak = max(peak, vm_hwm_mb(child.pid))
        time.sleep(0.05)
    elapsed = time.perf_counter() - t
    stdout, stderr = child.communicate()
    if child.returncode:
        raise SystemExit(f"the reference failed: {stderr.decode()}")
    function_s = float(stdout.decode().split()[-1])
    reference = np.load(out)
    steps = iter_encode_joined(np.concatenate([q, g]), len(q), 20, 6, 0.3)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            encoding = done.value
            break
    diff = np.zeros(len(q), dtype=np.float32)
    over = 0
    for a in range(0, len(q), 512):
        mine = encoding.distance_rows(a, min(len(q), a + 512))
        gap = np.abs(mine - reference[a:a + 512])
        diff[a:a + 512] = gap.max(axis=1)
        over += int((gap > 1e-6).sum())
    return {"function_s": round(function_s, 1), "process_s": round(elapsed, 1),
            "peak_mb": round(peak, 1), "max_abs_diff": float(diff.max()),
            "entries_over_1e-6": over, "entries": int(reference.size)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--msmt", action="store_true", help="also the MSMT17-sized case")
    parser.add_argument("--reference", type=Path, metavar="DIR",
                        help="folder with the authors' re_ranking_ranklist.py (run once, "
                        "about 12.5 GB)")
    parser.add_argument("--no-market", action="store_true",
                        help="skip the Market-sized process (with --msmt or --reference)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/irviewer-bench"))
    parser.add_argument("--json", type=Path, help="write the figures as JSON")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, float]] = {}
    folder, npz = market_folder(args.workdir)
    if not args.no_market:
        results["market"] = process_case(folder, npz, args.workdir, args.repeats)
    if args.reference is not None:
        results["reference"] = reference_case(args.reference, npz, args.workdir)
        results["reference"]["gemm_s"] = (results["market"]["gemm_s"] if "market" in results
                                          else round(bare_gemm(*file_arrays(npz)), 3))
    if args.msmt:
        folder, npz = msmt_folder(args.workdir)
        results["msmt"] = process_case(folder, npz, args.workdir, 1, all_pairs_runs=1)
    print(f"{'case':<11}{'eval s':>9}{'gemm s':>9}{'ratio':>8}{'cpu ratio':>10}{'peak MB':>10}"
          f"{'all-pairs s':>12}{'ratio':>7}  target (on the wall-clock ratio)")
    targets = {"market": "ratio <= 10, peak <= 2048 MB", "msmt": "peak <= 4096 MB"}
    for case in ("market", "msmt"):
        if case in results:
            r = results[case]
            print(f"{case:<11}{r['eval_s']:>9.1f}{r['gemm_s']:>9.2f}{r['ratio']:>8.2f}"
                  f"{r['cpu_ratio']:>10.2f}{r['peak_mb']:>10.0f}{r['all_pairs_s']:>12.2f}"
                  f"{r['all_pairs_ratio']:>7.2f}  {targets[case]}")
    if "reference" in results:
        r = results["reference"]
        gemm = r["gemm_s"]
        print(f"{'reference':<11}{r['function_s']:>9.1f}{gemm:>9.2f}"
              f"{r['function_s'] / gemm:>8.2f}{'':>10}{r['peak_mb']:>10.0f}  the authors' "
              "re_ranking "
              f"(function time; process {r['process_s']} s)")
        print(f"agreement: largest |irviewer - reference| {r['max_abs_diff']:.2e}; "
              f"{r['entries_over_1e-6']:,} of {r['entries']:,} entries differ by more than 1e-6")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
