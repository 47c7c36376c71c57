"""Exact rank counting: the 0-based stable rank of every item of interest, counted block by
block without sorting whole rows (rank = #(scores above) + #(equal scores earlier in the
gallery)); with a gallery in several chunks, from an estimate's narrow band resolved at the
end (see :mod:`irviewer.core.ranking`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from irviewer.core.descriptors import AlignedDescriptors
from irviewer.core.ranking.top_k import Candidates
from irviewer.core.tie_windows import window_edges, windows_in_row
from irviewer.core.ties import TIE_TOLERANCE

#: Scores closer than this to an item's estimated score are resolved exactly (multi-chunk only).
BAND = 1e-5


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


class CountState:
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

    def count(self, found: Candidates, qa: int, qb: int, start: int, stop: int) -> None:
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

    def finish(self, full_row: Callable[[int], np.ndarray]) -> Counted:
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
            return Counted(ranks, exact, above, through)
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
        return Counted(ranks, exact, above, through)


@dataclass(frozen=True)
class Counted:
    """What :meth:`CountState.finish` found for every item of interest: ``ranks``,
    ``scores`` and the tie windows ``above`` / ``through``
    (:mod:`irviewer.core.tie_windows`)."""

    ranks: np.ndarray
    scores: np.ndarray
    above: np.ndarray
    through: np.ndarray
