"""Cosine ranking of every query by blocks of one matrix multiply (:func:`iter_rank`), and the
same from score rows made elsewhere (:func:`iter_rank_rows`): the top-K lists and exact item
ranks of :mod:`irviewer.core.ranking.top_k` and :mod:`irviewer.core.ranking.counting`, in
bounded memory (see :mod:`irviewer.core.ranking`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

import numpy as np

from irviewer.core.dataset import Dataset
from irviewer.core.descriptors import (
    AlignedDescriptors,
    check_gallery_rows,
    row_norms,
)
from irviewer.core.errors import InputError
from irviewer.core.parallel import row_parts, run_parts
from irviewer.core.ranking.counting import CountState
from irviewer.core.ranking.gallery import (
    PARALLEL_SCORES,
    chunk_rows,
    chunks,
    converted,
    cosine_exact_scores,
    exact_products,
    gallery_chunk,
    query_rows,
    row_from,
    row_ids,
    score_rows_of,
)
from irviewer.core.ranking.settle import (
    NearCut,
    NearCuts,
    PendingRuns,
    Settle,
    band_edges,
    settle_lists,
    settle_top_lists,
)
from irviewer.core.ranking.stored import DEFAULT_DEPTH, DEPTH, Progress, Ranking, items_of_interest
from irviewer.core.ranking.top_k import (
    Candidates,
    below_near,
    bits,
    candidates,
    merge_top,
    select,
)

#: Bytes of one query-block x gallery-chunk score matrix.
SCORE_BLOCK_BYTES = 128 * 2**20
#: Entries left out near the lists' cut that a ranking keeps (20 bytes each); past this (a
#: flood of equal scores) the lists concerned are made again from their rows.
_NEAR_CUT_ENTRIES = 1 << 22
#: Rows are sorted whole when more than this fraction of their scores would be candidates
#: (measured: sorting float32 rows costs about a quarter of sorting as many packed keys).
SORT_WHOLE_FRACTION = 0.25


def rank(aligned: AlignedDescriptors, dataset: Dataset, k: int = DEFAULT_DEPTH) -> Ranking:
    """Return the :class:`Ranking` of every query of ``dataset`` (see :func:`iter_rank`)."""
    result = None
    for step in iter_rank(aligned, dataset, k=k):
        result = step.ranking
    assert result is not None
    return result


def iter_rank(aligned: AlignedDescriptors, dataset: Dataset, k: int = DEFAULT_DEPTH,
              gallery_chunk_rows: int | None = None,
              query_block_rows: int | None = None) -> Iterator[Progress]:
    """Rank the gallery for every query, yielding :class:`Progress` after each block.

    The last step carries the :class:`Ranking`. Stop iterating (or ``close()`` the
    generator) to cancel: no work is done beyond the block in progress. ``k`` is the depth of
    the stored top-K lists (capped at the active gallery size).
    """
    n_q, n_g = len(dataset.queries), dataset.n_gallery
    if k < 1:
        raise InputError(f"{DEPTH} must be at least 1, not {k}")
    ignored = dataset.ignored_mask
    n_active = int(n_g - ignored.sum())
    k_eff = min(k, n_active)
    rows_per_chunk = gallery_chunk_rows or chunk_rows(aligned.dim)
    gallery_parts = list(chunks(n_g, rows_per_chunk))
    multi = len(gallery_parts) > 1
    widest = max(stop - start for start, stop in gallery_parts)
    block_rows = query_block_rows or max(1, SCORE_BLOCK_BYTES // (4 * widest))
    # Candidate keys pack (block row, score, column) into 63 bits.
    block_rows = min(block_rows, 1 << (31 - bits(widest)))
    blocks = list(chunks(n_q, block_rows))

    offsets, items = items_of_interest(dataset)
    item_query = np.repeat(np.arange(n_q, dtype=np.int64), np.diff(offsets))
    products = exact_products(aligned)
    exact = cosine_exact_scores(aligned, whole=products is not None)
    # Exact products and one gallery norm: equal scores are exactly the equal cosines and
    # the float32 order is the exact one, so there is nothing to settle.
    settle = (None if products is not None and products.equal_gallery_norms
              else Settle(exact, n_g))
    state = CountState(offsets, items, item_query, multi, settle=settle)
    if multi:
        state.estimate(aligned)
    # Multi-chunk: the entries left out of the lists in the near band of their last entry,
    # kept as the chunks pass (near_cut); per query, the best score left out and not kept
    # (left_out: too many to keep) and the highest threshold below which scores were not
    # looked at (unseen), to tell whether its last entry's near ties are all at hand.
    near_cut = NearCuts(_NEAR_CUT_ENTRIES)
    left_out = np.full(n_q, -np.inf, dtype=np.float32)
    unseen = np.full(n_q, -np.inf, dtype=np.float32)

    top_idx = np.full((n_q, k_eff), -1, dtype=np.int64)
    top_val = np.full((n_q, k_eff), -np.inf, dtype=np.float32)
    inv_norms = np.empty(n_g, dtype=np.float32)
    total = len(gallery_parts) * len(blocks)
    done = 0
    yield Progress(0, total)
    buffer = (np.empty((widest, aligned.dim), dtype=np.float32)
              if multi and converted(aligned) else None)
    # One score block for every multiply: its pages are touched once, not per block.
    score_buffer = np.empty(min(block_rows, n_q) * widest, dtype=np.float32)
    for start, stop in gallery_parts:
        if aligned.gallery_norms is not None:  # computed (and checked) by align()
            g = gallery_chunk(aligned, start, stop, buffer)
            norms = aligned.gallery_norms[start:stop]
        else:
            norms = np.full(stop - start, np.nan, dtype=np.float32)
            g = gallery_chunk(aligned, start, stop, buffer, norms)
            if not converted(aligned):  # a view: nothing filled the norms in
                norms = row_norms(g)
            check_gallery_rows(norms, row_ids(aligned, start, stop), dataset, aligned)
        inv = (1.0 / norms).astype(np.float32)
        inv_norms[start:stop] = inv
        local_ignored = np.flatnonzero(ignored[start:stop])
        for qa, qb in blocks:
            scores = score_buffer[:(qb - qa) * (stop - start)].reshape(qb - qa, stop - start)
            qv, scale = query_rows(aligned, slice(qa, qb), products)
            np.matmul(qv, g.T, out=scores)
            scores *= inv
            if scale is not None:  # exact products: the query's norm after the multiply
                scores *= scale[:, None]
            if len(local_ignored):
                scores[:, local_ignored] = -np.inf
            fold = partial(_rank_rows, scores, qa, start=start, stop=stop, top_idx=top_idx,
                           top_val=top_val, state=state, left_out=left_out, unseen=unseen,
                           near_cut=near_cut)
            run_parts(fold, row_parts(qb - qa, scores.size, PARALLEL_SCORES))
            done += 1
            yield Progress(done, total)
    counted = state.finish(lambda q: row_from(aligned, inv_norms, ignored, q, products))
    if multi and settle is not None:  # the near ties of the lists' last entries
        settle_top_lists(settle.scores, n_g, np.arange(n_q), top_idx, top_val,
                         np.maximum(left_out, unseen),
                         lambda qs: score_rows_of(aligned, inv_norms, ignored,
                                                  *query_rows(aligned, qs, products)),
                         runs=False, beyond=near_cut.joined())
    top_idx[~np.isfinite(top_val)] = -1
    ranking = Ranking(top_indices=top_idx, top_scores=top_val, item_offsets=offsets,
                      item_indices=items, item_ranks=counted.ranks,
                      item_scores=counted.scores, item_tie_above=counted.above,
                      item_tie_through=counted.through,
                      n_ranked=n_active, descriptors=aligned, gallery_inv_norms=inv_norms,
                      ignored_mask=ignored if len(dataset.global_ignored) else None,
                      exact_scores=None if settle is None else exact, exact_products=products,
                      lists_pending=None if settle is None else PendingRuns(exact, n_g))
    yield Progress(total, total, ranking)


def iter_rank_rows(dataset: Dataset, score_rows: Callable[[int, int], np.ndarray],
                   k: int = DEFAULT_DEPTH, *, source: str, rerank: str | None = None,
                   row_scores: Callable[[int], np.ndarray] | None = None,
                   query_block_rows: int | None = None) -> Iterator[Progress]:
    """Rank the gallery for every query from score rows made elsewhere, yielding
    :class:`Progress` after each block; the last step carries the :class:`Ranking`.

    ``score_rows(qa, qb)`` returns the float32 scores of queries qa..qb against the whole
    gallery, (qb - qa, n_gallery), higher first (re-ranking gives negated distances). The
    rows are ranked exactly as :func:`iter_rank` ranks cosine rows: gallery images removed
    for every query are set to -inf first, equal scores keep gallery order, the top-K lists
    and the exact rank of every item of interest are kept, no row is kept whole.
    ``row_scores(q)`` gives one query's whole row again (with the removed images at -inf)
    when an item outside the stored ones needs its rank; ``source`` and ``rerank`` name
    how the scores were made, for the output.
    """
    n_q, n_g = len(dataset.queries), dataset.n_gallery
    if k < 1:
        raise InputError(f"{DEPTH} must be at least 1, not {k}")
    ignored = dataset.ignored_mask
    removed = np.flatnonzero(ignored)
    n_active = int(n_g - len(removed))
    k_eff = min(k, n_active)
    block_rows = query_block_rows or max(1, SCORE_BLOCK_BYTES // (4 * max(n_g, 1)))
    block_rows = min(block_rows, 1 << (31 - bits(max(n_g, 1))))
    blocks = list(chunks(n_q, block_rows))
    offsets, items = items_of_interest(dataset)
    item_query = np.repeat(np.arange(n_q, dtype=np.int64), np.diff(offsets))
    state = CountState(offsets, items, item_query, multi=False)
    top_idx = np.full((n_q, k_eff), -1, dtype=np.int64)
    top_val = np.full((n_q, k_eff), -np.inf, dtype=np.float32)
    yield Progress(0, len(blocks))
    for done, (qa, qb) in enumerate(blocks, start=1):
        scores = np.ascontiguousarray(score_rows(qa, qb), dtype=np.float32)
        if scores.shape != (qb - qa, n_g):
            raise ValueError(f"score rows of shape {scores.shape}, not {(qb - qa, n_g)}")
        if len(removed):
            scores[:, removed] = -np.inf
        fold = partial(_rank_rows, scores, qa, start=0, stop=n_g, top_idx=top_idx,
                       top_val=top_val, state=state)
        run_parts(fold, row_parts(qb - qa, scores.size, PARALLEL_SCORES))
        yield Progress(done, len(blocks))

    def whole_row(q: int) -> np.ndarray:
        if row_scores is not None:
            return row_scores(q)
        row = np.array(score_rows(q, q + 1)[0], dtype=np.float32)
        row[removed] = -np.inf
        return row

    def whole_rows(qa: int, qb: int) -> np.ndarray:
        rows = np.array(score_rows(qa, qb), dtype=np.float32)
        rows[:, removed] = -np.inf
        return rows

    counted = state.finish(whole_row)
    top_idx[~np.isfinite(top_val)] = -1
    ranking = Ranking(top_indices=top_idx, top_scores=top_val, item_offsets=offsets,
                      item_indices=items, item_ranks=counted.ranks,
                      item_scores=counted.scores, item_tie_above=counted.above,
                      item_tie_through=counted.through,
                      n_ranked=n_active, source=source,
                      ignored_mask=ignored if len(removed) else None, rerank=rerank,
                      row_scores=whole_row, block_scores=whole_rows)
    yield Progress(len(blocks), len(blocks), ranking)


# -- internals ---------------------------------------------------------------------------

def _rank_rows(block: np.ndarray, block_query: int, a: int, b: int, *, start: int, stop: int,
               top_idx: np.ndarray, top_val: np.ndarray, state: CountState,
               left_out: np.ndarray | None = None, unseen: np.ndarray | None = None,
               near_cut: NearCuts | None = None) -> None:
    """Fold rows a..b of a score ``block`` (its row 0 is query ``block_query``) against
    gallery start..stop into their queries' running top-K lists and their items' counts.
    Parts of a block run at the same time (:func:`~irviewer.core.parallel.run_parts`):
    each writes only its own queries' slices.

    Usually only the candidates (the scores at or above the row's threshold) are sorted.
    When the items of interest rank so deep that most scores would be candidates (junk and
    hard images of the revisited sets), sorting the float32 rows whole is cheaper than
    sorting that many packed keys; then the items' counts come from the sorted rows and only
    the top-K (and the near ties of its last entry) is taken as candidates. Both give the
    same lists and ranks. With exact scores (``state.settle``) the lists' near ties are
    settled here when the gallery is one chunk; with several, ``near_cut``, ``left_out``
    and ``unseen`` keep what :func:`~irviewer.core.ranking.settle.settle_top_lists` needs at
    the end: the entries left out near each list's cut, so that its near ties are settled
    from them rather than from the query's whole row read again.
    """
    scores, qa, qb = block[a:b], block_query + a, block_query + b
    floor = state.floor(scores, qa, qb, start, stop)
    if _mostly_candidates(scores, floor):
        # Scores below the floor count for no item: as -inf they sort almost for free.
        ordered = np.sort(np.where(scores >= floor[:, None], scores, np.float32(-np.inf)),
                          axis=1)
        n, k = scores.shape[1], top_val.shape[1]
        kth = (ordered[:, n - k] if 0 < k <= n
               else np.full(qb - qa, np.inf if k == 0 else -np.inf, np.float32))
        short = np.flatnonzero(kth == -np.inf) if 0 < k <= n else ()
        if len(short):  # fewer than K scores reach the floor: the K-th from the row itself
            kth[short] = np.partition(scores[short], n - k, axis=1)[:, n - k]
        found = candidates(scores, below_near(kth) if k else kth)
        state.count_in_sorted(ordered, scores, qa, qb, start, stop)
    else:
        found = select(scores, top_val[qa:qb], floor)
        state.count(found, qa, qb, start, stop)
    keep_near = state.settle is not None and near_cut is not None
    _, near = merge_top(top_idx[qa:qb], top_val[qa:qb], found, start, start == 0, keep_near)
    if state.settle is None:
        return
    if not state.multi:
        _settle_top(scores, found, qa, top_idx[qa:qb], top_val[qa:qb], state.settle)
    elif left_out is not None and unseen is not None and near_cut is not None:
        if near is not None and len(near.rows) and not near_cut.keep(
                NearCut(qa + near.rows, near.indices, near.values)):  # too many: rows again
            np.maximum.at(left_out, qa + near.rows, near.values)
        looked = np.diff(found.starts) < scores.shape[1]  # some scores were not candidates
        np.maximum(unseen[qa:qb], np.where(looked, found.threshold, -np.inf),
                   out=unseen[qa:qb])


def _settle_top(scores: np.ndarray, found: Candidates, qa: int, top_idx: np.ndarray,
                top_val: np.ndarray, settle: Settle) -> None:
    """Settle, in place, the complete top-K lists of queries qa.. (one gallery chunk:
    ``scores`` are their whole rows, ``found`` their candidates) whose last entry has near
    ties beyond it (in its near band): the list and those entries ordered by exact score
    (:func:`~irviewer.core.ranking.settle.settle_lists`). Runs of near ties inside a list
    are settled when the lists are read (:class:`~irviewer.core.ranking.settle.PendingRuns`)."""
    k = top_val.shape[1]
    if k == 0:
        return
    kth = top_val[:, -1]
    beyond = found.starts[:-1] + k
    more = beyond < found.starts[1:]
    following = np.where(more, found.values[np.minimum(beyond, max(len(found.values) - 1, 0))],
                         -np.inf) if len(found.values) else np.full(len(kth), -np.inf)
    finite = np.isfinite(kth)
    lower = band_edges(kth)[1]
    boundary = finite & (following > lower)
    unsure = finite & (found.threshold > lower)
    rows = np.flatnonzero(boundary | unsure)  # the others' runs: when the lists are read
    if not len(rows):
        return
    lists = []
    for r in rows.tolist():
        idx, v = top_idx[r], top_val[r]
        if unsure[r]:  # scores below the threshold were not candidates: the row itself
            extra = np.flatnonzero(scores[r] > lower[r])
            extra = extra[~np.isin(extra, idx)]
        elif boundary[r]:
            a = found.starts[r] + k
            b = found.starts[r + 1]
            extra = found.cols[a:b][found.values[a:b] > lower[r]]
        else:
            extra = np.zeros(0, dtype=np.int64)
        lists.append((np.concatenate([idx, extra]), np.concatenate([v, scores[r, extra]])))
    settled = settle_lists(settle.scores, settle.n_gallery, qa + rows, lists, k)
    for r, (idx, v) in zip(rows.tolist(), settled, strict=True):
        top_idx[r, :len(idx)], top_val[r, :len(v)] = idx, v


def _mostly_candidates(scores: np.ndarray, floor: np.ndarray) -> bool:
    """Return True when, judged on every 8th column, more than :data:`SORT_WHOLE_FRACTION`
    of the block's scores are at or above their row's ``floor``."""
    sample = scores[:, ::8]
    if sample.size == 0:
        return False
    return bool(np.count_nonzero(sample >= floor[:, None]) > SORT_WHOLE_FRACTION * sample.size)
