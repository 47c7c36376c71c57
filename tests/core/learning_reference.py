"""Transcriptions of metric learning's reference evaluators, written from their code and
independent of irviewer's (numpy instead of torch and faiss; no irviewer import).

* :func:`accuracy_calculator`: pytorch-metric-learning 2.x ``AccuracyCalculator(k=None,
  avg_of_avgs=False).get_accuracy`` (``src/pytorch_metric_learning/utils/
  accuracy_calculator.py`` and ``utils/inference.py`` at 216a792, v2.8.1), its
  ``mean_average_precision_at_r``, ``r_precision``, ``precision_at_1`` and
  ``mean_average_precision``; ``first_dropped=True`` transcribes ``return_results`` of
  versions up to 1.5.1 (``D[:, 1:], I[:, 1:]``) instead of 1.5.2 and later (remove the query's own
  index among the k + 1 found, else the last).
* :func:`papers_recall`: Recall@K as Proxy-Anchor's ``utils.evaluate_cos`` computes it
  (tjddus9597/Proxy-Anchor-CVPR2020 at 51db570): the first of the top 1 + K dropped,
  ``calc_recall_at_k`` over every query; :func:`inshop_recall`: its
  ``evaluate_cos_Inshop.recall_k``.

The k-nearest-neighbour search is the one thing chosen here: AccuracyCalculator's
``knn_func`` is given as a ranking by descending inner product of the unit vectors with ties
in reference order (faiss and ``torch.topk`` leave the order of ties unspecified; the tests
use vectors whose inner products are exact, so that order is the only one in question).
"""

from __future__ import annotations

import numpy as np


def knn(query: np.ndarray, reference: np.ndarray, k: int) -> np.ndarray:
    """Return the indices of each query's k nearest references: descending inner product,
    ties in reference order (the knn_func these transcriptions are given)."""
    sim = query.astype(np.float64) @ reference.astype(np.float64).T
    return np.argsort(-sim, axis=1, kind="stable")[:, :k]


def accuracy_calculator(query: np.ndarray, query_labels: np.ndarray,
                        reference: np.ndarray | None = None,
                        reference_labels: np.ndarray | None = None,
                        first_dropped: bool = False) -> dict[str, float]:
    """Return AccuracyCalculator's mean_average_precision_at_r, r_precision,
    precision_at_1 and mean_average_precision (nan when every query is lone)."""
    ref_includes_query = reference is None
    if reference is None:
        reference, reference_labels = query, query_labels
    assert reference_labels is not None
    # get_label_match_counts
    unique_labels = np.unique(query_labels)
    match_counts = np.array([(reference_labels == u).sum() for u in unique_labels])
    # get_lone_query_labels
    if ref_includes_query:
        lone = unique_labels[match_counts - 1 <= 0]
    else:
        lone = unique_labels[match_counts == 0]
    not_lone = ~np.isin(query_labels, lone)
    # determine_k with k=None: every reference but the query itself
    num_k = len(reference) - int(ref_includes_query)
    # knn_func(query, num_k, reference, ref_includes_query): k + 1 found, then return_results
    found = knn(query, reference, num_k + int(ref_includes_query))
    if ref_includes_query:
        if first_dropped:
            found = found[:, 1:]
        else:
            matches_self = found == np.arange(len(found))[:, None]
            row_has_match = matches_self.any(axis=1)
            matches_self[~row_has_match, -1] = True
            found = found[~matches_self].reshape(len(found), -1)
    knn_labels = reference_labels[found]
    if not not_lone.any():
        return {k: float("nan") for k in ("mean_average_precision_at_r", "r_precision",
                                          "precision_at_1", "mean_average_precision")}
    knn_labels, labels = knn_labels[not_lone], query_labels[not_lone]
    # get_relevance_mask
    relevance = np.zeros(knn_labels.shape, dtype=bool)
    count_per_query = np.zeros(len(labels), dtype=np.int64)
    for label, count in zip(unique_labels, match_counts, strict=True):
        rows = np.flatnonzero(labels == label)
        max_column = count - 1 if ref_includes_query else count
        relevance[rows, :max_column] = True
        count_per_query[rows] = max_column
    same = knn_labels == labels[:, None]
    # r_precision
    r_prec = (same & relevance).sum(axis=1) / relevance.sum(axis=1)

    def mean_average_precision(at_r: bool) -> np.ndarray:
        mask = relevance if at_r else np.ones(same.shape, dtype=bool)
        equality = same & mask
        cumulative = np.cumsum(equality, axis=1)
        k_idx = np.arange(1, same.shape[1] + 1)[None, :]
        precision_at_ks = (cumulative * equality) / k_idx
        return (precision_at_ks * mask).sum(axis=1) / count_per_query

    return {"mean_average_precision_at_r": float(mean_average_precision(True).mean()),
            "r_precision": float(r_prec.mean()),
            "precision_at_1": float(same[:, 0].mean()),
            "mean_average_precision": float(mean_average_precision(False).mean())}


def papers_recall(x: np.ndarray, labels: np.ndarray, ks: tuple[int, ...]) -> dict[int, float]:
    """Return Recall@K as Proxy-Anchor's evaluate_cos: ``T[cos_sim.topk(1 + K)[1][:, 1:]]``
    with K the largest cut-off, then ``calc_recall_at_k(T, Y, k)`` for each k."""
    big_k = min(max(ks), len(x) - 1)
    predicted = labels[knn(x, x, 1 + big_k)[:, 1:]]
    return {k: sum(t in y[:k] for t, y in zip(labels, predicted, strict=True)) / len(labels)
            for k in ks}


def inshop_recall(query: np.ndarray, query_labels: np.ndarray, gallery: np.ndarray,
                  gallery_labels: np.ndarray, ks: tuple[int, ...]) -> dict[int, float]:
    """Return Recall@K as Proxy-Anchor's evaluate_cos_Inshop.recall_k: a query counts when
    fewer than k of its negatives score above its best positive; over every query."""
    sim = query.astype(np.float64) @ gallery.astype(np.float64).T
    out = {}
    for k in ks:
        match_counter = 0
        for i in range(len(sim)):
            pos_sim = sim[i][gallery_labels == query_labels[i]]
            neg_sim = sim[i][gallery_labels != query_labels[i]]
            thresh = pos_sim.max()
            if (neg_sim > thresh).sum() < k:
                match_counter += 1
        out[k] = match_counter / len(sim)
    return out


def recall_by_index(x: np.ndarray, labels: np.ndarray, ks: tuple[int, ...]) -> dict[int, float]:
    """Return Recall@K as the papers define it (a query counts when one of its first K
    results shares its label) with the query taken out of its own results by index, as
    AccuracyCalculator 2.x does, over the queries whose label has another image (its lone
    queries are left out)."""
    n = len(x)
    found = knn(x, x, n)
    hits: dict[int, list[bool]] = {k: [] for k in ks}
    for i in range(n):
        others = found[i][found[i] != i]
        if (labels == labels[i]).sum() < 2:
            continue
        for k in ks:
            hits[k].append(bool((labels[others[:k]] == labels[i]).any()))
    return {k: float(np.mean(v)) if v else float("nan") for k, v in hits.items()}


def query_gallery_recall(query: np.ndarray, query_labels: np.ndarray, gallery: np.ndarray,
                         gallery_labels: np.ndarray, ks: tuple[int, ...]) -> dict[int, float]:
    """Return Recall@K of query images against a gallery, the gallery ranked by descending
    inner product with ties in gallery order: a query counts when one of its first K results
    shares its label; over the queries whose label is in the gallery."""
    found = knn(query, gallery, len(gallery))
    has = np.array([(gallery_labels == t).any() for t in query_labels])
    return {k: float(np.mean([(gallery_labels[f[:k]] == t).any()
                              for f, t, ok in zip(found, query_labels, has, strict=True)
                              if ok])) if has.any() else float("nan")
            for k in ks}
