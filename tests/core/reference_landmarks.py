"""Transcriptions of the reference evaluators of Google Landmarks v2 retrieval and DISC21 copy
detection, in plain Python, written from reading their code (not copied, not sharing a line
with irviewer's): what each function computes is what the named function of the named file
computes, on the same inputs.

* delf: tensorflow/models ``research/delf/delf/python/datasets/google_landmarks_dataset/
  metrics.py`` (commit e4009b2): ``MeanAveragePrecision``, ``MeanPrecisions``,
  ``MeanMedianPosition``, with ``max_predictions=100``.
* the GLDv2 2019 retrieval winners' validation metric: lyakaap/Landmark2019-1st-and-3rd-
  Place-Solution ``src/metrics.py`` ``map_at_k`` (commit 215d4ad), applied to one 0/1
  relevance row per query.
* isc2021: facebookresearch/isc2021 ``isc/metrics.py`` (commit e12efd5) ``evaluate``.
"""

from __future__ import annotations

import statistics

# -- delf ---------------------------------------------------------------------------------

def delf_mean_average_precision(predictions: dict[str, list[str]],
                                solution: dict[str, list[str]], cut: int = 100) -> float:
    """delf ``MeanAveragePrecision``: per predicted test image, the sum of the precision at
    each first occurrence of a relevant image within the first ``cut`` places (a repeat is
    skipped but keeps its place), over min(relevant, cut); the sum over test images divided
    by every test image of the solution."""
    total = 0.0
    for test_id, listed in predictions.items():
        if test_id not in solution:
            raise ValueError(test_id)
        relevant = solution[test_id]
        seen: set[str] = set()
        hits, ap = 0, 0.0
        for place in range(min(len(listed), cut)):
            image = listed[place]
            if image in seen:
                continue
            if image in relevant:
                hits += 1
                ap += hits / (place + 1)
            seen.add(image)
        total += ap / min(len(relevant), cut)
    return total / len(solution)


def delf_mean_precisions(predictions: dict[str, list[str]], solution: dict[str, list[str]],
                         cut: int = 100) -> list[float]:
    """delf ``MeanPrecisions``: the mean over every test image of the solution (one without
    predictions contributes zeros) of the precision at places 1..cut, repeats skipped."""
    sums = [0.0] * cut
    for test_id, listed in predictions.items():
        if test_id not in solution:
            raise ValueError(test_id)
        seen: set[str] = set()
        hits = 0
        for place in range(cut):
            if place < len(listed) and listed[place] not in seen:
                if listed[place] in solution[test_id]:
                    hits += 1
                seen.add(listed[place])
            sums[place] += hits / (place + 1)
    return [s / len(solution) for s in sums]


def delf_mean_median_position(predictions: dict[str, list[str]],
                              solution: dict[str, list[str]],
                              cut: int = 100) -> tuple[float, float]:
    """delf ``MeanMedianPosition``: per test image the 1-based place of its first relevant
    prediction within ``cut`` (cut + 1 when none, and for a test image without predictions);
    their mean and median."""
    positions = []
    for test_id, relevant in solution.items():
        listed = predictions.get(test_id, [])
        found = next((place + 1 for place in range(min(len(listed), cut))
                      if listed[place] in relevant), cut + 1)
        positions.append(found)
    return sum(positions) / len(positions), float(statistics.median(positions))


def winners_map_at_k(predictions: dict[str, list[str]], solution: dict[str, list[str]],
                     k: int = 100) -> float:
    """``map_at_k`` of the 2019 winners' code on one 0/1 row of k places per test image (a
    relevant image, repeats included, counts wherever it stands; a short list padded with
    wrong answers): the mean over every row *and every column* of precision x relevance,
    that is each test image's sum of the precision at its relevant places over k."""
    rows = []
    for test_id, relevant in solution.items():
        listed = predictions.get(test_id, [])
        flags = [place < len(listed) and listed[place] in relevant for place in range(k)]
        hits, total = 0, 0.0
        for place, flag in enumerate(flags):
            hits += flag
            total += hits / (place + 1) * flag
        rows.append(total / k)
    return sum(rows) / len(rows)


# -- isc2021 ------------------------------------------------------------------------------

def isc_evaluate(ground_truth: list[tuple[str, str]],
                 predictions: list[tuple[str, str, float]]) -> dict[str, float | None]:
    """isc2021 ``evaluate``: microAP, recall and threshold at precision 0.9, recall at rank 1
    and 10. ValueError for a repeated (query, reference) prediction."""
    if len({(q, r) for q, r, _ in predictions}) != len(predictions):
        raise ValueError("Predictions contains duplicates.")
    truth = set(ground_truth)
    judged = [(score, (q, r) in truth) for q, r, score in predictions]
    # Sorted ascending on (score, not true), then reversed: descending score, and among
    # equal scores the false predictions first (the worst order).
    order = sorted(range(len(judged)), key=lambda i: (judged[i][0], not judged[i][1]))
    order.reverse()
    n_gt = len(ground_truth)
    precisions, recalls, thresholds = [], [], []
    hits = 0
    for place, i in enumerate(order, start=1):
        hits += judged[i][1]
        precisions.append(hits / place)
        recalls.append(hits / n_gt)
        thresholds.append(judged[i][0])
    ap, before = 0.0, 0.0
    for precision, recall in zip(precisions, recalls, strict=True):
        ap += (recall - before) * precision
        before = recall
    best_recall = best_threshold = None
    for precision, recall, threshold in zip(precisions, recalls, thresholds, strict=True):
        if precision >= 0.9 and (best_recall is None or recall > best_recall):
            best_recall, best_threshold = recall, threshold
    by_query: dict[str, list[tuple[str, float]]] = {}
    for q, r, score in predictions:
        by_query.setdefault(q, []).append((r, score))
    ranks = []
    for q, r in ground_truth:
        answers = by_query.get(q, [])
        mine = [score for ref, score in answers if ref == r]
        if not mine:
            ranks.append(None)
            continue
        ranks.append(sum(1 for _, score in answers if score >= mine[0]) - 1)
    return {"microAP": ap, "recall@P90": best_recall, "threshold@P90": best_threshold,
            "recall@rank1": sum(1 for x in ranks if x == 0) / n_gt,
            "recall@rank10": sum(1 for x in ranks if x is not None and x < 10) / n_gt}
