"""Retrieval metrics as per-query values; means are taken last, by the caller.

Input convention. ``positive_ranks`` are the sorted, unique 0-based ranks of the *retrieved*
positives of one query, counted after the protocol removed its ignored items (junk, same
camera, the query itself). ``n_positives`` counts all positives of the query, also those
never retrieved (beyond a truncated list): they add nothing to the numerators but stay in the
denominators, as trec_eval does with qrels. A query with ``n_positives == 0`` gets nan from
every metric: the caller reports it as skipped and leaves it out of the means.

The batch functions take the same data for many queries in a ragged layout: ``ranks`` is the
concatenation of every query's positive ranks, query q's slice being
``ranks[offsets[q]:offsets[q + 1]]``, and ``n_positives`` is per query. They are vectorised
(no Python loop over queries) and equal the per-query functions (a test checks it).
"""

from __future__ import annotations

import numpy as np

from irviewer.core.errors import InputError

AP_RULES = ("finite", "trapezoid")


# -- validation -------------------------------------------------------------------------

def _check_one(positive_ranks: np.ndarray | list[int], n_positives: int) -> np.ndarray:
    r = np.asarray(positive_ranks, dtype=np.int64)
    if r.ndim != 1:
        raise InputError("positive ranks must be a 1-D list of ranks")
    if len(r) and r.min() < 0:
        raise InputError(f"positive ranks must be 0-based and non-negative, got {int(r.min())}")
    if len(r) > 1 and np.any(np.diff(r) <= 0):
        raise InputError("positive ranks must be sorted ascending without repeats")
    if n_positives < 0:
        raise InputError(f"the number of positives cannot be negative ({n_positives})")
    if len(r) > n_positives:
        raise InputError(f"{len(r)} retrieved positives but only {n_positives} positives")
    return r


def _check_k(k: int) -> None:
    if k < 1:
        raise InputError(f"the cut-off k must be at least 1, not {k}")


def _check_batch(ranks: np.ndarray, offsets: np.ndarray,
                 n_positives: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r = np.asarray(ranks, dtype=np.int64)
    o = np.asarray(offsets, dtype=np.int64)
    n = np.asarray(n_positives, dtype=np.int64)
    if len(o) != len(n) + 1 or (len(o) and (o[0] != 0 or o[-1] != len(r))):
        raise InputError(f"ragged ranks: {len(o)} offsets for {len(n)} queries and "
                         f"{len(r)} ranks do not fit together")
    if len(r) and r.min() < 0:
        raise InputError(f"positive ranks must be 0-based and non-negative, got {int(r.min())}")
    if np.any(np.diff(o) > n):
        raise InputError("a query has more retrieved positives than positives")
    return r, o, n


def _layout(o: np.ndarray, n_ranks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (count per query, query of each rank, 0-based position within its query)."""
    counts = np.diff(o)
    qid = np.repeat(np.arange(len(counts)), counts)
    j = np.arange(n_ranks, dtype=np.int64) - o[:-1][qid] if n_ranks else np.zeros(0, np.int64)
    return counts, qid, j


def _with_nan(values: np.ndarray, n: np.ndarray) -> np.ndarray:
    out = values.astype(np.float64)
    out[n == 0] = np.nan
    return out


# -- per query --------------------------------------------------------------------------

def average_precision_finite(positive_ranks: np.ndarray | list[int], n_positives: int) -> float:
    """Return finite-sum AP: (1/n) * sum_i i / (r_i + 1) over retrieved positives (i 1-based).

    The non-interpolated AP of trec_eval, torchreid and fast-reid: the mean over all
    positives of the precision at each positive's rank (0 for a positive never retrieved).
    """
    r = _check_one(positive_ranks, n_positives)
    if n_positives == 0:
        return float("nan")
    return float(np.sum(np.arange(1, len(r) + 1) / (r + 1)) / n_positives)


def average_precision_trapezoid(positive_ranks: np.ndarray | list[int],
                                n_positives: int) -> float:
    """Return trapezoid AP: the PR curve integrated by trapezoids over each recall step.

    VGG's ``compute_ap.cpp`` (Oxford5k/Paris6k), revisitop ``compute_ap``, cirtorch and the
    official Market-1501 script: for the j-th retrieved positive (0-based) at rank r, add
    (j / r + (j + 1) / (r + 1)) / 2 / n, with j / r taken as 1 when r = 0. Never above the
    finite-sum AP of the same ranks.
    """
    r = _check_one(positive_ranks, n_positives)
    if n_positives == 0:
        return float("nan")
    j = np.arange(len(r), dtype=np.float64)
    before = np.where(r == 0, 1.0, j / np.maximum(r, 1))
    at = (j + 1) / (r + 1)
    return float(np.sum((before + at) / 2) / n_positives)


def average_precision(positive_ranks: np.ndarray | list[int], n_positives: int,
                      rule: str) -> float:
    """Return AP by ``rule``: ``finite`` (trec_eval) or ``trapezoid`` (Oxford compute_ap)."""
    if rule == "finite":
        return average_precision_finite(positive_ranks, n_positives)
    if rule == "trapezoid":
        return average_precision_trapezoid(positive_ranks, n_positives)
    raise InputError(f"unknown AP rule {rule!r}: use finite or trapezoid")


def precision_at_k(positive_ranks: np.ndarray | list[int], n_positives: int, k: int) -> float:
    """Return true P@k: the number of positives ranked in the top k, divided by k."""
    r = _check_one(positive_ranks, n_positives)
    _check_k(k)
    if n_positives == 0:
        return float("nan")
    return float(np.count_nonzero(r < k) / k)


def precision_at_k_revisitop(positive_ranks: np.ndarray | list[int], n_positives: int,
                             k: int) -> float:
    """Return revisitop's mP@k term: positives within kq over kq, kq = min(k, last rank).

    revisitop ``compute_map`` (Radenovic et al. CVPR 2018): with 1-based ranks,
    kq = min(rank of the last retrieved positive, k). When every positive comes before k
    this is higher than the true P@k. A query that retrieved no positive gets 0.
    """
    r = _check_one(positive_ranks, n_positives)
    _check_k(k)
    if n_positives == 0:
        return float("nan")
    if not len(r):
        return 0.0
    kq = min(int(r[-1]) + 1, k)
    return float(np.count_nonzero(r < kq) / kq)


def r_precision(positive_ranks: np.ndarray | list[int], n_positives: int) -> float:
    """Return R-precision: P@R with R the number of positives (TREC)."""
    if n_positives == 0:
        _check_one(positive_ranks, n_positives)
        return float("nan")
    return precision_at_k(positive_ranks, n_positives, n_positives)


def inverse_negative_penalty(positive_ranks: np.ndarray | list[int], n_positives: int) -> float:
    """Return INP = n_positives / (1-based rank of the last positive).

    Ye et al., "Deep Learning for Person Re-identification: A Survey and Outlook", TPAMI
    2021 (mINP). When some positive was never retrieved (a truncated list) the hardest
    positive was not found at all, so INP is 0.
    """
    r = _check_one(positive_ranks, n_positives)
    if n_positives == 0:
        return float("nan")
    if len(r) < n_positives:
        return 0.0
    return float(n_positives / (r[-1] + 1))


def first_positive_rank(positive_ranks: np.ndarray | list[int]) -> int | None:
    """Return the 0-based rank of the first retrieved positive, or None."""
    r = np.asarray(positive_ranks, dtype=np.int64)
    return int(r[0]) if len(r) else None


def cmc_first_match(positive_ranks: np.ndarray | list[int], n_positives: int,
                    ks: tuple[int, ...] | list[int]) -> np.ndarray:
    """Return Market-1501 CMC at each k: 1 when the first positive is within the top k.

    As torchreid ``eval_market1501`` (cumulative match of the first correct match);
    nan for a query with no positive.
    """
    r = _check_one(positive_ranks, n_positives)
    for k in ks:
        _check_k(k)
    if n_positives == 0:
        return np.full(len(ks), np.nan)
    first = r[0] if len(r) else np.iinfo(np.int64).max
    return np.array([1.0 if first < k else 0.0 for k in ks])


def cmc_single_gallery_shot(valid_ranks: np.ndarray, gallery_ids: np.ndarray, query_id: object,
                            ks: tuple[int, ...] | list[int], repeats: int,
                            rng: np.random.Generator) -> np.ndarray:
    """Return CUHK03 single-gallery-shot CMC at each k, averaged over ``repeats`` samples.

    As torchreid ``eval_cuhk03`` (Li et al. CVPR 2014): among the query's valid gallery items
    (0-based ranks ``valid_ranks``, identities ``gallery_ids``), each repeat draws one image
    per identity; CMC@k is 1 when the drawn image of the query's identity is within the first
    k of the drawn images. Seeded through ``rng``: the random stream differs from
    torchreid's global ``np.random``, so values agree in expectation, not bit for bit.
    nan when the query's identity has no valid gallery image.
    """
    for k in ks:
        _check_k(k)
    if repeats < 1:
        raise InputError(f"the repeat count must be at least 1, not {repeats}")
    ranks = np.asarray(valid_ranks, dtype=np.int64)
    ids = np.asarray(gallery_ids)
    if len(ranks) != len(ids):
        raise InputError(f"{len(ranks)} ranks for {len(ids)} gallery identities")
    uniq, inverse = np.unique(ids, return_inverse=True)
    where = np.flatnonzero(uniq == query_id)
    if not len(where):
        return np.full(len(ks), np.nan)
    order = np.argsort(inverse, kind="stable")
    sizes = np.bincount(inverse, minlength=len(uniq))
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    pick = starts[None, :] + (rng.random((repeats, len(uniq))) * sizes[None, :]).astype(np.int64)
    drawn = ranks[order][pick]  # (repeats, identities): rank of each drawn image
    mine = drawn[:, where[0]]
    position = np.count_nonzero(drawn < mine[:, None], axis=1)
    return np.array([float(np.mean(position < k)) for k in ks])


def pr_points(positive_ranks: np.ndarray | list[int],
              n_positives: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (recall, precision) at each retrieved positive: i / n and i / (r_i + 1)."""
    r = _check_one(positive_ranks, n_positives)
    if n_positives == 0:
        return np.zeros(0), np.zeros(0)
    i = np.arange(1, len(r) + 1, dtype=np.float64)
    return i / n_positives, i / (r + 1)


def interpolated_precision(recall: np.ndarray, precision: np.ndarray,
                           levels: np.ndarray) -> np.ndarray:
    """Return interpolated precision at each recall level: the best precision at recall >= level
    (0 where no point reaches it), as in the TREC 11-point curves."""
    rec = np.asarray(recall, dtype=np.float64)
    prec = np.asarray(precision, dtype=np.float64)
    lv = np.asarray(levels, dtype=np.float64)
    best = np.maximum.accumulate(prec[::-1])[::-1] if len(prec) else prec
    at = np.searchsorted(rec, lv - 1e-12, side="left")
    out = np.zeros(len(lv))
    ok = at < len(rec)
    out[ok] = best[at[ok]]
    return out


def nanmean_evaluated(values: np.ndarray) -> tuple[float, int, int]:
    """Return (mean over the non-nan values, number evaluated, number skipped)."""
    v = np.asarray(values, dtype=np.float64)
    ok = ~np.isnan(v)
    n = int(ok.sum())
    return (float(v[ok].mean()) if n else float("nan")), n, int(len(v) - n)


# -- batch (ragged) ---------------------------------------------------------------------

def batch_average_precision(ranks: np.ndarray, offsets: np.ndarray, n_positives: np.ndarray,
                            rule: str) -> np.ndarray:
    """Return AP per query by ``rule`` (see the per-query functions); nan where n = 0."""
    if rule not in AP_RULES:
        raise InputError(f"unknown AP rule {rule!r}: use finite or trapezoid")
    r, o, n = _check_batch(ranks, offsets, n_positives)
    _, qid, j = _layout(o, len(r))
    at = (j + 1) / (r + 1)
    before = np.where(r == 0, 1.0, j / np.maximum(r, 1))
    terms = at if rule == "finite" else (before + at) / 2
    total = np.bincount(qid, weights=terms, minlength=len(n))
    return _with_nan(total / np.maximum(n, 1), n)


def batch_precision_at_k(ranks: np.ndarray, offsets: np.ndarray, n_positives: np.ndarray,
                         k: int) -> np.ndarray:
    """Return true P@k per query; nan where n = 0."""
    _check_k(k)
    r, o, n = _check_batch(ranks, offsets, n_positives)
    _, qid, _ = _layout(o, len(r))
    return _with_nan(np.bincount(qid[r < k], minlength=len(n)) / k, n)


def batch_precision_at_k_revisitop(ranks: np.ndarray, offsets: np.ndarray,
                                   n_positives: np.ndarray, k: int) -> np.ndarray:
    """Return revisitop's P@k per query (kq = min(k, last rank)); nan where n = 0."""
    _check_k(k)
    r, o, n = _check_batch(ranks, offsets, n_positives)
    counts, qid, _ = _layout(o, len(r))
    last = np.where(counts > 0, r[np.maximum(o[1:] - 1, 0)] + 1 if len(r) else 0, 0)
    kq = np.minimum(last, k)
    hits = np.bincount(qid[r < kq[qid]], minlength=len(n)) if len(r) else np.zeros(len(n))
    return _with_nan(np.where(kq > 0, hits / np.maximum(kq, 1), 0.0), n)


def batch_r_precision(ranks: np.ndarray, offsets: np.ndarray,
                      n_positives: np.ndarray) -> np.ndarray:
    """Return R-precision per query (P@R, R = number of positives); nan where n = 0."""
    r, o, n = _check_batch(ranks, offsets, n_positives)
    _, qid, _ = _layout(o, len(r))
    hits = np.bincount(qid[r < n[qid]], minlength=len(n))
    return _with_nan(hits / np.maximum(n, 1), n)


def batch_inverse_negative_penalty(ranks: np.ndarray, offsets: np.ndarray,
                                   n_positives: np.ndarray) -> np.ndarray:
    """Return INP per query (0 when a positive was never retrieved); nan where n = 0."""
    r, o, n = _check_batch(ranks, offsets, n_positives)
    counts = np.diff(o)
    last = r[np.maximum(o[1:] - 1, 0)] + 1 if len(r) else np.ones(len(n), dtype=np.int64)
    full = (counts == n) & (n > 0)
    return _with_nan(np.where(full, n / np.maximum(last, 1), 0.0), n)


def batch_first_positive_rank(ranks: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Return the 0-based rank of each query's first retrieved positive, -1 when none."""
    r = np.asarray(ranks, dtype=np.int64)
    o = np.asarray(offsets, dtype=np.int64)
    counts = np.diff(o)
    first = np.full(len(counts), -1, dtype=np.int64)
    has = counts > 0
    first[has] = r[o[:-1][has]]
    return first


def batch_cmc_first_match(ranks: np.ndarray, offsets: np.ndarray, n_positives: np.ndarray,
                          ks: tuple[int, ...] | list[int]) -> np.ndarray:
    """Return (n_queries, len(ks)) Market-1501 CMC values; nan rows where n = 0."""
    for k in ks:
        _check_k(k)
    r, o, n = _check_batch(ranks, offsets, n_positives)
    first = batch_first_positive_rank(r, o)
    hit = (first[:, None] >= 0) & (first[:, None] < np.asarray(ks)[None, :])
    out = hit.astype(np.float64)
    out[n == 0] = np.nan
    return out


def mean_interpolated_pr(ranks: np.ndarray, offsets: np.ndarray, n_positives: np.ndarray,
                         levels: np.ndarray | None = None) -> np.ndarray:
    """Return the mean over queries with positives of the interpolated precision at each
    recall level (default the 11 TREC levels 0, 0.1, ..., 1)."""
    lv = np.linspace(0.0, 1.0, 11) if levels is None else np.asarray(levels, dtype=np.float64)
    r, o, n = _check_batch(ranks, offsets, n_positives)
    _, qid, j = _layout(o, len(r))
    ok = n > 0
    if not ok.any():
        return np.full(len(lv), np.nan)
    recall = (j + 1) / np.maximum(n[qid], 1)
    precision = (j + 1) / (r + 1)
    out = np.zeros((len(n), len(lv)))
    for i, level in enumerate(lv):
        reach = recall >= level - 1e-12
        col = np.zeros(len(n))
        np.maximum.at(col, qid[reach], precision[reach])
        out[:, i] = col
    return out[ok].mean(axis=0)


def ap_polyline(positive_ranks: np.ndarray | list[int], n_positives: int,
                rule: str) -> tuple[np.ndarray, np.ndarray]:
    """Return (recall, precision) vertices whose area (trapezoid rule on the vertices) is
    the AP under ``rule``: steps at each positive's precision for ``finite``; for
    ``trapezoid``, a segment from the precision just before each positive to the precision
    at it (the curve VGG's compute_ap.cpp integrates). Empty when nothing was retrieved."""
    r = _check_one(positive_ranks, n_positives)
    if rule not in AP_RULES:
        raise InputError(f"unknown AP rule {rule!r}: use finite or trapezoid")
    if n_positives == 0 or not len(r):
        return np.zeros(0), np.zeros(0)
    j = np.arange(len(r), dtype=np.float64)
    at = (j + 1) / (r + 1)
    start = at if rule == "finite" else np.where(r == 0, 1.0, j / np.maximum(r, 1))
    x = np.column_stack([j / n_positives, (j + 1) / n_positives]).ravel()
    y = np.column_stack([start, at]).ravel()
    return x, y
