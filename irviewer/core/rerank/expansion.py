"""Query expansion and database-side augmentation, alpha-weighted.

* **alpha-weighted query expansion** (alpha QE; Radenovic, Tolias & Chum, "Fine-tuning CNN
  Image Retrieval with No Human Annotation", TPAMI 2018): each query becomes
  ``q' = normalise(q + sum_g max(cos(q, g), 0)^alpha g)`` over the query's first n gallery
  images g, and the gallery is ranked by q'.
* **database-side augmentation** (DBA; Arandjelovic & Zisserman CVPR 2012, alpha-weighted as
  Radenovic et al. weight query expansion): each gallery vector becomes
  ``g' = normalise(g + sum_i max(cos(g, g_i), 0)^alpha g_i)`` over its k nearest *other*
  gallery images g_i; queries are then ranked against the augmented gallery, and a
  following alpha QE sums augmented vectors.

Neighbours are taken by descending cosine, equal cosines in gallery order, among the
gallery images the dataset does not remove for every query. alpha = 0 weighs every
neighbour 1 (average query expansion, Chum et al. ICCV 2007); n = 0 or k = 0 leaves the
vectors as they are. DBA needs every gallery image's neighbours: a gallery x gallery search,
(n_gallery (n_gallery + 1) / 2) x dim multiply-adds, done block by block.
"""

from __future__ import annotations

from collections.abc import Generator

import numpy as np

from irviewer.core.descriptors import normalise_rows
from irviewer.core.rerank.search import BLOCK_ROWS, Top, cross_top, iter_self_top

#: Rows whose weighted neighbour sums are formed at once (rows x neighbours x dim floats).
SUM_BYTES = 64 * 2**20


def weighted_sum(vectors: np.ndarray, base: np.ndarray, top: Top, alpha: float) -> np.ndarray:
    """Return ``normalise(base[i] + sum_t max(cos_it, 0)^alpha vectors[idx_it])`` for every
    row i of ``base``, over the neighbours (idx, cos) of ``top`` (-1 padding adds nothing)."""
    idx, cos = top.indices, top.cosines
    out = np.array(base, dtype=np.float32, copy=True)
    width = idx.shape[1]
    if width == 0:
        return normalise_rows(out)
    valid = idx >= 0
    weight = np.power(np.maximum(np.where(valid, cos, 0.0), 0.0).astype(np.float32),
                      np.float32(alpha))
    weight[~valid] = 0.0
    step = max(1, SUM_BYTES // (4 * width * max(1, vectors.shape[1])))
    for a in range(0, len(out), step):
        b = min(len(out), a + step)
        gathered = vectors[np.maximum(idx[a:b], 0)]  # (rows, width, dim)
        out[a:b] += np.einsum("rk,rkd->rd", weight[a:b], gathered)
    return normalise_rows(out)


def iter_dba(gallery: np.ndarray, k: int, alpha: float,
             block_rows: int = BLOCK_ROWS) -> Generator[tuple[int, int], None, np.ndarray]:
    """Return the augmented unit gallery (database-side augmentation of the unit float32
    rows ``gallery``), yielding the neighbour search's (done, total) block pairs."""
    width = min(k, len(gallery) - 1)
    if width <= 0:
        return normalise_rows(gallery)
    top = yield from iter_self_top(gallery, width, "exclude", block_rows=block_rows)
    return weighted_sum(gallery, gallery, top, alpha)


def expand_queries(queries: np.ndarray, gallery: np.ndarray, n: int, alpha: float,
                   top: Top | None = None) -> np.ndarray:
    """Return the alpha QE queries of unit float32 ``queries`` against the unit ``gallery``
    rows; ``top`` may give each query's gallery neighbours already found (at least n, best
    first), else they are searched here."""
    width = min(n, len(gallery))
    if width <= 0:
        return normalise_rows(queries)
    if top is None:
        top = cross_top(queries, gallery, width)
    return weighted_sum(gallery, queries, Top(top.indices[:, :width], top.cosines[:, :width]),
                        alpha)
