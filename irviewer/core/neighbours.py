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

from dataclasses import dataclass

import numpy as np

from irviewer.core.ranking import Ranking

#: Bytes of one block x chunk similarity matrix.
BLOCK_BYTES = 64 * 2**20
#: Gallery rows per chunk.
CHUNK_ROWS = 8192


@dataclass(frozen=True)
class UnitGallery:
    """The L2-normalised gallery of one ranking, read chunk by chunk (a view, no copy).

    ``active`` marks the gallery images the ranking ranks (not removed for every query).
    """

    ranking: Ranking
    active: np.ndarray

    @property
    def n(self) -> int:
        """Return the number of gallery images."""
        return len(self.active)

    def rows(self, indices: np.ndarray) -> np.ndarray:
        """Return the unit float32 vectors of the gallery images ``indices`` (dataset order)."""
        aligned = self.ranking.descriptors
        assert aligned is not None and self.ranking.gallery_inv_norms is not None
        idx = np.asarray(indices, dtype=np.int64)
        rows = idx if aligned.gallery_rows is None else aligned.gallery_rows[idx]
        out = np.asarray(aligned.gallery[rows], dtype=np.float32)
        return out * self.ranking.gallery_inv_norms[idx][:, None]

    def chunks(self):  # type: ignore[no-untyped-def]
        """Yield (start, stop, unit vectors of gallery start..stop)."""
        for start in range(0, self.n, CHUNK_ROWS):
            stop = min(self.n, start + CHUNK_ROWS)
            yield start, stop, self.rows(np.arange(start, stop))


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
    -inf padding); ``above``: per row, how many active gallery images other than the row's
    own image have a cosine strictly above the row's threshold.
    """

    indices: np.ndarray
    sims: np.ndarray
    above: np.ndarray


def nearest(gallery: UnitGallery, items: np.ndarray, k: int,
            thresholds: np.ndarray | None = None) -> Neighbours:
    """Return the ``k`` most similar active gallery images of each gallery image ``items``
    (itself excluded), and how many lie above each row's threshold (cosine; none: +inf).

    Blocked: rows in blocks, the gallery in chunks; ties keep gallery order.
    """
    items = np.asarray(items, dtype=np.int64)
    n_rows = len(items)
    thr = (np.full(n_rows, np.inf, dtype=np.float32) if thresholds is None
           else np.asarray(thresholds, dtype=np.float32))
    k = max(1, min(k, int(gallery.active.sum())))
    top_idx = np.full((n_rows, k), -1, dtype=np.int64)
    top_sim = np.full((n_rows, k), -np.inf, dtype=np.float32)
    above = np.zeros(n_rows, dtype=np.int64)
    block = max(1, BLOCK_BYTES // (4 * CHUNK_ROWS))
    for a in range(0, n_rows, block):
        b = min(n_rows, a + block)
        vecs = gallery.rows(items[a:b])
        for start, stop, g in gallery.chunks():
            sims = vecs @ g.T
            sims[:, ~gallery.active[start:stop]] = -np.inf
            own = (items[a:b] >= start) & (items[a:b] < stop)
            sims[np.flatnonzero(own), items[a:b][own] - start] = -np.inf
            above[a:b] += np.count_nonzero(sims > thr[a:b, None], axis=1)
            _merge(top_idx[a:b], top_sim[a:b], sims, start)
    top_idx[~np.isfinite(top_sim)] = -1
    return Neighbours(top_idx, top_sim, above)


def _merge(top_idx: np.ndarray, top_sim: np.ndarray, sims: np.ndarray, offset: int) -> None:
    k = top_idx.shape[1]
    if sims.shape[1] > k:
        part = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        part.sort(axis=1)  # gallery order, so the stable sort below keeps ties in it
    else:
        part = np.broadcast_to(np.arange(sims.shape[1]), sims.shape)
    cand_idx = np.concatenate([top_idx, part + offset], axis=1)
    cand_sim = np.concatenate([top_sim, np.take_along_axis(sims, part, axis=1)], axis=1)
    order = np.argsort(-cand_sim, axis=1, kind="stable")[:, :k]
    top_idx[:] = np.take_along_axis(cand_idx, order, axis=1)
    top_sim[:] = np.take_along_axis(cand_sim, order, axis=1)


def pair_cosines(gallery: UnitGallery, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return the cosine of each gallery pair (a[i], b[i]), in blocks."""
    out = np.empty(len(a), dtype=np.float32)
    step = max(1, BLOCK_BYTES // (8 * max(gallery.ranking.descriptors.dim, 1)))  # type: ignore[union-attr]
    for s in range(0, len(a), step):
        va, vb = gallery.rows(a[s:s + step]), gallery.rows(b[s:s + step])
        out[s:s + step] = np.einsum("ij,ij->i", va, vb)
    return out


def near_identical_pairs(gallery: UnitGallery, min_cosine: float, tables: int = 10,
                         bits: int = 12, max_bucket: int = 256,
                         seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Return (a, b, cosine, buckets skipped): active gallery pairs a < b whose cosine is at
    least ``min_cosine``, found by random-hyperplane LSH (Charikar 2002) and checked exactly.

    A pair at cosine 0.98 shares a bucket of one 12-bit table with probability about 0.45, so
    ten tables miss it with probability about 0.003. Buckets larger than ``max_bucket``
    (a dense cluster, not duplicates) are skipped and counted.
    """
    aligned = gallery.ranking.descriptors
    assert aligned is not None
    rng = np.random.default_rng(seed)
    planes = rng.standard_normal((aligned.dim, tables * bits)).astype(np.float32)
    codes = np.empty((gallery.n, tables), dtype=np.int64)
    weights = (1 << np.arange(bits, dtype=np.int64))
    for start, stop, g in gallery.chunks():
        signs = (g @ planes) > 0
        codes[start:stop] = (signs.reshape(stop - start, tables, bits) * weights).sum(axis=2)
    active = np.flatnonzero(gallery.active)
    found: list[np.ndarray] = []
    skipped = 0
    for t in range(tables):
        keys = codes[active, t]
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
