"""Check the transcription of AccuracyCalculator in tests/core/learning_reference.py, and
irviewer's own numbers, against pytorch-metric-learning itself. A script, not a test: it
needs torch, pytorch-metric-learning and faiss-cpu, which irviewer does not depend on.

    pip install torch pytorch-metric-learning faiss-cpu      # in a separate environment
    python tests/core/learning_reference_check.py [--cases 200]
    pip install --no-deps --target OLD pytorch-metric-learning==1.5.1
    PYTHONPATH=OLD python tests/core/learning_reference_check.py --first-dropped

Each case draws embeddings and labels from a few classes (some alone in theirs) and
compares AccuracyCalculator(avg_of_avgs=False) with its default ``FaissKNN`` (L2 distance in
float32) with the transcription, given faiss's neighbours (its ``knn`` is the one thing the
transcription leaves open), in every case, and with irviewer, which ranks by the cosine
with ties in gallery order, in the cases where faiss's neighbour order is the exact one
(float64, ties in index order) in every row.

* By default (pytorch-metric-learning 1.5.2 or later: the query removed by index): unit
  Gaussian embeddings, leave-one-out (``get_accuracy(x, labels)``) and query -> reference
  (``ref_includes_query=False``), MAP@R, R-precision, P@1 and mAP against irviewer's
  summary.
* ``--first-dropped`` (pytorch-metric-learning up to 1.5.1: the first neighbour dropped):
  sign vectors in 4, 16 or 64 dimensions, so that many images share a vector, leave-one-out
  (``get_accuracy(x, x, labels, labels, True)``), MAP@R, R-precision and P@1 against the
  conventions table's "first dropped" rows.

It prints the largest difference of each and exits 1 when one is above 1e-12.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from irviewer.core.conventions import all_conventions  # noqa: E402
from irviewer.core.evaluation import evaluate  # noqa: E402
from irviewer.core.label_sets import leave_one_out_dataset, query_gallery_dataset  # noqa: E402
from irviewer.core.protocols import get_protocol  # noqa: E402
from irviewer.core.ranking import rank  # noqa: E402
from tests.core import learning_reference  # noqa: E402
from tests.core.helpers import aligned  # noqa: E402

#: AccuracyCalculator's keys -> irviewer's summary keys, and the first-dropped rows' keys.
BY_INDEX = {"mean_average_precision_at_r": "mAP@R", "r_precision": "mR-precision",
            "precision_at_1": "mP@1", "mean_average_precision": "mAP"}
FIRST_DROPPED = {"mean_average_precision_at_r": "MAP@R first dropped",
                 "r_precision": "R-precision first dropped",
                 "precision_at_1": "P@1 first dropped"}


def faiss_knn(query: np.ndarray, reference: np.ndarray, k: int) -> np.ndarray:
    """Return faiss's k nearest references by L2 distance (AccuracyCalculator's default)."""
    import faiss

    index = faiss.IndexFlatL2(reference.shape[1])
    index.add(np.ascontiguousarray(reference, dtype=np.float32))
    return index.search(np.ascontiguousarray(query, dtype=np.float32), k)[1]


def exact_order(query: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Return every query's references by descending float64 inner product, ties in index
    order (the order irviewer's stable ranking gives exact scores)."""
    sim = query.astype(np.float64) @ reference.astype(np.float64).T
    return np.argsort(-sim, axis=1, kind="stable")


def transcribed(*args: object, **kwargs: object) -> dict[str, float]:
    """Return the transcription's numbers with faiss's neighbours."""
    exact = learning_reference.knn
    learning_reference.knn = faiss_knn
    try:
        return learning_reference.accuracy_calculator(*args, **kwargs)  # type: ignore[arg-type]
    finally:
        learning_reference.knn = exact


def difference(a: float, b: float) -> float:
    """Return |a - b|, 0 when both are nan (no query to average), inf when one is."""
    if np.isnan(a) or np.isnan(b):
        return 0.0 if np.isnan(a) and np.isnan(b) else float("inf")
    return abs(a - b)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--first-dropped", action="store_true",
                        help="check the rule of pytorch-metric-learning up to 1.5.1")
    args = parser.parse_args()
    import faiss
    import torch
    from pytorch_metric_learning import __version__
    from pytorch_metric_learning.utils.accuracy_calculator import AccuracyCalculator

    keys = FIRST_DROPPED if args.first_dropped else BY_INDEX
    calculator = AccuracyCalculator(include=tuple(keys), avg_of_avgs=False,
                                    device=torch.device("cpu"))
    rng = np.random.default_rng(0)
    worst = {"transcription": 0.0, "irviewer": 0.0}
    compared = total = 0
    for _ in range(args.cases):
        n = int(rng.integers(6, 300))
        if args.first_dropped:
            dim = int(rng.choice([4, 16, 64]))
            x = (rng.choice([-1.0, 1.0], size=(n, dim)) / np.sqrt(dim)).astype(np.float32)
        else:
            x = rng.standard_normal((n, int(rng.integers(4, 64)))).astype(np.float32)
            x /= np.linalg.norm(x, axis=1, keepdims=True)
        labels = rng.integers(0, int(rng.integers(2, 40)), n)
        if args.first_dropped and np.bincount(labels).max() < 2:
            continue  # every image alone: 1.5.1 answers 0 where 2.x (and irviewer) say nan
        cut = int(rng.integers(1, n - 1))
        splits = [(x, labels, None, None)]
        if not args.first_dropped:
            splits.append((x[:cut], labels[:cut], x[cut:], labels[cut:]))
        for query, q_labels, ref, r_labels in splits:
            total += 1
            refs = x if ref is None else ref
            if args.first_dropped:
                real = calculator.get_accuracy(x, x, labels, labels, True)
                ours_of = transcribed(x, labels, first_dropped=True)
            elif ref is None:
                real = calculator.get_accuracy(x, labels)
                ours_of = transcribed(x, labels)
            else:
                real = calculator.get_accuracy(query, q_labels, ref, r_labels, False)
                ours_of = transcribed(query, q_labels, ref, r_labels)
            for key in keys:
                worst["transcription"] = max(worst["transcription"],
                                             difference(real[key], ours_of[key]))
            if not np.array_equal(faiss_knn(query, refs, len(refs)), exact_order(query, refs)):
                continue
            compared += 1
            if ref is None:
                dataset = leave_one_out_dataset(labels)
                protocol = get_protocol("metric-learning")
            else:
                dataset = query_gallery_dataset(q_labels, r_labels)
                protocol = get_protocol("inshop").override(map_at_r=True)
            ev = evaluate(dataset, rank(aligned(query, refs), dataset), protocol)
            ours = ({row.key: row.mean for row in all_conventions(ev)} if args.first_dropped
                    else ev.summary)
            for key, name in keys.items():
                worst["irviewer"] = max(worst["irviewer"], difference(real[key], ours[name]))
    rule = "the first neighbour dropped" if args.first_dropped else "the query removed by index"
    print(f"pytorch-metric-learning {__version__} ({rule}), faiss {faiss.__version__}: "
          f"largest difference from AccuracyCalculator: transcription "
          f"{worst['transcription']:.1e} ({total} evaluations), irviewer "
          f"{worst['irviewer']:.1e} ({compared} whose neighbour order is the exact one)")
    return 0 if max(worst.values()) <= 1e-12 else 1


if __name__ == "__main__":
    raise SystemExit(main())
