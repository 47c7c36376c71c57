"""Exact rank counting: the 0-based rank of every item of interest, counted block by block
without sorting whole rows (rank = #(scores above) + #(equal scores earlier in the
gallery)); with a gallery in several chunks, from an estimate's narrow band resolved at the
end (see :mod:`irviewer.core.ranking`). Where a ranking has exact scores, an item whose
float32 score has others in its near band (:func:`~irviewer.core.ranking.settle.band_edges`)
is counted again among them by exact score
(:func:`~irviewer.core.ranking.settle.settle_items`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from irviewer.core.descriptors import AlignedDescriptors
from irviewer.core.ranking.row_counts import Counted, counts_in_row
from irviewer.core.ranking.settle import Settle, band_edges, settle_items
from irviewer.core.ranking.top_k import Candidates
from irviewer.core.tie_windows import window_edges
from irviewer.core.ties import TIE_TOLERANCE

#: Scores closer than this to an item's estimated score are resolved exactly (multi-chunk only).
BAND = 1e-5

class CountState:
    """Counts, block by block, how many scores lie above each item of interest.

    With one gallery chunk the item scores are exact before counting: rank = #(scores
    above) + #(equal scores at an earlier gallery index), the item's position among its
    row's candidates. With several chunks each item's score is estimated first; a chunk
    before the item's own counts the scores above the estimate's band and keeps the few
    scores inside the band, which are resolved once the exact score is known; the item's
    own chunk and those after it count on its exact score, as with one chunk (an equal
    score in a later chunk ranks after it).

    With ``settle`` (a ranking with exact scores) the scores in each item's near band are
    counted too, and an item with others in it (its *members*) is settled: counted among
    them by exact score — in the block that holds it with one chunk, at the end with
    several. Its tie window (``tolerance``) stays counted on float32 scores.
    """

    def __init__(self, offsets: np.ndarray, items: np.ndarray, item_query: np.ndarray,
                 multi: bool, tolerance: float = TIE_TOLERANCE,
                 settle: Settle | None = None) -> None:
        self.offsets, self.items, self.item_query, self.multi = offsets, items, item_query, multi
        self.tolerance = tolerance
        self.settle = settle
        n = len(items)
        self.above = np.zeros(n, dtype=np.int64)
        # Tie windows (irviewer.core.tie_windows): the scores at or above each item's upper
        # edge and above its lower edge, counted in the item's own chunk; ``elsewhere`` the
        # scores above the band of the other chunks (multi-chunk), added at the end.
        self.win_above = np.zeros(n, dtype=np.int64)
        self.win_through = np.zeros(n, dtype=np.int64)
        # The same for each item's near band (settle.band_edges), with exact scores only.
        self.near_above = np.zeros(n, dtype=np.int64)
        self.near_through = np.zeros(n, dtype=np.int64)
        self.elsewhere = np.zeros(n, dtype=np.int64)
        self.exact = np.full(n, np.nan, dtype=np.float32)
        self.settled = np.full(n, np.nan, dtype=np.float32)  # exact scores of settled items
        self.estimate_val = np.zeros(n, dtype=np.float32)
        # Multi-chunk: the items counted on their estimate's band in some chunk.
        self.estimated = np.zeros(n, dtype=bool)
        # The scores inside items' bands, kept chunk by chunk: (item of each score, the
        # scores, whether its chunk lies before the item in gallery order, their gallery
        # indices).
        self.band: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        # Multi-chunk: the members of items found in the items' own chunks (item, gallery).
        self.members: list[tuple[np.ndarray, np.ndarray]] = []

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

    def _bounds(self, qa: int, qb: int, start: int, stop: int) -> tuple[
            int, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Return (ia, ib, block rows, inside, known, lo, hi) of the items of queries qa..qb:
        ``known`` the items whose exact score is known (their chunk is this one or came
        before it), for which lo = hi is that score; for the others lo/hi is the estimate's
        band."""
        ia, ib = int(self.offsets[qa]), int(self.offsets[qb])
        items = self.items[ia:ib]
        rows = self.item_query[ia:ib] - qa
        inside = (items >= start) & (items < stop)
        exact = self.exact[ia:ib]
        if self.multi:
            known = ~np.isnan(exact)
            self.estimated[ia:ib] |= ~known
            lo = np.where(known, exact, self.estimate_val[ia:ib] - np.float32(BAND))
            hi = np.where(known, exact, self.estimate_val[ia:ib] + np.float32(BAND))
        else:
            known, lo, hi = inside, exact, exact
        return ia, ib, rows, inside, known, lo, hi

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
        lo = self._bounds(qa, qb, start, stop)[5]
        need = window_edges(lo, self.tolerance)[1]  # the tie window too
        if self.settle is not None:  # and the near band
            need = np.minimum(need, band_edges(lo)[1])
        np.minimum.at(out, rows, need)
        return out

    def count_in_sorted(self, ordered: np.ndarray, scores: np.ndarray, qa: int, qb: int,
                        start: int, stop: int) -> None:
        """Add the block of queries qa..qb x gallery start..stop to the counts, from its
        rows sorted whole (``ordered``, ascending), as :meth:`count` does from candidates:
        the scores above each item (its exact score, or its estimate's band) come from a
        binary search in its row, plus, for an item in this chunk whose score occurs more
        than once in the row, the equal scores at an earlier gallery index; the scores
        inside a band are kept for :meth:`finish`."""
        ia, ib, rows, inside, known, lo, hi = self._bounds(qa, qb, start, stop)
        if ia == ib:
            return
        items = self.items[ia:ib]
        bounds = self.offsets[qa:qb + 1] - ia
        right = np.empty(ib - ia, dtype=np.int64)
        left = np.empty(ib - ia, dtype=np.int64) if self.multi else right
        upper, lower = window_edges(hi, self.tolerance)
        b_up, b_lo = band_edges(hi) if self.settle is not None else (hi, hi)
        win_above = np.empty(ib - ia, dtype=np.int64)
        win_through = np.empty(ib - ia, dtype=np.int64)
        near_above = np.empty(ib - ia, dtype=np.int64)
        near_through = np.empty(ib - ia, dtype=np.int64)
        # With one chunk the near bands are searched only for the items that have a
        # neighbour in theirs (_settle_sorted).
        bands = self.settle is not None and self.multi
        for r in np.flatnonzero(np.diff(bounds)):
            a, b = bounds[r], bounds[r + 1]
            row = ordered[r]
            right[a:b] = np.searchsorted(row, hi[a:b], side="right")
            win_through[a:b] = np.searchsorted(row, lower[a:b], side="right")
            win_above[a:b] = np.searchsorted(row, upper[a:b], side="left")
            if bands:
                near_through[a:b] = np.searchsorted(row, b_lo[a:b], side="right")
                near_above[a:b] = np.searchsorted(row, b_up[a:b], side="left")
            if self.multi:
                left[a:b] = np.searchsorted(row, lo[a:b], side="left")
        n = scores.shape[1]
        self.win_above[ia:ib][known] += n - win_above[known]
        self.win_through[ia:ib][known] += n - win_through[known]
        above = n - right
        self.elsewhere[ia:ib][~known] += above[~known]
        # An item's own score is at right - 1; an equal score just before it is a tie.
        tied = np.flatnonzero(inside & (right >= 2)
                              & (ordered[rows, np.maximum(right - 2, 0)] == hi))
        for j in tied:
            above[j] += np.count_nonzero(scores[rows[j], :items[j] - start] == hi[j])
        self.above[ia:ib] += above
        if self.settle is not None and not self.multi:
            self._settle_sorted(ordered, scores, ia, rows, inside, right, hi, b_up, b_lo)
        elif self.settle is not None:
            self.near_above[ia:ib][known] += n - near_above[known]
            self.near_through[ia:ib][known] += n - near_through[known]
            # another score in the band: besides the item's own, in its own chunk
            many = np.flatnonzero(known & (near_above - near_through > inside))
            if len(many):
                member_of, member = _in_bands(scores, rows[many], b_lo[many], b_up[many])
                self._members(ia + many[member_of], member + start, ia + many)
        if self.multi:
            kept = np.flatnonzero(~known & (right > left))
            if len(kept):
                self._keep_sorted_band(scores, start, stop, ia, kept, rows, lo, hi, items)

    def _settle_sorted(self, ordered: np.ndarray, scores: np.ndarray, ia: int, rows: np.ndarray,
                       inside: np.ndarray, right: np.ndarray, hi: np.ndarray, b_up: np.ndarray,
                       b_lo: np.ndarray) -> None:
        """Settle the items of a one-chunk block whose near band holds another score, from
        the rows sorted whole: an item's neighbours in its sorted row (its own score is at
        ``right - 1``) tell whether any other score is in its band; for those few items the
        band's members (gallery indices) and the scores above it come from their rows."""
        n = ordered.shape[1]
        after = ordered[rows, np.minimum(right, n - 1)]
        before = ordered[rows, np.maximum(right - 2, 0)]
        some = np.flatnonzero(inside & (((right < n) & (after < b_up))
                                        | ((right >= 2) & (before > b_lo))))
        if not len(some):
            return
        band = scores[rows[some]]
        member = band > b_lo[some, None]
        member &= band < b_up[some, None]
        # flatnonzero: a 2-d nonzero costs several times more on these wide rows
        which, cols = np.divmod(np.flatnonzero(member), n)
        value = band[which, cols]
        # The scores at or above the band: those above the item, less those inside the band.
        higher = value > hi[some][which]
        far = n - right[some] - np.bincount(which[higher], minlength=len(some))
        self._settle(ia + some, ia + some[which], cols, far)

    def count(self, found: Candidates, qa: int, qb: int, start: int, stop: int) -> None:
        """Add the block of queries qa..qb x gallery start..stop to the counts.

        An item whose exact score is known (its image is in this chunk or an earlier one)
        is counted exactly: its position among the row's candidates counts the scores above
        it and, in its own chunk, the equal scores at an earlier gallery index. For an item
        of a later chunk the chunk counts the scores above its estimate's band and keeps the
        few inside the band (an equal score there ranks before the item).
        """
        ia, ib, rows, inside, known, lo, hi = self._bounds(qa, qb, start, stop)
        if ia == ib:
            return
        items = self.items[ia:ib]
        cols = np.where(inside, items - start, 0)
        before = found.position(rows, hi, cols)
        self.above[ia:ib] += before
        upper, lower = window_edges(hi[known], self.tolerance)
        in_rows = rows[known]
        win_above = found.at_least(in_rows, upper)
        win_through = found.at_least(in_rows, np.nextafter(lower, np.float32(np.inf)))
        self.win_above[ia:ib][known] += win_above
        self.win_through[ia:ib][known] += win_through
        self.elsewhere[ia:ib][~known] += before[~known]
        if self.settle is not None:
            b_up, b_lo = band_edges(hi[known])
            near_above = found.at_least(in_rows, b_up)
            near_through = found.at_least(in_rows, np.nextafter(b_lo, np.float32(np.inf)))
            self.near_above[ia:ib][known] += near_above
            self.near_through[ia:ib][known] += near_through
            many = near_through - near_above > inside[known]  # the item's own aside
            if many.any():
                which = np.flatnonzero(known)[many]
                first = found.starts[in_rows[many]] + near_above[many]
                length = (near_through - near_above)[many]
                at = _ranges(first, length)
                self._members(ia + np.repeat(which, length), found.cols[at] + start,
                              ia + which)
        if self.multi:
            after = found.at_least(rows, lo)
            kept = np.flatnonzero(~known & (after > before))
            first = found.starts[rows[kept]] + before[kept]
            at = _ranges(first, (after - before)[kept])
            self._keep_band(ia + kept, found.values[at], found.cols[at] + start,
                            (after - before)[kept], stop <= items[kept])

    def _members(self, item: np.ndarray, gallery: np.ndarray, settled: np.ndarray) -> None:
        """Take the members found in an item's own chunk (``item``, ``gallery``; the items
        ``settled`` each have some): with one chunk the items are settled now, on the thread
        of the block part that holds them, their counts complete; with several they are
        kept for :meth:`finish`."""
        if self.multi:
            self.members.append((item, gallery))
            return
        self._settle(settled, item, gallery, self.near_above[settled])

    def _settle(self, which: np.ndarray, member_item: np.ndarray, member_gallery: np.ndarray,
                far: np.ndarray) -> None:
        """Settle the items ``which`` (positions, ascending) from their members (``far``:
        the scores at or above each one's near band): their ranks and exact scores. Parts of
        a block call this at the same time, each for its own items."""
        assert self.settle is not None
        slot = np.searchsorted(which, member_item)
        self.above[which], keys = settle_items(self.settle.scores, self.settle.n_gallery,
                                               self.item_query[which], self.items[which], far,
                                               slot, member_gallery)
        self.settled[which] = keys.astype(np.float32)

    def _keep_band(self, item: np.ndarray, values: np.ndarray, gallery: np.ndarray,
                   length: np.ndarray, earlier: np.ndarray) -> None:
        """Keep the band scores of item ``item[i]`` in this chunk (``length[i]`` of them,
        consecutive in ``values`` and ``gallery``), copied (the block's arrays are reused)."""
        if not len(item):
            return
        self.band.append((np.repeat(item, length), np.array(values, dtype=np.float32),
                          np.repeat(np.asarray(earlier, dtype=bool), length),
                          np.asarray(gallery, dtype=np.int64)))

    def _keep_sorted_band(self, scores: np.ndarray, start: int, stop: int, ia: int,
                          kept: np.ndarray, rows: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                          items: np.ndarray) -> None:
        """Keep the band scores of the items ``kept`` (not in this chunk) from the unsorted
        block rows: per row, the scores inside any of its items' bands, found in one pass."""
        item_parts, value_parts, gallery_parts, lengths = [], [], [], []
        for r in np.unique(rows[kept]):
            mine = kept[rows[kept] == r]
            row = scores[r]
            by_lo = np.argsort(lo[mine])
            lows, highs = lo[mine][by_lo], np.maximum.accumulate(hi[mine][by_lo])
            # only the scores between the lowest band's start and the highest band's end
            near = np.flatnonzero((row >= lows[0]) & (row <= highs[-1]))
            # inside some band: a band starting at or below it that ends at or above it
            reach = np.searchsorted(lows, row[near], side="right")
            cols = near[(reach > 0) & (row[near] <= highs[np.maximum(reach - 1, 0)])]
            order = np.lexsort((cols, row[cols]))
            cols, vals = cols[order], row[cols[order]]
            a = np.searchsorted(vals, lo[mine], side="left")
            b = np.searchsorted(vals, hi[mine], side="right")
            at = _ranges(a, b - a)
            item_parts.append(ia + mine)
            lengths.append(b - a)
            value_parts.append(vals[at])
            gallery_parts.append(cols[at] + start)
        length = np.concatenate(lengths)
        item = np.concatenate(item_parts)
        self._keep_band(item, np.concatenate(value_parts), np.concatenate(gallery_parts),
                        length, stop <= self.items[item])

    def finish(self, full_row: Callable[[int], np.ndarray]) -> Counted:
        """Return the ranks, scores and tie windows of all items: counts above plus the
        exactly resolved band.

        A band score counts when it is above the item's exact score, or equal to it in a
        chunk before the item; for the tie window, when it is at or above the window's upper
        edge, or above its lower edge. An item whose exact score fell outside its band (the
        estimate missed), or whose tie window reaches beyond it, has its whole query counted
        again from its score row. With exact scores, an item with members (scores inside
        its window) is then settled among them.
        """
        ranks = self.above.copy()
        exact = self.exact
        above, through = self.win_above.copy(), self.win_through.copy()
        if not self.multi:
            return Counted(ranks, _scores(exact, self.settled), above, through)
        lo = self.estimate_val - np.float32(BAND)
        hi = self.estimate_val + np.float32(BAND)
        upper, lower = window_edges(exact, self.tolerance)
        reach_up, reach_lo = (np.maximum(upper, band_edges(exact)[0]),
                              np.minimum(lower, band_edges(exact)[1]))
        missed = self.estimated & ~((lo <= exact) & (exact <= hi) & (lo <= reach_lo)
                                    & (reach_up <= hi))
        above += self.elsewhere
        through += self.elsewhere
        near_above = self.near_above + self.elsewhere
        near_through = self.near_through + self.elsewhere
        b_up, b_lo = band_edges(exact)
        band_item = np.zeros(0, dtype=np.int64)
        band_gallery = np.zeros(0, dtype=np.int64)
        if self.band:
            item, values, earlier, gallery = (np.concatenate(part)
                                              for part in zip(*self.band, strict=True))
            score = exact[item]
            counted = (values > score) | (earlier & (values == score))
            ranks += np.bincount(item[counted], minlength=len(ranks))
            above += np.bincount(item[values >= upper[item]], minlength=len(ranks))
            through += np.bincount(item[values > lower[item]], minlength=len(ranks))
            near_above += np.bincount(item[values >= b_up[item]], minlength=len(ranks))
            near_through += np.bincount(item[values > b_lo[item]], minlength=len(ranks))
            near = (values > b_lo[item]) & (values < b_up[item])
            band_item, band_gallery = item[near], gallery[near]
        self.win_above, self.win_through, self.above = above, through, ranks
        if self.settle is not None:
            which = np.flatnonzero(~missed & (near_through - near_above > 1))
            if len(which):
                own = [(i, g) for i, g in self.members] + [(band_item, band_gallery)]
                m_item = np.concatenate([i for i, _ in own] + [which])
                m_gallery = np.concatenate([g for _, g in own] + [self.items[which]])
                keep = np.isin(m_item, which)
                self._settle(which, m_item[keep], m_gallery[keep], near_above[which])
        for q in np.unique(self.item_query[missed]):
            a, b = self.offsets[q], self.offsets[q + 1]
            again = counts_in_row(full_row(int(q)), self.items[a:b], self.tolerance,
                                  self.settle, int(q))
            ranks[a:b], exact[a:b] = again.ranks, again.scores
            above[a:b], through[a:b] = again.above, again.through
            self.settled[a:b] = np.nan
        return Counted(ranks, _scores(exact, self.settled), above, through)


def _in_bands(scores: np.ndarray, rows: np.ndarray, lo: np.ndarray,
              hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (which band, column) of every score of row ``rows[i]`` strictly inside the
    band ``lo[i] .. hi[i]``, for each i: one pass over each row, however many bands it has
    (a score in several overlapping bands is listed for each)."""
    which, cols = [], []
    order = np.argsort(rows, kind="stable")
    starts = np.flatnonzero(np.r_[True, rows[order][1:] != rows[order][:-1]])
    for a, b in zip(starts.tolist(), [*starts[1:].tolist(), len(order)], strict=True):
        mine = order[a:b]
        row = scores[rows[mine[0]]]
        inside = (row > lo[mine].min()) & (row < hi[mine].max())
        found = np.flatnonzero(inside)
        values = row[found]
        for i in mine.tolist():
            keep = found[(values > lo[i]) & (values < hi[i])]
            which.append(np.full(len(keep), i, dtype=np.int64))
            cols.append(keep)
    if not cols:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(which), np.concatenate(cols)


def _scores(exact: np.ndarray, settled: np.ndarray) -> np.ndarray:
    """Return the items' scores: the exact one where an item was settled."""
    return np.where(np.isnan(settled), exact, settled).astype(np.float32)


def _ranges(first: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Return the positions ``first[i] .. first[i] + length[i] - 1`` of every i, in order."""
    first = np.asarray(first, dtype=np.int64)
    length = np.asarray(length, dtype=np.int64)
    if not len(length):
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(length)
    return np.arange(ends[-1], dtype=np.int64) + np.repeat(first - (ends - length), length)
