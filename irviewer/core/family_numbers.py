"""The numbers a benchmark family reports beyond the means of the per-query metrics, added
to an evaluation's per-query values and summary (:func:`added`):

- Google Landmarks v2 (a protocol with ``first_position``): each query's position of the
  first correct result within the list, its mean and median, as delf's
  ``MeanMedianPosition`` (tensorflow/models ``google_landmarks_dataset/metrics.py``);
- DISC21 copy detection (family ``copy-detection``): microAP and the other numbers scored
  over every predicted pair rather than per query, first in the summary since they are the
  benchmark's own, and each query's answers (:mod:`irviewer.core.copy_detection`).
"""

from __future__ import annotations

import numpy as np

from irviewer.core.copy_detection import ANSWER_KEYS, COPY_DETECTION, copy_detection_results
from irviewer.core.dataset import Dataset
from irviewer.core.protocols import Protocol
from irviewer.core.ranking import Ranking

#: Per-query keys the summary does not average as ``m<key>``: ranks, counts, and the values
#: a family summarises its own way (added here).
NOT_AVERAGED = frozenset({"first_positive_rank", "n_positives", "position", *ANSWER_KEYS})


def first_position(first_rank: np.ndarray, n_positives: np.ndarray, depth: int) -> np.ndarray:
    """Return delf's position of the first correct result per query (``MeanMedianPosition``):
    its 1-based position within the first ``depth`` results, ``depth + 1`` when none is
    there; nan for a query without positives (out of the means)."""
    first = np.asarray(first_rank, dtype=np.float64)
    out = np.where((first >= 0) & (first < depth), first + 1, depth + 1.0)
    out[np.asarray(n_positives) == 0] = np.nan
    return out


def added(dataset: Dataset, ranking: Ranking, protocol: Protocol,
          per_query: dict[str, np.ndarray], summary: dict[str, float | int]
          ) -> tuple[dict[str, np.ndarray], dict[str, float | int]]:
    """Return ``per_query`` and ``summary`` with the family's own numbers added (see the
    module); unchanged for the other families."""
    if protocol.first_position and protocol.list_depth is not None:
        n = per_query["n_positives"]
        positions = first_position(per_query["first_positive_rank"], n, protocol.list_depth)
        ok = positions[n > 0]
        per_query = {**per_query, "position": positions}
        summary = {**summary,
                   "mean_position": float(np.mean(ok)) if len(ok) else float("nan"),
                   "median_position": float(np.median(ok)) if len(ok) else float("nan")}
    if protocol.family == COPY_DETECTION:
        answers, pair_summary = copy_detection_results(dataset, ranking)
        per_query = {**per_query, **answers}
        summary = {**pair_summary, **summary}  # the benchmark's own numbers first
    return per_query, summary
