"""Descriptors: vectors with the image names they belong to, validated and aligned to a dataset.

A descriptor file holds one or two tables of row vectors (queries and gallery, or one table
for every image). :func:`align` matches rows to a :class:`~irviewer.core.dataset.Dataset` by
name and returns what ranking consumes: L2-normalised float32 query vectors in query order,
and the gallery matrix *untouched* (it may be a 1,000,000 x 2048 float16 memory map), with a
row index only when the file's order differs from the dataset's gallery order.

Names are matched by :func:`name_key`: no directory and no image extension, so the file's
``oxford/all_souls_000013.jpg`` is the dataset's ``all_souls_000013``.

Row checks (NaN/inf values, all-zero rows): the query rows are always checked here. The
gallery rows in use are checked here too, except for a memory-mapped gallery of more than
:data:`LAZY_CHECK_ROWS` rows: reading it whole once more only to check it would double the
I/O, so :func:`irviewer.core.ranking.iter_rank` checks each chunk's row norms (which it
computes anyway) with :func:`check_gallery_rows`, and the same sentence is raised there.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError, counted, examples
from irviewer.core.file_digests import digest_hex, ready_digest
from irviewer.core.image_names import strip_image_suffix
from irviewer.core.parallel import row_parts, run_parts

#: Memory-mapped galleries with more rows than this are checked for NaN/zero rows chunk by
#: chunk during ranking (the norms are computed there anyway) instead of in a pass at load.
LAZY_CHECK_ROWS = 100_000
#: Bytes of float32 per block when norms are computed here (bounded memory, also for a
#: memory-mapped file; small enough that a converted block is still in cache when its
#: squares are summed).
NORM_CHUNK_BYTES = 4 * 2**20
#: A float32 sum of squares below this (a norm under 1e-15) is summed again in float64:
#: float32 squares of values near 1e-20 and below lose precision or vanish.
_TINY_SQUARES = np.float32(1e-30)
#: Values per thread below which norms are not split between threads.
_PARALLEL_VALUES = 1_000_000


@dataclass(frozen=True)
class DescriptorTable:
    """One matrix of row vectors with a name per row.

    ``vectors`` is (n, dim), float or integer, and may be a :class:`numpy.memmap`: nothing
    here copies or reads it whole.
    """

    names: tuple[str, ...]
    vectors: np.ndarray


@dataclass(frozen=True)
class Descriptors:
    """The tables of one descriptor file: (queries, gallery) or a single table for all.

    ``digest`` is the future sha256 of the file's bytes (of every file, for a descriptor
    folder; "" for vectors without a file), perhaps still computed on another thread
    (:mod:`irviewer.core.file_digests`): :attr:`sha256` waits for it.
    ``by_position`` says how rows without names were named by the dataset's order (e.g.
    "the rows are the gallery in the dataset's order"), None when every row was named by
    the file itself or by a row-name list.
    """

    path: Path
    tables: tuple[DescriptorTable, ...]
    dim: int
    digest: Future[str] = field(default_factory=lambda: ready_digest(""), compare=False,
                                repr=False)
    by_position: str | None = None

    @property
    def sha256(self) -> str:
        """Return the hex sha256 of the file's bytes, waiting for its thread (InputError
        when the file could not be read to the end)."""
        return digest_hex(self.digest, self.path)

    def lookup(self) -> dict[str, tuple[int, int]]:
        """Return :func:`name_key` of each name -> (table index, row).

        When a name is in two tables the earlier table wins (the query table of a
        (queries, gallery) file).
        """
        out: dict[str, tuple[int, int]] = {}
        for t, table in enumerate(self.tables):
            for row, name in enumerate(table.names):
                out.setdefault(name_key(name), (t, row))
        return out


@dataclass(frozen=True)
class AlignedDescriptors:
    """Descriptors in dataset order, as ranking consumes them.

    ``queries``: (n_queries, dim) float32, L2-normalised, C-contiguous, in query order;
    ``query_values``: those rows as the file holds them (float32; near ties are settled from
    them), None when ``queries`` are. ``gallery``: the file's gallery matrix, unchanged
    (possibly a memory map), not normalised; ``gallery_rows``: the gallery row of each dataset
    gallery index (int64), None when its first ``n_gallery`` rows are the gallery in dataset
    order (a view). ``gallery_names``: their names, for messages. ``gallery_norms``: each
    gallery item's L2 norm (float32) when :func:`align` checked them, else None (a large map).
    """

    queries: np.ndarray
    gallery: np.ndarray
    gallery_rows: np.ndarray | None
    dim: int
    path: Path | None = None
    gallery_names: tuple[str, ...] = ()
    gallery_norms: np.ndarray | None = None
    query_values: np.ndarray | None = None


def name_key(name: str) -> str:
    """Return the key names are matched by: no directory, no image extension.

    ``oxford/all_souls_000013.jpg`` and ``all_souls_000013`` both give ``all_souls_000013``;
    ``v_bricks.e3.85`` stays as it is (``.85`` is not an image extension).
    """
    base = str(name)
    if "/" in base or "\\" in base:
        base = base.replace("\\", "/").rsplit("/", 1)[-1]
    return strip_image_suffix(base)


def name_keys(names: Sequence[str]) -> list[str]:
    """Return :func:`name_key` of every name, in order (a whole gallery at a time: names
    without a directory skip the per-name call)."""
    try:
        joined = "\n".join(names)
    except TypeError:  # not all str
        return [name_key(n) for n in names]
    if "/" in joined or "\\" in joined:
        return [name_key(n) for n in names]
    if "." not in joined:
        return list(names)
    return [strip_image_suffix(n) for n in names]


def normalise_rows(x: np.ndarray) -> np.ndarray:
    """Return a C-contiguous float32 copy of ``x`` with every row scaled to unit L2 norm.

    Norms are summed in float64 so large values do not overflow; all-zero rows stay zero
    (:func:`align` refuses them before this is reached).
    """
    v = np.array(x, dtype=np.float32, copy=True, order="C", ndmin=2)
    norms = np.sqrt(np.einsum("ij,ij->i", v, v, dtype=np.float64))
    v /= np.where(norms > 0, norms, 1.0).astype(np.float32)[:, None]
    return v


def row_norms(matrix: np.ndarray, rows: np.ndarray | None = None,
              chunk_rows: int | None = None) -> np.ndarray:
    """Return the float32 L2 norm of each row of ``matrix`` (of ``matrix[rows]`` if given).

    Works block by block (``chunk_rows`` rows, by default about :data:`NORM_CHUNK_BYTES`),
    so a memory map is never converted whole; the blocks are shared between threads
    (:mod:`irviewer.core.parallel`). Squares are summed in float32, the precision of the
    cosine scores themselves (the multiply sums its products in float32 too), three times
    faster than float64; a row whose float32 sum overflows, or is so small that it lost
    precision (under :data:`_TINY_SQUARES`), is summed again in float64, so large and tiny
    values still give their true norm. NaN or inf in a row gives a non-finite norm.
    """
    n = len(matrix) if rows is None else len(rows)
    if chunk_rows is None:
        chunk_rows = max(1, NORM_CHUNK_BYTES // (4 * max(1, int(matrix.shape[1]))))
    out = np.empty(n, dtype=np.float32)

    def norms_of(first: int, last: int) -> None:
        for start in range(first * chunk_rows, min(n, last * chunk_rows), chunk_rows):
            stop = min(n, start + chunk_rows)
            block = matrix[start:stop] if rows is None else matrix[rows[start:stop]]
            out[start:stop] = block_norms(np.asarray(block, dtype=np.float32))

    n_chunks = -(-n // chunk_rows)
    run_parts(norms_of, row_parts(n_chunks, n * int(matrix.shape[1]), _PARALLEL_VALUES))
    return out


def block_norms(block: np.ndarray) -> np.ndarray:
    """Return the float32 L2 norm of each row of the float32 matrix ``block``: squares
    summed in float32, and in float64 again for a row whose float32 sum overflows or lost
    precision (see :func:`row_norms`, which applies it block by block)."""
    with np.errstate(over="ignore", invalid="ignore"):
        squares = np.einsum("ij,ij->i", block, block)
        norms = np.sqrt(squares)
        redo = np.flatnonzero(~(squares >= _TINY_SQUARES) | ~np.isfinite(squares))
        if len(redo):  # the float64 squares' sum fits where float32's did not
            exact = np.asarray(block[redo], dtype=np.float64)
            norms[redo] = np.sqrt(np.einsum("ij,ij->i", exact, exact))
    return norms


def bad_rows_message(path: Path | str, norms: np.ndarray, row_ids: np.ndarray,
                     names: Sequence[str], what: str = "row") -> str | None:
    """Return the sentence for rows with NaN/inf values or all zeros, or None when all good.

    ``norms[i]`` is the norm of file row ``row_ids[i]``; ``names[row]`` names that row.
    NaN/inf is reported before all-zero rows. ``what`` is the singular noun ("row",
    "query row"); the count decides singular or plural.
    Example: "x.npz: 3 rows contain NaN or infinite values, e.g. row 5 (all_souls_000013),
    row 9 (all_souls_000026), row 12 (ashmolean_000000)".
    """
    row_ids = np.asarray(row_ids)

    def describe(i: int) -> str:
        r = int(row_ids[i])
        return f"row {r} ({names[r]})" if 0 <= r < len(names) else f"row {r}"

    return _rows_sentence(path, norms, describe, what)


def _rows_sentence(path: Path | str, norms: np.ndarray, describe: Callable[[int], str],
                   what: str) -> str | None:
    """Return the NaN/inf or all-zero sentence for ``norms`` (``describe(i)`` names entry
    ``i``), or None when every norm is finite and positive."""
    where = Path(path).name
    norms = np.asarray(norms)
    nonfinite = np.flatnonzero(~np.isfinite(norms))
    if len(nonfinite):
        return (f"{where}: {counted(len(nonfinite), what)} "
                f"{'contains' if len(nonfinite) == 1 else 'contain'} NaN or infinite values, "
                f"e.g. {examples(describe(int(i)) for i in nonfinite)}")
    zero = np.flatnonzero(norms == 0)
    if len(zero):
        return (f"{where}: {counted(len(zero), what)} {'is' if len(zero) == 1 else 'are'} "
                f"all zero (no direction to compare), e.g. "
                f"{examples(describe(int(i)) for i in zero)}")
    return None


def check_gallery_rows(norms: np.ndarray, row_ids: np.ndarray, dataset: Dataset,
                       aligned: AlignedDescriptors) -> None:
    """Return None when a chunk of gallery rows is usable; raise InputError when some rows
    have NaN/inf values or are all zero.

    Ranking calls this for every gallery chunk with the norms it computed anyway, when
    :func:`align` left ``aligned.gallery_norms`` None (a large memory-mapped gallery), so the
    file is validated without an extra pass. ``row_ids`` are the chunk's rows in the file;
    the sentence is the one :func:`align` raises (see :func:`bad_rows_message`).
    """
    norms = np.asarray(norms)
    if np.isfinite(norms).all() and (norms > 0).all():
        return
    names = aligned.gallery_names or dataset.gallery
    message = bad_rows_message(aligned.path or Path(dataset.label()), norms, row_ids, names)
    if message:
        raise InputError(message)


def align(descriptors: Descriptors, dataset: Dataset) -> AlignedDescriptors:
    """Return the descriptors of ``dataset``'s queries and gallery, matched by name.

    Gallery rows come from the last table (the gallery table of a (queries, gallery) file,
    or the only table). A query's descriptor is the row named after the query id when there
    is one (a cropped-query descriptor, as Oxford papers use), looked up in the query table
    first, else the row of the query's image. Names compare by :func:`name_key`.

    Raises InputError naming the file, the count and examples for repeated names, gallery
    images or queries without a descriptor, rows with NaN/inf values or all zeros (queries
    always; gallery rows unless the gallery is a memory map of more than
    :data:`LAZY_CHECK_ROWS` rows, which ranking checks chunk by chunk), and query and
    gallery tables of different dimension.
    """
    keyed = _checked_keys(descriptors)
    gallery_table = descriptors.tables[-1]
    dim = int(gallery_table.vectors.shape[1])
    rows = _gallery_rows(descriptors.path.name, gallery_table, keyed[-1], dataset)
    queries = _query_vectors(descriptors, keyed, dataset)

    n_g = dataset.n_gallery
    gallery = gallery_table.vectors
    if rows is None and len(gallery) > n_g:  # gallery rows first, then query-only rows: a view
        gallery = gallery[:n_g]
    g_norms = None
    if not (isinstance(gallery_table.vectors, np.memmap) and n_g > LAZY_CHECK_ROWS):
        g_norms = row_norms(gallery, rows)
        row_ids = np.arange(n_g, dtype=np.int64) if rows is None else rows
        message = bad_rows_message(descriptors.path, g_norms, row_ids, gallery_table.names)
        if message:
            raise InputError(message)
    return AlignedDescriptors(queries=normalise_rows(queries), query_values=queries,
                              gallery=gallery, gallery_rows=rows, dim=dim, path=descriptors.path,
                              gallery_names=tuple(gallery_table.names), gallery_norms=g_norms)


def align_queries(descriptors: Descriptors, dataset: Dataset) -> AlignedDescriptors:
    """Return the descriptors of ``dataset``'s queries alone, matched as :func:`align` does,
    for a file holding the queries but not the gallery (it lives in a vector engine):
    ``gallery`` has 0 rows. InputError with :func:`align`'s sentences for bad query rows."""
    keyed = _checked_keys(descriptors)
    queries = _query_vectors(descriptors, keyed, dataset)
    dim = int(queries.shape[1])
    return AlignedDescriptors(queries=normalise_rows(queries),
                              gallery=np.empty((0, dim), dtype=np.float32), gallery_rows=None,
                              dim=dim, path=descriptors.path, query_values=queries)


def holds_gallery(names: Sequence[str], dataset: Dataset) -> bool:
    """Return True when ``names`` (a descriptor file's gallery names) name every gallery
    image of ``dataset`` (compared by :func:`name_key`)."""
    return set(name_keys(dataset.gallery)) <= set(name_keys(names))


def _checked_keys(descriptors: Descriptors) -> list[list[str]]:
    """Return each table's :func:`name_key`s; InputError for no vectors, repeats, dims."""
    where = descriptors.path.name
    tables = descriptors.tables
    if not tables:
        raise InputError(f"{where} holds no vectors")
    keyed = [name_keys(t.names) for t in tables]
    for keys in keyed:
        if len(set(keys)) != len(keys):
            dups = [k for k, count in Counter(keys).items() if count > 1]
            raise InputError(f"{where}: {counted(len(dups), 'name')} "
                             f"{'appears' if len(dups) == 1 else 'appear'} more than once, "
                             f"e.g. {examples(dups)}")
    dim = int(tables[-1].vectors.shape[1])
    if len(tables) > 1:
        q_dim = int(tables[0].vectors.shape[1])
        if q_dim != dim:
            raise InputError(f"{where}: the query vectors have {q_dim} dimensions but the "
                             f"gallery vectors have {dim}")
    return keyed


def _query_vectors(descriptors: Descriptors, keyed: list[list[str]],
                   dataset: Dataset) -> np.ndarray:
    """Return the float32 vector of each dataset query in query order (not normalised):
    the row named after the query id, else the row of its image, the query table first;
    InputError for queries without a descriptor and for NaN/inf or all-zero rows."""
    tables = descriptors.tables
    dim = int(tables[-1].vectors.shape[1])
    indexes: list[dict[str, int] | None] = [None] * len(tables)

    def find(key: str) -> tuple[int, int] | None:
        for t in range(len(tables)):
            index = indexes[t]
            if index is None:
                index = indexes[t] = {k: r for r, k in enumerate(keyed[t])}
            if key in index:
                return t, index[key]
        return None

    q_rows: list[tuple[int, int]] = []
    missing: list[str] = []
    for q in dataset.queries:
        found = find(name_key(q.name)) or find(name_key(q.image))
        if found is None:
            missing.append(q.name)
        else:
            q_rows.append(found)
    if missing:
        raise InputError(f"{descriptors.path.name}: "
                         f"{counted(len(missing), 'query', 'queries')} "
                         f"{'has' if len(missing) == 1 else 'have'} no descriptor (neither by "
                         f"query id nor by image name), e.g. {examples(missing)}")
    queries = np.empty((len(q_rows), dim), dtype=np.float32)
    for t, table in enumerate(tables):
        sel = np.array([i for i, (tt, _) in enumerate(q_rows) if tt == t], dtype=np.int64)
        if len(sel):
            src = np.array([q_rows[i][1] for i in sel], dtype=np.int64)
            queries[sel] = np.asarray(table.vectors[src], dtype=np.float32)
    _check_query_rows(descriptors, dataset, q_rows, queries)
    return queries


def _gallery_rows(where: str, table: DescriptorTable, keys: list[str],
                  dataset: Dataset) -> np.ndarray | None:
    """Return the table row of each dataset gallery image (int64), or None when the first
    ``n_gallery`` rows are the gallery in dataset order; InputError for missing images."""
    n_g = dataset.n_gallery
    if tuple(table.names[:n_g]) == dataset.gallery:  # the common case: no key computing
        return None
    index = {k: r for r, k in enumerate(keys)}
    wanted = name_keys(dataset.gallery)
    missing = [n for n, k in zip(dataset.gallery, wanted, strict=True) if k not in index]
    if missing:
        raise InputError(f"{where}: {counted(len(missing), 'gallery image')} "
                         f"{'has' if len(missing) == 1 else 'have'} no descriptor, "
                         f"e.g. {examples(missing)}")
    rows = np.fromiter((index[k] for k in wanted), dtype=np.int64, count=n_g)
    if np.array_equal(rows, np.arange(n_g)):
        return None
    rows.setflags(write=False)
    return rows


def _check_query_rows(descriptors: Descriptors, dataset: Dataset,
                      q_rows: list[tuple[int, int]], queries: np.ndarray) -> None:
    """Return None when every query row is usable; raise InputError when some have NaN/inf
    values or are all zero. Each file row is counted once, even when several queries use it.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        norms = np.sqrt(np.einsum("ij,ij->i", queries, queries, dtype=np.float64))
    if np.isfinite(norms).all() and (norms > 0).all():
        return
    first: dict[tuple[int, int], int] = {}
    for i, table_row in enumerate(q_rows):
        first.setdefault(table_row, i)
    used = sorted(first.values())
    two_tables = len(descriptors.tables) > 1

    def describe(j: int) -> str:
        i = used[j]
        t, row = q_rows[i]
        row_name = descriptors.tables[t].names[row]
        q_name = dataset.queries[i].name
        label = row_name if name_key(row_name) == name_key(q_name) \
            else f"{row_name}, query {q_name}"
        table = ("queries " if t == 0 else "gallery ") if two_tables else ""
        return f"{table}row {row} ({label})"

    message = _rows_sentence(descriptors.path, norms[used], describe, "query row")
    if message:
        raise InputError(message)
