"""Benchmark: applying one label correction and re-scoring, as a ratio to a full evaluation
measured in the same run.

Run from the repository root (a script, not a test; pytest does not collect this folder):

    python tests/benchmarks/bench_corrections.py [--queries 20000] [--gallery 20000]

An instance set (CSV-manifest conventions: positive = same label) of ``--queries`` queries
and ``--gallery`` gallery images, 64-d clustered descriptors, one method, the ``instance``
protocol cached under two conventions. Timed, warm, median of ``--repeats``:

* ``pair_ms``: one pair correction (``CorrectionLog.push``) plus
  ``Opened.update_ground_truth`` for the query it changes;
* ``relabel_ms``: one gallery image relabel (every query of the old and the new label
  changes) plus the update;
* ``undo_ms``: ``CorrectionLog.pop`` plus the update;
* ``full_ms``: ``evaluate`` of the whole corrected dataset under the same two conventions,
  what re-scoring everything would cost (the baseline).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from irviewer.core.corrections import Correction, CorrectionLog  # noqa: E402
from irviewer.core.dataset import Dataset, build_query  # noqa: E402
from irviewer.core.descriptors import AlignedDescriptors, normalise_rows  # noqa: E402
from irviewer.core.evaluation import evaluate  # noqa: E402
from irviewer.core.label_rules import LabelIndex, same_label_groups  # noqa: E402
from irviewer.core.ranking import rank  # noqa: E402
from irviewer.opening.opener import Method, Opened  # noqa: E402
from irviewer.opening.request import OpenRequest  # noqa: E402


def build(n_q: int, n_g: int, seed: int = 0) -> Opened:
    rng = np.random.default_rng(seed)
    n_labels = max(n_g // 8, 2)
    g_labels = rng.integers(0, n_labels, n_g)
    q_labels = rng.integers(0, n_labels, n_q)
    centres = rng.normal(size=(n_labels, 64)).astype(np.float32)
    gallery = centres[g_labels] + 0.8 * rng.normal(size=(n_g, 64)).astype(np.float32)
    queries = centres[q_labels] + 0.8 * rng.normal(size=(n_q, 64)).astype(np.float32)
    labels = np.array([f"L{v}" for v in g_labels])
    index = LabelIndex.of(labels)
    qs = tuple(build_query(f"q{i}", f"q{i}", same_label_groups(index, f"L{v}"),
                           meta={"label": f"L{v}"}) for i, v in enumerate(q_labels.tolist()))
    ds = Dataset(name="bench", format="manifest", path=None,
                 gallery=tuple(f"g{i}" for i in range(n_g)), queries=qs,
                 groups=("positive", "junk"), protocols=("instance",), gallery_labels=labels)
    aligned = AlignedDescriptors(normalise_rows(queries), gallery, None, 64)
    method = Method("m", Path("m.npz"), "descriptors", rank(aligned, ds, k=100))
    opened = Opened(ds, {"m": method}, OpenRequest(Path("bench")))
    opened.evaluation("m", "instance")
    opened.evaluation("m", "instance", ap="trapezoid")
    return opened


def timed(work) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    work()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--gallery", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    opened = build(args.queries, args.gallery)
    log = CorrectionLog(opened.dataset)
    rng = np.random.default_rng(1)
    labels = np.asarray(opened.dataset.gallery_labels)
    pair, relabel, undo, full = [], [], [], []
    for i in range(args.repeats + 1):  # the first round warms up and is not counted
        q = int(rng.integers(0, args.queries))
        g = int(rng.integers(0, args.gallery))

        t_pair = timed(lambda q=q, g=g: _apply(opened, log, Correction(
            f"q{q}", f"g{g}", "positive")))
        t_relabel = timed(lambda g=g: _apply(opened, log, Correction(
            "", f"g{(g + 1) % args.gallery}", str(labels[g]))))
        t_undo = timed(lambda: _undo(opened, log))
        t_full = timed(lambda: [evaluate(log.dataset, opened.ranking, ev.protocol)
                                for ev in dict(opened._evaluations).values()])
        if i:
            pair.append(t_pair)
            relabel.append(t_relabel)
            undo.append(t_undo)
            full.append(t_full)
    med = {k: statistics.median(v) for k, v in
           (("pair_ms", pair), ("relabel_ms", relabel), ("undo_ms", undo), ("full_ms", full))}
    print(f"{args.queries} queries x {args.gallery} gallery, 2 cached conventions, "
          f"median of {args.repeats}")
    for key in ("pair_ms", "relabel_ms", "undo_ms"):
        print(f"  {key:<11}{med[key]:8.1f} ms   {med[key] / med['full_ms']:.3f} of a full "
              "evaluation")
    print(f"  {'full_ms':<11}{med['full_ms']:8.1f} ms")


def _apply(opened: Opened, log: CorrectionLog, c: Correction) -> None:
    changed = log.push(c)
    opened.update_ground_truth(log.dataset, changed)


def _undo(opened: Opened, log: CorrectionLog) -> None:
    entry = log.pop()
    opened.update_ground_truth(log.dataset, entry.changed)


if __name__ == "__main__":
    main()
