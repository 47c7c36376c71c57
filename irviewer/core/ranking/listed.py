"""Rankings that keep every entry a result file lists, even one that is no gallery image.

Benchmarks that score result lists written by someone else count a listed entry where it
stands, whatever it names: delf's Google Landmarks v2 evaluator skips a repeated prediction
but lets it use its position, and counts an image outside the solution as wrong; isc2021's
copy-detection evaluator counts every predicted pair, a reference it has never heard of
included, as a false positive. Dropping such an entry would move every later rank (or lose
a false positive), so a :class:`ListedRanking` keeps it in its list as a *placeholder*:
``top_indices`` holds ``-2 - j`` there, and ``outside[j]`` is the name the file wrote (-1
still pads a short list). Code that reads only gallery images (``top >= 0``) passes over
placeholders; the ranks of the items of interest count them.

A benchmark whose metric is computed over predicted pairs rather than per query (DISC21's
microAP) also needs every pair, not only the first ``k`` of each list the viewer shows:
``pairs`` keeps them (:class:`PredictedPairs`), a query the dataset does not know included.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irviewer.core.dataset import Dataset
from irviewer.core.ranking.stored import Ranking, items_of_interest
from irviewer.core.tie_windows import windows_in_list

#: ``top_indices`` value of padding after a short list; values below it are placeholders.
PADDING = -1


def placeholder(j: int | np.ndarray) -> int | np.ndarray:
    """Return the ``top_indices`` code of the ``j``-th name outside the gallery."""
    return -2 - j


def outside_index(code: int | np.ndarray) -> int | np.ndarray:
    """Return which name outside the gallery a placeholder ``code`` (<= -2) stands for."""
    return -2 - code


@dataclass(frozen=True)
class PredictedPairs:
    """Every (query, result, score) a file or a pair search predicted.

    ``query``: the dataset's query position, -1 for a query it does not list (its name in
    ``outside_queries[j]`` at ``outside_query[i] == j``); ``result``: a gallery index, or a
    placeholder code naming ``ListedRanking.outside``; ``score``: float64, as written or
    computed. In the order the pairs were made (file order, or query then gallery order).
    """

    query: np.ndarray
    result: np.ndarray
    score: np.ndarray
    outside_query: np.ndarray
    outside_queries: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.query)


@dataclass(frozen=True)
class ListedRanking(Ranking):
    """A :class:`Ranking` from result lists that keeps their placeholders (see the module)
    and, for a pair-scored benchmark, every predicted pair.

    Attributes:
        outside: the names that placeholders stand for (``top_indices == -2 - j`` names
            ``outside[j]``).
        pairs: every predicted pair (None: the lists are all of them).
        listed: each query's full list length, placeholders included (the stored lists may
            be cut at ``k`` for the viewer; ranks count the whole list).
    """

    outside: tuple[str, ...] = ()
    pairs: PredictedPairs | None = None
    listed: np.ndarray | None = None

    def first(self, dataset: Dataset, k: int) -> ListedRanking:
        """Return the first ``k`` entries of every list as a listed ranking (placeholders
        keep their place; the pairs are those kept), for comparing at a common depth."""
        lists = [row[row != PADDING][:k] for row in self.top_indices]
        scores = [s[row != PADDING][:k] for row, s in zip(self.top_indices, self.top_scores,
                                                          strict=True)]
        return ranking_from_positions(dataset, lists, scores, self.outside,
                                      f"{self.source}, first {k}")


def ranking_from_positions(dataset: Dataset, lists: list[np.ndarray], scores: list[np.ndarray]
                           | None, outside: tuple[str, ...], source: str, depth: int | None = None,
                           pairs: PredictedPairs | None = None) -> ListedRanking:
    """Return the truncated :class:`ListedRanking` of one list per query, in rank order.

    ``lists[q]`` holds gallery indices and placeholder codes (no padding); ``scores[q]``
    their scores (None: no scores, nan); each entry's rank is its position in its list, a
    placeholder counting. ``depth`` cuts the stored lists (None: keep them whole); the items
    of interest keep their rank in the whole list, so the metrics see every entry. Ties are
    the list's equal scores (tolerance 0).
    """
    n_q, n_g = dataset.n_queries, dataset.n_gallery
    lengths = np.array([len(x) for x in lists], dtype=np.int64)
    k = int(lengths.max()) if len(lengths) else 0
    if depth is not None:
        k = min(k, depth)
    top = np.full((n_q, k), PADDING, dtype=np.int64)
    top_scores = np.full((n_q, k), -np.inf, dtype=np.float64)
    offsets, items = items_of_interest(dataset)
    ranks = np.full(len(items), -1, dtype=np.int64)
    item_scores = np.full(len(items), np.nan, dtype=np.float64)
    above, through = ranks.copy(), ranks.copy()
    position = np.full(n_g, -1, dtype=np.int64)
    for q in range(n_q):
        listed = np.asarray(lists[q], dtype=np.int64)
        values = (np.full(len(listed), np.nan) if scores is None
                  else np.asarray(scores[q], dtype=np.float64))
        cut = min(len(listed), k)
        top[q, :cut] = listed[:cut]
        top_scores[q, :cut] = values[:cut]
        a, b = offsets[q], offsets[q + 1]
        if a == b or not len(listed):
            continue
        real = np.flatnonzero(listed >= 0)
        position[listed[real]] = real
        found_ranks = position[items[a:b]]
        position[listed[real]] = -1
        found = found_ranks >= 0
        ranks[a:b] = found_ranks
        item_scores[a:b][found] = values[found_ranks[found]]
        above[a:b][found], through[a:b][found] = windows_in_list(values, found_ranks[found],
                                                                  0.0)
    return ListedRanking(top_indices=top, top_scores=top_scores, item_offsets=offsets,
                         item_indices=items, item_ranks=ranks, item_scores=item_scores,
                         n_ranked=int(n_g - dataset.ignored_mask.sum()), truncated=True,
                         source=source, item_tie_above=above, item_tie_through=through,
                         tie_tolerance=0.0, outside=outside, pairs=pairs, listed=lengths)
