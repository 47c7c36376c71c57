"""Average precision under every rule irviewer knows, per query, over a ragged batch: the one
public AP entry point, :func:`average_precision` (and the curve whose area it is,
:func:`ap_polyline`).

The rules differ in how the precision-recall curve is integrated and in what AP is divided
by; each is named after the public evaluators that use it:

- ``finite``: the mean over the positives of the precision at each one's rank (trec_eval
  ``map``; torchreid / fast-reid ``eval_market1501``);
- ``trapezoid``: the curve integrated by trapezoids from the precision just before each
  positive to the precision at it (VGG ``compute_ap.cpp`` for Oxford5k/Paris6k; revisitop
  and cirtorch ``compute_ap``; the Market-1501 MATLAB ``compute_AP.m``);
- ``interpolated``: all-point interpolated AP, each positive's precision replaced by the
  best precision at or after it (PASCAL VOC devkit from 2010, ``VOCap``: the curve made
  monotone from the right, summed over the recall steps);
- ``11point``: the mean over the recall levels 0, 0.1, ..., 1 of the best precision at a
  recall at least the level, 0 where none (PASCAL VOC 2007 devkit; TREC's 11-point average;
  VLFeat ``vl_pr`` ``ap_interp_11``). A recall within
  :data:`~irviewer.core.metrics.RECALL_TOLERANCE` below a level reaches it, so 3/10 reaches
  0.3 (the Python ports of the devkit compare with ``np.arange(0, 1.1, 0.1)``, whose 0.3 is
  0.30000000000000004, and there 3/10 does not).

The denominator is ``all`` positives of the query (a positive never retrieved adds 0),
only those ``retrieved`` within the scored list (VLFeat ``vl_pr`` as hpatches-benchmark
calls it on the top 50: a positive never listed is not counted; a query with positives but
none listed scores 0), ``depth``: min(positives, list depth) (delf's ``MeanAveragePrecision``,
Google Landmarks v2's mAP@100), or ``list``: the list depth whatever the positives (the
Google Landmark Retrieval 2019 winners' ``map_at_k``, lyakaap/Landmark2019-1st-and-3rd-
Place-Solution ``src/metrics.py``, which averages over the k columns of the list).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from irviewer.core import metrics
from irviewer.core.convention_names import (
    ALL_POSITIVES,
    AP_DENOMINATORS,
    AP_RULES,
    DEPTH_CAPPED,
    DEPTH_DENOMINATORS,
    INTERPOLATED,
    LISTED_POSITIVES,
    SUM_AP_RULES,
    one_of,
)
from irviewer.core.errors import InputError
from irviewer.core.metrics import RECALL_TOLERANCE, Ragged

#: The recall levels of the 11-point rule.
_ELEVEN_LEVELS = np.linspace(0.0, 1.0, 11)


def average_precision(batch: Ragged, rule: str, denominator: str = ALL_POSITIVES,
                      depth: int | None = None) -> np.ndarray:
    """Return AP per query of ``batch`` (:func:`irviewer.core.metrics.ragged`, or
    :func:`~irviewer.core.metrics.one_query` for one query) under ``rule`` (one of
    :data:`~irviewer.core.convention_names.AP_RULES`: ``finite``, ``trapezoid``,
    ``interpolated``, ``11point``) divided by ``denominator`` (``all`` positives, those
    ``retrieved``, or with the list ``depth``: min(positives, ``depth``) or the ``list``
    depth itself; see the module); nan where the query has no positive. InputError with
    one sentence for a rule or a denominator irviewer does not know."""
    _check_rule(rule)
    if denominator not in AP_DENOMINATORS:
        raise InputError(f"unknown AP denominator {denominator!r}: use "
                         f"{one_of(AP_DENOMINATORS)}")
    if denominator == LISTED_POSITIVES:
        return _over_the_listed(batch, rule)
    if denominator in DEPTH_DENOMINATORS:
        if depth is None:
            raise ValueError(f"the AP denominator {denominator!r} needs a list depth")
        n = batch.n_positives
        counted = np.minimum(n, depth) if denominator == DEPTH_CAPPED else \
            np.where(n > 0, depth, 0)
        return _over_all(replace(batch, n_positives=counted), rule)
    return _over_all(batch, rule)


def _check_rule(rule: str) -> None:
    """Raise InputError unless ``rule`` is one of the AP rules irviewer knows."""
    if rule not in AP_RULES:
        raise InputError(f"unknown AP rule {rule!r}: use {one_of(AP_RULES)}")


def _over_the_listed(batch: Ragged, rule: str) -> np.ndarray:
    """Return AP per query divided by the positives within the list (VLFeat ``vl_pr`` as
    hpatches-benchmark calls it): 0 for a query with positives but none listed."""
    n = batch.n_positives
    listed = np.diff(batch.offsets)
    ap = _over_all(replace(batch, n_positives=np.maximum(listed, 1)), rule)
    ap = np.where(listed > 0, ap, 0.0)
    ap[n == 0] = np.nan
    return ap


def _over_all(batch: Ragged, rule: str) -> np.ndarray:
    """Return AP per query under a known ``rule`` divided by all the query's positives."""
    if rule in SUM_AP_RULES:
        return batch.summed_ap(rule)
    n = batch.n_positives
    best = _best_precision_from(batch)
    if rule == INTERPOLATED:
        total = np.bincount(batch.query_of, weights=best, minlength=len(n))
        out = np.asarray(total / np.maximum(n, 1), dtype=np.float64)
    else:  # ELEVEN_POINT, the one rule left
        out = _interpolated_at_levels(batch, best, _ELEVEN_LEVELS).mean(axis=1)
    out[n == 0] = np.nan
    return out


def _best_precision_from(batch: Ragged) -> np.ndarray:
    """Return, for every retrieved positive, the best precision at it or at any later
    positive of its query (the interpolated precision at its recall): the precisions'
    running maximum from the right within each query, computed exactly on their sort
    order."""
    precision = (batch.position + 1) / (batch.ranks + 1)
    if not len(precision):
        return precision
    # Replace each precision by its place in the sorted distinct values (exact integers),
    # offset per query so that a reversed running maximum never crosses a query.
    values, code = np.unique(precision, return_inverse=True)
    q = batch.query_of
    span = len(values) + 1
    keyed = code + (q.max() - q) * span  # later queries get smaller offsets
    best = np.maximum.accumulate(keyed[::-1])[::-1] - (q.max() - q) * span
    return values[best]


def _interpolated_at_levels(batch: Ragged, best: np.ndarray,
                            levels: np.ndarray) -> np.ndarray:
    """Return (n_queries, len(levels)) interpolated precision: at each level, the best
    precision at a recall ``(j + 1) / n`` that reaches the level (within
    :data:`~irviewer.core.metrics.RECALL_TOLERANCE`), 0 where none does; ``best`` is
    :func:`_best_precision_from`."""
    n = np.maximum(batch.n_positives, 1)[:, None].astype(np.float64)
    counts = np.diff(batch.offsets)[:, None]
    need = levels[None, :] - RECALL_TOLERANCE
    j = np.clip(np.ceil(need * n) - 1, 0, None).astype(np.int64)
    j = np.where((j > 0) & (j / n >= need), j - 1, j)  # one float step down
    j = np.where((j + 1) / n < need, j + 1, j)  # or up, as the comparison says
    reached = j < counts
    at = batch.offsets[:-1, None] + np.minimum(j, np.maximum(counts - 1, 0))
    padded = np.append(best, 0.0)
    return np.where(reached, padded[np.minimum(at, len(best))], 0.0)


def ap_polyline(positive_ranks: np.ndarray, n_positives: int,
                rule: str) -> tuple[np.ndarray, np.ndarray]:
    """Return (recall, precision) vertices whose trapezoid area is one query's AP under
    ``rule`` (divided by all positives): :func:`irviewer.core.metrics.summed_ap_polyline`
    for the summed rules; for ``interpolated`` a flat step at each positive's interpolated
    precision over its recall step; for ``11point`` eleven flat steps of width 1/11 side by
    side over [0, 1], one per recall level 0, 0.1, ..., 1, at that level's interpolated
    precision. Both empty when nothing was retrieved or ``n_positives == 0``. InputError
    for a rule irviewer does not know, as :func:`average_precision`."""
    _check_rule(rule)
    if rule in SUM_AP_RULES:
        return metrics.summed_ap_polyline(positive_ranks, n_positives, rule)
    batch = metrics.one_query(positive_ranks, n_positives)
    n = int(batch.n_positives[0])
    if n == 0 or not len(batch.ranks):
        return np.zeros(0), np.zeros(0)
    best = _best_precision_from(batch)
    if rule == INTERPOLATED:
        j = np.arange(len(batch.ranks), dtype=np.float64)
        x = np.column_stack([j / n, (j + 1) / n]).ravel()
        return x, np.repeat(best, 2)
    # ELEVEN_POINT, the one rule left
    at = _interpolated_at_levels(batch, best, _ELEVEN_LEVELS)[0]
    i = np.arange(len(_ELEVEN_LEVELS), dtype=np.float64)
    x = np.column_stack([i, i + 1]).ravel() / len(_ELEVEN_LEVELS)
    return x, np.repeat(at, 2)
