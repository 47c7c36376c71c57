"""Retrieval metrics as per-query values over a batch of queries; means are taken last, by
the caller.

Input convention
----------------
A query's positive ranks are the sorted, unique 0-based ranks of its *retrieved* positives,
counted after the protocol removed its ignored items (junk, same camera, the query itself),
exactly as revisitop ``compute_map`` shifts each positive up by the number of junk items
ranked before it. ``n_positives`` counts all positives of the query, also those never
retrieved (beyond a truncated top-K list): they add nothing to the numerators but stay in the
denominators, as trec_eval does with the qrels' ``num_rel``. A query with
``n_positives == 0`` gets nan from every metric: the caller reports it as skipped and leaves
it out of the means (revisitop ``compute_map`` "nempty", torchreid's ``num_valid_q``), never
counting it as 0 or 1.

The metrics are the methods of :class:`Ragged`, a batch of queries checked once
(:func:`ragged`; :func:`one_query` for a single query): ``ranks`` is the concatenation of
every query's positive ranks, query q's slice being ``ranks[offsets[q]:offsets[q + 1]]``
(sorted within the slice), and ``n_positives`` is per query. They are vectorised (no Python
loop over queries). Average precision, under every rule irviewer knows, is
:func:`irviewer.core.ap_rules.average_precision`; this module holds the terms of the rules
that sum one per retrieved positive (``_ap_terms``, :meth:`Ragged.summed_ap`).

Which convention comes from where
---------------------------------
- finite-sum AP: trec_eval ``map``; torchreid / fast-reid ``eval_market1501``.
- trapezoid AP: VGG ``compute_ap.cpp`` (Oxford5k, Paris6k); revisitop and cirtorch
  ``compute_ap``; the official Market-1501 MATLAB ``compute_AP.m``.
- true P@k and R-precision: trec_eval ``P`` and ``Rprec`` (short lists padded with
  non-positives).
- revisitop mP@k: revisitop ``compute_map`` (divides by min(k, rank of the last positive)).
- INP: Ye et al., TPAMI 2021; fast-reid ``eval_market1501`` mINP.
- CMC: torchreid ``eval_market1501`` (first match) and ``eval_cuhk03`` (single-gallery-shot).

Bad inputs raise :class:`InputError` with one sentence naming the first offending query.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from irviewer.core.convention_names import FINITE, SUM_AP_RULES, TRAPEZOID
from irviewer.core.errors import InputError, counted

#: Recall values within this distance below a recall level count as reaching it, so that
#: 3/10 reaches the level 0.3 even though ``np.linspace(0, 1, 11)[3]`` is 0.30000000000000004.
RECALL_TOLERANCE = 1e-12

# -- validation -------------------------------------------------------------------------

def _as_int_array(values: np.ndarray | Sequence[int], what: str) -> np.ndarray:
    """Return ``values`` as a 1-D int64 array, or raise InputError naming ``what``."""
    a = np.asarray(values)
    if a.ndim != 1:
        raise InputError(f"{what} must be a 1-D list, got {a.ndim} dimensions")
    if a.size == 0:
        return np.zeros(0, dtype=np.int64)
    if not np.issubdtype(a.dtype, np.integer):
        raise InputError(f"{what} must be whole numbers, got {a.dtype} values")
    return a.astype(np.int64, copy=False)


def _check_n(n_positives: int) -> int:
    if isinstance(n_positives, bool) or not isinstance(n_positives, int | np.integer):
        raise InputError(f"the number of positives must be a whole number, "
                         f"not {n_positives!r}")
    if n_positives < 0:
        raise InputError(f"the number of positives cannot be negative ({n_positives})")
    return int(n_positives)


def _check_sorted(r: np.ndarray) -> np.ndarray:
    if len(r) and r.min() < 0:
        raise InputError(f"positive ranks must be 0-based and non-negative, got {int(r.min())}")
    if len(r) > 1 and np.any(np.diff(r) <= 0):
        raise InputError("positive ranks must be sorted ascending without repeats")
    return r


def _check_one(positive_ranks: np.ndarray | Sequence[int],
               n_positives: int) -> tuple[np.ndarray, int]:
    """Validate one query's inputs; return (ranks as int64, n_positives as int)."""
    r = _check_sorted(_as_int_array(positive_ranks, "positive ranks"))
    n = _check_n(n_positives)
    if len(r) > n:
        raise InputError(f"{counted(len(r), 'retrieved positive')} but only "
                         f"{counted(n, 'positive')} in all")
    return r, n


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise InputError(f"the cut-off k must be a whole number, not {k!r}")
    if k < 1:
        raise InputError(f"the cut-off k must be at least 1, not {k}")
    return int(k)


def _check_ks(ks: Sequence[int] | np.ndarray) -> np.ndarray:
    return np.array([_check_k(k) for k in ks], dtype=np.int64)


def _check_summed(rule: str) -> str:
    """Return ``rule`` when it is one of :data:`SUM_AP_RULES`; ValueError (a caller's bug,
    not a user's input: :func:`irviewer.core.ap_rules.average_precision` checks the rule)
    otherwise."""
    if rule not in SUM_AP_RULES:
        raise ValueError(f"{rule!r} is not a summed AP rule; "
                         "irviewer.core.ap_rules.average_precision takes every rule")
    return rule


def _check_batch(ranks: np.ndarray | Sequence[int], offsets: np.ndarray | Sequence[int],
                 n_positives: np.ndarray | Sequence[int] | None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate a ragged batch; return (ranks, offsets, n_positives) as int64 arrays.

    With ``n_positives`` None only the ranks and offsets are checked (and n is returned
    as the number of retrieved positives per query).
    """
    r = _as_int_array(ranks, "positive ranks")
    o = _as_int_array(offsets, "offsets")
    counts_guess = len(o) - 1
    n = (np.zeros(max(counts_guess, 0), dtype=np.int64) if n_positives is None
         else _as_int_array(n_positives, "numbers of positives"))
    if len(o) != len(n) + 1 or o[0] != 0 or o[-1] != len(r):
        raise InputError(f"ragged ranks: {counted(len(o), 'offset')} for "
                         f"{counted(len(n), 'query')} and {counted(len(r), 'rank')} do not fit "
                         "together (offsets run from 0 to the number of ranks, one more "
                         "offset than queries)")
    counts = np.diff(o)
    if np.any(counts < 0):
        q = int(np.argmax(counts < 0))
        raise InputError(f"ragged ranks: offsets must not decrease, but query {q} ends "
                         "before it starts")
    owner = None
    if len(r) and r.min() < 0:
        owner = np.repeat(np.arange(len(counts)), counts)
        i = int(np.argmax(r < 0))
        raise InputError(f"query {int(owner[i])}: positive ranks must be 0-based and "
                         f"non-negative, got {int(r[i])}")
    if len(r) > 1:
        bad = np.diff(r) <= 0
        starts = o[1:-1]
        starts = starts[(starts > 0) & (starts < len(r))]
        bad[starts - 1] = False  # r[start] vs r[start - 1] crosses two queries
        if bad.any():
            owner = np.repeat(np.arange(len(counts)), counts)
            q = int(owner[int(np.argmax(bad)) + 1])
            raise InputError(f"query {q}: positive ranks must be sorted ascending without "
                             "repeats")
    if n_positives is None:
        return r, o, counts
    if np.any(n < 0):
        q = int(np.argmax(n < 0))
        raise InputError(f"query {q}: the number of positives cannot be negative ({int(n[q])})")
    if np.any(counts > n):
        q = int(np.argmax(counts > n))
        raise InputError(f"query {q}: {counted(int(counts[q]), 'retrieved positive')} but "
                         f"only {counted(int(n[q]), 'positive')} in all")
    return r, o, n


def _layout(o: np.ndarray, n_ranks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (count per query, query of each rank, 0-based position j within its query)."""
    counts = np.diff(o)
    qid = np.repeat(np.arange(len(counts)), counts)
    j = np.arange(n_ranks, dtype=np.int64) - o[:-1][qid]
    return counts, qid, j


def _last_rank(r: np.ndarray, o: np.ndarray) -> np.ndarray:
    """Return each query's last retrieved positive rank (0-based), -1 when it has none."""
    counts = np.diff(o)
    last = np.full(len(counts), -1, dtype=np.int64)
    has = counts > 0
    last[has] = r[o[1:][has] - 1]
    return last


def _with_nan(values: np.ndarray, n: np.ndarray) -> np.ndarray:
    out = np.asarray(values, dtype=np.float64).copy()
    out[n == 0] = np.nan
    return out


# -- AP's terms -------------------------------------------------------------------------

def _precision_at(r: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Return the precision at the ``j``-th retrieved positive (0-based) at rank ``r``
    (0-based): ``(j + 1) / (r + 1)``."""
    return (j + 1) / (r + 1)


def _precision_before(r: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Return the precision just before the ``j``-th retrieved positive (0-based) at rank
    ``r`` (0-based): ``j / r``, 1 at rank 0 (where the trapezoid rule starts its curve)."""
    return np.where(r == 0, 1.0, j / np.maximum(r, 1))


def _ap_terms(r: np.ndarray, j: np.ndarray, rule: str) -> np.ndarray:
    """Return each retrieved positive's share of AP times the number of positives: the one
    place AP's formula is written (:meth:`Ragged.summed_ap` and :func:`summed_ap_polyline`
    use it).

    For the ``j``-th retrieved positive (0-based) at rank ``r`` (0-based): ``finite``, the
    precision at it (:func:`_precision_at`, trec_eval ``map``); ``trapezoid``, the mean of
    that and :func:`_precision_before` (VGG ``compute_ap.cpp``).
    """
    at = _precision_at(r, j)
    if rule == TRAPEZOID:
        return (_precision_before(r, j) + at) / 2
    return at


# -- one query ---------------------------------------------------------------------------

def cmc_single_gallery_shot(valid_ranks_of_gallery: np.ndarray | Sequence[int],
                            gallery_ids: np.ndarray | Sequence[object], query_id: object,
                            ks: Sequence[int] | np.ndarray, repeats: int,
                            rng: np.random.Generator) -> np.ndarray:
    """Return CUHK03 single-gallery-shot CMC of one query at each k (float array).

    As torchreid ``eval_cuhk03`` (Li et al., CVPR 2014 protocol): among the query's valid
    gallery items (their 0-based ranks after removal, ``valid_ranks_of_gallery``, and their
    identities, ``gallery_ids``; only the order of the ranks matters), each of ``repeats``
    draws keeps one image per identity, chosen uniformly; CMC@k of a draw is 1 when the
    kept image of ``query_id`` is among the first k kept images. The value is the mean over
    the draws (torchreid uses 10). A k beyond the number of identities gives the same value
    as k = that number (torchreid shortens its curve instead).

    Seeded through ``rng``, vectorised over the repeats: the random stream differs from
    torchreid's global ``np.random.choice`` calls, so values agree in expectation, not bit
    for bit. All nan when ``query_id`` has no valid gallery image (torchreid skips it).
    """
    k_arr = _check_ks(ks)
    if isinstance(repeats, bool) or not isinstance(repeats, int | np.integer) or repeats < 1:
        raise InputError(f"the repeat count must be at least 1, not {repeats!r}")
    ranks = _as_int_array(valid_ranks_of_gallery, "valid gallery ranks")
    ids = np.asarray(gallery_ids)
    if ids.ndim != 1 or len(ids) != len(ranks):
        raise InputError(f"{counted(len(ranks), 'valid gallery rank')} but "
                         f"{counted(ids.size, 'gallery identity')}")
    if len(ranks) and ranks.min() < 0:
        raise InputError(f"valid gallery ranks must be 0-based and non-negative, "
                         f"got {int(ranks.min())}")
    order = np.argsort(ranks, kind="stable")
    if len(ranks) > 1 and np.any(np.diff(ranks[order]) == 0):
        raise InputError("valid gallery ranks must not repeat")
    if not len(ranks):
        return np.full(len(k_arr), np.nan)
    uniq, inverse = np.unique(ids[order], return_inverse=True)
    same = np.asarray(uniq == query_id)
    if same.ndim == 0:  # a comparison numpy could not broadcast: no identity matches
        same = np.zeros(len(uniq), dtype=bool)
    mine = np.flatnonzero(same)
    if not len(mine):
        return np.full(len(k_arr), np.nan)
    # Positions 0..m-1 in rank order, grouped by identity (rank order within a group).
    by_identity = np.argsort(inverse, kind="stable")
    sizes = np.bincount(inverse, minlength=len(uniq))
    starts = np.cumsum(sizes) - sizes
    pick = starts + rng.integers(0, sizes, size=(repeats, len(uniq)))
    drawn = by_identity[pick]  # (repeats, identities): position of each kept image
    place = np.count_nonzero(drawn < drawn[:, mine[:1]], axis=1)  # kept images before mine
    return np.mean(place[:, None] < k_arr[None, :], axis=0)


def pr_points(positive_ranks: np.ndarray | Sequence[int],
              n_positives: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (recall, precision) at each retrieved positive: ``i / n`` and ``i / (r_i + 1)``
    (i 1-based), the points trec_eval's precision-recall curve is built from. Both empty
    when nothing was retrieved or ``n_positives == 0``."""
    r, n = _check_one(positive_ranks, n_positives)
    if n == 0:
        return np.zeros(0), np.zeros(0)
    j = np.arange(len(r), dtype=np.float64)
    return (j + 1) / n, _precision_at(r, j)


def summed_ap_polyline(positive_ranks: np.ndarray | Sequence[int], n_positives: int,
                       rule: str) -> tuple[np.ndarray, np.ndarray]:
    """Return (recall, precision) vertices whose trapezoid area is one query's AP under a
    summed ``rule`` (one of :data:`SUM_AP_RULES`; every rule's curve is
    :func:`irviewer.core.ap_rules.ap_polyline`).

    ``finite``: a flat step at each positive's precision; ``trapezoid``: a segment from the
    precision just before each positive to the precision at it (the curve VGG's
    ``compute_ap.cpp`` integrates). Both empty when nothing was retrieved or
    ``n_positives == 0``.
    """
    _check_summed(rule)
    r, n = _check_one(positive_ranks, n_positives)
    if n == 0 or not len(r):
        return np.zeros(0), np.zeros(0)
    j = np.arange(len(r), dtype=np.float64)
    at = _precision_at(r, j)
    start = at if rule == FINITE else _precision_before(r, j)
    x = np.column_stack([j / n, (j + 1) / n]).ravel()
    y = np.column_stack([start, at]).ravel()
    return x, y


# -- batch (ragged) ---------------------------------------------------------------------

@dataclass(frozen=True)
class Ragged:
    """A batch of queries' positive ranks in the ragged layout, checked once.

    Built by :func:`ragged` (or :func:`one_query`); its methods are the metrics, so an
    evaluation that needs several of them checks and lays out its ranks once.
    ``query_of[i]`` is the query of ``ranks[i]`` and ``position[i]`` its 0-based position
    among that query's retrieved positives.
    """

    ranks: np.ndarray
    offsets: np.ndarray
    n_positives: np.ndarray
    query_of: np.ndarray
    position: np.ndarray

    def summed_ap(self, rule: str) -> np.ndarray:
        """Return AP per query under a rule that sums one term per retrieved positive
        (``finite`` or ``trapezoid``, :data:`SUM_AP_RULES`), divided by all positives; nan
        where ``n_positives == 0``. The AP of every rule and denominator is
        :func:`irviewer.core.ap_rules.average_precision`.

        ``finite``: ``(1 / n) * sum_i i / (r_i + 1)`` over the retrieved positives (i
        1-based), the mean over all n positives of the precision at each one's rank, a
        never-retrieved positive adding 0: trec_eval ``map`` (``num_rel`` from the qrels),
        torchreid and fast-reid ``eval_market1501``. ``trapezoid``: the PR curve integrated
        by trapezoids, the j-th retrieved positive (0-based) at rank r adding
        ``(j / r + (j + 1) / (r + 1)) / 2 / n`` (``j / r`` is 1 at r = 0): VGG's
        ``compute_ap.cpp`` (Oxford5k/Paris6k, Philbin et al. 2007), revisitop and cirtorch
        ``compute_ap`` (Radenovic et al. 2018), the Market-1501 ``compute_AP.m``; never above
        the finite-sum AP of the same ranks (``compute_ap.cpp`` accumulates in float32, so
        its values differ in the 7th digit).
        """
        _check_summed(rule)
        n = self.n_positives
        terms = _ap_terms(self.ranks, self.position, rule)
        total = np.bincount(self.query_of, weights=terms, minlength=len(n))
        return _with_nan(total / np.maximum(n, 1), n)

    def precision_at_k(self, k: int) -> np.ndarray:
        """Return true P@k per query: the positives among the first k, divided by k
        (trec_eval ``P.k``: a list shorter than k counts as padded with non-positives); nan
        where ``n_positives == 0``."""
        k = _check_k(k)
        hits = np.bincount(self.query_of[self.ranks < k], minlength=len(self.n_positives))
        return _with_nan(hits / k, self.n_positives)

    def precision_at_k_revisitop(self, k: int) -> np.ndarray:
        """Return revisitop's mP@k term per query: the positives within the first kq, over
        kq, where ``kq = min(k, 1-based rank of the last retrieved positive)`` (revisitop
        ``compute_map``, Radenovic et al., CVPR 2018; also cirtorch). When every positive
        comes before k this is above the true P@k (4 positives in the top 4 give mP@10 = 1,
        not 0.4). A query with positives but none retrieved gets 0.0 (revisitop never meets
        it: it ranks the whole database); nan where ``n_positives == 0``."""
        k = _check_k(k)
        kq = np.minimum(self.last_rank() + 1, k)  # 0 when nothing was retrieved
        qid = self.query_of
        hits = np.bincount(qid[self.ranks < kq[qid]], minlength=len(self.n_positives))
        return _with_nan(hits / np.maximum(kq, 1), self.n_positives)

    def r_precision(self) -> np.ndarray:
        """Return R-precision per query: P@R with R the query's number of positives
        (trec_eval ``Rprec``); nan where ``n_positives == 0``."""
        n, qid = self.n_positives, self.query_of
        hits = np.bincount(qid[self.ranks < n[qid]], minlength=len(n))
        return _with_nan(hits / np.maximum(n, 1), n)

    def inverse_negative_penalty(self) -> np.ndarray:
        """Return INP per query: n_positives / (1-based rank of the last positive) (Ye et
        al., "Deep Learning for Person Re-identification: A Survey and Outlook", TPAMI 2021;
        its mean is fast-reid's mINP). When a positive was never retrieved (a truncated list)
        the hardest positive was not found at all and INP is 0.0, its limit as that
        positive's rank grows; nan where ``n_positives == 0``."""
        n = self.n_positives
        complete = (np.diff(self.offsets) == n) & (n > 0)
        last = self.last_rank() + 1
        return _with_nan(np.where(complete, n / np.maximum(last, 1), 0.0), n)

    def first_positive_rank(self) -> np.ndarray:
        """Return each query's first retrieved positive rank (0-based, int64), -1 when
        none."""
        o = self.offsets
        first = np.full(len(o) - 1, -1, dtype=np.int64)
        has = o[1:] > o[:-1]
        first[has] = self.ranks[o[:-1][has]]
        return first

    def last_rank(self) -> np.ndarray:
        """Return each query's last retrieved positive rank (0-based), -1 when none."""
        return _last_rank(self.ranks, self.offsets)

    def cmc_first_match(self, ks: Sequence[int] | np.ndarray) -> np.ndarray:
        """Return (n_queries, len(ks)) Market-1501 CMC values (torchreid
        ``eval_market1501``): 1.0 where the first positive is among the first k; nan rows
        where ``n_positives == 0``."""
        k_arr = _check_ks(ks)
        first = self.first_positive_rank()
        out = ((first[:, None] >= 0) & (first[:, None] < k_arr[None, :])).astype(np.float64)
        out[self.n_positives == 0] = np.nan
        return out


def ragged(ranks: np.ndarray | Sequence[int], offsets: np.ndarray | Sequence[int],
           n_positives: np.ndarray | Sequence[int] | None) -> Ragged:
    """Return the checked :class:`Ragged` batch; InputError naming the first offending
    query (see the module's input convention). With ``n_positives`` None, each query's
    number of retrieved positives stands for it (enough for the first positive's rank)."""
    r, o, n = _check_batch(ranks, offsets, n_positives)
    _, qid, j = _layout(o, len(r))
    return Ragged(r, o, n, qid, j)


def one_query(positive_ranks: np.ndarray | Sequence[int], n_positives: int) -> Ragged:
    """Return one query's positive ranks as a checked :class:`Ragged` batch of one; its
    InputError sentences name no query (see the module's input convention)."""
    r, n = _check_one(positive_ranks, n_positives)
    return Ragged(r, np.array([0, len(r)], dtype=np.int64), np.array([n], dtype=np.int64),
                  np.zeros(len(r), dtype=np.int64), np.arange(len(r), dtype=np.int64))


def _segment_max(values: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Return max(values[s:e]) for each pair, 0.0 where s >= e (values must be >= 0)."""
    if not len(starts):
        return np.zeros(0)
    padded = np.append(values, 0.0)  # so that an end equal to len(values) is a valid index
    bounds = np.column_stack([starts, ends]).ravel()
    found = np.maximum.reduceat(padded, bounds)[::2]
    return np.where(starts < ends, found, 0.0)


def mean_interpolated_pr(ranks: np.ndarray, offsets: np.ndarray, n_positives: np.ndarray,
                         levels: np.ndarray | Sequence[float] | None = None) -> np.ndarray:
    """Return the mean interpolated precision at each recall level (float array).

    The mean over the queries with ``n_positives > 0`` of ``interpolated_precision`` of
    their ``pr_points``; ``levels`` defaults to the 11 TREC levels 0, 0.1, ..., 1. All nan
    when no query has a positive.
    """
    lv = (np.linspace(0.0, 1.0, 11) if levels is None
          else np.asarray(levels, dtype=np.float64).ravel())
    r, o, n = _check_batch(ranks, offsets, n_positives)
    ok = n > 0
    if not ok.any():
        return np.full(len(lv), np.nan)
    counts, _, j = _layout(o, len(r))
    precision = _precision_at(r, j)
    # below[q, l] = number of q's points with recall i / n below the level (minus the
    # tolerance), found by arithmetic and corrected with the very float comparison that
    # interpolated_precision makes, so both agree to the last bit.
    threshold = (lv - RECALL_TOLERANCE)[None, :]
    m = counts[:, None]
    nq = np.maximum(n, 1)[:, None]
    below = np.clip(np.ceil(threshold * nq) - 1, 0, m).astype(np.int64)
    while True:
        up = (below < m) & ((below + 1) / nq < threshold)
        if not up.any():
            break
        below += up
    while True:
        down = (below > 0) & (below / nq >= threshold)
        if not down.any():
            break
        below -= down
    starts = o[:-1, None] + below
    ends = np.broadcast_to(o[1:, None], starts.shape)
    curves = _segment_max(precision, starts.ravel(), ends.ravel()).reshape(starts.shape)
    return curves[ok].mean(axis=0)
