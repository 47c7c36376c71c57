"""An independent, deliberately naive reference for the metrics: loops over a full ranked
list of relevance flags, written from the published definitions, not from irviewer's code.

``relevant`` is the ranked list of one query after ignored items were removed: True for a
positive. ``n_positives`` counts all positives, also those not in the list.
"""

from __future__ import annotations

import numpy as np

from irviewer.core.metrics import RECALL_TOLERANCE


def ap_finite(relevant: list[bool], n_positives: int) -> float:
    """trec_eval's AP: sum over retrieved positives of precision at its rank, over all positives."""
    hits, total = 0, 0.0
    for i, rel in enumerate(relevant, start=1):
        if rel:
            hits += 1
            total += hits / i
    return total / n_positives


def ap_trapezoid(relevant: list[bool], n_positives: int) -> float:
    """Oxford compute_ap.cpp: area under the PR curve by trapezoids between recall steps."""
    ap, old_recall, old_precision, hits = 0.0, 0.0, 1.0, 0
    for i, rel in enumerate(relevant, start=1):
        if rel:
            hits += 1
        recall = hits / n_positives
        precision = hits / i
        ap += (recall - old_recall) * (old_precision + precision) / 2
        old_recall, old_precision = recall, precision
    return ap


def precision_at(relevant: list[bool], k: int) -> float:
    """True P@k."""
    return sum(relevant[:k]) / k


def precision_at_revisitop(relevant: list[bool], k: int) -> float:
    """revisitop compute_map: positives within kq over kq, kq = min(k, rank of last positive)."""
    ranks = [i for i, rel in enumerate(relevant, start=1) if rel]
    if not ranks:
        return 0.0
    kq = min(k, max(ranks))
    return sum(1 for r in ranks if r <= kq) / kq


def inp(relevant: list[bool], n_positives: int) -> float:
    """Ye et al. 2021: positives / rank of the hardest (last) positive."""
    ranks = [i for i, rel in enumerate(relevant, start=1) if rel]
    if len(ranks) < n_positives:
        return 0.0
    return n_positives / ranks[-1]


def cmc(relevant: list[bool], k: int) -> float:
    """Market-1501 CMC: 1 when a positive is among the first k."""
    return 1.0 if any(relevant[:k]) else 0.0


def ap_voc_all_points(relevant: list[bool], n_positives: int) -> float:
    """PASCAL VOC devkit from 2010 (VOCap): precision and recall at every rank, precision
    made monotone from the right, summed over the recall steps."""
    hits, rec, prec = 0, [], []
    for i, rel in enumerate(relevant, start=1):
        hits += rel
        rec.append(hits / n_positives)
        prec.append(hits / i)
    mrec, mpre = [0.0, *rec, 1.0], [0.0, *prec, 0.0]
    for i in range(len(mpre) - 2, -1, -1):
        mpre[i] = max(mpre[i], mpre[i + 1])
    return sum((mrec[i] - mrec[i - 1]) * mpre[i] for i in range(1, len(mrec))
               if mrec[i] != mrec[i - 1])


def ap_voc_11_points(relevant: list[bool], n_positives: int) -> float:
    """PASCAL VOC 2007 devkit: the mean over recall levels 0, 0.1, ..., 1 of the best
    precision at a recall reaching the level (levels written as tenths, 3/10 reaches 0.3)."""
    hits, points = 0, []
    for i, rel in enumerate(relevant, start=1):
        hits += rel
        points.append((hits, i))
    total = 0.0
    for tenth in range(11):
        reached = [h / i for h, i in points if 10 * h >= tenth * n_positives]
        total += max(reached) if reached else 0.0
    return total / 11


def interpolated_precision(recall, precision, levels) -> np.ndarray:
    """Manning, Raghavan & Schutze, "Introduction to IR", 8.4 (the TREC 11-point curve): at
    each recall level, the best precision among the points whose recall reaches it, 0 where
    none does. A recall within RECALL_TOLERANCE below the level reaches it (3/10 reaches
    the level 0.3, which np.linspace(0, 1, 11) writes 0.30000000000000004)."""
    if len(recall) != len(precision):
        raise ValueError("one precision per recall")
    out = []
    for level in levels:
        reached = [p for r, p in zip(recall, precision, strict=True)
                   if r >= level - RECALL_TOLERANCE]
        out.append(max(reached) if reached else 0.0)
    return np.array(out, dtype=np.float64)
