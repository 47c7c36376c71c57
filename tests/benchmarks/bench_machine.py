"""Benchmark: every figure of a big machine (many cores, perhaps a GPU) in one run.

Run from the repository root, with numpy, scipy, pillow and platformdirs (irviewer's
threadpoolctl for ``--threads``; torch where it is installed), nothing installed:

    PYTHONPATH=. python tests/benchmarks/bench_machine.py             # within 8 min on 16 cores
    PYTHONPATH=. python tests/benchmarks/bench_machine.py --msmt      # also MSMT17 size
    PYTHONPATH=. python tests/benchmarks/bench_machine.py --quick     # a 2-core machine
    PYTHONPATH=. python tests/benchmarks/bench_machine.py --json OUT.json

It prints the machine (the cores irviewer may use: affinity and CPU quota; the BLAS and its
threads; the GPU), then, each measured against a baseline of the same run:

* bench_eval.py's cases (a) rOxford size, (b) Market-1501 size, (c) 70 x 1,000,000 x 2048
  float16 map (in-process, against the bare multiply of the same arrays) and (d) the whole
  ``irviewer eval`` process on a Market-1501-sized folder;
* where (d)'s process spends its time, stage by stage (machine_stages.py: the process's own
  wall clocks around the functions of each stage, no profiler);
* that the ``eval --json --conventions --scores`` document is byte for byte the same with
  ``--threads 1`` and with every core, on (d)'s folder with 64-d sign descriptors (many
  exact ties), and with ``--device cuda`` where eval has it and a GPU is visible;
* the k-reciprocal re-ranking's whole process (bench_rerank.py) against the query x gallery
  multiply and the all-pairs multiply, at Market-1501 size and, with ``--msmt``, MSMT17
  size (its peak resident memory: the issue's target is 2 GB);
* ``irviewer audit`` with two files over one ``irviewer eval`` (bench_audit.py, 512-d);
* the GPU's floor (machine_torch.py, absolute times) where torch sees a CUDA device:
  Market's multiply, with top-200, with a full sort, the host-to-device copy, the
  float16 million-row map with top-100, MSMT17's all-pairs top-21 in float32 (TF32 off).
  Without one the line says why; ``--torch-device cpu`` runs the same torch code on the
  CPU (to check it; its times are not the GPU's).

``--quick`` runs the same code paths at smaller sizes (a quarter of Market-1501, a 100,000
row map, an eighth of MSMT17) for a 2-core machine. Folders and maps are built once in
``--workdir``. The figures are best of ``--repeats`` (interleaved with their baselines), so
a shared machine's load disturbs them less; the load average is printed at the start and
at the end.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, is_dataclass
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

# irviewer first, as `python -m irviewer` does: importing it sets up the BLAS threads.
importlib.import_module("irviewer")
import bench_audit  # noqa: E402
import bench_eval  # noqa: E402
import bench_rerank  # noqa: E402
import machine_info  # noqa: E402
import machine_stages  # noqa: E402
import numpy as np  # noqa: E402
from machine_torch import TorchSizes, torch_cases  # noqa: E402

from irviewer.core.threads import usable_cores  # noqa: E402

SECTIONS = ("a", "b", "c", "d", "stages", "identity", "rerank", "audit", "gpu")


@dataclass(frozen=True)
class Sizes:
    """The sizes of one run: (queries, gallery) of the Market-shaped folder (cases (b), (d),
    the stages, the threads' identity, re-ranking), the map's rows (case (c)), the
    MSMT17-shaped folder's and the audit's (queries, gallery), and the torch cases'."""

    market: tuple[int, int] = (3368, 19732)
    map_rows: int = 1_000_000
    msmt: tuple[int, int] = (11_659, 82_161)
    audit: tuple[int, int] = (3368, 19732)
    torch: TorchSizes = field(default_factory=TorchSizes)


FULL = Sizes()
QUICK = Sizes(market=(842, 4933), map_rows=100_000, msmt=(1457, 10270), audit=(842, 4933),
              torch=TorchSizes(queries=842, gallery=4933, map_gallery=100_000,
                               all_pairs=6000))

#: Targets, as the figures are printed: (on a 16-core machine, on 2 cores).
TARGETS = {"a": "<= 2.5 (16 cores), <= 2.0 (2 cores)", "b": "<= 1.3 (16), <= 1.4 (2)",
           "c": "<= 1.3, peak <= 2048 MB", "d": "<= 2.0 (16), <= 1.8 (2)",
           "market": "<= 1.5 x the all-pairs multiply, peak <= 2048 MB",
           "msmt": "peak <= 2048 MB",
           "audit": "<= 2.5 (16), <= 3 (2)"}


def in_process_case(case: str, sizes: Sizes, workdir: Path, repeats: int) -> dict[str, float]:
    """Return bench_eval.py's in-process case (a), (b) or (c) at ``sizes``."""
    if case == "a":  # 25 ms against 12 on 2 cores: the best of at least 15, as bench_eval
        ds, q, g = bench_eval.revisited_like(np.random.default_rng(0), 70, 5000, 2048)
        return bench_eval.run_case("(a) 70 x 5,000 x 2048", ds, q, g, max(15, repeats))
    if case == "b":
        n_q, n_g = sizes.market
        ds, q, g = bench_eval.market_like(np.random.default_rng(1), n_q, n_g)
        return bench_eval.run_case(f"(b) {n_q:,} x {n_g:,} x 2048", ds, q, g, repeats)
    return bench_eval.large_case(workdir, max(2, repeats - 1), sizes.map_rows)


def stages_case(sizes: Sizes, workdir: Path, repeats: int) -> dict:
    """Return the stage budget of (d)'s process: the run with the best total of
    ``repeats``, and the bare multiply of the same arrays (best of as many, interleaved)."""
    command = bench_eval.eval_command(workdir, *sizes.market)
    q, g = bench_eval.file_arrays(bench_eval.market_folder(workdir, *sizes.market)[1])
    bench_eval.bare_gemm(q, g)
    best, gemm = None, float("inf")
    for _ in range(repeats):
        gemm = min(gemm, bench_eval.bare_gemm(q, g))
        run = machine_stages.stage_record(command, bench_eval.process_env(),
                                          workdir / "stages.json")
        if best is None or run["total"] < best["total"]:
            best = run
    assert best is not None
    return {"rows": machine_stages.budget_rows(best), "gemm_s": gemm,
            "hash_thread_s": machine_stages.hash_thread_s(best)}


def tied_descriptors(npz: Path, out: Path, dim: int = 64) -> Path:
    """Write, for the images of ``npz`` (a Market-shaped set's names), 64-d sign descriptors
    (+-1: every cosine a multiple of 2/dim, so scores tie exactly and often) of clustered
    person ids; return ``out``."""
    if out.exists():
        return out
    with np.load(npz) as archive:
        q_names, g_names = archive["query_names"], archive["gallery_names"]
    rng = np.random.default_rng(64)

    def signs(names: np.ndarray) -> np.ndarray:
        pids = np.array([int(str(n).split("_")[0]) for n in names])
        centres = rng.standard_normal((pids.max() + 2, dim), dtype=np.float32)
        noisy = centres[pids + 1] + rng.standard_normal((len(pids), dim), dtype=np.float32)
        return np.where(noisy >= 0, 1, -1).astype(np.float32)

    np.savez(out, queries=signs(q_names), gallery=signs(g_names), query_names=q_names,
             gallery_names=g_names)
    return out


def eval_has_device() -> bool:
    """Return True when ``irviewer eval`` takes ``--device`` (a GPU backend)."""
    from irviewer.cli import command_module

    parser = argparse.ArgumentParser()
    command_module("eval").add_arguments(parser)
    return "--device" in parser.format_help()


def identity_case(sizes: Sizes, workdir: Path, cuda: bool) -> dict:
    """Return whether the eval document is byte for byte the same with ``--threads 1`` and
    ``--threads`` every usable core (and ``--device cuda`` when ``cuda`` and eval takes it),
    on (d)'s folder with :func:`tied_descriptors`; with its size and count of tied
    queries."""
    folder, npz = bench_eval.market_folder(workdir, *sizes.market)
    tied = tied_descriptors(npz, workdir / f"{npz.stem}-signs.npz")
    every = usable_cores()
    runs = {"--threads 1": ["--threads", "1"], f"--threads {every}": ["--threads", str(every)]}
    if cuda and eval_has_device():
        runs["--device cuda"] = ["--device", "cuda"]
    texts = {}
    for label, extra in runs.items():
        out = workdir / "identity.json"
        bench_eval.run_process(["eval", str(folder), "-d", str(tied), "--conventions",
                                "--scores", "--json", str(out), *extra])
        texts[label] = out.read_bytes()
    first = next(iter(texts.values()))
    summary = json.loads(first)["evaluations"][0]["summary"]
    return {"compared": list(texts), "identical": all(t == first for t in texts.values()),
            "bytes": len(first), "n_tied": summary.get("n_tied"),
            "n_evaluated": summary.get("n_evaluated"),
            "device_compared": "--device cuda" in texts}


def rerank_case(which: str, sizes: Sizes, workdir: Path, repeats: int) -> dict[str, float]:
    """Return bench_rerank.py's whole-process re-ranking at Market size (``which`` "market",
    best of ``repeats`` - 1) or MSMT17's ("msmt", once)."""
    if which == "market":
        folder, npz = bench_eval.market_folder(workdir, *sizes.market)
        return bench_rerank.process_case(folder, npz, workdir, max(1, repeats - 1))
    folder, npz = bench_rerank.msmt_folder(workdir, *sizes.msmt)
    return bench_rerank.process_case(folder, npz, workdir, 1, all_pairs_runs=1)


def audit_case(sizes: Sizes, repeats: int) -> dict[str, float]:
    """Return bench_audit.py's eval and audit seconds (best of ``repeats``, in turns) on a
    512-d Market-shaped folder, and their ratio."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "market"
        a, b = bench_audit.write_market(root, 512, n_q=sizes.audit[0], n_g=sizes.audit[1])
        eval_s, audit_s = bench_audit.best_of_turns(
            [(["eval", str(root), "-d", str(a)], ROOT),
             (["audit", str(root), "-d", str(a), "-d", str(b), "--json",
               str(Path(tmp) / "audit.json")], ROOT)], repeats)
    return {"eval_s": eval_s, "audit_s": audit_s, "ratio": audit_s / eval_s}


def gpu_case(torch_device: str | None, sizes: Sizes, info: dict) -> dict | str:
    """Return the torch cases on the GPU (or on ``torch_device`` when given), or the
    sentence saying why they were not run."""
    gpu = info["gpu"]
    device = torch_device or ("cuda" if gpu["cuda"] else None)
    if device is None:
        why = ("torch is not installed" if gpu["torch"] is None else
               f"torch {gpu['torch']} sees no CUDA device (torch.cuda.is_available() is "
               "False)")
        return f"skipped: {why}"
    return torch_cases(device, sizes.torch)


# -- printing ------------------------------------------------------------------------------

def print_cases(results: dict) -> None:
    """Print the in-process cases and (d) as bench_eval.py does, with the big machine's
    targets (nothing when none ran)."""
    if not {"a", "b", "c", "d"} & set(results):
        return
    print(f"\n{'case':<5}{'eval s':>9}{'gemm s':>9}{'ratio':>8}{'cpu ratio':>10}{'peak MB':>9}"
          "  target (wall-clock ratio)")
    for case in ("a", "b", "c", "d"):
        if case in results:
            r = results[case]
            print(f"({case}){r['eval_s']:>10.3f}{r['gemm_s']:>9.3f}{r['ratio']:>8.2f}"
                  f"{r['cpu_ratio']:>10.2f}{r['peak_mb']:>9.0f}  {TARGETS[case]}")


def print_stages(stages: dict, market: tuple[int, int]) -> None:
    """Print the stage budget: seconds, share of the process, multiples of the multiply."""
    total = stages["rows"][-1][1]
    gemm = stages["gemm_s"]
    print(f"\nwhere `irviewer eval` spends its time ((d)'s folder, {market[0]:,} x "
          f"{market[1]:,}; the process's own wall clocks around each stage's functions, "
          "no profiler; the fastest of the runs):")
    print(f"  {'stage':<30}{'s':>8}{'share':>8}{'x multiply':>12}")
    for stage, seconds in stages["rows"]:
        if seconds is None:
            print(f"  {stage:<30}{'not found (a function renamed?)':>28}")
            continue
        print(f"  {stage:<30}{seconds:>8.3f}{seconds / total:>8.1%}{seconds / gemm:>12.2f}")
    print(f"  (the bare multiply of the same arrays: {gemm:.3f} s; hashing the descriptor "
          f"file ran {stages['hash_thread_s']:.3f} s, on another thread)")


def print_identity(identity: dict, cuda: bool) -> None:
    """Print the threads' (and device's) identity line."""
    same = "identical" if identity["identical"] else "DIFFERENT"
    print(f"\nsame numbers: `eval --json --conventions --scores` with 64-d sign descriptors "
          f"({identity['n_tied']:,} of {identity['n_evaluated']:,} queries with tied scores):"
          f" {' vs '.join(identity['compared'])}: {same} ({identity['bytes']:,} bytes)")
    if cuda and not identity["device_compared"]:
        print("  (--device cuda not compared: `irviewer eval` has no --device option)")


def print_rerank(rerank: dict, which: str, size: tuple[int, int]) -> None:
    """Print one re-ranking process against both multiplies."""
    label = f"{'Market' if which == 'market' else 'MSMT17'} {size[0]:,} x {size[1]:,}"
    print(f"\nre-ranking (k-reciprocal, whole process), {label}:")
    print(f"  {'eval s':>8}{'q x g s':>9}{'ratio':>7}{'all-pairs s':>12}{'ratio':>7}"
          f"{'peak MB':>9}  target")
    print(f"  {rerank['eval_s']:>8.1f}{rerank['gemm_s']:>9.3f}{rerank['ratio']:>7.2f}"
          f"{rerank['all_pairs_s']:>12.2f}{rerank['all_pairs_ratio']:>7.2f}"
          f"{rerank['peak_mb']:>9.0f}  {TARGETS[which]}")


def print_audit(audit: dict, sizes: Sizes, repeats: int) -> None:
    """Print the audit's time over eval's."""
    print(f"\naudit (two 512-d files) / eval (one), {sizes.audit[0]:,} x {sizes.audit[1]:,}, "
          f"best of {repeats}: eval {audit['eval_s']:.2f} s, audit {audit['audit_s']:.2f} s, "
          f"ratio {audit['ratio']:.2f}  target {TARGETS['audit']}")


def print_gpu(gpu: dict | str) -> None:
    """Print the torch cases (absolute times) or why they were skipped."""
    if isinstance(gpu, str):
        print(f"\nGPU cases: {gpu}")
        return
    where = gpu.get("name", gpu["device"])
    s: TorchSizes = gpu["sizes"]
    print(f"\nGPU cases on {where} (absolute, warm, best of 5; float32 without TF32); a "
          f"fresh process imports torch in {gpu['import_s']:.2f} s and runs its first "
          f"operation on {gpu['device']} (the context) in {gpu['context_s']:.2f} s; the "
          f"float32 product and top-5 agree with numpy's: {'yes' if gpu['agrees'] else 'NO'}")
    market = f"{s.queries:,} x {s.gallery:,} x {s.dim}"
    for key, label in (("multiply", f"{market} float32 multiply"),
                       ("top200", "  the same, and top-200 of every row"),
                       ("full_sort", "  the same, and every row sorted"),
                       ("to_device", "  both matrices, host -> device"),
                       ("f16_top100", f"{s.map_queries} x {s.map_gallery:,} x {s.dim} float16, "
                        "multiply + top-100"),
                       ("all_pairs_top21", f"{s.all_pairs:,}^2 x {s.dim} float32, top-21 of "
                        "every row")):
        print(f"  {label:<56}{1000 * gpu[key]:>10.1f} ms")


def as_json(value: object) -> object:
    """Return what JSON writes for a value it does not know: a dataclass's fields, else
    its text."""
    return asdict(value) if is_dataclass(value) and not isinstance(value, type) else str(value)


def guarded(results: dict, name: str, work: Callable[[], object],
            show: Callable[[object], None] | None = None) -> None:
    """Run one section: its figures into ``results[name]``, then ``show`` them; a failure is
    printed as one line and kept as ``{"error": ...}``, and the other sections still run
    (a borrowed machine's one run is not lost to one case)."""
    try:
        value = work()
    except (Exception, SystemExit) as e:  # a failed process raises SystemExit with its error
        print(f"\n{name}: FAILED: {e}", flush=True)
        results[name] = {"error": str(e)}
        return
    results[name] = value
    if show is not None:
        show(value)
    sys.stdout.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="smaller sizes, the same code paths (a 2-core machine)")
    parser.add_argument("--msmt", action="store_true",
                        help="also re-rank at MSMT17 size (about 2.5 min on 16 cores)")
    parser.add_argument("--only", default=",".join(SECTIONS),
                        help=f"sections to run, of {','.join(SECTIONS)} (default: all)")
    parser.add_argument("--torch-device", metavar="DEVICE",
                        help="run the GPU cases on DEVICE (cpu: to check them without a GPU)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/irviewer-bench"))
    parser.add_argument("--json", type=Path, help="write every figure as JSON")
    args = parser.parse_args()
    sections = set(args.only.split(","))
    if sections - set(SECTIONS):
        parser.error(f"--only: unknown {', '.join(sorted(sections - set(SECTIONS)))}")
    sizes, workdir, repeats = QUICK if args.quick else FULL, args.workdir, args.repeats
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    info = machine_info.describe()
    print(f"bench_machine.py, {'--quick sizes' if args.quick else 'full sizes'}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("\n".join(machine_info.lines(info)), flush=True)
    results: dict = {"sizes": asdict(sizes), "machine": info}
    cases: dict = {}
    for case in ("a", "b", "c"):
        if case in sections:
            guarded(cases, case, partial(in_process_case, case, sizes, workdir, repeats))
    if "d" in sections:
        guarded(cases, "d", partial(bench_eval.process_case, workdir, max(5, repeats),
                                    *sizes.market))
    results |= cases
    print_cases({k: v for k, v in cases.items() if "error" not in v})
    cuda = bool(info["gpu"]["cuda"])
    for name, work, show in (
            ("stages", partial(stages_case, sizes, workdir, repeats),
             partial(print_stages, market=sizes.market)),
            ("identity", partial(identity_case, sizes, workdir, cuda),
             partial(print_identity, cuda=cuda)),
            ("rerank", partial(rerank_case, "market", sizes, workdir, repeats),
             partial(print_rerank, which="market", size=sizes.market)),
            ("msmt", partial(rerank_case, "msmt", sizes, workdir, repeats),
             partial(print_rerank, which="msmt", size=sizes.msmt)),
            ("audit", partial(audit_case, sizes, repeats), partial(print_audit, sizes=sizes,
                                                                   repeats=repeats)),
            ("gpu", partial(gpu_case, args.torch_device, sizes, info), print_gpu)):
        if name in sections or (name == "msmt" and args.msmt and "rerank" in sections):
            guarded(results, name, work, show)
    elapsed = time.perf_counter() - started
    print(f"\nran in {elapsed:.0f} s; load average now {machine_info.load_average()}")
    if args.json:
        results["elapsed_s"] = elapsed
        args.json.write_text(json.dumps(results, indent=1, default=as_json) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
