"""k-reciprocal encoding (Zhong, Zheng, Cao & Li, CVPR 2017), exact and in bounded memory.

The definition is the one of the authors' public function ``re_ranking(q_g_dist, q_q_dist,
g_g_dist, k1, k2, lambda_value)`` (zhunzhong07/person-re-ranking,
``python-version/re_ranking_ranklist.py``) given the Euclidean distances between the
L2-normalised descriptors. Its images are the queries followed by the gallery, N in all;
for images i, j with cosine c(i, j):

1. ``d2(i, j) = 2 - 2 c(i, j)`` (the squared distance; 0 for an image and itself), and
   ``D(i, j) = d2(i, j) / max_m d2(i, m)``: each row divided by its largest value.
2. ``rank(i)``: every image ordered by ascending D(i, .). ``N(i, k)``: its first k + 1.
   ``R(i, k)``: the j in N(i, k) with i in N(j, k), in ``rank(i)`` order.
3. Expansion: ``E(i) = R(i, k1)``, plus, for each c in R(i, k1), all of R(c, round(k1 / 2))
   when more than two thirds of it lies in R(i, k1) (round: half to even, as numpy's
   ``around``).
4. ``V(i, j) = exp(-D(i, j)) / sum over E(i) of exp(-D(i, .))`` for j in E(i), else 0.
5. Local query expansion (when k2 > 1): V(i) becomes the mean of V(j) over the first k2
   images of ``rank(i)``.
6. Jaccard distance ``J(i, j) = 1 - m / (2 - m)`` with ``m = sum_l min(V(i, l), V(j, l))``
   (every V row sums to 1, so 2 - m is the sum of the maxima).
7. Final distance ``(1 - lambda) J(q, g) + lambda D(q, g)`` for query q and gallery image g.

Equal distances keep index order (a stable sort) wherever an order is taken; the reference's
``np.argsort`` is not stable, so it may order exact ties otherwise.

Memory is bounded: no N x N matrix exists. Every image needs only its first
max(k1 + 1, k2) neighbours (:func:`~irviewer.core.rerank.search.iter_self_top`, half the
N x N multiply), the V rows are sparse (a few dozen entries each), and the final rows are
produced for a block of queries at a time, Jaccard through an inverted index of V's columns.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from functools import partial

import numpy as np
from scipy import sparse

from irviewer.core.rerank.search import BLOCK_ROWS, Top, iter_self_top

#: Extra neighbours kept beyond the ones needed, so that the order by normalised distance,
#: whose float32 division can make two cosines' distances equal, is exact (see
#: :func:`_order_by_distance`).
MARGIN = 4
#: Expanded (query entry, gallery entry) pairs of the Jaccard sums held at once.
JACCARD_PAIRS = 4_000_000
#: The query x gallery cosines of the neighbour search are kept for the final rows (instead
#: of a second multiply) when they take at most this many bytes.
KEEP_CROSS_BYTES = 512 * 2**20
#: Rows whose reciprocal neighbours are checked at once.
ROW_CHUNK = 4096


@dataclass(frozen=True)
class Encoding:
    """What the final distance rows of the queries are made from.

    ``queries`` / ``gallery``: the unit float32 vectors (gallery: the active images only);
    ``scale``: max d2 of every image's row (queries first); ``query_v``: the queries' V rows
    (after local query expansion), CSR over the N images; ``gallery_v``: the gallery images'
    V rows as CSC (column l: the gallery images whose V has an entry at l, and the values);
    ``lam``: lambda; ``cross``: the query x gallery cosines the neighbour search computed,
    when kept (:data:`KEEP_CROSS_BYTES`), else None (the final rows multiply again).
    """

    queries: np.ndarray
    gallery: np.ndarray
    scale: np.ndarray
    query_v: sparse.csr_matrix
    gallery_v: sparse.csc_matrix
    lam: float
    cross: np.ndarray | None = None

    def distance_rows(self, qa: int, qb: int) -> np.ndarray:
        """Return the final float32 distances of queries qa..qb to every active gallery
        image: (qb - qa, n_gallery)."""
        jaccard = self.jaccard_rows(qa, qb)
        cos = (self.cross[qa:qb] if self.cross is not None
               else self.queries[qa:qb] @ self.gallery.T)
        d2 = squared_distance(cos)
        d2 /= self.scale[qa:qb, None]
        jaccard *= np.float32(1.0 - self.lam)
        d2 *= np.float32(self.lam)
        jaccard += d2
        return jaccard

    def jaccard_rows(self, qa: int, qb: int) -> np.ndarray:
        """Return the Jaccard distances of queries qa..qb to every active gallery image."""
        n_g = self.gallery.shape[0]
        rows_v = self.query_v[qa:qb]
        counts = np.diff(self.gallery_v.indptr)
        # Per query entry (r, l, v): the gallery entries of column l, min-summed into (r, j).
        entry_row = np.repeat(np.arange(qb - qa), np.diff(rows_v.indptr))
        cols, vals = rows_v.indices, rows_v.data
        spans = counts[cols]
        acc = np.zeros((qb - qa) * n_g, dtype=np.float64)
        ends = np.cumsum(spans)
        first = 0
        while first < len(cols):
            last = int(np.searchsorted(ends, ends[first] - spans[first] + JACCARD_PAIRS,
                                       side="right"))
            last = max(last, first + 1)
            sel = slice(first, last)
            n = spans[sel]
            total = int(n.sum())
            if total:
                starts = self.gallery_v.indptr[cols[sel]]
                at = np.arange(total) + np.repeat(starts - (np.cumsum(n) - n), n)
                target = np.repeat(entry_row[sel] * n_g, n) + self.gallery_v.indices[at]
                weight = np.minimum(np.repeat(vals[sel], n), self.gallery_v.data[at])
                acc += np.bincount(target, weights=weight, minlength=len(acc))
            first = last
        m = acc.astype(np.float32).reshape(qb - qa, n_g)
        return np.float32(1.0) - m / (np.float32(2.0) - m)


def squared_distance(cos: np.ndarray) -> np.ndarray:
    """Return ``max(2 - 2 cos, 0)`` in float32: the squared Euclidean distance of unit
    vectors (a cosine rounded above 1 gives 0, not a negative square)."""
    d2 = np.float32(2.0) - np.float32(2.0) * cos.astype(np.float32, copy=False)
    np.maximum(d2, np.float32(0.0), out=d2)
    return d2


def half_k(k1: int) -> int:
    """Return round(k1 / 2), halves to even (numpy's ``around``): the k of the candidates'
    own reciprocal sets in the expansion."""
    return round(k1 / 2)


#: What :func:`iter_encode_joined` yields: (stage, done, total).
Encoding_ = Generator[tuple[str, int, int], None, Encoding]


def iter_encode_joined(vectors: np.ndarray, n_q: int, k1: int, k2: int, lam: float,
                       block_rows: int = BLOCK_ROWS) -> Encoding_:
    """Compute the k-reciprocal encoding of the unit float32 rows ``vectors`` (the ``n_q``
    queries first, then the active gallery images), yielding (stage, done, total); return
    the :class:`Encoding`, which keeps views of ``vectors``, no copy.

    Cost: (N (N + 1) / 2) x dim multiply-adds for the neighbours (N = queries + gallery),
    then work proportional to N k1^2; memory: the sparse encoding beside the N vectors.
    """
    n = len(vectors)
    need = min(n, max(k1 + 1, k2))
    cross = (np.empty((n_q, n - n_q), dtype=np.float32)
             if n_q * (n - n_q) * 4 <= KEEP_CROSS_BYTES else None)
    search = iter_self_top(vectors, min(n, need + MARGIN), "one", row_min=True,
                           block_rows=block_rows,
                           keep=None if cross is None else partial(_keep_cross, cross, n_q))
    while True:
        try:
            done, total = next(search)
        except StopIteration as finished:
            top: Top = finished.value
            break
        yield "neighbours", done, total
    yield "encoding", 0, 1
    assert top.row_min is not None
    scale = squared_distance(top.row_min)
    scale[scale == 0] = 1.0  # every image identical: every distance is 0 either way
    ranked, dist = _order_by_distance(vectors, top, scale, need)
    v = _weights(vectors, ranked, dist, top, scale, k1)
    if k2 != 1:
        v = _local_expansion(v, ranked[:, :min(k2, n)])
    v = v.tocsr()
    query_v = v[:n_q]
    gallery_v = v[n_q:].tocsc()
    gallery_v.sort_indices()
    yield "encoding", 1, 1
    return Encoding(vectors[:n_q], vectors[n_q:], scale, query_v, gallery_v, lam, cross)


def _keep_cross(cross: np.ndarray, n_q: int, a: int, c: int, block: np.ndarray) -> None:
    """Copy the query x gallery part of the block product of rows a.. and columns c.. (and,
    for c > a, of its transpose: rows c.. against columns a..) into ``cross``."""
    parts = [(a, c, block)] + ([(c, a, block.T)] if a != c else [])
    for rows, cols, part in parts:
        height, width = part.shape
        r1, c0 = min(rows + height, n_q), max(cols, n_q)
        if rows < r1 and c0 < cols + width:
            cross[rows:r1, c0 - n_q:cols + width - n_q] = part[:r1 - rows, c0 - cols:]


def _order_by_distance(vectors: np.ndarray, top: Top, scale: np.ndarray,
                       need: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (indices, D) of every row's first ``need`` images in ascending normalised
    distance: each row's own image first (distance 0), then the search's order.

    D is a non-decreasing function of -cosine, so the order by distance is the search's
    order by cosine (descending, near ties by exact cosine, equal cosines in index order),
    which :func:`~irviewer.core.rerank.search.iter_self_top` made complete up to the list's
    end; two cosines that round to the same distance keep that order (a sort stable on the
    list), so an image outside the kept list never comes first.
    """
    n = len(vectors)
    idx, cos = top.indices, top.cosines
    d = squared_distance(cos) / scale[:, None]
    d[idx == np.arange(n)[:, None]] = 0.0
    order = np.argsort(d, axis=1, kind="stable")
    idx = np.take_along_axis(idx, order, axis=1)
    d = np.take_along_axis(d, order, axis=1)
    return idx[:, :need], d[:, :need]


def _reciprocal(ranked: np.ndarray, k: int) -> np.ndarray:
    """Return the mask over ``ranked[:, :k + 1]``: True where the neighbour j of row i also
    has i among its first k + 1 (j in R(i, k))."""
    n = len(ranked)
    w = min(k + 1, ranked.shape[1])
    forward = ranked[:, :w]
    out = np.empty(forward.shape, dtype=bool)
    for a in range(0, n, ROW_CHUNK):
        b = min(n, a + ROW_CHUNK)
        back = forward[forward[a:b]]  # (rows, w, w)
        out[a:b] = (back == np.arange(a, b)[:, None, None]).any(axis=2)
    return out


def _expanded_sets(ranked: np.ndarray, k1: int) -> sparse.csr_matrix:
    """Return the expanded sets E(i) as a 0/1 CSR matrix (rows: images, columns: members)."""
    n = len(ranked)
    kh = half_k(k1)
    w1, wh = min(k1 + 1, ranked.shape[1]), min(kh + 1, ranked.shape[1])
    in_r1 = _reciprocal(ranked, k1)
    in_rh = _reciprocal(ranked, kh)
    first = ranked[:, :w1]
    rows_out: list[np.ndarray] = []
    cols_out: list[np.ndarray] = []
    for a in range(0, n, ROW_CHUNK):
        b = min(n, a + ROW_CHUNK)
        r1 = np.where(in_r1[a:b], first[a:b], -1)  # R(i, k1), -1 where not
        cand = first[a:b]  # c: each forward neighbour (a candidate when in R(i, k1))
        members = np.where(in_rh[cand], ranked[cand, :wh], -2)  # R(c, kh), -2 where not
        size = (members >= 0).sum(axis=2)
        common = (members[..., None] == r1[:, None, None, :]).any(axis=3).sum(axis=2)
        # "more than two thirds": 3 common > 2 size (the reference's float test, 2./3 * size,
        # gives the same for every size below 10**15, see the tests).
        accept = in_r1[a:b] & (3 * common > 2 * size)
        taken = np.where(accept[..., None], members, -2).reshape(b - a, -1)
        both = np.concatenate([r1, taken], axis=1)
        both.sort(axis=1)
        keep = both >= 0
        keep[:, 1:] &= both[:, 1:] != both[:, :-1]
        rr, cc = np.nonzero(keep)
        rows_out.append(rr + a)
        cols_out.append(both[rr, cc])
    rows = np.concatenate(rows_out)
    cols = np.concatenate(cols_out)
    return sparse.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)),
                             shape=(n, n))


def _weights(vectors: np.ndarray, ranked: np.ndarray, dist: np.ndarray, top: Top,
             scale: np.ndarray, k1: int) -> sparse.csr_matrix:
    """Return V: row i holds exp(-D(i, j)) over E(i), divided by its sum (float32)."""
    members = _expanded_sets(ranked, k1)
    members.sort_indices()
    rows = np.repeat(np.arange(len(ranked)), np.diff(members.indptr))
    cols = members.indices.astype(np.int64)
    d = _pair_distances(vectors, rows, cols, top, scale)
    w = np.exp(-d).astype(np.float32)
    sums = np.add.reduceat(w, members.indptr[:-1]) if len(w) else w
    w /= np.repeat(sums, np.diff(members.indptr))
    return sparse.csr_matrix((w, cols, members.indptr), shape=members.shape)


def _pair_distances(vectors: np.ndarray, rows: np.ndarray, cols: np.ndarray, top: Top,
                    scale: np.ndarray) -> np.ndarray:
    """Return D(rows[i], cols[i]) in float32: the cosine the neighbour search found when
    the pair is among the row's kept neighbours, else the dot product of the two vectors."""
    cos = np.empty(len(rows), dtype=np.float32)
    found = np.zeros(len(rows), dtype=bool)
    step = 1 << 20
    for a in range(0, len(rows), step):
        r, c = rows[a:a + step], cols[a:a + step]
        hit = top.indices[r] == c[:, None]
        any_hit = hit.any(axis=1)
        cos[a:a + step] = top.cosines[r, hit.argmax(axis=1)]
        found[a:a + step] = any_hit
    missing = np.flatnonzero(~found)
    for a in range(0, len(missing), 65536):
        m = missing[a:a + 65536]
        cos[m] = np.einsum("ij,ij->i", vectors[rows[m]], vectors[cols[m]])
    d = squared_distance(cos)
    d[rows == cols] = 0.0
    return d / scale[rows]


def _local_expansion(v: sparse.csr_matrix, first: np.ndarray) -> sparse.csr_matrix:
    """Return V with every row replaced by the mean of the rows of its first k2 images."""
    n, k2 = first.shape
    pick = sparse.csr_matrix((np.ones(first.size, dtype=np.float32),
                              (np.repeat(np.arange(n), k2), first.ravel())), shape=(n, n))
    out = (pick @ v).tocsr()
    out.data /= np.float32(k2)
    out.sort_indices()
    return out
