"""Nearest neighbours by blocked matrix products: never an all-pairs matrix in memory.

Re-ranking needs, for every image, only its first few neighbours: k-reciprocal encoding the
first k1 + 1 of every query and gallery image among all of them, database-side augmentation
the first k of every gallery image among the others, query expansion the first n gallery
images of each query. :func:`iter_self_top` finds them among the rows of one matrix of unit
vectors, one block pair (I, J) with I <= J at a time: the product of the two blocks serves
the rows of I (against J) and, transposed, the rows of J (against I), so each cosine is
computed once, half the multiply of the full square. :func:`cross_top` does the same for
queries against a gallery.

Each row keeps its best ``L`` (descending cosine; near ties in exact order, equal ones in
index order: :mod:`irviewer.core.ranking.settle`, so the lists do not depend on the machine)
while the blocks go by. A block offers a row only the cosines at or above the row's current
L-th best less its near band (so that the near ties of its last entry are seen): a handful
once the row has seen a few blocks; before the row has L, the bar is the L-th best of a
sample of the block's columns, which is never above the block's own L-th best, so
nothing that belongs is missed. The blocks are :data:`BLOCK_ROWS` square: 64 MB of float32.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass

import numpy as np

from irviewer.core.exact_scores import exact_pair_cosines
from irviewer.core.ranking.settle import ExactScores, settle_top_lists
from irviewer.core.ranking.top_k import below_near

#: Rows (and columns) of one block of the blocked product.
BLOCK_ROWS = 4096
#: Columns (or rows) sampled to bound a row's L-th best before it has seen L cosines.
SAMPLE = 1024

#: What the blocked searches yield while they run: (block pairs done, block pairs in all).
Searching = Generator[tuple[int, int], None, "Top"]


@dataclass(frozen=True)
class Top:
    """The best ``L`` neighbours of every row.

    ``indices`` (rows, L) int64 column indices, best first (-1 pads a row with fewer than L
    candidates); ``cosines`` (rows, L) float32 (-inf padding); ``row_min`` the smallest
    cosine of each row over every column (its own column included), or None when not asked.
    """

    indices: np.ndarray
    cosines: np.ndarray
    row_min: np.ndarray | None = None


class _Best:
    """The running best L of every row; blocks offer candidates with :meth:`offer`."""

    def __init__(self, n_rows: int, width: int, n_cols: int) -> None:
        self.n_cols = n_cols
        self.idx = np.full((n_rows, width), -1, dtype=np.int64)
        self.val = np.full((n_rows, width), -np.inf, dtype=np.float32)
        self.left_out = np.full(n_rows, -np.inf, dtype=np.float32)  # best cosine not kept

    def settle(self, pairs: ExactScores, rows_of: Callable[[np.ndarray], np.ndarray]) -> None:
        """Order the lists' near ties by exact cosine (``pairs``: (row, column) pairs), a
        list cut inside a run of them again from its whole row (``rows_of(rows)``)."""
        settle_top_lists(pairs, self.n_cols, np.arange(len(self.idx)), self.idx, self.val,
                         self.left_out, rows_of)

    def bar(self, rows: slice, block: np.ndarray, axis: int) -> np.ndarray:
        """Return, per row of ``rows`` (the block's rows when ``axis`` is 1, its columns
        when 0), the lowest cosine that can still enter the row's best L: its L-th best so
        far, or for a row that has fewer, the L-th best of a sample of the block."""
        width = self.idx.shape[1]
        floor = self.val[rows, -1].copy()
        open_rows = ~np.isfinite(floor)
        if open_rows.any():
            n = block.shape[axis]
            m = min(n, max(SAMPLE, 8 * width))
            if m > width:
                sample = block[:, :m] if axis == 1 else block[:m, :].T
                kth = np.partition(sample, m - width, axis=1)[:, m - width]
                floor[open_rows] = kth[open_rows]
        return below_near(floor)  # the near ties of a list's last entry are seen too

    def offer(self, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray,
              touched: slice) -> None:
        """Merge candidates (row, column, cosine) into the best L of the rows ``touched``
        (every candidate's row is in it): descending cosine, equal ones by column."""
        if not len(rows):
            return
        width = self.idx.shape[1]
        old_idx = self.idx[touched]
        old_val = self.val[touched]
        keep = old_idx >= 0
        old_rows = np.broadcast_to(np.arange(touched.start, touched.stop)[:, None],
                                   old_idx.shape)[keep]
        all_rows = np.concatenate([old_rows, rows])
        all_cols = np.concatenate([old_idx[keep], cols])
        all_vals = np.concatenate([old_val[keep], vals])
        all_rows, all_cols, all_vals = _sorted(all_rows, all_cols, all_vals, touched.start,
                                               self.n_cols)
        counts = np.bincount(all_rows - touched.start, minlength=touched.stop - touched.start)
        starts = np.cumsum(counts) - counts
        slot = np.arange(len(all_rows)) - np.repeat(starts, counts)
        take = slot < width
        np.maximum.at(self.left_out, all_rows[~take], all_vals[~take])
        self.idx[touched] = -1
        self.val[touched] = -np.inf
        self.idx[all_rows[take], slot[take]] = all_cols[take]
        self.val[all_rows[take], slot[take]] = all_vals[take]


def _sorted(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, first_row: int,
            n_cols: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (rows, cols, vals) ordered by row, descending value, then column: one sort of
    packed int64 keys (row, value's order bits, column) when they fit in 63 bits, else a
    lexsort (the same order)."""
    row_bits = max(1, int(rows.max() - first_row).bit_length()) if len(rows) else 1
    col_bits = max(1, int(n_cols - 1).bit_length())
    if row_bits + 32 + col_bits > 63:
        order = np.lexsort((cols, -vals, rows))
        return rows[order], cols[order], vals[order]
    bits = (vals.astype(np.float32) + np.float32(0.0)).view(np.uint32).astype(np.int64)
    ascending = np.where(bits >= 0x80000000, 0xFFFFFFFF - bits, bits + 0x80000000)
    keys = ((rows - first_row) << (32 + col_bits)) | ((0xFFFFFFFF - ascending) << col_bits)
    keys |= cols
    keys.sort()
    ascending = 0xFFFFFFFF - ((keys >> col_bits) & 0xFFFFFFFF)
    bits = np.where(ascending >= 0x80000000, ascending - 0x80000000, 0xFFFFFFFF - ascending)
    return ((keys >> (32 + col_bits)) + first_row, keys & ((1 << col_bits) - 1),
            bits.astype(np.uint32).view(np.float32))


def _candidates(block: np.ndarray, bar: np.ndarray, axis: int) -> tuple[np.ndarray,
                                                                        np.ndarray]:
    """Return (block rows, block columns) of the finite cosines at or above the bar of
    their row (``axis`` 1) or of their column (``axis`` 0)."""
    lifted = bar[:, None] if axis == 1 else bar[None, :]
    mask = block >= lifted
    if not np.isfinite(bar).all():
        mask &= block > -np.inf
    rows, columns = np.nonzero(mask)
    return rows, columns


def iter_self_top(vectors: np.ndarray, width: int, diagonal: str,
                  row_min: bool = False, block_rows: int = BLOCK_ROWS,
                  keep: Callable[[int, int, np.ndarray], None] | None = None) -> Searching:
    """Find the best ``width`` neighbours of every row of ``vectors`` (unit float32 rows)
    among all rows, yielding (done, total) block pairs; return the :class:`Top`.

    ``diagonal`` says what a row is to itself: ``"one"`` counts its cosine as exactly 1
    (its distance as exactly 0: k-reciprocal encoding ranks every image first in its own
    list), ``"exclude"`` leaves it out (database-side augmentation sums *other* images).
    With ``row_min`` the smallest cosine of every row is found too; ``keep(a, c, block)`` is
    shown every block product (rows a.., columns c.., c >= a) as it is made. Memory: the (N, width)
    lists and one block pair's product; time: N (N + 1) / 2 x dim multiply-adds.
    """
    n = len(vectors)
    best = _Best(n, width, n)
    low = np.full(n, np.inf, dtype=np.float32) if row_min else None
    starts = list(range(0, n, block_rows))
    total = len(starts) * (len(starts) + 1) // 2
    done = 0
    yield done, total
    for bi, a in enumerate(starts):
        b = min(n, a + block_rows)
        for c in starts[bi:]:
            d = min(n, c + block_rows)
            block = vectors[a:b] @ vectors[c:d].T
            if a == c:
                np.fill_diagonal(block, 1.0 if diagonal == "one" else -np.inf)
            if keep is not None:
                keep(a, c, block)
            if low is not None:
                np.minimum(low[a:b], block.min(axis=1), out=low[a:b])
                if a != c:
                    np.minimum(low[c:d], block.min(axis=0), out=low[c:d])
            _offer_block(best, block, a, c, both=a != c)
            done += 1
            yield done, total

    def whole_rows(rows: np.ndarray) -> np.ndarray:
        out = vectors[rows] @ vectors.T
        out[np.arange(len(rows)), rows] = 1.0 if diagonal == "one" else -np.inf
        return out

    best.settle(_pair_cosines(vectors, vectors), whole_rows)
    return Top(best.idx, best.val, low)


def _offer_block(best: _Best, block: np.ndarray, a: int, c: int, both: bool) -> None:
    """Offer block rows a.. against columns c.. to the rows' lists, and when ``both``, the
    same cosines to the columns' lists (the block transposed)."""
    h, w = block.shape
    rows, cols = _candidates(block, best.bar(slice(a, a + h), block, 1), 1)
    best.offer(rows + a, cols + c, block[rows, cols], slice(a, a + h))
    if both:
        rows, cols = _candidates(block, best.bar(slice(c, c + w), block, 0), 0)
        best.offer(cols + c, rows + a, block[rows, cols], slice(c, c + w))


def cross_top(queries: np.ndarray, gallery: np.ndarray, width: int,
              block_rows: int = BLOCK_ROWS) -> Top:
    """Return the best ``width`` rows of ``gallery`` for every row of ``queries`` (unit
    float32 rows; descending cosine, equal cosines in gallery order), by blocks."""
    n_q = len(queries)
    best = _Best(n_q, width, len(gallery))
    for a in range(0, n_q, block_rows):
        b = min(n_q, a + block_rows)
        for c in range(0, len(gallery), block_rows):
            block = queries[a:b] @ gallery[c:c + block_rows].T
            rows, cols = _candidates(block, best.bar(slice(a, b), block, 1), 1)
            best.offer(rows + a, cols + c, block[rows, cols], slice(a, b))
    best.settle(_pair_cosines(queries, gallery), lambda rows: queries[rows] @ gallery.T)
    return Top(best.idx, best.val)


def _pair_cosines(rows: np.ndarray, cols: np.ndarray) -> ExactScores:
    """Return the exact cosines of (row, column) pairs of two matrices of float32 vectors."""

    def fast(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        x, y = rows[a].astype(np.float64), cols[b].astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (np.einsum("ij,ij->i", x, y) / np.sqrt(np.einsum("ij,ij->i", y, y))
                    / np.sqrt(np.einsum("ij,ij->i", x, x)))

    return ExactScores(fast, lambda a, b: exact_pair_cosines(rows[a], cols[b]))

