"""Descriptor file readers: .npz, .npy, .fvecs, .mat and .h5, one sentence per bad file.

Which rows belong to which image:

* ``.npz`` / ``.h5``: keys ``queries`` + ``gallery`` (optional ``query_names``,
  ``gallery_names``) or ``features`` + ``names``. Without name arrays, rows follow the
  dataset's order: gallery rows its gallery order, query rows its query order, and a single
  ``features`` table the gallery names followed by the queries that are not in the gallery.
* ``.npy`` and ``.fvecs`` (TEXMEX: per row an int32 dimension, then the float32 values):
  one matrix in that same documented order; both are memory-mapped, never loaded whole.
* ``.mat`` (revisitop / cirtorch): ``X`` database vectors as columns, ``Q`` query vectors as
  columns, in the dataset's gallery and query order.

Integer arrays are accepted (converted to float32 chunk by chunk when ranked); complex,
object or string arrays are refused.
"""

from __future__ import annotations

import importlib
import zipfile
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import numpy as np

from irviewer.core.descriptors import Descriptors, DescriptorTable, file_sha256
from irviewer.core.errors import InputError

SUFFIXES = (".npz", ".npy", ".fvecs", ".mat", ".h5", ".hdf5")


def sniff_descriptors(path: Path) -> bool:
    """Return True when ``path`` has a descriptor file suffix and is a file."""
    p = Path(path)
    return p.suffix.lower() in SUFFIXES and p.is_file()


def descriptor_names(path: Path) -> tuple[str, ...] | None:
    """Return the gallery names a descriptor file carries (``names`` or ``gallery_names``
    of an .npz/.h5), or None when it has none or cannot be read; never raises."""
    p = Path(path)
    keys = ("gallery_names", "names")
    try:
        if p.is_dir():
            from irviewer.formats.hpatches import is_descriptor_folder, read_hpatches_descriptors

            return read_hpatches_descriptors(p).tables[0].names if is_descriptor_folder(p) \
                else None
        if p.suffix.lower() == ".npz":
            with np.load(p, allow_pickle=False) as archive:
                for key in keys:
                    if key in archive.files:
                        return _names(p, archive[key], key, archive[key].size)
        elif p.suffix.lower() in (".h5", ".hdf5"):
            h5py = importlib.import_module("h5py")
            with h5py.File(p, "r") as f:
                for key in keys:
                    if key in f:
                        data = np.asarray(f[key])
                        return _names(p, data, key, data.size)
    except Exception:  # a bad file gets its sentence from read_descriptors later
        return None
    return None


def _require(module: str, extra: str, what: str) -> ModuleType:
    """Return the imported optional module, or InputError naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise InputError(f"reading {what} files needs {module}: "
                         f"pip install 'irviewer[{extra}]'") from None


def read_descriptors(path: Path, *, gallery_names: Sequence[str] | None = None,
                     query_names: Sequence[str] | None = None,
                     row_names: Sequence[str] | None = None) -> Descriptors:
    """Return the :class:`Descriptors` in ``path``.

    ``gallery_names`` / ``query_names`` are the dataset's names in its order; they name the
    rows of files that carry no names (see the module docstring). ``row_names`` names the
    rows of a single-table file explicitly (``irviewer eval --row-names``) and wins over the
    dataset order. InputError with one sentence for a missing, unreadable, empty, truncated
    or malformed file.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if path.is_dir():
        from irviewer.formats.hpatches import is_descriptor_folder, read_hpatches_descriptors

        if is_descriptor_folder(path):
            return read_hpatches_descriptors(path)
        raise InputError(f"{path}: is a folder, not a descriptor file (nor an hpatches-benchmark "
                         "<sequence>/<type>.csv folder)")
    suffix = path.suffix.lower()
    readers = {".npz": _read_npz, ".npy": _read_npy, ".fvecs": _read_fvecs, ".mat": _read_mat,
               ".h5": _read_h5, ".hdf5": _read_h5}
    if suffix not in readers:
        raise InputError(f"{path.name}: unknown descriptor file type {suffix or '(none)'}; "
                         f"use one of {', '.join(SUFFIXES)}")
    if row_names is not None:  # the rows are named explicitly, not by the dataset's order
        gallery_names = query_names = None
    try:
        tables = readers[suffix](path, list(gallery_names or []), list(query_names or []))
    except PermissionError:
        raise InputError(f"{path}: permission denied") from None
    if row_names is not None and len(tables) == 1:
        names = tuple(row_names)
        if len(names) != len(tables[0].vectors):
            raise InputError(f"{path.name}: {len(tables[0].vectors)} rows but the row-name list "
                             f"has {len(names)} names")
        tables = [DescriptorTable(names, tables[0].vectors)]
    dims = {t.vectors.shape[1] for t in tables}
    return Descriptors(path=path, tables=tuple(tables), dim=max(dims),
                       sha256=file_sha256(path))


def _matrix(path: Path, array: np.ndarray, key: str) -> np.ndarray:
    """Return ``array`` if it is a usable 2-D numeric matrix, else InputError."""
    where = f"{path.name}" + (f" ({key})" if key else "")
    if array.dtype == object or array.dtype.kind in "cSUV":
        raise InputError(f"{where}: holds {array.dtype} values, not real numbers")
    if array.ndim != 2:
        raise InputError(f"{where}: expected a 2-D matrix of row vectors, got shape "
                         f"{array.shape}")
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise InputError(f"{path.name} holds no vectors")
    return array


def _names(path: Path, array: np.ndarray, key: str, n_rows: int) -> tuple[str, ...]:
    if array.ndim != 1 or len(array) != n_rows:
        raise InputError(f"{path.name}: {key} has {array.size} names for {n_rows} rows")
    return tuple(x.decode("utf-8") if isinstance(x, bytes) else str(x) for x in array.tolist())


def _default_names(path: Path, n_rows: int, gallery: list[str], queries: list[str],
                   what: str) -> tuple[str, ...]:
    """Names for a single table without names: gallery, then queries not in the gallery."""
    if not gallery and not queries:
        return tuple(f"#{i}" for i in range(n_rows))  # named by the caller (row_names)
    if not gallery:
        raise InputError(f"{path.name} has no names for its rows; add a 'names' array "
                         "(.npz/.h5) or give the dataset whose order the rows follow")
    in_gallery = set(gallery)
    extra = [q for q in queries if q not in in_gallery]
    for names in (gallery, gallery + extra):
        if n_rows == len(names):
            return tuple(names)
    raise InputError(f"{path.name}: {n_rows} {what} but the dataset has {len(gallery)} gallery "
                     f"images (+ {len(extra)} queries not in the gallery); the rows must "
                     "follow the dataset's gallery order")


def _two_tables(path: Path, q: np.ndarray, g: np.ndarray, q_names: tuple[str, ...] | None,
                g_names: tuple[str, ...] | None, gallery: list[str],
                queries: list[str]) -> list[DescriptorTable]:
    if g_names is None:
        if len(g) != len(gallery) or not gallery:
            raise InputError(f"{path.name}: {len(g)} gallery vectors without names, but the "
                             f"dataset has {len(gallery)} gallery images; add gallery_names")
        g_names = tuple(gallery)
    if q_names is None:
        if len(q) != len(queries) or not queries:
            raise InputError(f"{path.name}: {len(q)} query vectors without names, but the "
                             f"dataset has {len(queries)} queries; add query_names")
        q_names = tuple(queries)
    return [DescriptorTable(q_names, q), DescriptorTable(g_names, g)]


def _read_keyed(path: Path, get, keys: set[str], gallery: list[str],  # type: ignore[no-untyped-def]
                queries: list[str]) -> list[DescriptorTable]:
    if {"queries", "gallery"} <= keys:
        q = _matrix(path, get("queries"), "queries")
        g = _matrix(path, get("gallery"), "gallery")
        q_names = _names(path, get("query_names"), "query_names", len(q)) \
            if "query_names" in keys else None
        g_names = _names(path, get("gallery_names"), "gallery_names", len(g)) \
            if "gallery_names" in keys else None
        return _two_tables(path, q, g, q_names, g_names, gallery, queries)
    if "features" in keys:
        f = _matrix(path, get("features"), "features")
        names = _names(path, get("names"), "names", len(f)) if "names" in keys else \
            _default_names(path, len(f), gallery, queries, "rows")
        return [DescriptorTable(names, f)]
    raise InputError(f"{path.name}: found keys {', '.join(sorted(keys)) or 'none'}; expected "
                     "queries + gallery (optional query_names, gallery_names) or "
                     "features + names")


def _read_npz(path: Path, gallery: list[str], queries: list[str]) -> list[DescriptorTable]:
    try:
        archive = np.load(path, allow_pickle=False)
    except (zipfile.BadZipFile, OSError, EOFError) as e:
        raise InputError(f"{path.name}: not a readable .npz archive ({e})") from None
    except ValueError as e:
        if "pickle" in str(e).lower():
            raise InputError(f"{path.name}: not a readable .npz archive (not a zip of arrays; "
                             "irviewer never unpickles files)") from None
        raise InputError(f"{path.name}: cannot read ({e})") from None
    if not hasattr(archive, "files"):
        raise InputError(f"{path.name}: holds a single array, not an .npz archive of named "
                         "arrays; save it with numpy.savez or name it .npy")
    with archive:
        def get(key: str) -> np.ndarray:
            try:
                return archive[key]
            except ValueError as e:
                if "pickle" in str(e).lower() or "object" in str(e).lower():
                    raise InputError(f"{path.name} holds Python objects (pickle) in {key!r}; "
                                     "irviewer only reads plain arrays: save names as a "
                                     "string array") from None
                raise InputError(f"{path.name}: cannot read {key!r} ({e})") from None
            except (zipfile.BadZipFile, OSError, EOFError) as e:
                raise InputError(f"{path.name}: {key!r} is damaged or truncated ({e})") from None
        return _read_keyed(path, get, set(archive.files), gallery, queries)


def _read_npy(path: Path, gallery: list[str], queries: list[str]) -> list[DescriptorTable]:
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError as e:
        if "pickle" in str(e).lower() or "object" in str(e).lower():
            raise InputError(f"{path.name} holds Python objects (pickle); irviewer only "
                             "reads plain numeric arrays") from None
        raise InputError(f"{path.name}: not a readable .npy array ({e})") from None
    except (OSError, EOFError) as e:
        raise InputError(f"{path.name}: not a readable .npy array ({e})") from None
    m = _matrix(path, array, "")
    return [DescriptorTable(_default_names(path, len(m), gallery, queries, "rows"), m)]


def _read_fvecs(path: Path, gallery: list[str], queries: list[str]) -> list[DescriptorTable]:
    size = path.stat().st_size
    if size == 0:
        raise InputError(f"{path.name} is empty")
    if size < 4:
        raise InputError(f"{path.name} is truncated: {size} bytes hold no row")
    dim = int(np.fromfile(path, dtype="<i4", count=1)[0])
    if dim <= 0 or dim > 1_000_000:
        raise InputError(f"{path.name}: the first row declares dimension {dim}; not an "
                         ".fvecs file")
    row_bytes = (dim + 1) * 4
    if size % row_bytes:
        raise InputError(f"{path.name} is truncated: {size:,} bytes is not a whole number of "
                         f"{dim + 1}-value rows ({size // row_bytes:,} whole rows and "
                         f"{size % row_bytes} bytes left over)")
    raw = np.memmap(path, dtype="<f4", mode="r", shape=(size // row_bytes, dim + 1))
    headers = raw[:, 0].view("<i4")
    wrong = np.flatnonzero(headers != dim)
    if len(wrong):
        raise InputError(f"{path.name}: {len(wrong)} rows declare a dimension other than "
                         f"{dim}, e.g. row {int(wrong[0])} declares {int(headers[wrong[0]])}; "
                         "the file is damaged")
    m = raw[:, 1:]
    return [DescriptorTable(_default_names(path, len(m), gallery, queries, "rows"), m)]


def _read_mat(path: Path, gallery: list[str], queries: list[str]) -> list[DescriptorTable]:
    with path.open("rb") as f:
        head = f.read(128)
    if b"MATLAB 7.3" in head or head[:8] == b"\x89HDF\r\n\x1a\n":
        h5py = _require("h5py", "hdf5", "MATLAB v7.3 .mat")
        try:
            with h5py.File(path, "r") as f:
                keys = set(f.keys())
                # v7.3 stores arrays transposed: a dim x n matrix appears as n x dim.
                got = {k: np.asarray(f[k]) for k in ("X", "Q") if k in keys}
        except OSError as e:
            raise InputError(f"{path.name}: not a readable MATLAB v7.3 file ({e})") from None
        x, q = got.get("X"), got.get("Q")
        transpose = False
    else:
        sio = _require("scipy.io", "mat", ".mat")
        try:
            content = sio.loadmat(path)
        except Exception as e:  # scipy raises many types for damaged files
            raise InputError(f"{path.name}: not a readable .mat file ({e})") from None
        x, q = content.get("X"), content.get("Q")
        transpose = True
    if x is None or q is None:
        raise InputError(f"{path.name}: a revisitop .mat file needs X (database vectors as "
                         "columns) and Q (query vectors as columns)")
    x = _matrix(path, x.T if transpose else x, "X")
    q = _matrix(path, q.T if transpose else q, "Q")
    return _two_tables(path, q, x, None, None, gallery, queries)


def _read_h5(path: Path, gallery: list[str], queries: list[str]) -> list[DescriptorTable]:
    h5py = _require("h5py", "hdf5", ".h5")
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise InputError(f"{path.name}: not a readable HDF5 file ({e})") from None
    with f:
        def get(key: str) -> np.ndarray:
            data = np.asarray(f[key])  # read fully: HDF5 datasets are not numpy maps
            return data
        return _read_keyed(path, get, set(f.keys()), gallery, queries)
