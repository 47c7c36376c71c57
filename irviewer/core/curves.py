"""The dataset-level curves the viewer plots beside one query's: AP histogram, mean P@k and
CMC, computed from an :class:`~irviewer.core.evaluation.Evaluation` with its protocol's
conventions (vectorised over queries; Qt-free).

Sources of the conventions:

- P@k is the true precision at cut-off k (trec_eval ``P``): the positives in the top k over
  k, a list shorter than k padded with non-positives; the mean is over evaluated queries.
- CMC (Market-1501 style, torchreid ``eval_market1501``): the share of evaluated queries
  whose first positive is within the top k, after the protocol's removals.
- CUHK03's single-gallery-shot CMC (torchreid ``eval_cuhk03``) is a random-sampling
  estimate computed at the protocol's ``cmc_ks`` only; the curve is given at those points.
- The AP histogram counts evaluated queries per AP bin; bin i holds ``low <= AP < high``,
  the last one also AP = 1: :func:`in_ap_range` is that rule, :func:`ap_bin_index` applies
  it to bins, and the query table's AP filter and the histogram's highlight both use them.
"""

from __future__ import annotations

import numpy as np

from irviewer.core.errors import InputError
from irviewer.core.evaluation import Evaluation


def _check_depth(max_k: int) -> int:
    if isinstance(max_k, bool) or not isinstance(max_k, int | np.integer) or max_k < 1:
        raise InputError(f"the curve depth must be a whole number of at least 1, not {max_k!r}")
    return int(max_k)


def mean_precision_at(evaluation: Evaluation, max_k: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (k = 1..max_k, mean true P@k over the evaluated queries); nan values when no
    query is evaluated."""
    max_k = _check_depth(max_k)
    p = evaluation.positives
    ks = np.arange(1, max_k + 1)
    evaluated = p.n_positives > 0
    n_eval = int(evaluated.sum())
    if not n_eval:
        return ks, np.full(max_k, np.nan)
    owner = np.repeat(np.arange(len(p.n_positives)), np.diff(p.offsets))
    ranks = p.ranks[evaluated[owner] & (p.ranks < max_k)]
    hits = np.cumsum(np.bincount(ranks, minlength=max_k)[:max_k])
    return ks, hits / (ks * n_eval)


def query_precision_at(evaluation: Evaluation, q: int, max_k: int) -> tuple[np.ndarray,
                                                                            np.ndarray]:
    """Return (k = 1..max_k, query ``q``'s true P@k); nan values when it is skipped.
    InputError for a query position that is not one."""
    max_k = _check_depth(max_k)
    p = evaluation.positives
    n_queries = len(p.n_positives)
    if isinstance(q, bool) or not isinstance(q, int | np.integer) or not 0 <= q < n_queries:
        raise InputError(f"no query {q!r}: there are {n_queries} queries")
    ks = np.arange(1, max_k + 1)
    if p.n_positives[q] == 0:
        return ks, np.full(max_k, np.nan)
    ranks = p.of(q)
    hits = np.cumsum(np.bincount(ranks[ranks < max_k], minlength=max_k)[:max_k])
    return ks, hits / ks


def cmc_curve(evaluation: Evaluation, max_k: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (ranks k, CMC@k) under the protocol's CMC: k = 1..max_k for first-match CMC
    (Market-1501); the protocol's ``cmc_ks`` up to ``max_k`` for CUHK03, whose estimate
    exists only there. Empty arrays for a protocol without CMC; nan values when no query
    is evaluated."""
    max_k = _check_depth(max_k)
    protocol = evaluation.protocol
    if protocol.cmc == "cuhk03":
        ks = np.array([k for k in protocol.cmc_ks if k <= max_k], dtype=np.int64)
        return ks, np.array([evaluation.summary[f"CMC@{k}"] for k in ks], dtype=float)
    if protocol.cmc != "market":
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    ks = np.arange(1, max_k + 1)
    evaluated = evaluation.evaluated
    if not evaluated.any():
        return ks, np.full(max_k, np.nan)
    first = evaluation.per_query["first_positive_rank"][evaluated]
    found = first[(first >= 0) & (first < max_k)]
    hits = np.cumsum(np.bincount(found, minlength=max_k)[:max_k])
    return ks, hits / int(evaluated.sum())


def ap_bin_edges(bins: int = 10) -> np.ndarray:
    """Return the AP histogram's ``bins + 1`` edges, evenly from 0 to 1."""
    if isinstance(bins, bool) or not isinstance(bins, int | np.integer) or bins < 1:
        raise InputError(f"the number of AP bins must be at least 1, not {bins!r}")
    return np.linspace(0.0, 1.0, int(bins) + 1)


def in_ap_range(ap: np.ndarray | float, low: float, high: float) -> np.ndarray:
    """Return whether each AP is in the range ``low <= AP < high``, or ``<= 1`` when the
    range reaches 1 (so AP = 1 belongs to the last range); nan is in no range."""
    values = np.asarray(ap, dtype=float)
    with np.errstate(invalid="ignore"):
        inside = (values >= low) & ((values < high) | ((high >= 1.0) & (values <= 1.0)))
    return inside & ~np.isnan(values)


def ap_bin_index(ap: np.ndarray | float, edges: np.ndarray) -> np.ndarray:
    """Return the bin of each AP between ``edges`` under :func:`in_ap_range`'s rule (bin i:
    ``edges[i] <= AP < edges[i + 1]``, the last bin also AP = edges[-1]); -1 for nan or a
    value outside the edges."""
    values = np.asarray(ap, dtype=float)
    edges = np.asarray(edges, dtype=float)
    n = len(edges) - 1
    # searchsorted(side="right") - 1 makes the very comparisons in_ap_range makes, so a
    # bar counts exactly the queries a click on it lists (0.3 vs 0.30000000000000004).
    which = np.searchsorted(edges, values, side="right") - 1
    which = np.where(values == edges[-1], n - 1, which)
    return np.where(np.isnan(values) | (which < 0) | (which >= n), -1, which)


def ap_histogram(evaluation: Evaluation, bins: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Return (bin edges from 0 to 1, number of evaluated queries per bin); bin i counts
    ``edges[i] <= AP < edges[i + 1]``, the last bin also AP = 1."""
    edges = ap_bin_edges(bins)
    which = ap_bin_index(evaluation.per_query["AP"][evaluation.evaluated], edges)
    return edges, np.bincount(which[which >= 0], minlength=bins)
