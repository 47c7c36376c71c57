"""Gallery-to-gallery neighbours by blocked matrix products (never a gallery x gallery matrix).

The label audit (:mod:`irviewer.core.audit`) asks, for a few chosen gallery images, which
other gallery images are most like them, and for the whole gallery, which pairs are
near-identical. Both run over the L2-normalised descriptors that a
:class:`~irviewer.core.ranking.Ranking` made from (``Ranking.descriptors`` and
``Ranking.gallery_inv_norms``), in blocks of rows against chunks of the gallery, so memory
stays bounded by ``BLOCK_BYTES`` whatever the gallery's size.

Near-identical pairs are found by random-hyperplane locality-sensitive hashing (Charikar,
STOC 2002: two unit vectors at angle theta fall on the same side of a random hyperplane with
probability 1 - theta / pi), with several hash tables, and every candidate pair is then checked
with its exact cosine.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from irviewer.core.ranking import Ranking
from irviewer.core.ranking.gallery import gallery_exact_scores
from irviewer.core.ranking.settle import NearCut, NearCuts, settle_top_lists
from irviewer.core.ranking.top_k import below_near, merge_sorted_near

#: Bytes of one block x chunk similarity matrix.
BLOCK_BYTES = 64 * 2**20
#: Gallery rows per chunk.
CHUNK_ROWS = 8192
#: Entries left out near the neighbour lists' cut kept while the chunks pass (20 bytes each);
#: past this (a flood of equal cosines) the lists concerned are made again from their rows.
NEAR_CUT_ENTRIES = 1 << 22
#: Bytes of the two blocks of vectors :func:`pair_cosines` gathers at a time (small enough to
#: be reused from the heap rather than mapped afresh for every block).
PAIR_BYTES = 4 * 2**20
#: A normalised gallery up to this size is made once and kept while the audit runs.
CACHE_BYTES = 512 * 2**20


@dataclass
class UnitGallery:
    """The L2-normalised gallery of one ranking, read chunk by chunk.

    ``active`` marks the gallery images the ranking ranks (not removed for every query). When
    the active images' normalised vectors fit in ``CACHE_BYTES`` they are made once and kept
    (the audit reads them many times); a larger gallery (a memory-mapped million-image one) is
    normalised chunk by chunk on every read, so memory stays bounded.
    """

    ranking: Ranking
    active: np.ndarray
    _full: np.ndarray | None = None  # the active images' unit vectors, in dataset order
    _slot: np.ndarray | None = None  # gallery index -> row of _full (-1: inactive)
    _active_idx: np.ndarray | None = None

    @property
    def n(self) -> int:
        """Return the number of gallery images."""
        return len(self.active)

    @property
    def dim(self) -> int:
        """Return the vectors' dimension (a unit gallery is made of a ranking's descriptors
        only, :func:`unit_gallery`)."""
        aligned = self.ranking.descriptors
        assert aligned is not None
        return aligned.dim

    @property
    def active_indices(self) -> np.ndarray:
        """Return the active gallery images' indices, ascending."""
        if self._active_idx is None:
            self._active_idx = np.flatnonzero(self.active)
        return self._active_idx

    def rows(self, indices: np.ndarray) -> np.ndarray:
        """Return the unit float32 vectors of the gallery images ``indices`` (dataset order)."""
        idx = np.asarray(indices, dtype=np.int64)
        if self._cached() is None:
            return self._read(idx)
        assert self._full is not None and self._slot is not None
        slot = self._slot[idx]
        if (slot >= 0).all():
            return self._full[slot]
        out = np.empty((len(idx), self.dim), dtype=np.float32)
        kept = slot >= 0
        out[kept] = self._full[slot[kept]]
        out[~kept] = self._read(idx[~kept])
        return out

    def active_chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield (gallery indices ascending, their unit vectors) of the active images, chunk by
        chunk: the inactive images are left out, not masked."""
        active = self.active_indices
        full = self._cached()
        for start in range(0, len(active), CHUNK_ROWS):
            stop = min(len(active), start + CHUNK_ROWS)
            yield active[start:stop], (full[start:stop] if full is not None
                                       else self._read(active[start:stop]))

    def _read(self, idx: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Return the unit vectors of gallery images ``idx``, written into ``out`` if given
        (gathered straight into it when the file holds float32: no second copy)."""
        aligned = self.ranking.descriptors
        assert aligned is not None and self.ranking.gallery_inv_norms is not None
        rows = idx if aligned.gallery_rows is None else aligned.gallery_rows[idx]
        inv = self.ranking.gallery_inv_norms[idx][:, None]
        source = aligned.gallery
        if out is None:
            return np.asarray(source[rows], dtype=np.float32) * inv
        if isinstance(source, np.ndarray) and source.dtype == np.float32:
            np.take(source, rows, axis=0, out=out)
        else:
            out[...] = np.asarray(source[rows], dtype=np.float32)
        np.multiply(out, inv, out=out)
        return out

    def _cached(self) -> np.ndarray | None:
        active = self.active_indices
        if self._full is None and len(active) * self.dim * 4 <= CACHE_BYTES:
            full = np.empty((len(active), self.dim), dtype=np.float32)
            for start in range(0, len(active), CHUNK_ROWS):
                stop = min(len(active), start + CHUNK_ROWS)
                self._read(active[start:stop], out=full[start:stop])
            slot = np.full(self.n, -1, dtype=np.int64)
            slot[active] = np.arange(len(active))
            self._full, self._slot = full, slot
        return self._full


def unit_gallery(ranking: Ranking) -> UnitGallery | None:
    """Return the ranking's unit gallery, or None when it was read from a file (no vectors)."""
    if ranking.descriptors is None or ranking.gallery_inv_norms is None:
        return None
    n = len(ranking.gallery_inv_norms)
    active = np.ones(n, dtype=bool)
    if ranking.ignored_mask is not None:
        active &= ~ranking.ignored_mask
    return UnitGallery(ranking, active)


@dataclass(frozen=True)
class Neighbours:
    """Nearest active gallery images of chosen rows, and counts above per-row thresholds.

    ``indices`` / ``sims``: (rows, k) gallery indices and cosines, most similar first (-1 /
    -inf padding); ``above``: (rows, thresholds) how many active gallery images other than
    the row's own image have a cosine strictly above each of the row's thresholds.
    """

    indices: np.ndarray
    sims: np.ndarray
    above: np.ndarray


def nearest(gallery: UnitGallery, items: np.ndarray, k: int,
            thresholds: np.ndarray | None = None) -> Neighbours:
    """Return the ``k`` most similar active gallery images of each gallery image ``items``
    (itself excluded), and how many lie above each of the row's thresholds (a (rows, t)
    array of cosines, +inf where unused; None: no counting).

    Blocked: rows in blocks, the active gallery images in chunks. Each chunk keeps only the
    scores reaching the row's running k-th best (after the first chunk, a handful per row), so
    no chunk is sorted or partitioned whole. The order is the ranking's: near ties by exact
    cosine, equal ones in gallery order (:mod:`irviewer.core.ranking.settle`).
    """
    items = np.asarray(items, dtype=np.int64)
    n_rows = len(items)
    thr = (np.full((n_rows, 1), np.inf, dtype=np.float32) if thresholds is None
           else np.asarray(thresholds, dtype=np.float32).reshape(n_rows, -1))
    k = max(1, min(k, int(gallery.active.sum())))
    top_idx = np.full((n_rows, k), -1, dtype=np.int64)
    top_sim = np.full((n_rows, k), -np.inf, dtype=np.float32)
    near_cut = NearCuts(NEAR_CUT_ENTRIES)  # left out near each list's cut, to settle it with
    left_out = np.full(n_rows, -np.inf, dtype=np.float32)  # past the limit: rows again
    above = np.zeros(thr.shape, dtype=np.int64)
    block = max(1, BLOCK_BYTES // (4 * CHUNK_ROWS))
    # one score buffer for every block x chunk, rather than a fresh 40 MB array (mapped and
    # faulted in anew) for each
    buffer = np.empty(min(n_rows, block) * min(CHUNK_ROWS, len(gallery.active_indices)),
                      dtype=np.float32)
    for a in range(0, n_rows, block):
        b = min(n_rows, a + block)
        vecs = gallery.rows(items[a:b])
        for cols, g in gallery.active_chunks():
            sims = np.matmul(vecs, g.T, out=buffer[:(b - a) * len(cols)].reshape(b - a, len(cols)))
            at = np.minimum(np.searchsorted(cols, items[a:b]), len(cols) - 1)
            own = cols[at] == items[a:b]
            sims[np.flatnonzero(own), at[own]] = -np.inf
            if thresholds is not None:
                for t in range(thr.shape[1]):
                    above[a:b, t] += np.count_nonzero(sims > thr[a:b, t, None], axis=1)
            near = _merge(top_idx[a:b], top_sim[a:b], sims, cols)
            if len(near.rows) and not near_cut.keep(
                    NearCut(near.rows + a, near.indices, near.values)):
                np.maximum.at(left_out, near.rows + a, near.values)
    aligned = gallery.ranking.descriptors
    assert aligned is not None
    whole = gallery.ranking.exact_products is not None
    settle_top_lists(gallery_exact_scores(aligned, whole), gallery.n, items, top_idx, top_sim,
                     left_out, lambda rows: _full_rows(gallery, items[rows]),
                     beyond=near_cut.joined())
    top_idx[~np.isfinite(top_sim)] = -1
    return Neighbours(top_idx, top_sim, above)


def _full_rows(gallery: UnitGallery, items: np.ndarray) -> np.ndarray:
    """Return the cosines of gallery images ``items`` with every gallery image, as
    :func:`nearest` computes them (-inf for an image itself and the inactive ones)."""
    vecs = gallery.rows(items)
    out = np.full((len(items), gallery.n), -np.inf, dtype=np.float32)
    for cols, g in gallery.active_chunks():
        out[:, cols] = vecs @ g.T
    out[np.arange(len(items)), items] = -np.inf
    return out


def _merge(top_idx: np.ndarray, top_sim: np.ndarray, sims: np.ndarray,
           cols: np.ndarray) -> NearCut:
    """Merge a chunk's scores (its columns the gallery images ``cols``, ascending) into the
    running top-k lists, in place, by :func:`~irviewer.core.ranking.top_k.merge_sorted_near`
    (ties: gallery order, since the chunks come in gallery order); return the entries left
    out in the near band of their list's new last entry.

    Only scores reaching the row's k-th best so far, less its near band, are candidates (so the
    near ties of a list's last entry are all seen, for the settling); before k are known,
    the (k+1)-th best of a sample of the chunk's columns (a row's own image may be one) is
    the bar: at most the row's k-th best in the chunk, so no top-k score is lost, and a
    chunk contributes about k * chunk / sample candidates per row, never all."""
    k = top_idx.shape[1]
    floor = top_sim[:, -1].copy()
    if not np.isfinite(floor).all():
        m = min(sims.shape[1], max(1024, 4 * k))
        if m > k:
            floor = np.maximum(floor, np.partition(sims[:, :m], m - k - 1, axis=1)[:, m - k - 1])
    # the lowest finite float32 as the bar keeps the -inf (a row's own image) out
    floor = np.maximum(below_near(floor), np.finfo(np.float32).min)
    rows, at = np.divmod(np.flatnonzero(sims >= floor[:, None]), sims.shape[1])  # 5x nonzero
    if not len(rows):
        return NearCut.join([])
    counts = np.bincount(rows, minlength=len(top_idx))
    width = int(counts.max())
    cand_idx = np.full((len(top_idx), width), -1, dtype=np.int64)
    cand_sim = np.full((len(top_idx), width), -np.inf, dtype=np.float32)
    slot = np.arange(len(rows)) - np.repeat(np.cumsum(counts) - counts, counts)
    cand_idx[rows, slot] = cols[at]
    cand_sim[rows, slot] = sims[rows, at]
    return merge_sorted_near(top_idx, top_sim, cand_idx, cand_sim)


def pair_cosines(gallery: UnitGallery, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return the cosine of each gallery pair (a[i], b[i]), in blocks."""
    out = np.empty(len(a), dtype=np.float32)
    step = max(1, PAIR_BYTES // (8 * max(gallery.dim, 1)))
    for s in range(0, len(a), step):
        va, vb = gallery.rows(a[s:s + step]), gallery.rows(b[s:s + step])
        out[s:s + step] = np.einsum("ij,ij->i", va, vb)
    return out


def near_identical_pairs(gallery: UnitGallery, min_cosine: float, tables: int = 16,
                         bits: int = 16, max_bucket: int = 256,
                         seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Return (a, b, cosine, buckets skipped): active gallery pairs a < b whose cosine is at
    least ``min_cosine``, found by random-hyperplane LSH (Charikar 2002) and checked exactly.

    A pair at cosine 0.98 shares a bucket of one 16-bit table with probability about 0.35, so
    sixteen tables miss it with probability about 0.001; a random pair shares one with
    probability 2**-16, so few pairs need their exact cosine. Buckets larger than ``max_bucket``
    (a dense cluster, not duplicates) are skipped and counted.
    """
    aligned = gallery.ranking.descriptors
    assert aligned is not None
    rng = np.random.default_rng(seed)
    planes = rng.standard_normal((aligned.dim, tables * bits)).astype(np.float32)
    active = gallery.active_indices
    codes = np.empty((len(active), tables), dtype=np.int64)
    weights = (1 << np.arange(bits, dtype=np.int64))
    done = 0
    for cols, g in gallery.active_chunks():
        signs = (g @ planes) > 0
        codes[done:done + len(cols)] = (signs.reshape(len(cols), tables, bits)
                                        * weights).sum(axis=2)
        done += len(cols)
    found: list[np.ndarray] = []
    skipped = 0
    for t in range(tables):
        keys = codes[:, t]
        order = np.argsort(keys, kind="stable")
        sk, members = keys[order], active[order]
        starts = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]])
        sizes = np.diff(np.r_[starts, len(sk)])
        big = sizes > max_bucket
        skipped += int(big.sum())
        usable = ~np.repeat(big, sizes)
        # Pair each member with the one d places later in the same bucket, for every d.
        for d in range(1, int(sizes[~big].max(initial=1))):
            same = (sk[d:] == sk[:-d]) & usable[d:]
            if not same.any():
                break
            a, b = members[:-d][same], members[d:][same]
            found.append(np.minimum(a, b) * gallery.n + np.maximum(a, b))
    if not found:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0, dtype=np.float32), skipped
    keys_all = np.unique(np.concatenate(found))
    arr = np.stack([keys_all // gallery.n, keys_all % gallery.n], axis=1)
    cos = pair_cosines(gallery, arr[:, 0], arr[:, 1])
    keep = cos >= min_cosine
    return arr[keep, 0], arr[keep, 1], cos[keep], skipped
