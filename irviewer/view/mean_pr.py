"""The mean interpolated precision-recall curve of the evaluation shown, kept up to date
cheaply (Qt-free): computed once per evaluation rather than on every query click, and after a
label correction updated from the re-scored queries only.

The curve is :meth:`irviewer.core.evaluation.Evaluation.mean_pr`: the mean over the
evaluated queries (those with a positive) of each query's interpolated precision at the 11
TREC recall levels (:func:`irviewer.core.metrics.mean_interpolated_pr`, TREC's
interpolated precision as in Manning et al., *Introduction to Information Retrieval*,
section 8.4). An update keeps the sum of the per-query curves: the re-scored queries' old
curves are taken out and their new ones put in, so it equals the full mean up to float
rounding.

A copy-detection evaluation (DISC21) is scored over every predicted pair, not per query: its
curve is that of microAP instead, precision against recall after each true pair of the
worst-order list of all pairs (:mod:`irviewer.core.copy_detection`), computed once per
evaluation (:func:`curve_words` names it for the plot's legend).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from irviewer.core import metrics
from irviewer.core.copy_detection import COPY_DETECTION, micro_of
from irviewer.core.evaluation import Evaluation

LEVELS = np.linspace(0.0, 1.0, 11)
#: What the legend calls the curve: the mean of the queries', or microAP's over all pairs.
MEAN_WORDS = "mean over queries (interpolated)"
MICRO_WORDS = "every predicted pair (microAP's curve)"


def curve_words(evaluation: Evaluation) -> str:
    """Return what the dataset's curve of ``evaluation`` is, for the plot's legend."""
    return MICRO_WORDS if evaluation.protocol.family == COPY_DETECTION else MEAN_WORDS


def micro_curve(evaluation: Evaluation) -> tuple[np.ndarray, np.ndarray]:
    """Return (recall, precision) after each true pair of the worst-order list of every
    predicted pair (isc2021's precision_recall at the points where recall rises), from
    recall 0 at precision 1."""
    result = micro_of(evaluation.dataset, evaluation.ranking)
    rises = np.flatnonzero(np.diff(np.concatenate([[0.0], result.recalls])) > 0)
    return (np.concatenate([[0.0], result.recalls[rises]]),
            np.concatenate([[1.0], result.precisions[rises]]))


def _subset_sum(evaluation: Evaluation, queries: np.ndarray) -> tuple[np.ndarray, int]:
    """Return (sum of the interpolated curves, number evaluated) over ``queries``."""
    p = evaluation.positives
    parts = [p.of(int(q)) for q in queries]
    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(r) for r in parts])
    n = np.asarray(p.n_positives)[queries]
    k = int((n > 0).sum())
    if not k:
        return np.zeros(len(LEVELS)), 0
    ranks = np.concatenate([np.zeros(0, np.int64), *parts]).astype(np.int64)
    return metrics.mean_interpolated_pr(ranks, offsets, n, LEVELS) * k, k


class MeanPR:
    """The mean interpolated PR curve of one evaluation at a time (see the module)."""

    def __init__(self) -> None:
        self.evaluation: Evaluation | None = None
        self.sums = np.zeros(len(LEVELS))
        self.count = 0
        self.micro: tuple[np.ndarray, np.ndarray] | None = None

    def update(self, evaluation: Evaluation,
               changed: Sequence[int] | np.ndarray | None = None) -> None:
        """Follow ``evaluation``. ``changed``: it is the one followed with only those queries
        re-scored (same ranking and protocol), so only they are recomputed."""
        if evaluation is self.evaluation:
            return
        self.micro = (micro_curve(evaluation) if evaluation.protocol.family == COPY_DETECTION
                      else None)
        old = self.evaluation
        if (changed is not None and old is not None and old.ranking is evaluation.ranking
                and old.protocol == evaluation.protocol
                and len(old.positives.n_positives) == len(evaluation.positives.n_positives)):
            q = np.unique(np.asarray(list(changed), dtype=np.int64))
            before, k_before = _subset_sum(old, q)
            after, k_after = _subset_sum(evaluation, q)
            self.sums = self.sums - before + after
            self.count += k_after - k_before
        else:
            p = evaluation.positives
            self.count = int((np.asarray(p.n_positives) > 0).sum())
            mean = evaluation.mean_pr(LEVELS)[1]
            self.sums = mean * self.count if self.count else np.zeros(len(LEVELS))
        self.evaluation = evaluation

    def curve(self, evaluation: Evaluation) -> tuple[np.ndarray, np.ndarray]:
        """Return (recall levels, mean interpolated precision) of ``evaluation`` (all nan
        when no query is evaluated); for copy detection, microAP's curve (see the module)."""
        self.update(evaluation)
        if self.micro is not None:
            return self.micro
        if not self.count:
            return LEVELS, np.full(len(LEVELS), np.nan)
        return LEVELS, self.sums / self.count
