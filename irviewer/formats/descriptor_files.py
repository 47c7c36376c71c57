"""Descriptor file readers: .npz, .npy, .fvecs, .mat and .h5, one sentence per bad file.

Which rows belong to which image:

* ``.npz`` / ``.h5`` / ``.hdf5``: keys ``queries`` + ``gallery`` (optional ``query_names``,
  ``gallery_names``) or ``features`` + ``names``. Name arrays hold str or bytes (UTF-8).
  An .npz may also name the extractor that made its vectors (``extractor``, one string;
  :func:`descriptor_extractor`), which ``irviewer search`` uses to describe a new photo,
  and the file holding what that extractor learnt (``extractor_state``, a file name
  beside it: a collection's vocabulary; :func:`descriptor_extractor_state`).
  :func:`write_descriptor_file` writes such a file.
* A table without names follows the dataset's documented order, which the caller passes
  as ``gallery_names`` and ``query_names`` (see :func:`read_descriptors`): a ``gallery``
  table the gallery order, a ``queries`` table the query order, and a single table
  (``features`` without ``names``, ``.npy``, ``.fvecs``) either exactly the gallery names,
  or the gallery names followed by the query names that are not gallery images (compared
  by :func:`~irviewer.core.descriptors.name_key`; Oxford-style cropped-query rows named by
  query id), whichever has as many names as the file has rows.
* ``.npy`` and ``.fvecs`` (TEXMEX: per row an int32 dimension, then that many float32
  values, little-endian) hold one matrix.
* ``.mat`` (revisitop / cirtorch): ``X`` database vectors as columns (dim x n_db), ``Q``
  query vectors as columns, in the dataset's gallery and query order. MATLAB v5/v7 files
  are read by scipy (a dependency); v7.3 files are HDF5 and need h5py. HDF5 stores
  MATLAB's column-major matrices transposed, so there ``X`` already reads as n_db x dim.

Storage: values stored verbatim (an ``.npy`` or ``.fvecs`` file, an ``.npz`` member stored
uncompressed by ``numpy.savez``, an HDF5 vector dataset stored contiguously and
uncompressed) are read from their byte offset with one read when they hold at most
:data:`READ_WHOLE_BYTES`, and memory-mapped when larger, so that a gallery of millions of
rows is only ever read chunk by chunk (:func:`stored_array`). Compressed ``.npz`` members
(``savez_compressed``) and chunked or compressed HDF5 datasets are read whole. Integer and
boolean matrices are accepted as they are and converted to float32 chunk by chunk when
ranked; complex, string or object arrays are refused.

One idea, in one module of more than 500 lines: reading a descriptor file, whatever its
format; the formats share the row-order rule (``_Order``) and the verbatim storage reader.
"""

from __future__ import annotations

import importlib
import struct
import zipfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import numpy as np

from irviewer.core.descriptors import (
    Descriptors,
    DescriptorTable,
    name_key,
)
from irviewer.core.errors import InputError, counted, install_extra
from irviewer.core.file_digests import file_digest
from irviewer.formats.base import option
from irviewer.io.npz import load_npz

SUFFIXES = (".npz", ".npy", ".fvecs", ".mat", ".h5", ".hdf5")
#: The name arrays a file may carry for its gallery (or only) table, in lookup order.
GALLERY_NAME_KEYS = ("gallery_names", "names")
_NAMES_KEYS = ("names", "query_names", "gallery_names")
#: The .npz member naming the extractor that made the vectors (see descriptor_extractor).
EXTRACTOR_KEY = "extractor"
#: The .npz member naming the file of what the extractor learnt (descriptor_extractor_state).
EXTRACTOR_STATE_KEY = "extractor_state"
_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
#: Arrays stored verbatim up to this size are read whole; larger ones are memory-mapped.
READ_WHOLE_BYTES = 512 * 2**20
_MAX_FVECS_DIM = 1 << 20


def descriptor_names(path: Path) -> tuple[str, ...] | None:
    """Return the gallery names a descriptor file carries (``gallery_names`` or ``names`` of
    an .npz/.h5, the patch names of an hpatches descriptor folder), or None when it has
    none or cannot be read; never raises (a bad file gets its sentence from
    :func:`read_descriptors`)."""
    p = Path(path)
    try:
        if p.is_dir():
            from irviewer.formats.hpatches import is_descriptor_folder, read_hpatches_descriptors

            return read_hpatches_descriptors(p).tables[0].names if is_descriptor_folder(p) \
                else None
        if p.suffix.lower() == ".npz":
            with load_npz(p) as archive:
                for key in GALLERY_NAME_KEYS:
                    if key in archive.files:
                        data = _npz_array(p, archive, key)
                        return _names(p, data, key, data.size)
        elif p.suffix.lower() in (".h5", ".hdf5"):
            h5py = importlib.import_module("h5py")
            with h5py.File(p, "r") as f:
                for key in GALLERY_NAME_KEYS:
                    if key in f:
                        data = np.asarray(f[key][()])
                        return _names(p, data, key, data.size)
    except Exception:
        return None
    return None


def descriptor_extractor(path: Path | str) -> str | None:
    """Return the extractor name an .npz descriptor file records (its ``extractor`` member:
    a string, 0-d or one element), or None when it records none (any other file type).

    The name says which extractor (:mod:`irviewer.extract.registry`) computes a row from an
    image, so a new photo can be described the same way. Raises InputError when the member
    is not one string, or the archive cannot be read.
    """
    return _string_member(Path(path), EXTRACTOR_KEY, "the extractor")


def descriptor_extractor_state(path: Path | str) -> Path | None:
    """Return the file holding what the extractor of an .npz descriptor file learnt (its
    ``extractor_state`` member: a file name, relative to the descriptor file's folder),
    or None when it names none. InputError as :func:`descriptor_extractor`."""
    p = Path(path)
    name = _string_member(p, EXTRACTOR_STATE_KEY, "the file of what its extractor learnt")
    return None if name is None else p.parent / name


def _string_member(p: Path, key: str, what: str) -> str | None:
    """Return the one string an .npz holds as member ``key`` (None when it has no such
    member, or is not an .npz); InputError when the member is not one string or the
    archive cannot be read. ``what`` says what the string names."""
    if p.suffix.lower() != ".npz" or not p.is_file():
        return None
    try:
        with load_npz(p) as archive:
            if key not in archive.files:
                return None
            value = archive[key]
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        raise InputError(f"{p.name}: not a readable .npz archive ({e})") from None
    if value.dtype.kind not in "US" or value.size != 1:
        raise InputError(f"{p.name}: the {key!r} member must be one string naming "
                         f"{what}, not {value.size} {value.dtype} value(s)")
    name = value.reshape(-1)[0]
    return (name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name)).strip() \
        or None


def write_descriptor_file(path: Path, features: np.ndarray, names: Sequence[str],
                          extractor: str | None = None, state: str | None = None) -> None:
    """Write an .npz descriptor file atomically: ``features`` (float32, one row per name),
    ``names``, and when given the ``extractor`` that made the rows and the ``state`` file
    (a name beside it) of what that extractor learnt. Members are stored uncompressed (so
    :func:`stored_array` reads them in place) with a fixed date (1980-01-01): equal arrays
    give equal bytes."""
    arrays = {"features": np.ascontiguousarray(features, dtype=np.float32),
              "names": np.array(list(names), dtype=str)}
    if extractor is not None:
        arrays[EXTRACTOR_KEY] = np.array(extractor)
    if state is not None:
        arrays[EXTRACTOR_STATE_KEY] = np.array(state)
    write_npz(path, arrays)


def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` as an uncompressed .npz, atomically (a temporary file beside it,
    then a rename), each member dated 1980-01-01 and streamed into the archive (no copy of
    a large array in memory)."""
    from irviewer.io.atomic import atomic_binary

    with atomic_binary(Path(path)) as stream, \
            zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_STORED) as zf:
        for key, value in arrays.items():
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            with zf.open(info, "w", force_zip64=value.nbytes > 2**30) as member:
                np.lib.format.write_array(member, np.ascontiguousarray(value),
                                          allow_pickle=False)


def read_descriptors(path: Path | str, *, gallery_names: Sequence[str] | None = None,
                     query_names: Sequence[str] | None = None,
                     row_names: Sequence[str] | None = None) -> Descriptors:
    """Return the :class:`~irviewer.core.descriptors.Descriptors` in ``path``.

    The format follows the suffix (see the module docstring); a folder is read as an
    hpatches-benchmark descriptor folder. Names the file carries always win. For tables
    without names:

    * ``gallery_names``: the dataset's gallery names in gallery order
      (``dataset.gallery``); they name a ``gallery`` table, or a single table as described
      in the module docstring.
    * ``query_names``: the dataset's query ids in query order; they name a ``queries``
      table, and complete a single table's names after the gallery.
    * ``row_names``: explicit names for the rows of a single table, or of a ``gallery``
      table, in file order (``irviewer eval --row-names FILE``); they win over
      ``gallery_names``.

    Raises InputError with one sentence naming the file for a missing, unreadable, empty,
    truncated or malformed file, a matrix that is not 2-D real numbers, pickled objects, a
    missing optional reader (scipy, h5py), and rows that cannot be named.
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
    readers: dict[str, Callable[[Path, _Order], list[DescriptorTable]]] = {
        ".npz": _read_npz, ".npy": _read_npy, ".fvecs": _read_fvecs, ".mat": _read_mat,
        ".h5": _read_h5, ".hdf5": _read_h5}
    if suffix not in readers:
        raise InputError(f"{path.name}: unknown descriptor file type {suffix or '(none)'}; "
                         f"use one of {', '.join(SUFFIXES)}")
    order = _Order(tuple(gallery_names or ()), tuple(query_names or ()),
                   None if row_names is None else tuple(row_names))
    try:
        with path.open("rb") as stream:
            empty = not stream.read(1)
        if empty:
            raise InputError(f"{path.name} is empty")
        tables = readers[suffix](path, order)
        digest = file_digest(path)  # waited for when the report is written
    except PermissionError:
        raise InputError(f"{path}: permission denied") from None
    except OSError as e:
        raise InputError(f"{path.name}: cannot be read ({e.strerror or e})") from None
    return Descriptors(path=path, tables=tuple(tables),
                       dim=int(tables[-1].vectors.shape[1]), digest=digest,
                       by_position="; ".join(order.used) or None)


def descriptors_of_arrays(where: Path, arrays: Mapping[str, np.ndarray], *,
                          gallery_names: Sequence[str] | None = None,
                          query_names: Sequence[str] | None = None,
                          row_names: Sequence[str] | None = None) -> Descriptors:
    """Return the :class:`~irviewer.core.descriptors.Descriptors` of arrays held in memory,
    keyed as an .npz archive's members (``features`` + ``names``, or ``queries`` +
    ``gallery`` with ``query_names`` / ``gallery_names``), their rows named by the rule of a
    file's (:func:`read_descriptors`: the names they carry, else the dataset's order given
    by ``gallery_names`` and ``query_names``, else ``row_names``). ``where`` names them in
    sentences as a file's path does (their digest is "": the report hashes their bytes
    where they are held). InputError with a file's sentences for what a file could hold wrong."""
    order = _Order(tuple(gallery_names or ()), tuple(query_names or ()),
                   None if row_names is None else tuple(row_names))
    tables = _keyed_tables(Path(where), arrays.__getitem__, set(arrays), order,
                           hint="give {}=", single_hint="")
    return Descriptors(path=Path(where), tables=tuple(tables),
                       dim=int(tables[-1].vectors.shape[1]),
                       by_position="; ".join(order.used) or None)


# -- naming rows ---------------------------------------------------------------------------

@dataclass(frozen=True)
class _Order:
    """The dataset's documented order, which names the rows of tables without names."""

    gallery: tuple[str, ...]
    queries: tuple[str, ...]
    explicit: tuple[str, ...] | None
    used: list[str] = field(default_factory=list, compare=False)  # how rows were named

    def single(self, path: Path, n_rows: int, hint: str) -> tuple[str, ...]:
        """Return the names of a single table of ``n_rows`` rows without names."""
        if self.explicit is not None:
            return self._explicit(path, n_rows)
        if not self.gallery:
            raise InputError(f"{path.name} has no image names for its "
                             f"{counted(n_rows, 'row')}; give the dataset whose gallery order "
                             f"they follow ({option('row_names')} names them one per line){hint}")
        in_gallery = {name_key(g) for g in self.gallery}
        extra = tuple(q for q in self.queries if name_key(q) not in in_gallery)
        if n_rows == len(self.gallery):
            self.used.append("the rows are the gallery in the dataset's order")
            return self.gallery
        if extra and n_rows == len(self.gallery) + len(extra):
            self.used.append("the rows are the gallery in the dataset's order, then the "
                             f"{counted(len(extra), 'query', 'queries')} that are not "
                             "gallery images, in the dataset's order")
            return self.gallery + extra
        those = "the query that is not a gallery image" if len(extra) == 1 else \
            f"the {len(extra):,} queries that are not gallery images"
        with_extra = f" ({len(self.gallery) + len(extra):,} with {those})" if extra else ""
        raise InputError(f"{path.name} has {counted(n_rows, 'row')} but the dataset has "
                         f"{counted(len(self.gallery), 'gallery image')}{with_extra}; rows "
                         "without "
                         "names must follow the dataset's gallery order"
                         + (f", then {those}" if extra else "")
                         + f" (or be named one per line by {option('row_names')})" + hint)

    def gallery_table(self, path: Path, n_rows: int, hint: str) -> tuple[str, ...]:
        """Return the names of a gallery table of ``n_rows`` rows without names."""
        if self.explicit is not None:
            return self._explicit(path, n_rows)
        if n_rows != len(self.gallery):
            raise InputError(f"{path.name} has {counted(n_rows, 'gallery vector')} without "
                             f"names but the dataset has "
                             f"{counted(len(self.gallery), 'gallery image')}; {hint}")
        self.used.append("the gallery rows are the gallery in the dataset's order")
        return self.gallery

    def query_table(self, path: Path, n_rows: int, hint: str) -> tuple[str, ...]:
        """Return the names of a query table of ``n_rows`` rows without names."""
        if n_rows != len(self.queries):
            raise InputError(f"{path.name} has {counted(n_rows, 'query vector')} without "
                             f"names but the dataset has "
                             f"{counted(len(self.queries), 'query', 'queries')}; {hint}")
        self.used.append("the query rows are the queries in the dataset's order")
        return self.queries

    def _explicit(self, path: Path, n_rows: int) -> tuple[str, ...]:
        assert self.explicit is not None
        if len(self.explicit) != n_rows:
            raise InputError(f"{path.name} has {counted(n_rows, 'row')} but the row-name "
                             f"list has {counted(len(self.explicit), 'name')}")
        return self.explicit


def _names(path: Path, array: np.ndarray, key: str, n_rows: int) -> tuple[str, ...]:
    """Return a name array as str (bytes decoded as UTF-8), or InputError."""
    where = f"{path.name} ({key})"
    kind = array.dtype.kind
    if kind not in "USiuO":
        raise InputError(f"{where}: names must be strings, not {array.dtype} values")
    if array.ndim != 1:
        raise InputError(f"{where}: expected one name per row (a 1-D array), got shape "
                         f"{array.shape}")
    if len(array) != n_rows:
        raise InputError(f"{where}: {counted(len(array), 'name')} for "
                         f"{counted(n_rows, 'row')}")
    out: list[str] = []
    for i, x in enumerate(array.tolist()):
        if isinstance(x, bytes):
            try:
                x = x.decode("utf-8")
            except UnicodeDecodeError:
                raise InputError(f"{where}: name {i} is not UTF-8 text") from None
        elif not isinstance(x, (str, int)):
            raise InputError(f"{where}: name {i} is a {type(x).__name__}, not a string")
        out.append(str(x))
    return tuple(out)


# -- checking matrices --------------------------------------------------------------------

def _check_matrix(path: Path, key: str, shape: tuple[int, ...], dtype: np.dtype) -> None:
    """Return None when (shape, dtype) is a usable matrix of row vectors, else InputError."""
    where = path.name + (f" ({key})" if key else "")
    if dtype.kind == "c":
        raise InputError(f"{where}: holds {dtype} values, not real numbers")
    if dtype.kind not in "biuf":
        raise InputError(f"{where}: holds {dtype} values, not numbers")
    if len(shape) != 2:
        raise InputError(f"{where}: expected a 2-D matrix of row vectors, got shape {shape}")
    if shape[0] == 0:
        raise InputError(f"{path.name} holds no vectors")
    if shape[1] == 0:
        raise InputError(f"{where}: the vectors have no values (shape {shape})")


def _matrix(path: Path, array: np.ndarray, key: str) -> np.ndarray:
    """Return ``array`` when it is a usable 2-D matrix of real numbers, else InputError."""
    _check_matrix(path, key, tuple(array.shape), array.dtype)
    return array


def _pickle_refused(path: Path, key: str = "") -> InputError:
    """Return the error for an array of Python objects (never unpickled)."""
    if not key:
        return InputError(f"{path.name} holds Python objects (pickle); irviewer only reads "
                          "plain arrays: save the vectors as a float array")
    what = "names as a string array" if key in _NAMES_KEYS else "vectors as a float array"
    return InputError(f"{path.name} holds Python objects (pickle) in {key!r}; irviewer only "
                      f"reads plain arrays: save {what}")


def _keyed_tables(path: Path, get: Callable[[str], np.ndarray], keys: set[str],
                  order: _Order, hint: str = "add a {} array",
                  single_hint: str = ", or add a 'names' array") -> list[DescriptorTable]:
    """Return the tables of an .npz/.h5 by its keys (``get`` reads one key's array);
    ``hint`` and ``single_hint`` end the sentences on rows without names (how to name
    them: a file's missing member)."""
    if {"queries", "gallery"} <= keys:
        q = _matrix(path, get("queries"), "queries")
        g = _matrix(path, get("gallery"), "gallery")
        q_names = _names(path, get("query_names"), "query_names", len(q)) \
            if "query_names" in keys else order.query_table(path, len(q),
                                                            hint.format("query_names"))
        g_names = _names(path, get("gallery_names"), "gallery_names", len(g)) \
            if "gallery_names" in keys else order.gallery_table(path, len(g),
                                                                hint.format("gallery_names"))
        return [DescriptorTable(q_names, q), DescriptorTable(g_names, g)]
    if "features" in keys:
        f = _matrix(path, get("features"), "features")
        names = _names(path, get("names"), "names", len(f)) if "names" in keys else \
            order.single(path, len(f), single_hint)
        return [DescriptorTable(names, f)]
    raise InputError(f"{path.name}: found keys {', '.join(sorted(keys)) or 'none'}; expected "
                     "queries + gallery (optional query_names, gallery_names) or "
                     "features + names")


def _require(module: str, extra: str, what: str) -> ModuleType:
    """Return the imported optional ``module``; InputError naming the extra when missing.

    ``what`` is the kind of file ("reading .h5 files needs h5py, which is not installed:
    install irviewer[hdf5] (pip install 'irviewer[hdf5]')").
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.split(".", 1)[0]
        raise InputError(f"reading {what} files needs {package}, which is not installed: "
                         f"{install_extra(extra)}") from None


# -- the readers --------------------------------------------------------------------------

def _head(path: Path, n: int) -> bytes:
    with path.open("rb") as stream:
        return stream.read(n)


def _read_npz(path: Path, order: _Order) -> list[DescriptorTable]:
    head = _head(path, 8)
    if head.startswith(b"\x93NUMPY"):
        raise InputError(f"{path.name} holds a single .npy array, not an .npz archive of "
                         "named arrays; name it .npy")
    if head[:1] == b"\x80":
        raise InputError(f"{path.name} is a Python pickle, not an .npz archive; irviewer "
                         "never unpickles files: save the arrays with numpy.savez")
    if not head.startswith(b"PK"):
        raise InputError(f"{path.name}: not a readable .npz archive (not a zip file)")
    try:
        archive = load_npz(path)
    except (zipfile.BadZipFile, EOFError, ValueError) as e:
        raise InputError(f"{path.name}: not a readable .npz archive ({e})") from None
    with archive:
        return _keyed_tables(path, lambda key: _npz_array(path, archive, key),
                             {k for k in archive.files}, order)


def _npz_array(path: Path, archive: Any, key: str) -> np.ndarray:
    """Return member ``key`` of an open .npz (``np.load``'s archive): read from its offset
    in the archive when it is stored uncompressed (:func:`_stored_member`), else through
    ``np.load``.

    InputError for a member holding pickled objects, a damaged or truncated member.
    """
    try:
        stored = _stored_member(path, archive.zip, key)
        return stored if stored is not None else archive[key]
    except InputError:
        raise
    except ValueError as e:
        if "pickle" in str(e).lower() or "object" in str(e).lower():
            raise _pickle_refused(path, key) from None
        raise InputError(f"{path.name}: {key!r} cannot be read ({e})") from None
    except (zipfile.BadZipFile, EOFError, zlib.error, OSError) as e:
        raise InputError(f"{path.name}: {key!r} is damaged or truncated ({e})") from None


def _stored_member(path: Path, archive: zipfile.ZipFile, key: str) -> np.ndarray | None:
    """Return the .npy member ``key`` of a zip archive read from its offset in the archive
    (:func:`stored_array`: read whole, or a read-only memory map when large), or None when
    ``np.load`` has to read it instead: compressed (``savez_compressed``) or encrypted, an
    .npy header other than version 1.0/2.0, Python objects, no values.

    A stored member is the .npy bytes verbatim at an offset of the archive (after its local
    header), so its values are read straight into their array, without the copies of the
    zip reader: a 2048-d Market-1501 file opens in 0.06 s instead of a second. InputError
    when the member's header promises more values than the member (or the file) holds.
    """
    name = f"{key}.npy" if f"{key}.npy" in archive.NameToInfo else key
    info = archive.NameToInfo.get(name)
    if info is None or info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
        return None
    fmt = np.lib.format
    with path.open("rb") as stream:
        stream.seek(info.header_offset)
        local = stream.read(30)
        if len(local) < 30 or local[:4] != b"PK\x03\x04":
            return None  # let the zip reader say what is wrong
        name_length, extra_length = struct.unpack("<HH", local[26:30])
        start = info.header_offset + 30 + name_length + extra_length
        stream.seek(start)
        try:
            version = fmt.read_magic(stream)
            header_readers = {(1, 0): fmt.read_array_header_1_0,
                              (2, 0): fmt.read_array_header_2_0}
            if version not in header_readers:
                return None
            shape, fortran, dtype = header_readers[version](stream)
        except (ValueError, OSError, EOFError, SyntaxError):
            return None
        offset = stream.tell()
    if dtype.hasobject:
        return None
    n_bytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    present = min(start + info.file_size, path.stat().st_size) - offset
    if n_bytes > present:
        raise InputError(f"{path.name}: {key!r} is truncated: its header promises "
                         f"{' x '.join(f'{s:,}' for s in shape)} {dtype} values "
                         f"({n_bytes:,} bytes) but {max(present, 0):,} bytes follow")
    if n_bytes == 0:
        return None
    return stored_array(path, dtype, offset, tuple(shape), "F" if fortran else "C")


def stored_array(path: Path, dtype: np.dtype, offset: int, shape: tuple[int, ...],
                 order: Literal["C", "F"] = "C") -> np.ndarray:
    """Return the array whose values are stored verbatim at byte ``offset`` of ``path``.

    An array of at most :data:`READ_WHOLE_BYTES` is read into memory with one read: its
    rows are all used anyway, and one read is several times faster than touching the pages
    of a memory map one by one (50 ms against 350 ms for a 161 MB Market-1501 gallery); the
    memory is also aligned, which a member inside an .npz archive usually is not, and a
    misaligned array makes every matrix multiply copy it first. A larger array is a
    read-only memory map, read chunk by chunk by the ranking and never loaded whole.
    """
    count = int(np.prod(shape, dtype=np.int64))
    if count * dtype.itemsize > READ_WHOLE_BYTES:
        return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape, order=order)
    values = np.fromfile(path, dtype=dtype, count=count, offset=offset)
    if len(values) < count:
        raise InputError(f"{path.name} is truncated: {count:,} {dtype} values expected at "
                         f"byte {offset:,}, {len(values):,} found")
    values.setflags(write=False)  # like the map: descriptors are never changed in place
    return values.reshape(shape, order=order)


def _read_npy(path: Path, order: _Order) -> list[DescriptorTable]:
    fmt = np.lib.format
    with path.open("rb") as stream:
        try:
            version = fmt.read_magic(stream)
            header_readers = {(1, 0): fmt.read_array_header_1_0,
                              (2, 0): fmt.read_array_header_2_0}
            header = header_readers[version](stream) if version in header_readers else None
        except (ValueError, OSError, EOFError, SyntaxError):
            raise InputError(f"{path.name}: not a readable .npy array (its header is missing "
                             "or damaged)") from None
        data_start = stream.tell()
    if header is not None:
        shape, _fortran, dtype = header
        if dtype.hasobject:
            raise _pickle_refused(path)
        _check_matrix(path, "", tuple(shape), dtype)
        expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        present = path.stat().st_size - data_start
        if present < expected:
            raise InputError(f"{path.name} is truncated: its header promises "
                             f"{' x '.join(f'{s:,}' for s in shape)} {dtype} values "
                             f"({expected:,} bytes) but {present:,} bytes follow")
        return [DescriptorTable(order.single(path, shape[0], ""),
                                stored_array(path, dtype, data_start, tuple(shape),
                                             "F" if _fortran else "C"))]
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError as e:
        if "pickle" in str(e).lower() or "object" in str(e).lower():
            raise _pickle_refused(path) from None
        raise InputError(f"{path.name}: not a readable .npy array ({e})") from None
    except EOFError as e:
        raise InputError(f"{path.name}: not a readable .npy array ({e})") from None
    m = _matrix(path, array, "")
    return [DescriptorTable(order.single(path, len(m), ""), m)]


def _read_fvecs(path: Path, order: _Order) -> list[DescriptorTable]:
    size = path.stat().st_size
    if size < 4:
        raise InputError(f"{path.name} is truncated: {size} bytes hold no row")
    dim = int(np.fromfile(path, dtype="<i4", count=1)[0])
    if not 0 < dim <= _MAX_FVECS_DIM:
        raise InputError(f"{path.name}: the first row declares dimension {dim}; not an "
                         ".fvecs file (each row is an int32 dimension, then that many float32 "
                         "values)")
    row_bytes = (dim + 1) * 4
    if size % row_bytes:
        raise InputError(f"{path.name} is truncated: {size:,} bytes is not a whole number of "
                         f"{dim + 1}-value rows ({size // row_bytes:,} whole rows and "
                         f"{size % row_bytes:,} bytes left over)")
    raw = stored_array(path, np.dtype("<f4"), 0, (size // row_bytes, dim + 1))
    headers = raw[:, 0].view("<i4")  # a strided view: one int32 per row
    wrong = np.flatnonzero(headers != dim)
    if len(wrong):
        raise InputError(f"{path.name}: {counted(len(wrong), 'row')} "
                         f"{'declares' if len(wrong) == 1 else 'declare'} a dimension "
                         f"other than {dim}, e.g. row {int(wrong[0])} declares "
                         f"{int(headers[wrong[0]])}; the file is damaged")
    m = raw[:, 1:]
    return [DescriptorTable(order.single(path, len(m), ""), m)]


def _read_mat(path: Path, order: _Order) -> list[DescriptorTable]:
    head = _head(path, 520)
    if b"MATLAB 7.3" in head[:128] or _HDF5_SIGNATURE in (head[:8], head[512:520]):
        h5py = _require("h5py", "hdf5", "MATLAB v7.3 .mat")
        try:
            f = h5py.File(path, "r")
        except OSError as e:
            raise InputError(f"{path.name}: not a readable MATLAB v7.3 file ({e})") from None
        with f:
            # HDF5 keeps MATLAB's column-major layout: a dim x n matrix reads as n x dim.
            x = _h5_matrix(path, f, "X", h5py) if "X" in f else None
            q = _h5_matrix(path, f, "Q", h5py) if "Q" in f else None
    else:
        from scipy import io as sio  # imported on first use: the window opens without it

        try:
            content = sio.loadmat(path, variable_names=["X", "Q"])
        except Exception as e:  # scipy raises many types for damaged files
            raise InputError(f"{path.name}: not a readable .mat file ({e})") from None
        x, q = content.get("X"), content.get("Q")
        # loadmat returns MATLAB's column-major arrays, so the transposes are C-ordered views.
        x = None if x is None else np.asarray(x).T
        q = None if q is None else np.asarray(q).T
    if x is None or q is None:
        raise InputError(f"{path.name}: a revisitop .mat file needs X (database vectors as "
                         "columns) and Q (query vectors as columns)")
    x, q = _matrix(path, x, "X"), _matrix(path, q, "Q")
    g_names = order.gallery_table(path, len(x), "the columns of X must be the gallery images "
                                                "in the dataset's order")
    q_names = order.query_table(path, len(q), "the columns of Q must be the queries in the "
                                              "dataset's order")
    return [DescriptorTable(q_names, q), DescriptorTable(g_names, x)]


def _h5_matrix(path: Path, f: Any, key: str, h5py: ModuleType) -> np.ndarray:
    """Return an HDF5 vector dataset: read from its byte offset when stored contiguous and
    uncompressed (:func:`stored_array`), else read whole through h5py."""
    data = _h5_dataset(path, f, key, h5py)
    _check_matrix(path, key, tuple(data.shape), data.dtype)
    offset = data.id.get_offset() if data.chunks is None and data.compression is None \
        else None
    if offset is not None:
        return stored_array(path, data.dtype, offset, tuple(data.shape))
    return np.asarray(data[()])


def _h5_dataset(path: Path, f: Any, key: str, h5py: ModuleType) -> Any:
    """Return the ``h5py.Dataset`` called ``key`` in the open file ``f`` (h5py is optional
    and has no type hints: both are ``Any``); InputError for a group or an object array."""
    data = f[key]
    if not isinstance(data, h5py.Dataset):
        raise InputError(f"{path.name}: {key!r} is a group, not an array")
    if data.dtype.hasobject and key not in _NAMES_KEYS:
        raise InputError(f"{path.name} ({key}): holds variable-length objects, not numbers")
    return data


def _read_h5(path: Path, order: _Order) -> list[DescriptorTable]:
    h5py = _require("h5py", "hdf5", path.suffix.lower())
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise InputError(f"{path.name}: not a readable HDF5 file ({e})") from None
    with f:
        def get(key: str) -> np.ndarray:
            if key in _NAMES_KEYS:
                return np.asarray(_h5_dataset(path, f, key, h5py)[()])
            return _h5_matrix(path, f, key, h5py)

        return _keyed_tables(path, get, set(f.keys()), order)
