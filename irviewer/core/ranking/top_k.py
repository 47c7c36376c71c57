"""Top-K selection over blocks of scores: the candidates of a block (every score at or above a
per-row threshold) sorted once by (row, descending score, gallery index) as packed int64
keys, and the merge of a block's best into the running top-K lists (see
:mod:`irviewer.core.ranking`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irviewer.core.ranking.settle import NearCut, band_edges

#: Rows at most this many times longer than K are kept whole (no sampled threshold).
SMALL_ROW = 4


@dataclass(frozen=True)
class Candidates:
    """The scores of one block that can matter, sorted by (row, descending score, column).

    ``keys`` pack (row, descending score, column) into int64 so that one sort orders them
    and one ``searchsorted`` finds where any (row, score, column) would go; ``starts[r]`` is
    where row ``r``'s candidates begin (``starts[-1]`` is their number); ``threshold[r]``
    the score at or above which every score of row ``r`` is a candidate.
    """

    keys: np.ndarray
    cols: np.ndarray
    values: np.ndarray
    starts: np.ndarray
    col_bits: int
    threshold: np.ndarray

    def position(self, rows: np.ndarray, values: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Return, per (row, score, column), how many of the row's candidates order before
        it: higher scores, and equal scores at an earlier column."""
        keys = pack(rows, descending_keys(values), cols, self.col_bits)
        return np.searchsorted(self.keys, keys) - self.starts[rows]

    def at_least(self, rows: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Return, per (row, score), the position just after the row's candidates that are
        at least that score (relative to the row's start)."""
        keys = pack(rows, descending_keys(values) + 1, np.zeros(len(rows), np.int64),
                     self.col_bits)
        return np.searchsorted(self.keys, keys) - self.starts[rows]


def pack(rows: np.ndarray, descending: np.ndarray, cols: np.ndarray,
          col_bits: int) -> np.ndarray:
    return (rows << (32 + col_bits)) | (descending << col_bits) | cols


def descending_keys(values: np.ndarray) -> np.ndarray:
    """Return int64 keys in [0, 2**32) that sort float32 ``values`` in descending order."""
    return np.int64(0xFFFFFFFF) - ordered_keys(values)


def select(scores: np.ndarray, running: np.ndarray, floor: np.ndarray) -> Candidates:
    """Return the block's candidates: per row, every score at or above a threshold that is
    at most ``floor`` (the lowest score the item counts need) and at most the K-th best
    score of the row merged with its running top-K list ``running`` (descending, -inf
    padded) less its near band (:func:`below_near`), so that the new top-K lies among them,
    and every score that could be a near tie of its last entry.

    The top-K part is the running list's K-th score when the list is full; otherwise a
    sample's estimate of the row's K-th score (every 8th or 2nd column, its ``2K/step``-th
    best score), checked afterwards: a row with fewer than K candidates above an estimate
    is cut again at its exact K-th score.
    """
    n_rows, n = scores.shape
    k = running.shape[1]
    if k == 0:
        return candidates(scores, floor)
    kept = running[:, k - 1]
    estimated = np.full(n_rows, -np.inf, dtype=np.float32)
    if n > SMALL_ROW * k and not np.isfinite(kept).all():
        step = 8 if n >= 32 * k else 2
        sample = scores[:, ::step]
        m = sample.shape[1]
        j = min(m, -(-2 * k * m // n))
        estimated = np.partition(sample, m - j, axis=1)[:, m - j]
    top = below_near(np.maximum(kept, estimated))
    threshold = np.minimum(top, floor)
    found = candidates(scores, threshold)
    short = (threshold > kept) & (np.diff(found.starts) < min(k, n))
    if short.any():  # the sample misled: cut these rows at their exact K-th score
        exact_kth = np.partition(scores[short], n - k, axis=1)[:, n - k]
        threshold[short] = np.minimum(threshold[short], below_near(exact_kth))
        found = candidates(scores, threshold)
    return found


def below_near(values: np.ndarray) -> np.ndarray:
    """Return float32 values below which no score is a near tie of ``values`` (the lower
    edges of their near bands, :func:`~irviewer.core.ranking.settle.band_edges`; -inf
    stays -inf)."""
    return band_edges(values)[1]


def candidates(scores: np.ndarray, threshold: np.ndarray) -> Candidates:
    """Return every score at or above its row's ``threshold``, sorted (see Candidates)."""
    n_rows, n = scores.shape
    flat = np.flatnonzero(scores >= threshold[:, None])
    rows = flat // n
    cols = flat - rows * n
    col_bits = bits(n)
    keys = pack(rows, descending_keys(scores.reshape(-1)[flat]), cols, col_bits)
    keys.sort()
    rows = keys >> (32 + col_bits)
    cols = keys & ((1 << col_bits) - 1)
    starts = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=starts[1:])
    return Candidates(keys, cols, scores[rows, cols], starts, col_bits,
                      np.asarray(threshold, dtype=np.float32))


def merge_top(top_idx: np.ndarray, top_val: np.ndarray, found: Candidates, offset: int,
              first: bool, near: bool = False) -> tuple[np.ndarray, NearCut | None]:
    """Merge a block's best candidates into the running top-K lists, in place; return, per
    row, the best score that is not in the list after the merge (-inf: none was offered),
    and with ``near`` the entries left out by this merge whose score is in the near band of
    the list's new last entry (:class:`NearCut`, rows relative to the block; else None).

    The candidates are sorted by descending score with equal scores in gallery order, so
    each row's first K are its block top-K. The running lists hold earlier gallery indices
    than the block, so a stable sort on the score after concatenating (running, block) keeps
    that order across blocks too; the first block is the running list.
    """
    k = top_idx.shape[1]
    left_out = np.full(top_idx.shape[0], -np.inf, dtype=np.float32)
    if k == 0 or not len(found.cols):
        return left_out, (NearCut.join([]) if near else None)
    take = found.starts[:-1, None] + np.arange(k)
    valid = take < found.starts[1:, None]
    take = np.where(valid, take, 0)
    idx = np.where(valid, found.cols[take] + offset, -1)
    val = np.where(valid, found.values[take], np.float32(-np.inf)).astype(np.float32)
    beyond = found.starts[:-1] + k
    more = beyond < found.starts[1:]
    left_out[more] = found.values[beyond[more]]
    pushed = None
    if first:
        top_idx[:] = idx
        top_val[:] = val
    else:
        best, pushed = _merge(top_idx, top_val, idx, val, near)
        np.maximum(left_out, best, out=left_out)
    if not near:
        return left_out, None
    lower = below_near(top_val[:, -1])
    rows = np.arange(len(left_out))
    # The block's candidates after its first K that are still in the band (descending).
    length = np.maximum(found.at_least(rows, np.nextafter(lower, np.float32(np.inf))) - k, 0)
    ends = np.cumsum(length)
    at = np.arange(ends[-1] if len(ends) else 0) + np.repeat(beyond - (ends - length), length)
    parts = [NearCut(np.repeat(rows, length), found.cols[at] + offset, found.values[at])]
    if pushed is not None:  # the merge's own left-outs (the running lists' former entries)
        parts.append(_in_band(pushed, lower))
    return left_out, NearCut.join(parts)


def merge_sorted_near(top_idx: np.ndarray, top_val: np.ndarray, idx: np.ndarray,
                      val: np.ndarray) -> NearCut:
    """Merge new candidates (``idx``, ``val``: per row in gallery order) into the running
    top-k lists (``top_idx``, ``top_val``: descending), in place: the one top-K merge of
    the ranking and of the audit's gallery neighbours. Return the entries the merge left out
    whose score is in the near band of their list's new last entry (:class:`NearCut`, rows
    of these lists): what :func:`~irviewer.core.ranking.settle.settle_top_lists` settles a
    list's cut with.

    Ties: equal scores keep gallery order. The running lists hold only gallery indices
    earlier than the new candidates' (blocks and chunks come in gallery order), so a
    stable sort on the descending score after concatenating (running, new) is that order;
    -1 / -inf padding sorts last.
    """
    _, pushed = _merge(top_idx, top_val, idx, val)
    if pushed is None:
        return NearCut.join([])
    return _in_band(pushed, below_near(top_val[:, -1]))


def _in_band(pushed: tuple[np.ndarray, np.ndarray], lower: np.ndarray) -> NearCut:
    """Return the entries a merge left out (``pushed``: gallery indices and scores per row)
    whose score is above their row's ``lower`` edge."""
    out_idx, out_val = pushed
    r, j = np.divmod(np.flatnonzero(out_val > lower[:, None]), out_val.shape[1])
    return NearCut(r, out_idx[r, j], out_val[r, j])


def _merge(top_idx: np.ndarray, top_val: np.ndarray, idx: np.ndarray, val: np.ndarray,
           keep: bool = True) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
    """Do :func:`merge_sorted_near`'s merge; return its best left-out score per row and,
    with ``keep``, the entries it left out, (gallery indices, scores) per row in descending
    order (None: none, or not kept)."""
    k = top_idx.shape[1]
    cand_idx = np.concatenate([top_idx, idx], axis=1)
    cand_val = np.concatenate([top_val, val], axis=1)
    order = np.argsort(-cand_val, axis=1, kind="stable")
    top_idx[:] = np.take_along_axis(cand_idx, order[:, :k], axis=1)
    top_val[:] = np.take_along_axis(cand_val, order[:, :k], axis=1)
    if order.shape[1] <= k:
        return np.full(len(top_idx), -np.inf, dtype=np.float32), None
    if not keep:  # the ranking without near ties to settle: the best score alone
        return np.take_along_axis(cand_val, order[:, k:k + 1], axis=1)[:, 0], None
    rest = order[:, k:]
    out_val = np.take_along_axis(cand_val, rest, axis=1)
    return out_val[:, 0], (np.take_along_axis(cand_idx, rest, axis=1), out_val)


def ordered_keys(values: np.ndarray) -> np.ndarray:
    """Return int64 keys that sort exactly like the float32 ``values`` (-0.0 equals 0.0)."""
    bits = (np.asarray(values, dtype=np.float32) + np.float32(0.0)).view(np.uint32)
    bits = bits.astype(np.int64)
    negative = bits >= 0x80000000
    return np.where(negative, 0xFFFFFFFF - bits, bits + 0x80000000)


def bits(n: int) -> int:
    """Return the number of bits that hold 0..n-1 (at least 1)."""
    return max(1, (int(n) - 1).bit_length())
