"""The gallery as the ranking reads it: in chunks of aligned float32 rows (converted from
float16 or gathered in threads when it is not one already), one query's whole score row
from them, and the exact cosines that settle near ties."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from irviewer.core.descriptors import NORM_CHUNK_BYTES, AlignedDescriptors, block_norms
from irviewer.core.exact_scores import exact_pair_cosines, small_integer_unit
from irviewer.core.parallel import row_parts, run_parts
from irviewer.core.ranking.settle import ExactScores

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


@dataclass(frozen=True)
class ExactProducts:
    """Descriptors of small whole numbers, multiplied exactly as the file holds them
    (:func:`exact_products`): the query rows as the file holds them (float32), their inverse
    norms (float32), and whether every gallery row has the same norm (then equal scores are
    exactly the equal cosines)."""

    query_values: np.ndarray
    query_inv_norms: np.ndarray
    equal_gallery_norms: bool


def query_rows(aligned: AlignedDescriptors, rows: slice | np.ndarray,
               products: ExactProducts | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Return what multiplies the gallery for the queries ``rows``: the unit float32 query
    vectors and no scale, or, with exact ``products``, the query values as the file holds
    them and their inverse norms, by which each score row is scaled after the multiply."""
    if products is not None:
        return (np.ascontiguousarray(products.query_values[rows], dtype=np.float32),
                products.query_inv_norms[rows])
    return aligned.queries[rows], None


def row_from(aligned: AlignedDescriptors, inv_norms: np.ndarray, ignored: np.ndarray,
             q: int, products: ExactProducts | None = None) -> np.ndarray:
    """Return query ``q``'s score row, computed as the ranking computes it."""
    return score_rows_of(aligned, inv_norms, ignored,
                         *query_rows(aligned, slice(q, q + 1), products))[0]


def scores_of(aligned: AlignedDescriptors, inv_norms: np.ndarray, ignored: np.ndarray,
              qv: np.ndarray) -> np.ndarray:
    """Return the score row of the unit float32 query vector ``qv`` (1 x dim)."""
    return score_rows_of(aligned, inv_norms, ignored, qv)[0]


def score_rows_of(aligned: AlignedDescriptors, inv_norms: np.ndarray, ignored: np.ndarray,
                  qv: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
    """Return the score rows of the float32 query vectors ``qv`` (n x dim): (n,
    n_gallery) cosines, -inf where ``ignored``, the gallery read chunk by chunk; each row
    times ``scale`` when given (``qv`` not normalised, :func:`query_rows`)."""
    out = np.empty((len(qv), len(inv_norms)), dtype=np.float32)
    for start, stop in chunks(len(inv_norms), chunk_rows(aligned.dim)):
        np.matmul(qv, gallery_chunk(aligned, start, stop).T, out=out[:, start:stop])
        out[:, start:stop] *= inv_norms[start:stop]
    if scale is not None:
        out *= scale[:, None]
    out[:, ignored] = -np.inf
    return out


#: A float32 multiply of whole numbers is exact while its sums stay below 2**24; this many
#: bits leave room for the two roundings of the scaling (distinct sums stay distinct).
EXACT_PRODUCT_BITS = 20
#: At most this many bits per value (of the query's and the gallery's values).
_VALUE_BITS = 11


def exact_products(aligned: AlignedDescriptors) -> ExactProducts | None:
    """Return the :class:`ExactProducts` of ``aligned`` when its values allow them, else None.

    When every query and gallery value is a small whole multiple of a power of two
    (sign-binarised ±1, 0/1 codes, small quantised integers) and the dot products stay
    below 2**20 units, the float32 multiply of the values as the file holds them is exact in
    any order, on any machine and thread count; each score is then that exact dot product
    times the gallery row's and the query's inverse norms (two roundings, the same
    everywhere), and two gallery rows of the same norm score equal exactly when their
    cosines are equal. The queries are checked first (the first row, then all), so
    descriptors of real numbers cost nothing; the gallery is read once only when the
    queries qualify.
    """
    raw = aligned.query_values
    if raw is None or not len(raw) or not aligned.dim or not len(aligned.gallery):
        return None
    if small_integer_unit(raw[:1], _VALUE_BITS) is None:
        return None
    q = small_integer_unit(raw, _VALUE_BITS)
    if q is None:
        return None
    budget = EXACT_PRODUCT_BITS - int(np.ceil(np.log2(max(aligned.dim, 2)))) - q[1]
    n_g = len(aligned.gallery) if aligned.gallery_rows is None else len(aligned.gallery_rows)
    squares = np.empty(n_g, dtype=np.float64)
    for start, stop in chunks(n_g, chunk_rows(aligned.dim)):
        block = gallery_chunk(aligned, start, stop)
        if small_integer_unit(block, min(budget, _VALUE_BITS)) is None:
            return None
        wide = block.astype(np.float64)
        squares[start:stop] = np.einsum("ij,ij->i", wide, wide)  # whole numbers: exact
    wide = np.asarray(raw, dtype=np.float64)
    with np.errstate(divide="ignore"):
        inv_q = (1.0 / np.sqrt(np.einsum("ij,ij->i", wide, wide))).astype(np.float32)
    return ExactProducts(np.asarray(raw, dtype=np.float32), inv_q,
                         bool(len(squares) and (squares == squares[0]).all()))


def raw_queries(aligned: AlignedDescriptors, rows: np.ndarray) -> np.ndarray:
    """Return the float32 query vectors ``rows`` as the file holds them (the normalised
    ones when no other values were kept)."""
    source = aligned.queries if aligned.query_values is None else aligned.query_values
    return np.asarray(source[rows], dtype=np.float32)


def gallery_values(aligned: AlignedDescriptors, indices: np.ndarray) -> np.ndarray:
    """Return the float32 vectors of the dataset gallery images ``indices`` as the file
    holds them (converted to float32 as the multiply reads them; not normalised)."""
    idx = np.asarray(indices, dtype=np.int64)
    rows = idx if aligned.gallery_rows is None else aligned.gallery_rows[idx]
    return np.asarray(aligned.gallery[rows], dtype=np.float32)


def cosine_exact_scores(aligned: AlignedDescriptors, whole: bool = False) -> ExactScores:
    """Return the exact cosines of the descriptors' (query, gallery image) pairs
    (:mod:`irviewer.core.exact_scores`), from the vectors as the file holds them, by which
    a cosine ranking settles its near ties (:mod:`irviewer.core.ranking.settle`). ``whole``:
    the values are small whole numbers (:func:`exact_products`), whose float64 sums are exact.

    The plain float64 cosines come from dot products of float32 rows summed in float64,
    each query's squared norm summed once and kept."""
    q_squares = np.full(len(aligned.queries), np.nan)

    def fast(queries: np.ndarray, gallery: np.ndarray) -> np.ndarray:
        return _fast_cosines(lambda rows: raw_queries(aligned, rows),
                             lambda rows: gallery_values(aligned, rows),
                             queries, gallery, q_squares)

    def exact(queries: np.ndarray, gallery: np.ndarray) -> np.ndarray:
        return exact_pair_cosines(raw_queries(aligned, queries), gallery_values(aligned, gallery))

    return ExactScores(fast, fast if whole else exact)


#: Pairs whose float64 dot products are summed at a time (their rows stay in the cache).
_FAST_PAIRS = 32


def _fast_cosines(a_rows: Callable[[np.ndarray], np.ndarray],
                  b_rows: Callable[[np.ndarray], np.ndarray], a: np.ndarray, b: np.ndarray,
                  a_squares: np.ndarray) -> np.ndarray:
    """Return plain float64 cosines of the pairs (a[i], b[i]) of row indices (``a`` sorted,
    as pair codes come), the float32 rows read by ``a_rows`` / ``b_rows``: each ``a`` row
    read once and multiplied with its pairs' ``b`` rows, sums in float64; each ``a`` row's
    squared norm kept in ``a_squares`` (nan: not yet summed; shared by threads, which write
    the same values)."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    out = np.empty(len(a), dtype=np.float64)
    if not len(a):
        return out
    b_squares = np.empty(len(a), dtype=np.float64)
    new_row = np.empty(len(a), dtype=bool)  # where a new ``a`` row starts
    new_row[0] = True
    np.not_equal(a[1:], a[:-1], out=new_row[1:])
    group = np.cumsum(new_row) - 1  # each pair's ``a`` row among ``own``
    firsts = a[new_row]
    own = a_rows(firsts)
    _keep_squares(a_squares, firsts, own)
    # The ``b`` rows a few at a time, converted into one float64 buffer: a fresh float64
    # array per step costs more (page faults) than the arithmetic.
    wide = np.empty((min(len(b), _FAST_PAIRS), own.shape[1]), dtype=np.float64)
    for s in range(0, len(a), _FAST_PAIRS):
        rb = b[s:s + _FAST_PAIRS]
        y = wide[:len(rb)]
        np.copyto(y, b_rows(rb))
        np.einsum("ij,ij->i", y, y, out=b_squares[s:s + len(rb)])
        np.einsum("ij,ij->i", own[group[s:s + _FAST_PAIRS]], y, dtype=np.float64,
                  out=out[s:s + len(rb)])
    with np.errstate(invalid="ignore", divide="ignore"):
        return out / np.sqrt(b_squares) / np.sqrt(a_squares[a])


def _keep_squares(squares: np.ndarray, idx: np.ndarray, rows: np.ndarray) -> None:
    """Sum in float64 the squared norms of ``rows`` (rows ``idx``) not yet in ``squares``."""
    new = np.isnan(squares[idx])
    if new.all():
        squares[idx] = np.einsum("ij,ij->i", rows, rows, dtype=np.float64)
    elif new.any():
        squares[idx[new]] = np.einsum("ij,ij->i", rows[new], rows[new], dtype=np.float64)


def gallery_exact_scores(aligned: AlignedDescriptors, whole: bool = False) -> ExactScores:
    """Return the exact cosines of pairs of gallery images (the audit's neighbours), as
    :func:`cosine_exact_scores` does for queries: (gallery indices, gallery indices)."""
    n_g = len(aligned.gallery) if aligned.gallery_rows is None else len(aligned.gallery_rows)
    squares = np.full(n_g, np.nan)

    def rows(idx: np.ndarray) -> np.ndarray:
        return gallery_values(aligned, idx)

    def fast(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return _fast_cosines(rows, rows, a, b, squares)

    def exact(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return exact_pair_cosines(rows(a), rows(b))

    return ExactScores(fast, fast if whole else exact)
