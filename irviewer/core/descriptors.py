"""Descriptors: vectors with the image names they belong to, validated and aligned to a dataset.

A descriptor file holds one or two tables of row vectors (queries and gallery, or one table
for every image). :func:`align` matches rows to a :class:`~irviewer.core.dataset.Dataset` by
name and returns what ranking consumes: L2-normalised float32 query vectors in query order,
and the gallery matrix *untouched* (it may be a 1,000,000 x 2048 float16 memory map), with a
row index only when the file's order differs from the dataset's gallery order.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError, examples

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".ppm", ".pgm", ".bmp", ".tif", ".tiff", ".webp")
#: Galleries with more rows than this are checked for NaN/zero rows chunk by chunk during
#: ranking (the norms are computed there anyway) instead of in a separate pass at load.
LAZY_CHECK_ROWS = 100_000


@dataclass(frozen=True)
class DescriptorTable:
    """One matrix of row vectors with a name per row; ``vectors`` may be a memory map."""

    names: tuple[str, ...]
    vectors: np.ndarray


@dataclass(frozen=True)
class Descriptors:
    """The tables of one descriptor file: (queries, gallery) or a single table for all."""

    path: Path
    tables: tuple[DescriptorTable, ...]
    dim: int
    sha256: str

    def lookup(self) -> dict[str, tuple[int, int]]:
        """Return name key -> (table, row); a later table does not hide an earlier name."""
        out: dict[str, tuple[int, int]] = {}
        for t, table in enumerate(self.tables):
            for row, name in enumerate(table.names):
                out.setdefault(name_key(name), (t, row))
        return out


@dataclass(frozen=True)
class AlignedDescriptors:
    """Descriptors in dataset order, as ranking consumes them.

    ``queries``: (n_queries, dim) float32, L2-normalised. ``gallery``: the file's gallery
    matrix, dtype and storage unchanged, not normalised. ``gallery_rows``: the gallery row of
    each dataset gallery index, or None when the rows already are in dataset order.
    """

    queries: np.ndarray
    gallery: np.ndarray
    gallery_rows: np.ndarray | None
    dim: int
    path: Path | None = None
    gallery_names: tuple[str, ...] = ()
    gallery_norms: np.ndarray | None = None  # L2 norm per dataset gallery index, if known


def name_key(name: str) -> str:
    """Return the key names are matched by: no directory, no image extension.

    ``oxford/all_souls_000013.jpg`` and ``all_souls_000013`` match.
    """
    base = str(name).replace("\\", "/").rsplit("/", 1)[-1]
    dot = base.rfind(".")
    if dot > 0 and base[dot:].lower() in IMAGE_SUFFIXES:
        return base[:dot]
    return base


def file_sha256(path: Path) -> str:
    """Return the hex sha256 of a file (or of every file under a folder, in name order)."""
    h = hashlib.sha256()
    files = sorted(p for p in Path(path).rglob("*") if p.is_file()) if Path(path).is_dir() \
        else [Path(path)]
    for f in files:
        with f.open("rb") as stream:
            for block in iter(lambda: stream.read(8 * 2**20), b""):
                h.update(block)
    return h.hexdigest()


def normalise_rows(x: np.ndarray) -> np.ndarray:
    """Return a float32 copy of ``x`` with every row scaled to unit L2 norm."""
    v = np.array(x, dtype=np.float32, copy=True)
    norms = np.sqrt(np.einsum("ij,ij->i", v, v, dtype=np.float32))
    v /= np.where(norms > 0, norms, 1)[:, None]
    return v


def bad_rows_message(path: Path, norms: np.ndarray, row_ids: np.ndarray,
                     names: tuple[str, ...] | list[str]) -> str | None:
    """Return the sentence for rows with NaN/inf values or all zeros, or None when all good."""
    where = Path(path).name

    def described(bad: np.ndarray) -> str:
        return examples(f"row {r} ({names[r]})" if r < len(names) else f"row {r}" for r in bad)

    nonfinite = ~np.isfinite(norms)
    if nonfinite.any():
        bad = row_ids[nonfinite]
        return (f"{where}: {len(bad)} rows contain NaN or infinite values, e.g. "
                f"{described(bad)}")
    zero = norms == 0
    if zero.any():
        bad = row_ids[zero]
        return (f"{where}: {len(bad)} rows are all zero (no direction to compare), e.g. "
                f"{described(bad)}")
    return None


def check_gallery_rows(norms: np.ndarray, row_ids: np.ndarray, dataset: Dataset,
                       aligned: AlignedDescriptors) -> None:
    """Raise InputError when a chunk of gallery rows has NaN/inf values or all-zero rows.

    Ranking calls this for every gallery chunk with the norms it computed anyway, so a huge
    memory-mapped gallery is validated without an extra pass over the file.
    """
    if np.isfinite(norms).all() and (norms > 0).all():
        return
    names = aligned.gallery_names or dataset.gallery
    message = bad_rows_message(aligned.path or Path(dataset.label()), norms, row_ids, names)
    if message:
        raise InputError(message)


def align(descriptors: Descriptors, dataset: Dataset) -> AlignedDescriptors:
    """Return the descriptors of ``dataset``'s queries and gallery, matched by name.

    A query's descriptor is the row named after the query id when there is one (a cropped
    query region, as Oxford papers describe queries), else the row of the query's image.
    Gallery rows come from the last table (the gallery table of a two-table file).
    InputError naming the file, the count and examples for missing names, repeated names,
    NaN/inf or all-zero rows, and tables of different dimension.
    """
    where = descriptors.path.name
    for table in descriptors.tables:
        keys = [name_key(n) for n in table.names]
        if len(set(keys)) != len(keys):
            seen: set[str] = set()
            dups = [k for k in keys if k in seen or seen.add(k)]
            raise InputError(f"{where}: {len(dups)} names appear more than once, "
                             f"e.g. {examples(dups)}")
    dims = {t.vectors.shape[1] for t in descriptors.tables}
    if len(dims) > 1:
        raise InputError(f"{where}: the query and gallery vectors have different dimensions "
                         f"({' and '.join(str(d) for d in sorted(dims))})")
    gallery_table = descriptors.tables[-1]
    n_g = len(dataset.gallery)
    if tuple(gallery_table.names[:n_g]) == tuple(dataset.gallery):  # the common case
        rows = np.arange(n_g, dtype=np.int64)
    else:
        g_index = {name_key(n): i for i, n in enumerate(gallery_table.names)}
        wanted = [name_key(n) for n in dataset.gallery]
        missing = [n for n, k in zip(dataset.gallery, wanted, strict=True) if k not in g_index]
        if missing:
            raise InputError(f"{where}: {len(missing)} gallery images have no descriptor, "
                             f"e.g. {examples(missing)}")
        rows = np.fromiter((g_index[k] for k in wanted), dtype=np.int64, count=len(wanted))
    # Rows already in gallery order (possibly followed by query-only rows): use a view.
    in_order = bool(np.all(rows == np.arange(len(rows))))
    exact: dict[str, tuple[int, int]] = {}
    for t, table in enumerate(descriptors.tables):
        for row, name in enumerate(table.names):
            exact.setdefault(name, (t, row))
    lookup: dict[str, tuple[int, int]] | None = None
    q_rows: list[tuple[int, int]] = []
    missing_q: list[str] = []
    for q in dataset.queries:
        found = exact.get(q.name)
        if found is None:
            lookup = lookup if lookup is not None else descriptors.lookup()
            found = lookup.get(name_key(q.name)) or lookup.get(name_key(q.image))
        if found is None:
            missing_q.append(q.name)
        else:
            q_rows.append(found)
    if missing_q:
        raise InputError(f"{where}: {len(missing_q)} queries have no descriptor (neither by "
                         f"query id nor by image name), e.g. {examples(missing_q)}")
    queries = np.empty((len(q_rows), gallery_table.vectors.shape[1]), dtype=np.float32)
    for t, table in enumerate(descriptors.tables):
        sel = [i for i, (tt, _) in enumerate(q_rows) if tt == t]
        if sel:
            src = np.array([q_rows[i][1] for i in sel], dtype=np.int64)
            queries[sel] = np.asarray(table.vectors[src], dtype=np.float32)
    q_norms = np.sqrt(np.einsum("ij,ij->i", queries, queries))
    message = bad_rows_message(descriptors.path, q_norms, np.arange(len(queries)),
                               [q.name for q in dataset.queries])
    if message:
        raise InputError(message.replace(" rows ", " query rows ", 1))
    gallery = gallery_table.vectors
    if in_order and len(rows) < len(gallery):
        gallery = gallery[: len(rows)]
    g_norms = None
    if len(rows) <= LAZY_CHECK_ROWS:  # larger galleries are checked while ranking
        used = np.asarray(gallery[rows] if not in_order else gallery, dtype=np.float32)
        g_norms = np.sqrt(np.einsum("ij,ij->i", used, used, dtype=np.float32))
        message = bad_rows_message(descriptors.path, g_norms, rows, gallery_table.names)
        if message:
            raise InputError(message)
    return AlignedDescriptors(queries=normalise_rows(queries), gallery=gallery,
                              gallery_rows=None if in_order else rows,
                              dim=int(gallery.shape[1]), path=descriptors.path,
                              gallery_names=tuple(gallery_table.names), gallery_norms=g_norms)
