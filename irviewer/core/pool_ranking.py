"""Ranking where each query searches its own pool: a few candidates of its own plus a pool
shared by every query (Qt-free).

HPatches' retrieval task (hpatches-benchmark ``matlab/+bench/+retrieval/eval.m``, CVPR
2017) ranks, for each query patch, only *its own* corresponding patches in the other
images of its sequence together with the shared distractor patches; the positives of other
queries are never in its list. A single gallery ranked for every query cannot express
that, so this module ranks each query over ``own[q]`` + ``shared`` and returns an ordinary
:class:`~irviewer.core.ranking.Ranking` whose ranks count only those candidates; the
protocols then remove their ignored items as everywhere else.

Scores follow the benchmark: the negative squared Euclidean distance of the raw
descriptors (not the cosine), computed in float64. Ties keep the candidate order: the
query's own candidates first, in their given order, then the shared pool in file order —
MATLAB's stable ``sort`` over ``[positives; negatives]`` in ``eval.m``. Distances equal in
exact arithmetic are ties wherever they are computed: descriptors of small whole numbers
(SIFT's bytes, binary codes) give exact float64 distances; for others, distances within
:data:`NEAR_RELATIVE` of each other (relative to the squared norms) are computed again
exactly (:func:`~irviewer.core.exact_scores.exact_negative_squared_distances`) and ordered
by that, so the order does not depend on the BLAS or the machine. (eval.m computes in
single precision, the negatives through a k-d tree; distances equal in exact arithmetic but
computed differently can order either way there.)
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from irviewer.core.errors import InputError
from irviewer.core.exact_scores import exact_negative_squared_distances, small_integer_unit
from irviewer.core.ranking import Ranking
from irviewer.core.tie_windows import windows_in_row
from irviewer.core.ties import TIE_TOLERANCE

BLOCK = 256
#: Float64 distances closer than this times the query's and the pool's largest squared norms
#: are computed again exactly (float64 rounding of the expansion is below 1e-13 of them).
NEAR_RELATIVE = 1e-10
#: Descriptors whose values are whole multiples of a power of two of at most this many bits
#: have exact float64 distances (the expansion's sums stay far below 2**53).
EXACT_BITS = 16


def neg_sq_l2(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return the (len(a), len(b)) negative squared Euclidean distances, in float64 so that
    the expansion |a|² - 2ab + |b|² orders candidates as the direct differences do."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    aa = np.einsum("ij,ij->i", a, a)[:, None]
    bb = np.einsum("ij,ij->i", b, b)[None, :]
    return 2 * (a @ b.T) - aa - bb


def iter_rank_in_pools(queries: np.ndarray, vectors: np.ndarray, own: np.ndarray,
                       shared: np.ndarray, items: list[np.ndarray], k: int,
                       source: str) -> Iterator[tuple[int, int, Ranking | None]]:
    """Rank each query over its own candidates and the shared pool; yield (done, total,
    None) per block of queries and finally (total, total, the Ranking).

    ``queries`` is (Q, d) and ``vectors`` (n_gallery, d), float32; ``own`` (Q, P) gallery
    indices of each query's own candidates; ``shared`` (D,) gallery indices of the pool;
    ``items[q]`` the gallery indices whose exact rank query q's protocols need (each must
    be one of its candidates). InputError when shapes disagree or an item is not a
    candidate of its query.
    """
    n_q, dim = queries.shape
    if vectors.shape[1] != dim:
        raise InputError(f"{source}: query descriptors have {dim} values, gallery "
                         f"descriptors {vectors.shape[1]}")
    own = np.asarray(own, dtype=np.int64)
    shared = np.asarray(shared, dtype=np.int64)
    if own.shape[0] != n_q or len(items) != n_q:
        raise InputError(f"{source}: {own.shape[0]} candidate lists and {len(items)} item "
                         f"lists for {n_q} queries")
    n_own, n_shared = own.shape[1], len(shared)
    n_cand = n_own + n_shared
    k = min(k, n_cand)
    shared_col = np.full(len(vectors), -1, dtype=np.int64)
    shared_col[shared] = n_own + np.arange(n_shared)
    pool = vectors[shared]
    exact = (small_integer_unit(queries, EXACT_BITS) is not None
             and small_integer_unit(vectors, EXACT_BITS) is not None and dim < 2**16)
    pool_norm = float(np.einsum("ij,ij->i", pool.astype(np.float64),
                                pool.astype(np.float64)).max(initial=0.0))
    top_i = np.empty((n_q, k), dtype=np.int64)
    top_s = np.empty((n_q, k), dtype=np.float32)
    item_offsets = np.concatenate([[0], np.cumsum([len(i) for i in items])]).astype(np.int64)
    item_indices = np.concatenate(items).astype(np.int64) if n_q else np.zeros(0, np.int64)
    item_ranks = np.empty(len(item_indices), dtype=np.int64)
    item_scores = np.empty(len(item_indices), dtype=np.float32)
    item_above = np.empty(len(item_indices), dtype=np.int64)
    item_through = np.empty(len(item_indices), dtype=np.int64)
    for start in range(0, n_q, BLOCK):
        stop = min(start + BLOCK, n_q)
        q = queries[start:stop]
        own_vecs = vectors[own[start:stop]].astype(np.float64)  # (B, P, d)
        diff = own_vecs - q[:, None, :].astype(np.float64)
        own_scores = -np.einsum("bpd,bpd->bp", diff, diff)
        scores = np.concatenate([own_scores, neg_sq_l2(q, pool)], axis=1)
        order = np.argsort(-scores, axis=1, kind="stable")
        candidates = np.concatenate([own[start:stop], np.broadcast_to(
            shared, (stop - start, n_shared))], axis=1)
        rows = np.arange(stop - start)[:, None]
        if not exact:
            _settle_pools(q, vectors, candidates, scores, order, pool_norm)
        top_i[start:stop] = candidates[rows, order[:, :k]]
        top_s[start:stop] = scores[rows, order[:, :k]]
        rank_of = np.empty_like(order)
        rank_of[rows, order] = np.arange(n_cand)[None, :]
        for b, qi in enumerate(range(start, stop)):
            a, z = item_offsets[qi], item_offsets[qi + 1]
            wanted = item_indices[a:z]
            eq = wanted[:, None] == own[qi][None, :]
            col = np.where(eq.any(axis=1), eq.argmax(axis=1), shared_col[wanted])
            if (col < 0).any():
                bad = wanted[col < 0][0]
                raise InputError(f"{source}: gallery item {bad} is not a candidate of "
                                 f"query {qi}")
            item_ranks[a:z] = rank_of[b, col]
            item_scores[a:z] = scores[b, col]
            item_above[a:z], item_through[a:z] = windows_in_row(
                scores[b].astype(np.float32), item_scores[a:z], TIE_TOLERANCE)
        yield stop, n_q, None
    ranking = Ranking(top_indices=top_i, top_scores=top_s, item_offsets=item_offsets,
                      item_indices=item_indices, item_ranks=item_ranks,
                      item_scores=item_scores, n_ranked=n_cand, truncated=False,
                      source=source, item_tie_above=item_above,
                      item_tie_through=item_through)
    yield n_q, n_q, ranking


def _settle_pools(queries: np.ndarray, vectors: np.ndarray, candidates: np.ndarray,
                  scores: np.ndarray, order: np.ndarray, pool_norm: float) -> None:
    """Order again, in place, every run of a block's sorted scores closer than
    :data:`NEAR_RELATIVE` (of the query's and the pool's largest squared norms) to each other
    by exact distance, equal ones in candidate order, and give their entries their exact
    distances (``order`` sorts row r's ``scores`` descending, candidate ``candidates[r]``)."""
    q64 = queries.astype(np.float64)
    band = NEAR_RELATIVE * (np.einsum("ij,ij->i", q64, q64) + pool_norm)
    ranked = np.take_along_axis(scores, order, axis=1)
    close = ranked[:, :-1] - ranked[:, 1:] < band[:, None]
    for r in np.flatnonzero(close.any(axis=1)).tolist():
        starts = np.flatnonzero(close[r] & ~np.r_[False, close[r][:-1]])
        for a in starts.tolist():
            b = a + 1
            while b < len(close[r]) and close[r][b]:
                b += 1
            at = order[r, a:b + 1]  # columns of one run, in candidate order when tied
            exact = exact_negative_squared_distances(queries[r], vectors[candidates[r, at]])
            by = np.lexsort((at, -exact))
            order[r, a:b + 1] = at[by]
            scores[r, at] = exact
