"""Ranking: cosine similarity by one matrix multiply, top-K, and exact ranks of chosen items.

For every query the gallery is ranked by descending cosine similarity of L2-normalised
float32 descriptors. Equal scores keep gallery order (a stable ranking), so a ranking is
fully determined by the descriptors and the gallery order.

What is stored (:class:`Ranking`) is what the metrics and the viewer need, not the whole
sorted gallery:

* the top-K gallery indices and scores of every query;
* the exact 0-based rank and the score of every *item of interest* of every query: each
  gallery image named in one of the query's relevance groups, plus the query's own image.
  Ranks are counted without sorting the row: rank = #(scores above) + #(equal scores earlier
  in the gallery).

Each block of scores is cut at a per-query threshold low enough to keep every score that can
matter (the top-K, and every score at or above the lowest item of interest), and only those
*candidates* are sorted, once, by (query, descending score, gallery index); the top-K lists
are read off the front and each item's rank is its position among them. The top-K part of
the threshold comes from a sample of the row (a cheap partial selection) and is checked
against the candidate count, falling back to an exact selection for a row where the sample
misled. On Market-1501-sized blocks the candidates are a few per cent of the scores. When
most scores would be candidates (the revisited sets' junk and hard images rank deep), the
float32 rows are sorted whole instead, the scores below the row's lowest item first set to
-inf (they count for no item), and each item's count is a binary search in its row. The work
after each multiply is split by rows between threads (:mod:`irviewer.core.parallel`).

Memory stays bounded: queries are processed in blocks and the gallery in chunks, so a
memory-mapped 1,000,000 x 2048 float16 gallery is read chunk by chunk and never loaded whole.
When the gallery fits in one chunk, ranks are counted from the very score values the top-K is
taken from. When it spans several chunks, a cheap pre-pass estimates each item's score, every
chunk counts the scores clearly above the estimate, and the few scores within a narrow band
around it are kept and resolved exactly at the end; if an item's exact score ever falls
outside its band the query is re-counted from a full score row.

Gallery images the dataset removes for every query (``Dataset.global_ignored``) are taken out
before ranking: they never appear in a top-K list and never count in a rank (rank -1).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from irviewer.core.dataset import Dataset
from irviewer.core.descriptors import (
    NORM_CHUNK_BYTES,
    AlignedDescriptors,
    block_norms,
    check_gallery_rows,
    normalise_rows,
    row_norms,
)
from irviewer.core.errors import InputError, either
from irviewer.core.parallel import row_parts, run_parts
from irviewer.core.tie_windows import window_edges, windows_in_list, windows_in_row
from irviewer.core.ties import TIE_TOLERANCE

#: The stored lists' depth as each edge names it (``irviewer eval --depth``).
DEPTH = either("--depth", "the depth of the result lists", "depth")

#: Scores closer than this to an item's estimated score are resolved exactly (multi-chunk only).
BAND = 1e-5
#: Bytes of float32 gallery held at once; larger galleries are processed in chunks.
GALLERY_CHUNK_BYTES = 256 * 2**20
#: Bytes of one query-block x gallery-chunk score matrix.
SCORE_BLOCK_BYTES = 128 * 2**20
#: Rows are sorted whole when more than this fraction of their scores would be candidates
#: (measured: sorting float32 rows costs about a quarter of sorting as many packed keys).
SORT_WHOLE_FRACTION = 0.25
#: Scores per thread below which a block is not split between threads.
_PARALLEL_SCORES = 100_000


@dataclass(frozen=True)
class Progress:
    """One step of :func:`iter_rank`: ``done`` of ``total`` units, and the result at the end."""

    done: int
    total: int
    ranking: Ranking | None = None


@dataclass(frozen=True)
class Ranking:
    """The ranked gallery of every query, as far as the metrics and the viewer need it.

    Attributes:
        top_indices: (n_queries, k) gallery indices in rank order; -1 pads lists shorter
            than k (fewer active gallery images than k, or a truncated precomputed list).
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
    """

    top_indices: np.ndarray
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

    @property
    def n_queries(self) -> int:
        """Return the number of ranked queries."""
        return self.top_indices.shape[0]

    @property
    def k(self) -> int:
        """Return the depth of the stored top-K lists."""
        return self.top_indices.shape[1]

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
        ones the ranking used up to float32 rounding of the multiply.
        """
        if self.row_scores is not None:
            return self.row_scores(q)
        if self.descriptors is None or self.gallery_inv_norms is None:
            raise InputError(f"{self.source}: this ranking was read from a file; "
                             "scores beyond its lists are not known")
        ignored = (self.ignored_mask if self.ignored_mask is not None
                   else np.zeros(len(self.gallery_inv_norms), dtype=bool))
        return _row_from(self.descriptors, self.gallery_inv_norms, ignored, q)

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
        return _scores_of(self.descriptors, self.gallery_inv_norms, ignored, qv)

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
                a, t = windows_in_row(row, row[[g]], self.tie_tolerance)
            above[i], through[i] = int(a[0]), int(t[0])
        return above, through

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
                out[missing] = ranks_in_row(self.score_row(q), wanted[missing])
        return out


def ranks_in_row(row: np.ndarray, gallery_indices: np.ndarray) -> np.ndarray:
    """Return exact 0-based stable ranks of ``gallery_indices`` in a full score row.

    rank(g) = #(scores > row[g]) + #(scores == row[g] at an earlier gallery index);
    an item whose score is -inf (removed) gets -1.
    """
    g = np.asarray(gallery_indices, dtype=np.int64)
    s = row[g]
    finite = row[np.isfinite(row)]
    ordered = np.sort(finite)
    above = len(ordered) - np.searchsorted(ordered, s, side="right")
    ties_before = np.array([np.count_nonzero(row[:gi] == si) for gi, si in zip(g, s, strict=True)],
                           dtype=np.int64) if len(g) else np.zeros(0, dtype=np.int64)
    out = above + ties_before
    out[~np.isfinite(s)] = -1
    return out


def top_of_row(row: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (gallery indices, scores) of the ``k`` best entries of a full score row, in
    rank order: descending score, equal scores in gallery order (the stable rule every
    ranking here follows); removed entries (-inf) never appear, so fewer than ``k`` may
    come back."""
    order = np.argsort(-row, kind="stable")
    order = order[np.isfinite(row[order])][:max(k, 0)]
    return order.astype(np.int64), row[order]


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


def rank(aligned: AlignedDescriptors, dataset: Dataset, k: int = 200) -> Ranking:
    """Return the :class:`Ranking` of every query of ``dataset`` (see :func:`iter_rank`)."""
    result = None
    for step in iter_rank(aligned, dataset, k=k):
        result = step.ranking
    assert result is not None
    return result


def iter_rank(aligned: AlignedDescriptors, dataset: Dataset, k: int = 200,
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
    chunk_rows = gallery_chunk_rows or _chunk_rows(aligned.dim)
    chunks = list(_chunks(n_g, chunk_rows))
    multi = len(chunks) > 1
    widest = max(stop - start for start, stop in chunks)
    block_rows = query_block_rows or max(1, SCORE_BLOCK_BYTES // (4 * widest))
    # Candidate keys pack (block row, score, column) into 63 bits.
    block_rows = min(block_rows, 1 << (31 - _bits(widest)))
    blocks = list(_chunks(n_q, block_rows))

    offsets, items = items_of_interest(dataset)
    item_query = np.repeat(np.arange(n_q, dtype=np.int64), np.diff(offsets))
    state = _CountState(offsets, items, item_query, multi)
    if multi:
        state.estimate(aligned)

    top_idx = np.full((n_q, k_eff), -1, dtype=np.int64)
    top_val = np.full((n_q, k_eff), -np.inf, dtype=np.float32)
    inv_norms = np.empty(n_g, dtype=np.float32)
    total = len(chunks) * len(blocks)
    done = 0
    yield Progress(0, total)
    buffer = (np.empty((widest, aligned.dim), dtype=np.float32)
              if multi and _converted(aligned) else None)
    # One score block for every multiply: its pages are touched once, not per block.
    score_buffer = np.empty(min(block_rows, n_q) * widest, dtype=np.float32)
    for start, stop in chunks:
        if aligned.gallery_norms is not None:  # computed (and checked) by align()
            g = _gallery_chunk(aligned, start, stop, buffer)
            norms = aligned.gallery_norms[start:stop]
        else:
            norms = np.full(stop - start, np.nan, dtype=np.float32)
            g = _gallery_chunk(aligned, start, stop, buffer, norms)
            if not _converted(aligned):  # a view: nothing filled the norms in
                norms = row_norms(g)
            check_gallery_rows(norms, _row_ids(aligned, start, stop), dataset, aligned)
        inv = (1.0 / norms).astype(np.float32)
        inv_norms[start:stop] = inv
        local_ignored = np.flatnonzero(ignored[start:stop])
        for qa, qb in blocks:
            scores = score_buffer[:(qb - qa) * (stop - start)].reshape(qb - qa, stop - start)
            np.matmul(aligned.queries[qa:qb], g.T, out=scores)
            scores *= inv
            if len(local_ignored):
                scores[:, local_ignored] = -np.inf
            fold = partial(_rank_rows, scores, qa, start=start, stop=stop, top_idx=top_idx,
                           top_val=top_val, state=state)
            run_parts(fold, row_parts(qb - qa, scores.size, _PARALLEL_SCORES))
            done += 1
            yield Progress(done, total)
    counted = state.finish(lambda q: _row_from(aligned, inv_norms, ignored, q))
    top_idx[~np.isfinite(top_val)] = -1
    ranking = Ranking(top_indices=top_idx, top_scores=top_val, item_offsets=offsets,
                      item_indices=items, item_ranks=counted.ranks,
                      item_scores=counted.scores, item_tie_above=counted.above,
                      item_tie_through=counted.through,
                      n_ranked=n_active, descriptors=aligned, gallery_inv_norms=inv_norms,
                      ignored_mask=ignored if len(dataset.global_ignored) else None)
    yield Progress(total, total, ranking)


def iter_rank_rows(dataset: Dataset, score_rows: Callable[[int, int], np.ndarray],
                   k: int = 200, *, source: str, rerank: str | None = None,
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
    block_rows = min(block_rows, 1 << (31 - _bits(max(n_g, 1))))
    blocks = list(_chunks(n_q, block_rows))
    offsets, items = items_of_interest(dataset)
    item_query = np.repeat(np.arange(n_q, dtype=np.int64), np.diff(offsets))
    state = _CountState(offsets, items, item_query, multi=False)
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
        run_parts(fold, row_parts(qb - qa, scores.size, _PARALLEL_SCORES))
        yield Progress(done, len(blocks))

    def whole_row(q: int) -> np.ndarray:
        if row_scores is not None:
            return row_scores(q)
        row = np.array(score_rows(q, q + 1)[0], dtype=np.float32)
        row[removed] = -np.inf
        return row

    counted = state.finish(whole_row)
    top_idx[~np.isfinite(top_val)] = -1
    ranking = Ranking(top_indices=top_idx, top_scores=top_val, item_offsets=offsets,
                      item_indices=items, item_ranks=counted.ranks,
                      item_scores=counted.scores, item_tie_above=counted.above,
                      item_tie_through=counted.through,
                      n_ranked=n_active, source=source,
                      ignored_mask=ignored if len(removed) else None, rerank=rerank,
                      row_scores=whole_row)
    yield Progress(len(blocks), len(blocks), ranking)


# -- internals ---------------------------------------------------------------------------

def _rank_rows(block: np.ndarray, block_query: int, a: int, b: int, *, start: int, stop: int,
               top_idx: np.ndarray, top_val: np.ndarray, state: _CountState) -> None:
    """Fold rows a..b of a score ``block`` (its row 0 is query ``block_query``) against
    gallery start..stop into their queries' running top-K lists and their items' counts.
    Parts of a block run at the same time (:func:`~irviewer.core.parallel.run_parts`):
    each writes only its own queries' slices.

    Usually only the candidates (the scores at or above the row's threshold) are sorted.
    When the items of interest rank so deep that most scores would be candidates (junk and
    hard images of the revisited sets), sorting the float32 rows whole is cheaper than
    sorting that many packed keys; then the items' counts come from the sorted rows and only
    the top-K is taken as candidates. Both give the same lists and ranks.
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
        found = _candidates(scores, kth)
        _merge_top(top_idx[qa:qb], top_val[qa:qb], found, start, start == 0)
        state.count_in_sorted(ordered, scores, qa, qb, start, stop)
        return
    found = _select(scores, top_val[qa:qb], floor)
    _merge_top(top_idx[qa:qb], top_val[qa:qb], found, start, start == 0)
    state.count(found, qa, qb, start, stop)


def _mostly_candidates(scores: np.ndarray, floor: np.ndarray) -> bool:
    """Return True when, judged on every 8th column, more than :data:`SORT_WHOLE_FRACTION`
    of the block's scores are at or above their row's ``floor``."""
    sample = scores[:, ::8]
    if sample.size == 0:
        return False
    return bool(np.count_nonzero(sample >= floor[:, None]) > SORT_WHOLE_FRACTION * sample.size)


def _chunk_rows(dim: int) -> int:
    return max(1024, GALLERY_CHUNK_BYTES // (4 * max(dim, 1)))


def _chunks(n: int, size: int) -> Iterator[tuple[int, int]]:
    for start in range(0, n, size):
        yield start, min(n, start + size)


def _row_ids(aligned: AlignedDescriptors, start: int, stop: int) -> np.ndarray:
    if aligned.gallery_rows is None:
        return np.arange(start, stop, dtype=np.int64)
    return aligned.gallery_rows[start:stop]


def _gallery_chunk(aligned: AlignedDescriptors, start: int, stop: int,
                   out: np.ndarray | None = None,
                   norms: np.ndarray | None = None) -> np.ndarray:
    """Return gallery rows start..stop (dataset order) as an aligned, C-contiguous float32
    array: a view when the gallery already is one, else a copy (converted from float16 or
    integers, gathered when the rows are out of order), made in ``out`` when given (one
    buffer for every chunk of a large gallery: its pages are touched once, not per chunk)
    and shared between threads (:mod:`irviewer.core.parallel`), since a float16 gallery of
    a million rows spends as long converting as multiplying. With ``norms`` (a float32
    array of stop - start), a copy fills in each row's norm while its block is still in
    the cache (:func:`~irviewer.core.descriptors.block_norms`); a view leaves it alone."""
    if not _converted(aligned):
        return np.asarray(aligned.gallery[start:stop])  # a view (of a map: read by the multiply)
    n, dim = stop - start, aligned.dim
    chunk = (out[:n] if out is not None and len(out) >= n
             else np.empty((n, dim), dtype=np.float32))
    step = max(1, NORM_CHUNK_BYTES // (4 * max(dim, 1)))

    def convert(a: int, b: int) -> None:
        for x in range(a, b, step):
            y = min(b, x + step)
            if aligned.gallery_rows is None:
                np.copyto(chunk[x:y], aligned.gallery[start + x:start + y], casting="unsafe")
            else:
                chunk[x:y] = aligned.gallery[aligned.gallery_rows[start + x:start + y]]
            if norms is not None:
                norms[x:y] = block_norms(chunk[x:y])

    run_parts(convert, row_parts(n, n * dim, _PARALLEL_SCORES))
    return chunk


def _converted(aligned: AlignedDescriptors) -> bool:
    """Return whether gallery chunks must be copied: rows out of order, or not aligned,
    C-contiguous float32 values."""
    g = aligned.gallery
    return (aligned.gallery_rows is not None or g.dtype != np.float32
            or not (g.flags.c_contiguous and g.flags.aligned))


def _row_from(aligned: AlignedDescriptors, inv_norms: np.ndarray, ignored: np.ndarray,
              q: int) -> np.ndarray:
    return _scores_of(aligned, inv_norms, ignored, aligned.queries[q:q + 1])


def _scores_of(aligned: AlignedDescriptors, inv_norms: np.ndarray, ignored: np.ndarray,
               qv: np.ndarray) -> np.ndarray:
    """Return the score row of the unit float32 query vector ``qv`` (1 x dim)."""
    out = np.empty(len(inv_norms), dtype=np.float32)
    for start, stop in _chunks(len(out), _chunk_rows(aligned.dim)):
        out[start:stop] = (qv @ _gallery_chunk(aligned, start, stop).T)[0] * inv_norms[start:stop]
    out[ignored] = -np.inf
    return out


def _bits(n: int) -> int:
    """Return the number of bits that hold 0..n-1 (at least 1)."""
    return max(1, (int(n) - 1).bit_length())


#: Rows at most this many times longer than K are kept whole (no sampled threshold).
_SMALL_ROW = 4


@dataclass(frozen=True)
class _Candidates:
    """The scores of one block that can matter, sorted by (row, descending score, column).

    ``keys`` pack (row, descending score, column) into int64 so that one sort orders them
    and one ``searchsorted`` finds where any (row, score, column) would go; ``starts[r]`` is
    where row ``r``'s candidates begin (``starts[-1]`` is their number).
    """

    keys: np.ndarray
    cols: np.ndarray
    values: np.ndarray
    starts: np.ndarray
    col_bits: int

    def position(self, rows: np.ndarray, values: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Return, per (row, score, column), how many of the row's candidates order before
        it: higher scores, and equal scores at an earlier column."""
        keys = _pack(rows, _descending_keys(values), cols, self.col_bits)
        return np.searchsorted(self.keys, keys) - self.starts[rows]

    def at_least(self, rows: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Return, per (row, score), the position just after the row's candidates that are
        at least that score (relative to the row's start)."""
        keys = _pack(rows, _descending_keys(values) + 1, np.zeros(len(rows), np.int64),
                     self.col_bits)
        return np.searchsorted(self.keys, keys) - self.starts[rows]


def _pack(rows: np.ndarray, descending: np.ndarray, cols: np.ndarray,
          col_bits: int) -> np.ndarray:
    return (rows << (32 + col_bits)) | (descending << col_bits) | cols


def _descending_keys(values: np.ndarray) -> np.ndarray:
    """Return int64 keys in [0, 2**32) that sort float32 ``values`` in descending order."""
    return np.int64(0xFFFFFFFF) - _ordered_keys(values)


def _select(scores: np.ndarray, running: np.ndarray, floor: np.ndarray) -> _Candidates:
    """Return the block's candidates: per row, every score at or above a threshold that is
    at most ``floor`` (the lowest score the item counts need) and at most the K-th best
    score of the row merged with its running top-K list ``running`` (descending, -inf
    padded), so that the new top-K lies among them.

    The top-K part is the running list's K-th score when the list is full; otherwise a
    sample's estimate of the row's K-th score (every 8th or 2nd column, its ``2K/step``-th
    best score), checked afterwards: a row with fewer than K candidates above an estimate
    is cut again at its exact K-th score.
    """
    n_rows, n = scores.shape
    k = running.shape[1]
    if k == 0:
        return _candidates(scores, floor)
    kept = running[:, k - 1]
    estimated = np.full(n_rows, -np.inf, dtype=np.float32)
    if n > _SMALL_ROW * k and not np.isfinite(kept).all():
        step = 8 if n >= 32 * k else 2
        sample = scores[:, ::step]
        m = sample.shape[1]
        j = min(m, -(-2 * k * m // n))
        estimated = np.partition(sample, m - j, axis=1)[:, m - j]
    top = np.maximum(kept, estimated)
    threshold = np.minimum(top, floor)
    found = _candidates(scores, threshold)
    short = (threshold > kept) & (np.diff(found.starts) < min(k, n))
    if short.any():  # the sample misled: cut these rows at their exact K-th score
        exact_kth = np.partition(scores[short], n - k, axis=1)[:, n - k]
        threshold[short] = np.minimum(threshold[short], exact_kth)
        found = _candidates(scores, threshold)
    return found


def _candidates(scores: np.ndarray, threshold: np.ndarray) -> _Candidates:
    """Return every score at or above its row's ``threshold``, sorted (see _Candidates)."""
    n_rows, n = scores.shape
    flat = np.flatnonzero(scores >= threshold[:, None])
    rows = flat // n
    cols = flat - rows * n
    col_bits = _bits(n)
    keys = _pack(rows, _descending_keys(scores.reshape(-1)[flat]), cols, col_bits)
    keys.sort()
    rows = keys >> (32 + col_bits)
    cols = keys & ((1 << col_bits) - 1)
    starts = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=starts[1:])
    return _Candidates(keys, cols, scores[rows, cols], starts, col_bits)


def _merge_top(top_idx: np.ndarray, top_val: np.ndarray, found: _Candidates, offset: int,
               first: bool) -> None:
    """Merge a block's best candidates into the running top-K lists, in place.

    The candidates are sorted by descending score with equal scores in gallery order, so
    each row's first K are its block top-K. The running lists hold earlier gallery indices
    than the block, so a stable sort on the score after concatenating (running, block) keeps
    that order across blocks too; the first block is the running list.
    """
    k = top_idx.shape[1]
    if k == 0 or not len(found.cols):
        return
    take = found.starts[:-1, None] + np.arange(k)
    valid = take < found.starts[1:, None]
    take = np.where(valid, take, 0)
    idx = np.where(valid, found.cols[take] + offset, -1)
    val = np.where(valid, found.values[take], np.float32(-np.inf)).astype(np.float32)
    if first:
        top_idx[:] = idx
        top_val[:] = val
    else:
        _merge_sorted(top_idx, top_val, idx, val)


def _merge_sorted(top_idx: np.ndarray, top_val: np.ndarray, idx: np.ndarray,
                  val: np.ndarray) -> None:
    k = top_idx.shape[1]
    cand_idx = np.concatenate([top_idx, idx], axis=1)
    cand_val = np.concatenate([top_val, val], axis=1)
    order = np.argsort(-cand_val, axis=1, kind="stable")[:, :k]
    top_idx[:] = np.take_along_axis(cand_idx, order, axis=1)
    top_val[:] = np.take_along_axis(cand_val, order, axis=1)


def _ordered_keys(values: np.ndarray) -> np.ndarray:
    """Return int64 keys that sort exactly like the float32 ``values`` (-0.0 equals 0.0)."""
    bits = (np.asarray(values, dtype=np.float32) + np.float32(0.0)).view(np.uint32)
    bits = bits.astype(np.int64)
    negative = bits >= 0x80000000
    return np.where(negative, 0xFFFFFFFF - bits, bits + 0x80000000)


class _CountState:
    """Counts, block by block, how many scores lie above each item of interest.

    With one gallery chunk the item scores are exact before counting: rank = #(scores
    above) + #(equal scores at an earlier gallery index), the item's position among its
    row's candidates. With several chunks each item's score is estimated first; every chunk
    counts the scores above the estimate's band and keeps the few scores inside the band,
    which are resolved once the exact score is known.
    """

    def __init__(self, offsets: np.ndarray, items: np.ndarray, item_query: np.ndarray,
                 multi: bool, tolerance: float = TIE_TOLERANCE) -> None:
        self.offsets, self.items, self.item_query, self.multi = offsets, items, item_query, multi
        self.tolerance = tolerance
        n = len(items)
        self.above = np.zeros(n, dtype=np.int64)
        # Tie windows (irviewer.core.tie_windows): the scores at or above each item's upper
        # edge and above its lower edge, counted in the item's own chunk; ``elsewhere`` the
        # scores above the band of the other chunks (multi-chunk), added at the end.
        self.win_above = np.zeros(n, dtype=np.int64)
        self.win_through = np.zeros(n, dtype=np.int64)
        self.elsewhere = np.zeros(n, dtype=np.int64)
        self.exact = np.full(n, np.nan, dtype=np.float32)
        self.estimate_val = np.zeros(n, dtype=np.float32)
        # The scores inside items' bands, kept chunk by chunk: (item of each score, the
        # scores, whether its chunk lies before the item in gallery order).
        self.band: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def estimate(self, aligned: AlignedDescriptors) -> None:
        """Estimate each item's score with a gather (multi-chunk galleries only)."""
        step = 65536
        for a in range(0, len(self.items), step):
            g_idx = self.items[a:a + step]
            rows = g_idx if aligned.gallery_rows is None else aligned.gallery_rows[g_idx]
            order = np.argsort(rows)  # ascending reads are kind to memory maps
            vec = np.empty((len(rows), aligned.dim), dtype=np.float32)
            vec[order] = np.asarray(aligned.gallery[rows[order]], dtype=np.float32)
            norms = np.sqrt(np.einsum("ij,ij->i", vec, vec))
            q = aligned.queries[self.item_query[a:a + step]]
            self.estimate_val[a:a + step] = np.einsum("ij,ij->i", q, vec) / norms

    def _bounds(self, qa: int, qb: int, start: int,
                stop: int) -> tuple[int, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Return (ia, ib, block rows, inside, lo, hi) of the items of queries qa..qb: lo/hi
        is the exact score for an item in this chunk, else its estimate's band."""
        ia, ib = int(self.offsets[qa]), int(self.offsets[qb])
        items = self.items[ia:ib]
        rows = self.item_query[ia:ib] - qa
        inside = (items >= start) & (items < stop)
        if self.multi:
            lo = self.estimate_val[ia:ib] - np.float32(BAND)
            hi = self.estimate_val[ia:ib] + np.float32(BAND)
            lo[inside] = hi[inside] = self.exact[ia:ib][inside]
        else:
            lo = hi = self.exact[ia:ib]
        return ia, ib, rows, inside, lo, hi

    def floor(self, scores: np.ndarray, qa: int, qb: int, start: int,
              stop: int) -> np.ndarray:
        """Record the exact scores of the items in this chunk and return, per row of the
        block, the lowest score the counting needs to see (inf for a row without items)."""
        out = np.full(qb - qa, np.inf, dtype=np.float32)
        ia, ib = int(self.offsets[qa]), int(self.offsets[qb])
        if ia == ib:
            return out
        items = self.items[ia:ib]
        rows = self.item_query[ia:ib] - qa
        inside = (items >= start) & (items < stop)
        self.exact[ia:ib][inside] = scores[rows[inside], items[inside] - start]
        _, _, _, _, lo, _ = self._bounds(qa, qb, start, stop)
        np.minimum.at(out, rows, window_edges(lo, self.tolerance)[1])  # the tie window too
        return out

    def count_in_sorted(self, ordered: np.ndarray, scores: np.ndarray, qa: int, qb: int,
                        start: int, stop: int) -> None:
        """Add the block of queries qa..qb x gallery start..stop to the counts, from its
        rows sorted whole (``ordered``, ascending), as :meth:`count` does from candidates:
        the scores above each item (its exact score, or its estimate's band) come from a
        binary search in its row, plus, for an item in this chunk whose score occurs more
        than once in the row, the equal scores at an earlier gallery index; the scores
        inside a band are kept for :meth:`finish`."""
        ia, ib, rows, inside, lo, hi = self._bounds(qa, qb, start, stop)
        if ia == ib:
            return
        items = self.items[ia:ib]
        bounds = self.offsets[qa:qb + 1] - ia
        right = np.empty(ib - ia, dtype=np.int64)
        left = np.empty(ib - ia, dtype=np.int64) if self.multi else right
        upper, lower = window_edges(hi, self.tolerance)
        win_above = np.empty(ib - ia, dtype=np.int64)
        win_through = np.empty(ib - ia, dtype=np.int64)
        for r in np.flatnonzero(np.diff(bounds)):
            a, b = bounds[r], bounds[r + 1]
            right[a:b] = np.searchsorted(ordered[r], hi[a:b], side="right")
            win_above[a:b] = np.searchsorted(ordered[r], upper[a:b], side="left")
            win_through[a:b] = np.searchsorted(ordered[r], lower[a:b], side="right")
            if self.multi:
                left[a:b] = np.searchsorted(ordered[r], lo[a:b], side="left")
        n = scores.shape[1]
        self.win_above[ia:ib][inside] += n - win_above[inside]
        self.win_through[ia:ib][inside] += n - win_through[inside]
        above = n - right
        self.elsewhere[ia:ib][~inside] += above[~inside]
        # An item's own score is at right - 1; an equal score just before it is a tie.
        tied = np.flatnonzero(inside & (right >= 2)
                              & (ordered[rows, np.maximum(right - 2, 0)] == hi))
        for j in tied:
            above[j] += np.count_nonzero(scores[rows[j], :items[j] - start] == hi[j])
        self.above[ia:ib] += above
        if self.multi:
            kept = np.flatnonzero(~inside & (right > left))
            self._keep_band(ia + kept, ordered.reshape(-1),
                            rows[kept] * ordered.shape[1] + left[kept], (right - left)[kept],
                            stop <= items[kept])

    def count(self, found: _Candidates, qa: int, qb: int, start: int, stop: int) -> None:
        """Add the block of queries qa..qb x gallery start..stop to the counts.

        An item whose own image is in this chunk is counted exactly (its score is known):
        its position among the row's candidates counts the scores above it and the equal
        scores at an earlier gallery index. For any other item the chunk counts the scores
        above its estimate's band and keeps the few inside the band, with whether the chunk
        lies before the item in gallery order (then an equal score ranks first) or after it.
        """
        ia, ib, rows, inside, lo, hi = self._bounds(qa, qb, start, stop)
        if ia == ib:
            return
        items = self.items[ia:ib]
        cols = np.where(inside, items - start, 0)
        before = found.position(rows, hi, cols)
        self.above[ia:ib] += before
        upper, lower = window_edges(hi[inside], self.tolerance)
        self.win_above[ia:ib][inside] += found.at_least(rows[inside], upper)
        self.win_through[ia:ib][inside] += found.at_least(
            rows[inside], np.nextafter(lower, np.float32(np.inf)))
        self.elsewhere[ia:ib][~inside] += before[~inside]
        if self.multi:
            after = found.at_least(rows, lo)
            kept = np.flatnonzero(~inside & (after > before))
            self._keep_band(ia + kept, found.values, found.starts[rows[kept]] + before[kept],
                            (after - before)[kept], stop <= items[kept])

    def _keep_band(self, item: np.ndarray, flat: np.ndarray, first: np.ndarray,
                   length: np.ndarray, earlier: np.ndarray) -> None:
        """Keep ``flat[first[i]:first[i] + length[i]]``, the band scores of item
        ``item[i]`` in this chunk, copied (the block's arrays are reused)."""
        if not len(item):
            return
        ends = np.cumsum(length)
        at = np.arange(ends[-1]) + np.repeat(first - (ends - length), length)
        self.band.append((np.repeat(item, length), flat[at],
                          np.repeat(np.asarray(earlier, dtype=bool), length)))

    def finish(self, full_row: Callable[[int], np.ndarray]) -> _Counted:
        """Return the ranks, scores and tie windows of all items: counts above plus the
        exactly resolved band.

        A band score counts when it is above the item's exact score, or equal to it in a
        chunk before the item; for the tie window, when it is at or above the window's upper
        edge, or above its lower edge. An item whose exact score fell outside its band (the
        estimate missed), or whose tie window reaches beyond it, has its whole query counted
        again from its score row.
        """
        ranks = self.above.copy()
        exact = self.exact
        above, through = self.win_above.copy(), self.win_through.copy()
        if not self.multi:
            return _Counted(ranks, exact, above, through)
        lo = self.estimate_val - np.float32(BAND)
        hi = self.estimate_val + np.float32(BAND)
        upper, lower = window_edges(exact, self.tolerance)
        missed = ~((lo <= exact) & (exact <= hi) & (lo <= lower) & (upper <= hi))
        above += self.elsewhere
        through += self.elsewhere
        if self.band:
            item, values, earlier = (np.concatenate(part) for part in zip(*self.band,
                                                                          strict=True))
            score = exact[item]
            counted = (values > score) | (earlier & (values == score))
            ranks += np.bincount(item[counted], minlength=len(ranks))
            above += np.bincount(item[values >= upper[item]], minlength=len(ranks))
            through += np.bincount(item[values > lower[item]], minlength=len(ranks))
        for q in np.unique(self.item_query[missed]):
            a, b = self.offsets[q], self.offsets[q + 1]
            row = full_row(int(q))
            ranks[a:b] = ranks_in_row(row, self.items[a:b])
            exact[a:b] = row[self.items[a:b]]
            above[a:b], through[a:b] = windows_in_row(row, exact[a:b], self.tolerance)
        return _Counted(ranks, exact, above, through)


@dataclass(frozen=True)
class _Counted:
    """What :meth:`_CountState.finish` found for every item of interest: ``ranks``,
    ``scores`` and the tie windows ``above`` / ``through``
    (:mod:`irviewer.core.tie_windows`)."""

    ranks: np.ndarray
    scores: np.ndarray
    above: np.ndarray
    through: np.ndarray


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
