"""Deep metric learning's retrieval metrics, per query, from the ranks of the positives.

Metric-learning benchmarks (CUB-200-2011, Cars196, Stanford Online Products: every image a
query against all the others; In-Shop: query images against a gallery) score a ranking with
the numbers below, each a per-query array whose mean is taken last, over the queries with a
positive (the input convention of :mod:`irviewer.core.metrics`: 0-based ranks of the
retrieved positives after the protocol's removals, and each query's number of positives n,
which is R here):

* MAP@R (Musgrave, Belongie & Lim, "A Metric Learning Reality Check", ECCV 2020), as
  pytorch-metric-learning's ``AccuracyCalculator.calculate_mean_average_precision_at_r``
  (``utils/accuracy_calculator.py``, ``mean_average_precision(at_r=True)``): the precision at
  each positive within the first R results, summed and divided by R, the query's number of
  same-label references (itself excluded when it is one of them);
* Recall@K of the metric-learning papers (Song, Xiang, Jegelka & Savarese, "Deep Metric
  Learning via Lifted Structured Feature Embedding", CVPR 2016; Proxy-Anchor's
  ``calc_recall_at_k``): 1 when a positive is among the first K results. It is the rule of
  Market-1501's first-match CMC, so it is computed by the same code
  (:meth:`~irviewer.core.metrics.Ragged.cmc_first_match`).

R-precision and P@1 are :mod:`irviewer.core.metrics`' own (pytorch-metric-learning's
``r_precision`` and ``precision_at_k(1)`` are the same numbers).

Where the query is a reference too, the query is taken out of its own ranking by index
(pytorch-metric-learning 1.5.2 and later, ``inference.return_results``). The rule it replaced,
and the one the papers' Recall@K code still follows, drops the *first* result instead,
whatever it is: :func:`first_result_dropped` scores a ranking that way, for the
conventions table (:mod:`irviewer.core.conventions`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from irviewer.core.ap_rules import average_precision
from irviewer.core.convention_names import FINITE
from irviewer.core.metrics import Ragged, ragged

#: The per-query key of MAP@R (its mean is ``mAP@R``).
AP_AT_R = "AP@R"


def recall_key(k: int) -> str:
    """Return the per-query (and summary) key of Recall@``k``."""
    return f"Recall@{k}"


def average_precision_at_r(batch: Ragged) -> np.ndarray:
    """Return each query's AP@R: the sum of the precision at each positive ranked within the
    first R results, divided by R = the query's number of positives (MAP@R's term,
    pytorch-metric-learning ``mean_average_precision(at_r=True)``); nan where R = 0.

    It is the finite-sum AP of the ranking cut after R results, so it is computed by that
    rule's one formula (:func:`~irviewer.core.ap_rules.average_precision`)."""
    n = batch.n_positives
    within = batch.ranks < n[batch.query_of]
    counts = np.bincount(batch.query_of[within], minlength=len(n))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return average_precision(ragged(batch.ranks[within], offsets, n), FINITE)


def recall_at_k(batch: Ragged, ks: Sequence[int]) -> np.ndarray:
    """Return (queries, len(ks)) Recall@K values: 1.0 where a positive is among the first
    k results, else 0.0; nan rows where a query has no positive."""
    return batch.cmc_first_match(ks)


def learning_metrics(batch: Ragged, map_at_r: bool,
                     recall_ks: Sequence[int]) -> dict[str, np.ndarray]:
    """Return the per-query arrays a protocol asks for: ``AP@R`` when ``map_at_r``, and
    ``Recall@K`` for each K of ``recall_ks`` (nothing when neither)."""
    out: dict[str, np.ndarray] = {}
    if map_at_r:
        out[AP_AT_R] = average_precision_at_r(batch)
    if len(recall_ks):
        values = recall_at_k(batch, recall_ks)
        for j, k in enumerate(recall_ks):
            out[recall_key(k)] = values[:, j]
    return out


def first_result_dropped(ranks: np.ndarray, offsets: np.ndarray, n_with_self: np.ndarray,
                         recall_ks: Sequence[int]) -> dict[str, np.ndarray]:
    """Return AP@R, R-precision, P@1 and each Recall@K of every query of a leave-one-out
    ranking scored by dropping its first result, whatever it is, instead of the query.

    ``ranks``/``offsets``: the ragged 0-based ranks, in the ranking that still holds the
    query, of every image of the query's label, the query included; ``n_with_self`` their
    number. After the first result is dropped the query may still be listed (an exact
    duplicate of another label ranked first, or tied with it) and then counts as a
    same-label result, as in pytorch-metric-learning up to 1.5.1 (``inference.
    return_results``: ``D[:, 1:], I[:, 1:]``) and in the papers' Recall@K code
    (Proxy-Anchor ``evaluate_cos``: ``topk(1 + K)[1][:, 1:]``). R stays the number of the
    other same-label images (n - 1), as pytorch-metric-learning counts it, and every value
    is nan where R = 0 (its lone queries), except ``Recall@K_all``: the papers' code divides
    by every query, so that key gives each query's Recall@K, a lone one included.
    """
    r = np.asarray(ranks, dtype=np.int64)
    o = np.asarray(offsets, dtype=np.int64)
    n_q = len(o) - 1
    owner = np.repeat(np.arange(n_q), np.diff(o))
    kept = r > 0
    shifted, owner = r[kept] - 1, owner[kept]
    big_r = np.maximum(np.asarray(n_with_self, dtype=np.int64) - 1, 0)
    within = shifted < big_r[owner]
    counts = np.bincount(owner[within], minlength=n_q)
    cut = ragged(shifted[within], np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
                 big_r)
    out = {AP_AT_R: average_precision(cut, FINITE), "R-precision": cut.r_precision(),
           "P@1": cut.precision_at_k(1)}
    first = np.full(n_q, np.iinfo(np.int64).max)
    np.minimum.at(first, owner, shifted)
    for k in recall_ks:
        hit = (first < k).astype(np.float64)
        out[f"{recall_key(k)}_all"] = hit
        out[recall_key(k)] = np.where(big_r > 0, hit, np.nan)
    return out
