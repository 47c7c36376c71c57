"""The gallery as the ranking reads it: in chunks of aligned float32 rows (converted from
float16 or gathered in threads when it is not one already), and one query's whole score row
from them."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from irviewer.core.descriptors import NORM_CHUNK_BYTES, AlignedDescriptors, block_norms
from irviewer.core.parallel import row_parts, run_parts

#: Bytes of float32 gallery held at once; larger galleries are processed in chunks.
GALLERY_CHUNK_BYTES = 256 * 2**20
#: Scores per thread below which a block is not split between threads.
PARALLEL_SCORES = 100_000


def chunk_rows(dim: int) -> int:
    return max(1024, GALLERY_CHUNK_BYTES // (4 * max(dim, 1)))


def chunks(n: int, size: int) -> Iterator[tuple[int, int]]:
    for start in range(0, n, size):
        yield start, min(n, start + size)


def row_ids(aligned: AlignedDescriptors, start: int, stop: int) -> np.ndarray:
    if aligned.gallery_rows is None:
        return np.arange(start, stop, dtype=np.int64)
    return aligned.gallery_rows[start:stop]


def gallery_chunk(aligned: AlignedDescriptors, start: int, stop: int,
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
    if not converted(aligned):
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

    run_parts(convert, row_parts(n, n * dim, PARALLEL_SCORES))
    return chunk


def converted(aligned: AlignedDescriptors) -> bool:
    """Return whether gallery chunks must be copied: rows out of order, or not aligned,
    C-contiguous float32 values."""
    g = aligned.gallery
    return (aligned.gallery_rows is not None or g.dtype != np.float32
            or not (g.flags.c_contiguous and g.flags.aligned))


def row_from(aligned: AlignedDescriptors, inv_norms: np.ndarray, ignored: np.ndarray,
              q: int) -> np.ndarray:
    return scores_of(aligned, inv_norms, ignored, aligned.queries[q:q + 1])


def scores_of(aligned: AlignedDescriptors, inv_norms: np.ndarray, ignored: np.ndarray,
              qv: np.ndarray) -> np.ndarray:
    """Return the score row of the unit float32 query vector ``qv`` (1 x dim)."""
    return score_rows_of(aligned, inv_norms, ignored, qv)[0]


def score_rows_of(aligned: AlignedDescriptors, inv_norms: np.ndarray, ignored: np.ndarray,
                  qv: np.ndarray) -> np.ndarray:
    """Return the score rows of the unit float32 query vectors ``qv`` (n x dim): (n,
    n_gallery) cosines, -inf where ``ignored``, the gallery read chunk by chunk."""
    out = np.empty((len(qv), len(inv_norms)), dtype=np.float32)
    for start, stop in chunks(len(inv_norms), chunk_rows(aligned.dim)):
        np.matmul(qv, gallery_chunk(aligned, start, stop).T, out=out[:, start:stop])
        out[:, start:stop] *= inv_norms[start:stop]
    out[:, ignored] = -np.inf
    return out
