"""Rankings from precomputed result lists (TREC runs, .npz indices, HPatches .results):
truncated rankings whose items beyond a list are not ranked."""

from __future__ import annotations

import numpy as np

from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError
from irviewer.core.ranking.stored import Ranking, items_of_interest
from irviewer.core.tie_windows import windows_in_list


def ranking_from_lists(dataset: Dataset, indices: np.ndarray, scores: np.ndarray | None,
                       source: str) -> Ranking:
    """Return a truncated :class:`Ranking` from precomputed result lists.

    ``indices`` is (n_queries, K) gallery indices in rank order, -1 padding shorter lists;
    ``scores`` the matching scores or None (then nan). Gallery images removed for every
    query are dropped from the lists before positions are counted. Items of interest that a
    list does not contain are *not ranked* (rank -1): the metrics treat them as never
    retrieved, the rule of benchmarks that score truncated lists (HPatches top-51, TREC).
    InputError for a wrong shape, an index outside the gallery, or an image listed twice.
    """
    idx = np.asarray(indices, dtype=np.int64)
    n_q, n_g = dataset.n_queries, dataset.n_gallery
    if idx.ndim != 2 or idx.shape[0] != n_q:
        raise InputError(f"{source}: expected one result list per query ({n_q}), "
                         f"got an array of shape {idx.shape}")
    bad = (idx < -1) | (idx >= n_g)
    if bad.any():
        q, j = np.argwhere(bad)[0]
        raise InputError(f"{source}: {int(bad.sum())} result entries are outside the gallery "
                         f"of {n_g} images, e.g. query {dataset.queries[q].name} position "
                         f"{j + 1} names {idx[q, j]}")
    val = (np.full(idx.shape, np.nan, dtype=np.float32) if scores is None
           else np.asarray(scores, dtype=np.float32))
    if val.shape != idx.shape:
        raise InputError(f"{source}: {val.shape} scores for {idx.shape} result entries")
    ignored = dataset.ignored_mask
    keep = (idx >= 0) & ~ignored[np.maximum(idx, 0)]
    # Compact each list: kept entries first, in their original order.
    order = np.argsort(~keep, axis=1, kind="stable")
    idx = np.where(np.take_along_axis(keep, order, axis=1),
                   np.take_along_axis(idx, order, axis=1), -1)
    val = np.where(idx >= 0, np.take_along_axis(val, order, axis=1), -np.inf).astype(np.float32)
    for q in range(n_q):
        listed = idx[q][idx[q] >= 0]
        if len(np.unique(listed)) != len(listed):
            dup = listed[np.flatnonzero(np.bincount(listed) > 1)[0]]
            raise InputError(f"{source}: query {dataset.queries[q].name} lists gallery image "
                             f"{dataset.gallery[dup]} more than once")
    offsets, items = items_of_interest(dataset)
    ranks = np.full(len(items), -1, dtype=np.int64)
    item_scores = np.full(len(items), np.nan, dtype=np.float32)
    above, through = ranks.copy(), ranks.copy()
    position = np.full(n_g, -1, dtype=np.int64)
    for q in range(n_q):
        listed = idx[q] >= 0
        position[idx[q, listed]] = np.flatnonzero(listed)
        a, b = offsets[q], offsets[q + 1]
        ranks[a:b] = position[items[a:b]]
        found = ranks[a:b] >= 0
        item_scores[a:b][found] = val[q, ranks[a:b][found]]
        # Ties as written: equal scores of the list (a list without scores has none).
        above[a:b][found], through[a:b][found] = windows_in_list(val[q], ranks[a:b][found], 0.0)
        position[idx[q, listed]] = -1
    return Ranking(top_indices=idx, top_scores=val, item_offsets=offsets, item_indices=items,
                   item_ranks=ranks, item_scores=item_scores,
                   n_ranked=int(n_g - ignored.sum()), truncated=True, source=source,
                   item_tie_above=above, item_tie_through=through, tie_tolerance=0.0)
