"""Benchmark: ``irviewer audit`` with two descriptor files as a ratio to one ``irviewer eval``.

Run from the repository root (a script, not a test; pytest does not collect this folder):

    python tests/benchmarks/bench_audit.py              # 512-d descriptors
    python tests/benchmarks/bench_audit.py --dim 2048
    python tests/benchmarks/bench_audit.py --against ../before   # also another checkout's code
    python tests/benchmarks/bench_audit.py --oxford   # the shared Oxford5k lists, fc7, too

A Market-1501-sized folder is generated in a temporary directory: 3,368 queries in ``query/``
and 19,732 gallery images in ``bounding_box_test/`` with Market naming (751 ids, 6 cameras,
3,000 distractors of id 0 and 2,798 junk images of id -1; the image files are empty), and two
descriptor files of clustered vectors (same ids, independent noise). Both commands run as whole
processes (``python -m irviewer ...``: start-up, reading the folder and the descriptors, ranking,
scoring or auditing; each checkout's bytecode written first), taking turns (eval, audit, eval,
...) so that both meet the same load on a shared machine; the time of each is the best of
``--repeats`` runs (wall time, and the CPU time the process used, user and system, which the
other sessions' load hardly moves). The target is audit <= 3 x eval (wall time). ``--against
DIR`` runs both commands with the code of another checkout too (its ``irviewer`` package first
on the path), in the same turns, for a before/after table.
``--oxford`` also times both on the real Oxford5k ground truth and 128-d fc7 descriptors of
``../shared/samples`` (read in place; skipped when absent): sets that are lists, where the
audit also measures where the neighbours are listed and the likeness to each list, and
scores twice (eval one file, audit the fc7 file and its PCA-whitened 64-d version).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def write_market(folder: Path, dim: int, seed: int = 0, n_q: int = 3368,
                 n_g: int = 19732) -> tuple[Path, Path]:
    """Write the Market-like folder (``n_q`` queries, ``n_g`` gallery images: Market-1501's
    by default, its ids, junk and distractors in proportion otherwise) and two descriptor
    files; return the files."""
    rng = np.random.default_rng(seed)
    n_ids = max(2, round(751 * n_g / 19732))
    n_junk, n_distractors = round(2798 * n_g / 19732), round(3000 * n_g / 19732)
    g_pid = rng.integers(1, n_ids + 1, n_g)
    g_pid[:n_junk] = -1
    g_pid[n_junk:n_junk + n_distractors] = 0
    q_pid = rng.integers(1, n_ids + 1, n_q)
    names = []
    for sub, pids in (("query", q_pid), ("bounding_box_test", g_pid)):
        (folder / sub).mkdir(parents=True)
        cams = rng.integers(1, 7, len(pids))
        for i, (pid, cam) in enumerate(zip(pids.tolist(), cams.tolist(), strict=True)):
            pid_text = "-1" if pid < 0 else f"{pid:04d}"
            name = f"{pid_text}_c{cam}s1_{i:06d}_00"
            (folder / sub / f"{name}.jpg").touch()
            names.append(name)
    labels = np.concatenate([q_pid, g_pid])
    centres = rng.standard_normal((n_ids + 2, dim), dtype=np.float32)
    files = []
    for m in ("A", "B"):
        vecs = centres[labels + 1] + 3.0 * rng.standard_normal((len(labels), dim),
                                                               dtype=np.float32)
        path = folder / f"{m}.npz"
        np.savez(path, features=vecs, names=np.array(names))
        files.append(path)
    return files[0], files[1]


def run_once(args: list[str], code: Path = ROOT) -> tuple[float, float]:
    """Return (wall time, CPU time: user + system) of one ``python -m irviewer args`` run
    with the checkout ``code``'s package. The CPU time hardly depends on what else the
    machine runs; the wall time does (both are printed)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(code), *filter(None, [os.environ.get("PYTHONPATH")])]))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "irviewer", *args], check=True, cwd=code, env=env,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def compile_package(code: Path) -> None:
    """Write the bytecode of the checkout ``code``'s package (``compileall``), so that no
    timed run compiles its sources: where PYTHONDONTWRITEBYTECODE is set nothing else writes
    it, and every run of a checkout whose bytecode is stale or missing pays for compiling it
    (0.1 to 0.2 s a run, a third of an Oxford5k eval)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(code / "irviewer")],
                   check=True, stdout=subprocess.DEVNULL)


def best_of_turns(commands: list[tuple[list[str], Path]],
                  repeats: int) -> list[tuple[float, float]]:
    """Return each (arguments, checkout) command's best wall time and best CPU time over
    ``repeats`` rounds, the commands taking turns within each round."""
    best = [(float("inf"), float("inf"))] * len(commands)
    for _ in range(repeats):
        for i, (args, code) in enumerate(commands):
            wall, cpu = run_once(args, code)
            best[i] = (min(best[i][0], wall), min(best[i][1], cpu))
    return best


def _line(title: str, times: list[tuple[float, float]], i: int) -> str:
    """Return the printed line of checkout ``i``: eval and audit, wall and CPU, the ratios."""
    (e_wall, e_cpu), (a_wall, a_cpu) = times[2 * i], times[2 * i + 1]
    return (f"{title}: eval (one file) {e_wall:.2f} s, audit (two files) {a_wall:.2f} s, "
            f"ratio {a_wall / e_wall:.2f} (target <= 3); CPU time {e_cpu:.2f} s and "
            f"{a_cpu:.2f} s, ratio {a_cpu / e_cpu:.2f}")


def main() -> None:
    """Generate the set, time both commands, print the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--against", type=Path, metavar="DIR",
                        help="another checkout whose code runs the same commands in turn")
    parser.add_argument("--oxford", action="store_true",
                        help="also time both commands on the shared Oxford5k lists (fc7)")
    opts = parser.parse_args()
    checkouts = [("this checkout", ROOT)]
    if opts.against is not None:
        checkouts.append((str(opts.against), opts.against.resolve()))
    for _, code in checkouts:  # neither command pays for compiling stale sources in each run
        compile_package(code)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "market"
        a, b = write_market(root, opts.dim)
        commands = []
        for _, code in checkouts:
            commands += [(["eval", str(root), "-d", str(a)], code),
                         (["audit", str(root), "-d", str(a), "-d", str(b),
                           "--json", str(Path(tmp) / "audit.json")], code)]
        times = best_of_turns(commands, opts.repeats)
    for i, (label, _) in enumerate(checkouts):
        print(_line(f"market-sized (3,368 x 19,732, {opts.dim}-d), {label}, best of "
                    f"{opts.repeats}", times, i))
    if opts.oxford:
        oxford(checkouts, opts.repeats)


def oxford(checkouts: list[tuple[str, Path]], repeats: int) -> None:
    """Time eval (fc7) and audit (fc7 and its PCA-whitened 64-d version) on the shared
    Oxford5k lists, the commands taking turns; print each checkout's ratio."""
    samples = ROOT.parent / "shared" / "samples"
    gt, fc7 = samples / "oxford5k-gt", samples / "oxford5k-lopq-fc7-features"
    if not gt.is_dir() or not fc7.is_dir():
        print("oxford5k: skipped, the shared samples are not present")
        return
    sys.path.insert(0, str(ROOT))
    from tests.benchmarks.audit_recall import oxford_methods

    with tempfile.TemporaryDirectory() as tmp:
        first, second = oxford_methods(Path(tmp))
        commands = []
        for _, code in checkouts:
            commands += [(["eval", str(gt), "-d", str(first)], code),
                         (["audit", str(gt), "-d", str(first), "-d", str(second),
                           "--json", str(Path(tmp) / "audit.json")], code)]
        times = best_of_turns(commands, repeats)
    for i, (label, _) in enumerate(checkouts):
        print(_line(f"oxford5k (55 x 5,063, 128-d), {label}, best of {repeats}", times, i))


if __name__ == "__main__":
    main()
