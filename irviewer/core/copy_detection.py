"""Copy detection scored over predicted pairs, as the Image Similarity Challenge scores it.

DISC21 (Douze et al., "The 2021 Image Similarity Dataset and Challenge", arXiv 2106.09672)
asks, for every query, which references it copies; most queries copy none. Its evaluator,
``evaluate`` in facebookresearch/isc2021 ``isc/metrics.py`` (commit e12efd5), scores the
*set of predicted (query, reference, score) pairs* as one list, not query by query:

- **microAP**: the pairs sorted by descending score, equal scores with the false ones first
  (the worst order: "It prevents participants from putting the same score for all
  predictions to get a good AP"); precision and recall after each pair, recall over every
  ground-truth pair (``num_positives = len(gt_matches)``, so a true pair never predicted
  still counts); AP = Σ (recallᵢ − recallᵢ₋₁) · precisionᵢ. One global number: a false
  answer for a query without a copy costs as much as one for a query with one.
- **recall at precision 90 %** (``find_operating_point``): among the points of that list
  whose precision is at least 0.9, the highest recall, and the score at the first such
  point (the threshold: accept pairs scoring at least it); none when precision never reaches
  0.9.
- **recall at rank 1 and 10** (``find_tp_ranks``): each ground-truth pair's rank is the
  number of its query's predictions scoring at least as high, minus one (ties count against
  it); recall@rank k = ground-truth pairs of rank < k over every ground-truth pair.

A duplicate (query, reference) pair is refused, as ``check_duplicates`` refuses it; the
readers say so in one sentence. Predictions naming a query the ground truth does not list
are false positives, as the evaluator counts them.

Pairs made from descriptors as the challenge's descriptor track makes them:
:mod:`irviewer.core.copy_pairs`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from irviewer.core.dataset import Dataset
from irviewer.core.ranking.listed import (
    ListedRanking,
    PredictedPairs,
    ranking_from_positions,
)
from irviewer.core.ranking.stored import Ranking

#: The protocol family scored over predicted pairs.
COPY_DETECTION = "copy-detection"
#: The relevance group of a query's copies.
COPY = "copy"
#: Per-query keys that describe a query's answers (defined for every query).
ANSWER_KEYS = ("n_answers", "top_score")
#: The required precision of ``find_operating_point``.
PRECISION_TARGET = 0.9


# -- the metrics ---------------------------------------------------------------------------

@dataclass(frozen=True)
class MicroResult:
    """isc2021's ``Metrics`` of one set of predicted pairs (see the module).

    ``precisions``, ``recalls``, ``thresholds``: after each pair of the worst-order list;
    ``average_precision``: microAP (nan without ground truth); ``recall_at_p90`` and
    ``threshold_at_p90``: None when precision never reaches 0.9; ``rank1``, ``rank10``:
    recall at rank 1 and 10; ``tp_ranks``: each ground-truth pair's rank (-1: not
    predicted)."""

    average_precision: float
    precisions: np.ndarray
    recalls: np.ndarray
    thresholds: np.ndarray
    recall_at_p90: float | None
    precision_at_p90: float | None
    threshold_at_p90: float | None
    rank1: float
    rank10: float
    tp_ranks: np.ndarray
    n_ground_truth: int


def micro_metrics(query: np.ndarray, result: np.ndarray, score: np.ndarray,
                  truth_query: np.ndarray, truth_result: np.ndarray) -> MicroResult:
    """Return isc2021's metrics of the predicted pairs (``query``, ``result``, ``score``;
    -1 marks a query the ground truth does not know) against the ground-truth pairs
    (``truth_query``, ``truth_result``), as ``evaluate`` computes them (see the module).
    The pairs must be distinct (the readers refuse duplicates)."""
    query = np.asarray(query, dtype=np.int64)
    result = np.asarray(result, dtype=np.int64)
    score = np.asarray(score, dtype=np.float64)
    truth_query = np.asarray(truth_query, dtype=np.int64)
    truth_result = np.asarray(truth_result, dtype=np.int64)
    n_gt = len(truth_query)
    bound = int(max(result.max(initial=0), truth_result.max(initial=0))) + 1
    # One int64 key per (query, result); placeholders (< -1) and unknown queries never match.
    gt_keys = np.sort(truth_query * bound + truth_result)
    keys = query * bound + np.maximum(result, 0)
    at = np.minimum(np.searchsorted(gt_keys, keys), max(len(gt_keys) - 1, 0))
    true = (query >= 0) & (result >= 0) & (gt_keys[at] == keys) if n_gt else \
        np.zeros(len(keys), dtype=bool)
    # Worst order: descending score, the false pairs of equal score first.
    order = np.lexsort((true, -score))
    is_true = true[order]
    ntp = np.cumsum(is_true)
    with np.errstate(invalid="ignore", divide="ignore"):
        precisions = ntp / np.arange(1, len(order) + 1)
        recalls = ntp / n_gt if n_gt else np.full(len(order), np.nan)
    thresholds = score[order]
    if n_gt:
        ap = float(((recalls - np.concatenate([[0.0], recalls[:-1]])) * precisions).sum())
    else:
        ap = float("nan")
    valid = precisions >= PRECISION_TARGET
    rp90 = pp90 = tp90 = None
    if valid.any() and n_gt:
        best = int(np.argmax(recalls[valid]))
        rp90 = float(recalls[valid][best])
        pp90 = float(precisions[valid][best])
        tp90 = float(thresholds[valid][best])
    ranks = _tp_ranks(query, result, score, truth_query, truth_result, bound)
    rank1 = float((ranks == 0).sum() / n_gt) if n_gt else float("nan")
    rank10 = float(((ranks >= 0) & (ranks < 10)).sum() / n_gt) if n_gt else float("nan")
    return MicroResult(ap, precisions, recalls, thresholds, rp90, pp90, tp90, rank1, rank10,
                       ranks, n_gt)


def _tp_ranks(query: np.ndarray, result: np.ndarray, score: np.ndarray,
              truth_query: np.ndarray, truth_result: np.ndarray, bound: int) -> np.ndarray:
    """Return each ground-truth pair's rank among its query's predictions (the number
    scoring at least as high, minus one: ties count against it); -1 when not predicted."""
    known = query >= 0
    q, r, s = query[known], result[known], score[known]
    order = np.lexsort((-s, q))  # by query, then descending score
    q, r, s = q[order], r[order], s[order]
    starts = np.searchsorted(q, truth_query, side="left")
    keys = q * bound + np.maximum(r, 0)
    where = {int(k): i for i, k in enumerate(keys[r >= 0].tolist())} if len(q) else {}
    real = np.flatnonzero(r >= 0)
    out = np.full(len(truth_query), -1, dtype=np.int64)
    for i, (tq, tr) in enumerate(zip(truth_query.tolist(), truth_result.tolist(),
                                     strict=True)):
        j = where.get(tq * bound + tr)
        if j is None:
            continue
        at = int(real[j])
        start = int(starts[i])
        # The query's predictions are q[start:...] in descending score; count >= s[at].
        end = int(np.searchsorted(q, tq, side="right"))
        out[i] = int(np.searchsorted(-s[start:end], -s[at], side="right")) - 1
    return out


def ranking_pairs(dataset: Dataset, ranking: Ranking) -> PredictedPairs:
    """Return every predicted pair of ``ranking``: its own :class:`PredictedPairs` when it
    keeps them, else every entry of its lists (placeholders included, padding not)."""
    if isinstance(ranking, ListedRanking) and ranking.pairs is not None:
        return ranking.pairs
    listed = ranking.top_indices != -1
    q, j = np.nonzero(listed)
    return PredictedPairs(q.astype(np.int64), ranking.top_indices[q, j].astype(np.int64),
                          ranking.top_scores[q, j].astype(np.float64),
                          np.full(len(q), -1, dtype=np.int64))


def micro_of(dataset: Dataset, ranking: Ranking) -> MicroResult:
    """Return isc2021's metrics of ``ranking``'s pairs against ``dataset``'s copies (the
    ``copy`` relevance group of every query; corrected ground truth included)."""
    pairs = ranking_pairs(dataset, ranking)
    owners, members = dataset.group_table(COPY) if COPY in dataset.groups else (
        np.zeros(0, np.int64), np.zeros(0, np.int64))
    return micro_metrics(pairs.query, pairs.result, pairs.score, owners, members)


def copy_detection_results(dataset: Dataset, ranking: Ranking
                           ) -> tuple[dict[str, np.ndarray], dict[str, float | int]]:
    """Return (per-query answers, summary) of a copy-detection evaluation: each query's
    number of answers and best score (nan when it has none), and microAP, recall and
    threshold at precision 90 %, recall at rank 1 and 10, the numbers of predicted and
    ground-truth pairs, and of predictions for queries the ground truth does not list."""
    pairs = ranking_pairs(dataset, ranking)
    result = micro_of(dataset, ranking)
    n_q = dataset.n_queries
    known = pairs.query >= 0
    answers = np.bincount(pairs.query[known], minlength=n_q).astype(np.int64)
    top = np.full(n_q, -np.inf)
    np.maximum.at(top, pairs.query[known], pairs.score[known])
    top[answers == 0] = np.nan
    summary: dict[str, float | int] = {
        "microAP": result.average_precision,
        "recall@P90": math.nan if result.recall_at_p90 is None else result.recall_at_p90,
        "threshold@P90": math.nan if result.threshold_at_p90 is None
        else result.threshold_at_p90,
        "recall@rank1": result.rank1,
        "recall@rank10": result.rank10,
        "n_predictions": len(pairs),
        "n_ground_truth_pairs": result.n_ground_truth,
        "n_outside_queries": int((~known).sum()),
    }
    return {"n_answers": answers, "top_score": top}, summary


def ranking_from_pairs(dataset: Dataset, query: np.ndarray, result: np.ndarray,
                       score: np.ndarray, source: str, depth: int,
                       outside: tuple[str, ...] = (),
                       pairs: PredictedPairs | None = None) -> ListedRanking:
    """Return the :class:`ListedRanking` of predicted pairs: each dataset query's pairs by
    descending score, equal scores in the order given (a file's order; the gallery's for
    pairs made from descriptors), the first ``depth`` of each kept as its stored list and
    every pair kept for the pair-scored metrics. ``query`` -1 marks a query the dataset
    does not know: it has no list, but its pairs count."""
    query = np.asarray(query, dtype=np.int64)
    result = np.asarray(result, dtype=np.int64)
    score = np.asarray(score, dtype=np.float64)
    if pairs is None:
        pairs = PredictedPairs(query, result, score, np.full(len(query), -1, dtype=np.int64))
    known = np.flatnonzero(query >= 0)
    order = known[np.lexsort((-score[known], query[known]))]  # stable: ties as given
    q_sorted = query[order]
    bounds = np.searchsorted(q_sorted, np.arange(dataset.n_queries + 1))
    lists = [result[order[a:b]] for a, b in pairwise(bounds)]
    scores = [score[order[a:b]] for a, b in pairwise(bounds)]
    return ranking_from_positions(dataset, lists, scores, outside, source, depth, pairs)
