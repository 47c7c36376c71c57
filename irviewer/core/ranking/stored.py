"""What a ranking stores (:class:`Ranking`: top-K lists and the exact ranks of the items of
interest, see :mod:`irviewer.core.ranking`), and the rules every ranking follows: the items of
interest of a query, the top-K of one whole score row (descending score, near ties settled
by exact score, equal scores in gallery order: :mod:`irviewer.core.ranking.settle`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast, overload

import numpy as np

from irviewer.core.dataset import Dataset
from irviewer.core.descriptors import AlignedDescriptors, normalise_rows
from irviewer.core.errors import InputError, either
from irviewer.core.ranking.gallery import (
    ExactProducts,
    query_rows,
    row_from,
    score_rows_of,
    scores_of,
)
from irviewer.core.ranking.row_counts import counts_in_row, ranks_in_row
from irviewer.core.ranking.settle import ExactScores, PendingRuns, Settle, band_edges, settle_lists
from irviewer.core.tie_windows import windows_in_list
from irviewer.core.ties import TIE_TOLERANCE

#: How many results per query a ranking stores unless told otherwise (``--depth``).
DEFAULT_DEPTH = 200
#: The stored lists' depth as each edge names it (``irviewer eval --depth``).
DEPTH = either("--depth", "the depth of the result lists", "depth")


@dataclass(frozen=True)
class Progress:
    """One step of :func:`iter_rank`: ``done`` of ``total`` units, and the result at the end."""

    done: int
    total: int
    ranking: Ranking | None = None


class _SettledOnRead:
    """A :class:`Ranking`'s top-K list field (indices or scores) whose runs of near ties are
    settled the first time either list is read (``Ranking.lists_pending``,
    :class:`~irviewer.core.ranking.settle.PendingRuns`), so that every reader sees them in
    the ranking's order and an evaluation, which reads none, does not pay for them."""

    def __init__(self, name: str) -> None:
        self.key = "#" + name

    @overload
    def __get__(self, obj: None, _objtype: type | None = None) -> _SettledOnRead: ...

    @overload
    def __get__(self, obj: Ranking, _objtype: type | None = None) -> np.ndarray: ...

    def __get__(self, obj: Ranking | None,
                _objtype: type | None = None) -> np.ndarray | _SettledOnRead:
        if obj is None:  # the dataclass asks for a default: there is none
            raise AttributeError(self.key)
        state = obj.__dict__
        pending = state.get("lists_pending")
        if pending is not None and not pending.done:
            pending.settle(state["#top_indices"], state["#top_scores"])
        return cast("np.ndarray", state[self.key])

    def __set__(self, obj: Ranking, value: np.ndarray) -> None:
        obj.__dict__[self.key] = value


@dataclass(frozen=True)
class Ranking:
    """The ranked gallery of every query, as far as the metrics and the viewer need it.

    Attributes:
        top_indices: (n_queries, k) gallery indices in rank order; -1 pads lists shorter
            than k (fewer active gallery images than k, or a truncated precomputed list).
            Its runs of near ties are settled when it (or ``top_scores``) is first read.
        top_scores: (n_queries, k) float32 scores matching ``top_indices`` (-inf padding).
        item_offsets: (n_queries + 1,) offsets: query q's items are
            ``item_*[item_offsets[q]:item_offsets[q+1]]``.
        item_indices: gallery indices of the items of interest, sorted within each query.
        item_ranks: their exact 0-based ranks among the active gallery; -1 when the item is
            not ranked (removed for every query, or beyond a truncated precomputed list).
        item_scores: their scores (nan when not ranked).
        n_ranked: number of gallery images in each full ranking (the active gallery).
        truncated: True when the ranks come from a precomputed list that stops at k.
        source: how the ranking was made, for the output ("cosine" or a file name).
        descriptors, gallery_inv_norms: the vectors the scores came from (None for a
            ranking read from a file), for a query's whole score row on request.
        ignored_mask: the gallery images removed for every query (None: none).
        rerank: the re-ranking chain that made the scores (:mod:`irviewer.core.rerank`),
            None for a plain cosine ranking or one read from a file.
        row_scores: query -> its whole score row, for a ranking whose scores are not the
            cosines of ``descriptors`` (k-reciprocal distances, negated).
        item_tie_above, item_tie_through: each item's tie window
            (:mod:`irviewer.core.tie_windows`): the ranked items whose score lies above the
            window, and above its lower edge; None when the ranking did not count them
            (then no tie is known).
        tie_tolerance: scores closer than this are tied (0: equal as written).
        block_scores: (qa, qb) -> the whole score rows of queries qa..qb, the same rows
            as ``row_scores`` made a block at a time (None: row by row).
        exact_scores: the exact scores of (query, gallery image) pairs by which the
            ranking settled its near ties (:mod:`irviewer.core.ranking.settle`), so that
            a score row made again is ordered as the ranking is; None for a ranking whose
            float32 scores are its order (a ranking file, rows re-ranked elsewhere).
        lists_pending: the runs of near ties inside the top-K lists, settled when the lists
            are first read (None: nothing pending).
        exact_products: set when the descriptors are small whole numbers multiplied exactly
            as the file holds them (:func:`~irviewer.core.ranking.gallery.exact_products`),
            so that a score row made again is the same row.
    """

    top_indices: np.ndarray  # both read through _SettledOnRead (set below the class)
    top_scores: np.ndarray
    item_offsets: np.ndarray
    item_indices: np.ndarray
    item_ranks: np.ndarray
    item_scores: np.ndarray
    n_ranked: int
    truncated: bool = False
    source: str = "cosine"
    descriptors: AlignedDescriptors | None = None
    gallery_inv_norms: np.ndarray | None = None
    ignored_mask: np.ndarray | None = None
    rerank: str | None = None
    row_scores: Callable[[int], np.ndarray] | None = field(default=None, compare=False,
                                                           repr=False)
    item_tie_above: np.ndarray | None = None
    item_tie_through: np.ndarray | None = None
    tie_tolerance: float = TIE_TOLERANCE
    block_scores: Callable[[int, int], np.ndarray] | None = field(default=None, compare=False,
                                                                  repr=False)
    exact_scores: ExactScores | None = field(default=None, compare=False, repr=False)
    lists_pending: PendingRuns | None = field(default=None, compare=False, repr=False)
    exact_products: ExactProducts | None = field(default=None, compare=False, repr=False)

    @property
    def settle(self) -> Settle | None:
        """Return how the ranking settles near ties (None: by float32 score alone)."""
        if self.exact_scores is None:
            return None
        n_gallery = (len(self.gallery_inv_norms) if self.gallery_inv_norms is not None
                     else len(self.ignored_mask) if self.ignored_mask is not None
                     else int(self.top_indices.max(initial=-1)) + 1)
        return Settle(self.exact_scores, n_gallery)

    @property
    def n_queries(self) -> int:
        """Return the number of ranked queries."""
        return int(self._list_shape[0])

    @property
    def k(self) -> int:
        """Return the depth of the stored top-K lists."""
        return int(self._list_shape[1])

    @property
    def _list_shape(self) -> tuple[int, ...]:
        """The lists' shape, read without settling them (settling keeps it)."""
        return cast("np.ndarray", self.__dict__["#top_indices"]).shape

    @property
    def has_score_rows(self) -> bool:
        """Return True when :meth:`score_row` can give a query's whole row (descriptors or
        a re-ranking behind the ranking), False for a ranking read from a file."""
        return self.row_scores is not None or (self.descriptors is not None
                                               and self.gallery_inv_norms is not None)

    def items(self, q: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return (gallery indices, ranks, scores) of query ``q``'s items of interest."""
        a, b = self.item_offsets[q], self.item_offsets[q + 1]
        return self.item_indices[a:b], self.item_ranks[a:b], self.item_scores[a:b]

    def score_row(self, q: int) -> np.ndarray:
        """Return query ``q``'s float32 score for every gallery image (-inf where removed).

        One vector-matrix product over the gallery, chunk by chunk; the values equal the
        ones the ranking used up to float32 rounding of the multiply (which is why the order
        of a row comes from :meth:`ranked` and :meth:`rank_items`, which settle its near
        ties as the ranking did, never from sorting the row).
        """
        if self.row_scores is not None:
            return self.row_scores(q)
        if self.descriptors is None or self.gallery_inv_norms is None:
            raise InputError(f"{self.source}: this ranking was read from a file; "
                             "scores beyond its lists are not known")
        ignored = (self.ignored_mask if self.ignored_mask is not None
                   else np.zeros(len(self.gallery_inv_norms), dtype=bool))
        return row_from(self.descriptors, self.gallery_inv_norms, ignored, q, self.exact_products)

    def score_rows(self, qa: int, qb: int) -> np.ndarray:
        """Return the float32 scores of queries qa..qb (qa < qb) against every gallery image,
        (qb - qa, n_gallery), -inf where removed: :meth:`score_row` for a block of queries,
        one matrix product per gallery chunk for a ranking of descriptors."""
        if self.block_scores is not None:
            return self.block_scores(qa, qb)
        if self.row_scores is not None or self.descriptors is None \
                or self.gallery_inv_norms is None:
            return np.stack([self.score_row(q) for q in range(qa, qb)])
        ignored = (self.ignored_mask if self.ignored_mask is not None
                   else np.zeros(len(self.gallery_inv_norms), dtype=bool))
        return score_rows_of(self.descriptors, self.gallery_inv_norms, ignored,
                             *query_rows(self.descriptors, slice(qa, qb), self.exact_products))

    def score_vector(self, vector: np.ndarray) -> np.ndarray:
        """Return a new query vector's float32 cosine score for every gallery image (-inf
        where removed), exactly as a query of the ranking is scored: the vector is
        L2-normalised like the ranked queries and multiplied with the gallery chunk by chunk.

        This is how a photo that is not in the dataset is ranked (``irviewer search``);
        InputError for a ranking read from a file (no gallery vectors) or a vector of
        another dimension.
        """
        if self.rerank is not None:
            raise InputError(f"{self.source}: a re-ranked ranking ({self.rerank}) cannot "
                             "score a new photo, since re-ranking depends on every query; "
                             "search with the plain descriptor file")
        if self.descriptors is None or self.gallery_inv_norms is None:
            raise InputError(f"{self.source}: this ranking was read from a file; it has no "
                             "gallery vectors to compare a new query with")
        qv = normalise_rows(np.asarray(vector).reshape(1, -1))
        if qv.shape[1] != self.descriptors.dim:
            raise InputError(f"the query vector has {qv.shape[1]} dimensions but the gallery "
                             f"vectors have {self.descriptors.dim}")
        ignored = (self.ignored_mask if self.ignored_mask is not None
                   else np.zeros(len(self.gallery_inv_norms), dtype=bool))
        return scores_of(self.descriptors, self.gallery_inv_norms, ignored, qv)

    def tie_windows(self, stored: np.ndarray, queries: np.ndarray,
                    gallery: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return the tie windows (above, through; :mod:`irviewer.core.tie_windows`) of
        ranked (query, gallery image) pairs: ``stored`` is each pair's index among the
        items of interest, -1 for an image the ranking did not store, whose window comes
        from the query's score row (or, for a ranking read from a file, its list)."""
        stored = np.asarray(stored, dtype=np.int64)
        have = stored >= 0
        ranks = self.item_ranks[np.maximum(stored, 0)]
        above, through = ranks.copy(), ranks + 1
        if self.item_tie_above is not None and self.item_tie_through is not None:
            above[have] = self.item_tie_above[stored[have]]
            through[have] = self.item_tie_through[stored[have]]
        rows: dict[int, np.ndarray] = {}  # one score row per query, however many pairs
        for i in np.flatnonzero(~have):
            q, g = int(queries[i]), int(gallery[i])
            if self.truncated or not self.has_score_rows:
                listed = self.top_indices[q]
                at = np.flatnonzero(listed == g)
                if not len(at):
                    above[i], through[i] = -1, -1
                    continue
                a, t = windows_in_list(self.top_scores[q], at, self.tie_tolerance)
            else:
                row = rows[q] if q in rows else rows.setdefault(q, self.score_row(q))
                again = counts_in_row(row, np.array([g]), self.tie_tolerance, self.settle, q)
                a, t = again.above, again.through
            above[i], through[i] = int(a[0]), int(t[0])
        return above, through

    def ranked(self, q: int, n: int, drop: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """Return (gallery indices, float32 scores) of the first ``n`` images of query
        ``q``'s ranking, leaving out the images ``drop`` marks (a boolean mask over the
        gallery; None: none): the stored list when it holds them, else the query's score
        row made again and ordered as the ranking orders (near ties settled by exact score,
        equal ones in gallery order); as far as known for a ranking read from a file."""
        top, val = self.top_indices[q], self.top_scores[q]
        valid = top >= 0
        top, val = top[valid], val[valid]
        if drop is not None:
            keep = ~drop[top]
            top, val = top[keep], val[keep]
        if len(top) >= n or len(top) == self.n_ranked or self.truncated \
                or not self.has_score_rows:
            return top[:n], val[:n]
        row = np.array(self.score_row(q), dtype=np.float32)
        if drop is not None:
            row[drop] = -np.inf
        return top_of_row(row, n, self.settle, q)

    def order_of(self, q: int, among: np.ndarray) -> np.ndarray:
        """Return the gallery images ``among`` in query ``q``'s ranking order, from its score
        row made again and ordered as the ranking orders (near ties settled by exact score,
        equal ones in gallery order); removed ones last. InputError for a ranking read from
        a file."""
        row = self.score_row(q)
        among = np.asarray(among, dtype=np.int64)
        only = np.full(len(row), -np.inf, dtype=np.float32)
        only[among] = row[among]
        order, _ = top_of_row(only, len(among), self.settle, q)
        return np.concatenate([order, among[~np.isin(among, order)]])

    def rank_items(self, q: int, gallery_indices: np.ndarray) -> np.ndarray:
        """Return the exact 0-based ranks of ``gallery_indices`` for query ``q``.

        Stored items are looked up; any other item's rank comes from recomputing this one
        query's score row (a single vector-matrix product), never from a full re-rank.
        Items removed for every query, and items beyond a truncated list, get -1.
        """
        wanted = np.asarray(gallery_indices, dtype=np.int64)
        idx, ranks, _ = self.items(q)
        pos = np.searchsorted(idx, wanted)
        pos_c = np.minimum(pos, max(len(idx) - 1, 0))
        found = (pos < len(idx)) & (idx[pos_c] == wanted) if len(idx) else np.zeros(
            len(wanted), dtype=bool)
        out = np.full(len(wanted), -1, dtype=np.int64)
        out[found] = ranks[pos_c[found]]
        missing = ~found
        if missing.any():
            if self.truncated or not self.has_score_rows:
                top = self.top_indices[q]
                where = {int(g): r for r, g in enumerate(top) if g >= 0}
                out[missing] = [where.get(int(g), -1) for g in wanted[missing]]
            else:
                out[missing] = ranks_in_row(self.score_row(q), wanted[missing], self.settle, q)
        return out


# The lists are plain fields to the dataclass (and to mypy); reading them goes through the
# descriptor, which the generated __init__ writes through as well.
for _name in ("top_indices", "top_scores"):
    setattr(Ranking, _name, _SettledOnRead(_name))


def top_of_row(row: np.ndarray, k: int, settle: Settle | None = None,
               query: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Return (gallery indices, scores) of the ``k`` best entries of query ``query``'s full
    score row, in rank order: descending score, equal scores in gallery order (the stable
    rule every ranking here follows), near ties settled by exact score when ``settle`` is
    given (then a settled entry's score is its exact one); removed entries (-inf) never
    appear, so fewer than ``k`` may come back."""
    k = max(k, 0)
    row = np.asarray(row, dtype=np.float32)
    idx = np.flatnonzero(np.isfinite(row))
    values = row[idx]
    if 0 < k < len(values):
        cut = np.partition(values, len(values) - k)[len(values) - k]
        keep = (values > band_edges(np.array([cut]))[1][0] if settle is not None
                else values >= cut)
        idx, values = idx[keep], values[keep]
    if settle is None:
        order = np.lexsort((idx, -values))[:k]
        return idx[order].astype(np.int64), values[order]
    (top, scores), = settle_lists(settle.scores, settle.n_gallery, np.array([query]),
                                  [(idx, values)], k)
    return top.astype(np.int64), scores


def items_of_interest(dataset: Dataset) -> tuple[np.ndarray, np.ndarray]:
    """Return (offsets, gallery indices): per query, every gallery image in any relevance
    group, plus the query's own image, sorted and without the globally ignored ones."""
    n_q, n_g = dataset.n_queries, dataset.n_gallery
    tables = [dataset.group_table(group) for group in dataset.groups]
    selves = np.array([q.self_index for q in dataset.queries], dtype=np.int64)
    has_self = np.flatnonzero(selves >= 0)
    g = np.concatenate([*(m for _, m in tables), selves[has_self]]).astype(np.int64)
    qs = np.concatenate([*(o for o, _ in tables), has_self])
    keep = ~dataset.ignored_mask[g]
    keys = np.sort(qs[keep] * n_g + g[keep])
    keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))[:len(keys)]]  # np.unique,
    # four times faster on the thousands of keys of a benchmark
    offsets = np.zeros(n_q + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(np.bincount(keys // n_g, minlength=n_q))
    return offsets, keys % n_g
