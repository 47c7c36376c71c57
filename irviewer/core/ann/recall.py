"""Recall of an approximate top-k against the exact ranking of the same descriptors, by the
two rules the ANN benchmarks use.

* ``ann-benchmarks`` (Aumüller, Bernhardsson, Faithfull, Information Systems 2020;
  ``ann_benchmarks/plotting/metrics.py``: ``knn_threshold`` and ``get_recall_values``): a
  returned item counts when its true distance is at most the exact k-th distance plus
  ``epsilon = 1e-3``; for a similarity, when its similarity is at least the exact k-th
  similarity minus 1e-3. The true distances are recomputed from the vectors, never taken
  from the index (a PQ index returns approximate ones). irviewer's default and the one the
  tables show.
* ``big-ann-benchmarks`` (Simhadri et al., NeurIPS 2021 competition;
  ``benchmark/plotting/metrics.py``: ``compute_recall_with_distance_ties``): the exact ids
  up to the k-th, extended by every further exact neighbour whose distance is within 1e-6 of
  the k-th (ties), intersected with the returned ids; the count is divided by k.

Both divide by k. Where the active gallery holds fewer than k images, k is that number. Both
are None (nan) when the stored lists are shorter than k (``--depth`` below k).
"""

from __future__ import annotations

import numpy as np

#: ann-benchmarks' tolerance on the k-th distance (``epsilon=1e-3`` in ``knn``).
ANN_BENCHMARKS_EPSILON = 1e-3
#: big-ann-benchmarks' tolerance for a tie with the k-th distance.
BIG_ANN_TIE = 1e-6
#: The rule names, as reports print them; the first is the default.
RULES = ("ann-benchmarks", "big-ann-benchmarks")
#: The k of the recalls every report gives.
RECALL_KS = (1, 10, 100)


def recall_ann_benchmarks(exact_scores: np.ndarray, returned_similarity: np.ndarray,
                          k: int) -> np.ndarray:
    """Return each query's recall@k by ann-benchmarks' rule (module docstring): the share of
    the first k returned items whose true similarity is at least the exact k-th similarity
    minus 1e-3.

    ``exact_scores``: (n_queries, K) exact similarities in exact rank order, -inf (or nan)
    padding; ``returned_similarity``: (n_queries, K') the true similarity of each returned
    item in returned order, nan padding. nan for every query when K or K' is below k."""
    exact = np.asarray(exact_scores, dtype=np.float64)
    got = np.asarray(returned_similarity, dtype=np.float64)
    n = exact.shape[0]
    if exact.shape[1] < k or got.shape[1] < k:
        return np.full(n, np.nan)
    valid = np.isfinite(exact[:, :k]).sum(axis=1)
    kk = np.maximum(valid, 1)
    threshold = exact[np.arange(n), kk - 1] - ANN_BENCHMARKS_EPSILON
    head = got[:, :k]
    counted = (np.isfinite(head) & (head >= threshold[:, None])
               & (np.arange(k)[None, :] < kk[:, None])).sum(axis=1)
    out = counted / kk
    out[valid == 0] = np.nan
    return out


def recall_tie_aware(exact_ids: np.ndarray, exact_scores: np.ndarray,
                     returned_ids: np.ndarray, k: int) -> np.ndarray:
    """Return each query's recall@k by big-ann-benchmarks' tie-aware rule (module
    docstring): |exact ids up to the k-th and its ties ∩ first k returned ids| / k.

    ``exact_ids``/``exact_scores``: (n_queries, K) the exact ranking's gallery indices and
    similarities (-1 / -inf padding); ``returned_ids``: (n_queries, K') the index's gallery
    indices (-1 padding). nan when K or K' is below k."""
    ids = np.asarray(exact_ids, dtype=np.int64)
    scores = np.asarray(exact_scores, dtype=np.float64)
    got = np.asarray(returned_ids, dtype=np.int64)
    n = ids.shape[0]
    if ids.shape[1] < k or got.shape[1] < k:
        return np.full(n, np.nan)
    out = np.full(n, np.nan)
    for q in range(n):
        valid = int(np.count_nonzero(ids[q] >= 0))
        kk = min(k, valid)
        if kk == 0:
            continue
        kth = scores[q, kk - 1]
        end = kk
        while end < valid and abs(scores[q, end] - kth) < BIG_ANN_TIE:
            end += 1
        truth = ids[q, :end]
        mine = got[q, :kk]
        out[q] = np.intersect1d(truth, mine[mine >= 0]).size / kk
    return out


def recalls(exact_ids: np.ndarray, exact_scores: np.ndarray, returned_ids: np.ndarray,
            returned_similarity: np.ndarray,
            ks: tuple[int, ...] = RECALL_KS) -> dict[str, np.ndarray]:
    """Return the per-query recalls a report gives: ``recall@k`` by ann-benchmarks' rule and
    ``recall@k(tie-aware)`` by big-ann-benchmarks', for each k in ``ks``."""
    out: dict[str, np.ndarray] = {}
    for k in ks:
        out[f"recall@{k}"] = recall_ann_benchmarks(exact_scores, returned_similarity, k)
    for k in ks:
        out[f"recall@{k}(tie-aware)"] = recall_tie_aware(exact_ids, exact_scores,
                                                         returned_ids, k)
    return out


__all__ = ["ANN_BENCHMARKS_EPSILON", "BIG_ANN_TIE", "RECALL_KS", "RULES",
           "recall_ann_benchmarks", "recall_tie_aware", "recalls"]
