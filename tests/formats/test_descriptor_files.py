"""Descriptor files: every format round-trips, memory maps stay maps, and one exact sentence
per bad file."""

from __future__ import annotations

import hashlib
import pickle
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from irviewer.core.dataset import Dataset, build_query
from irviewer.core.descriptors import align
from irviewer.core.errors import InputError
from irviewer.formats import descriptor_files
from irviewer.formats.descriptor_files import (
    descriptor_names,
    read_descriptors,
)

GALLERY = ("a", "b", "c", "d")


def dataset(queries=(("q1", "q1"), ("b", "b"))) -> Dataset:
    qs = tuple(build_query(name, image, {"positive": [0]}) for name, image in queries)
    return Dataset(name="t", format="test", path=None, gallery=GALLERY, queries=qs,
                   groups=("positive",), protocols=("instance",))


def vectors(n: int, dim: int = 4, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32) + 3


def read(path, ds=None):
    """Read ``path`` the way the CLI does: rows without names follow ``ds``'s order."""
    ds = ds or dataset()
    return read_descriptors(path, gallery_names=ds.gallery,
                            query_names=tuple(q.name for q in ds.queries))


def unit(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v)


def fvecs_bytes(matrix: np.ndarray) -> bytes:
    n, dim = matrix.shape
    rows = np.hstack([np.full((n, 1), dim, dtype="<i4").view("<f4"), matrix.astype("<f4")])
    return rows.tobytes()


# -- .npz ---------------------------------------------------------------------------------

@pytest.mark.parametrize("as_bytes", [False, True])
def test_npz_features_and_names(tmp_path, as_bytes):
    f = vectors(5)
    names = np.array(["x/d.jpg", "c.JPG", "q1.png", "b", "a"])
    np.savez(tmp_path / "d.npz", features=f, names=names.astype("S") if as_bytes else names)
    d = read(tmp_path / "d.npz")
    assert d.tables[0].names == ("x/d.jpg", "c.JPG", "q1.png", "b", "a")
    assert d.dim == 4 and d.path == tmp_path / "d.npz"
    assert d.sha256 == hashlib.sha256((tmp_path / "d.npz").read_bytes()).hexdigest()
    al = align(d, dataset())
    np.testing.assert_array_equal(al.gallery_rows, [4, 3, 1, 0])
    np.testing.assert_allclose(al.queries[0], unit(f[2]), rtol=1e-6)


def test_reading_does_not_wait_for_the_files_hash(tmp_path, monkeypatch):
    from irviewer.core import file_digests

    np.savez(tmp_path / "d.npz", features=vectors(5), names=np.array(["a", "b", "c", "d",
                                                                        "q1"]))
    release = threading.Event()
    real = file_digests._hash_into
    monkeypatch.setattr(file_digests, "_DIGESTS", {})
    monkeypatch.setattr(file_digests, "_hash_into",
                        lambda h, p: release.wait(10) and real(h, p))
    d = read(tmp_path / "d.npz")
    assert not d.digest.done()  # the vectors are read; the hash goes on beside
    release.set()
    assert d.sha256 == hashlib.sha256((tmp_path / "d.npz").read_bytes()).hexdigest()


def test_npz_two_tables_with_and_without_names(tmp_path):
    q, g = vectors(2, seed=1), vectors(4, seed=2)
    np.savez(tmp_path / "named.npz", queries=q, gallery=g[::-1],
             query_names=np.array(["q1", "b"]), gallery_names=np.array(GALLERY[::-1]))
    np.savez(tmp_path / "plain.npz", queries=q, gallery=g)
    named, plain = read(tmp_path / "named.npz"), read(tmp_path / "plain.npz")
    assert plain.tables[0].names == ("q1", "b") and plain.tables[1].names == GALLERY
    for d in (named, plain):
        al = align(d, dataset())
        np.testing.assert_allclose(al.queries, [unit(q[0]), unit(q[1])], rtol=1e-6)
        np.testing.assert_array_equal(
            np.asarray(al.gallery) if al.gallery_rows is None else al.gallery[al.gallery_rows],
            g)


def test_npz_features_without_names_follow_the_dataset_order(tmp_path):
    np.savez(tmp_path / "g.npz", features=vectors(4))
    np.savez(tmp_path / "gq.npz", features=vectors(5))  # gallery, then q1 (not a gallery image)
    assert read(tmp_path / "g.npz").tables[0].names == GALLERY
    assert read(tmp_path / "gq.npz").tables[0].names == (*GALLERY, "q1")


def test_row_names_name_the_rows_explicitly(tmp_path):
    np.save(tmp_path / "d.npy", vectors(3))
    d = read_descriptors(tmp_path / "d.npy", gallery_names=GALLERY, row_names=["z", "y", "x"])
    assert d.tables[0].names == ("z", "y", "x")
    with pytest.raises(InputError) as caught:
        read_descriptors(tmp_path / "d.npy", row_names=["z"])
    assert str(caught.value) == "d.npy has 3 rows but the row-name list has 1 name"


def test_descriptor_names(tmp_path):
    np.savez(tmp_path / "n.npz", features=vectors(2), names=np.array([b"a", b"b"]))
    np.savez(tmp_path / "g.npz", queries=vectors(1), gallery=vectors(2),
             gallery_names=np.array(["c", "d"]))
    np.savez(tmp_path / "none.npz", features=vectors(2))
    assert descriptor_names(tmp_path / "n.npz") == ("a", "b")
    assert descriptor_names(tmp_path / "g.npz") == ("c", "d")
    assert descriptor_names(tmp_path / "none.npz") is None
    assert descriptor_names(tmp_path / "missing.npz") is None


# -- .npy ---------------------------------------------------------------------------------

def test_npy_is_kept_as_is_read_or_mapped(tmp_path, storage):
    g = vectors(5).astype(np.float16)  # gallery a..d, then query q1 (not in the gallery)
    np.save(tmp_path / "d.npy", g)
    d = read(tmp_path / "d.npy")
    assert isinstance(d.tables[0].vectors, np.memmap) == (storage == "mapped")
    assert not d.tables[0].vectors.flags.writeable
    np.testing.assert_array_equal(d.tables[0].vectors, g)
    assert d.tables[0].names == (*GALLERY, "q1")
    al = align(d, dataset())
    assert isinstance(al.gallery, np.memmap) == (storage == "mapped")
    assert al.gallery.dtype == np.float16
    assert al.gallery_rows is None and al.gallery.shape == (4, 4)


def test_npy_integers_are_accepted_unconverted(tmp_path):
    np.save(tmp_path / "d.npy", np.arange(1, 17, dtype=np.uint8).reshape(4, 4))
    d = read(tmp_path / "d.npy", dataset(queries=(("b", "b"),)))
    assert d.tables[0].vectors.dtype == np.uint8


# -- .fvecs -------------------------------------------------------------------------------

def test_fvecs_round_trip_read_or_mapped(tmp_path, storage):
    f = vectors(5)
    (tmp_path / "d.fvecs").write_bytes(fvecs_bytes(f))
    d = read(tmp_path / "d.fvecs")
    vecs = d.tables[0].vectors
    assert isinstance(vecs, np.memmap) == (storage == "mapped")
    assert vecs.shape == (5, 4) and vecs.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(vecs), f)
    assert d.tables[0].names == (*GALLERY, "q1")


# -- .mat ---------------------------------------------------------------------------------

def test_mat_v5_revisitop_layout(tmp_path):
    from scipy import io as scipy_io
    q, g = vectors(2, seed=1), vectors(4, seed=2)
    scipy_io.savemat(tmp_path / "d.mat", {"X": g.T, "Q": q.T, "other": np.zeros(3)})
    d = read(tmp_path / "d.mat")
    assert d.tables[0].names == ("q1", "b") and d.tables[1].names == GALLERY
    al = align(d, dataset())
    np.testing.assert_allclose(al.queries, [unit(q[0]), unit(q[1])], rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(al.gallery), g)


def write_mat73(path: Path, **arrays: np.ndarray) -> Path:
    """Write a MATLAB v7.3-style file: 512-byte header block, then HDF5. MATLAB writes a
    dim x n matrix as an n x dim HDF5 dataset, so pass the arrays as HDF5 will hold them."""
    h5py = pytest.importorskip("h5py")
    with h5py.File(path, "w", userblock_size=512) as f:
        for key, value in arrays.items():
            f[key] = value
    with path.open("r+b") as stream:
        stream.write(b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: test HDF5 schema")
    return path


def test_mat_v73_is_read_through_hdf5(tmp_path, storage):
    q, g = vectors(2, seed=1), vectors(4, seed=2)
    d = read(write_mat73(tmp_path / "d.mat", X=g, Q=q))
    # contiguous, uncompressed: read from its byte offset (mapped when large)
    assert isinstance(d.tables[1].vectors, np.memmap) == (storage == "mapped")
    np.testing.assert_array_equal(np.asarray(d.tables[1].vectors), g)
    np.testing.assert_array_equal(np.asarray(d.tables[0].vectors), q)


# -- .h5 ----------------------------------------------------------------------------------

def test_h5_features_and_names(tmp_path, storage):
    h5py = pytest.importorskip("h5py")
    f = vectors(5)
    with h5py.File(tmp_path / "d.hdf5", "w") as h:
        h["features"] = f
        h["names"] = np.array([b"a", b"b", b"c", b"d", b"q1"])
    d = read(tmp_path / "d.hdf5")
    assert isinstance(d.tables[0].vectors, np.memmap) == (storage == "mapped")
    np.testing.assert_array_equal(d.tables[0].vectors, f)
    al = align(d, dataset())
    assert al.gallery_rows is None
    np.testing.assert_allclose(al.queries[0], unit(f[4]), rtol=1e-6)


def test_h5_two_tables_compressed_and_variable_length_names(tmp_path):
    h5py = pytest.importorskip("h5py")
    q, g = vectors(2, seed=1), vectors(4, seed=2)
    with h5py.File(tmp_path / "d.h5", "w") as h:
        h.create_dataset("queries", data=q, compression="gzip")
        h.create_dataset("gallery", data=g, chunks=(2, 4))
        h.create_dataset("query_names", data=["q1", "b"], dtype=h5py.string_dtype())
    d = read(tmp_path / "d.h5")
    assert d.tables[0].names == ("q1", "b") and d.tables[1].names == GALLERY
    assert not isinstance(d.tables[1].vectors, np.memmap)  # chunked: read whole
    np.testing.assert_array_equal(d.tables[1].vectors, g)


# -- pickles are never run ----------------------------------------------------------------

class _Payload:
    """Unpickling this would create the file ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def test_a_pickle_payload_in_an_npz_never_runs(tmp_path):
    marker = tmp_path / "ran"
    np.savez(tmp_path / "d.npz", features=vectors(5),
             names=np.array([_Payload(marker)] * 5, dtype=object))
    with pytest.raises(InputError) as caught:
        read(tmp_path / "d.npz")
    assert str(caught.value) == ("d.npz holds Python objects (pickle) in 'names'; irviewer "
                                 "only reads plain arrays: save names as a string array")
    assert not marker.exists()


def test_a_pickle_file_named_npz_never_runs(tmp_path):
    marker = tmp_path / "ran"
    (tmp_path / "d.npz").write_bytes(pickle.dumps({"features": _Payload(marker)}))
    with pytest.raises(InputError) as caught:
        read(tmp_path / "d.npz")
    assert str(caught.value) == ("d.npz is a Python pickle, not an .npz archive; irviewer "
                                 "never unpickles files: save the arrays with numpy.savez")
    assert not marker.exists()


# -- optional readers ---------------------------------------------------------------------

@pytest.fixture
def without(monkeypatch):
    """Return a function that makes importing the named top-level packages fail."""
    real = descriptor_files.importlib.import_module

    def hide(*packages: str) -> None:
        def fake(name, *args, **kwargs):
            if name.split(".", 1)[0] in packages:
                raise ImportError(name)
            return real(name, *args, **kwargs)

        monkeypatch.setattr(descriptor_files.importlib, "import_module", fake)

    return hide


def test_missing_h5py_names_the_extra(tmp_path, without, monkeypatch):
    (tmp_path / "d.h5").write_bytes(b"\x89HDF\r\n\x1a\n" + b"\0" * 100)
    (tmp_path / "d.mat").write_bytes(b"MATLAB 7.3 MAT-file" + b" " * 600)
    without("h5py")
    with pytest.raises(InputError) as caught:
        read(tmp_path / "d.h5")
    assert str(caught.value) == ("reading .h5 files needs h5py, which is not installed: "
                                 "install irviewer[hdf5] (pip install 'irviewer[hdf5]')")
    with pytest.raises(InputError) as caught:
        read(tmp_path / "d.mat")
    assert str(caught.value) == ("reading MATLAB v7.3 .mat files needs h5py, which is not "
                                 "installed: install irviewer[hdf5] (pip install "
                                 "'irviewer[hdf5]')")
    # the desktop app leaves h5py out on purpose: its sentence says so
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    with pytest.raises(InputError) as caught:
        read(tmp_path / "d.h5")
    assert str(caught.value) == ("reading .h5 files needs h5py, which is not installed: this "
                                 "desktop app does not include it; irviewer installed with "
                                 "pip does (pip install 'irviewer[hdf5]')")


# -- one exact sentence per bad file ------------------------------------------------------

def write_npz(tmp_path, **arrays):
    np.savez(tmp_path / "d.npz", **arrays)
    return tmp_path / "d.npz"


def put(path: Path, data: bytes | str) -> Path:
    """Write ``data`` to ``path`` and return the path."""
    if isinstance(data, str):
        path.write_text(data)
    else:
        path.write_bytes(data)
    return path


def truncated_npy(tmp_path: Path) -> Path:
    np.save(tmp_path / "d.npy", vectors(5))
    data = (tmp_path / "d.npy").read_bytes()
    return put(tmp_path / "d.npy", data[:-20])


def needs(module: str, path: Path) -> Path:
    """Return ``path``, skipping the test when the optional reader ``module`` is absent
    (without it the file gets the "needs h5py" sentence, tested on its own)."""
    pytest.importorskip(module)
    return path


def mat_v5(tmp_path: Path, **arrays: np.ndarray) -> Path:
    from scipy import io as scipy_io
    scipy_io.savemat(tmp_path / "d.mat", arrays)
    return tmp_path / "d.mat"


def h5(tmp_path: Path, **arrays: np.ndarray) -> Path:
    h5py = pytest.importorskip("h5py")
    with h5py.File(tmp_path / "d.h5", "w") as f:
        for key, value in arrays.items():
            if isinstance(value, dict):
                f.create_group(key)
            else:
                f[key] = value
    return tmp_path / "d.h5"


BAD_FILES = [
    # .npz
    ("pickled vectors",
     lambda p: write_npz(p, features=np.array([[1.0, 2.0]] * 5, dtype=object),
                         names=np.array(list("abcde"))),
     "d.npz holds Python objects (pickle) in 'features'; irviewer only reads plain arrays: "
     "save vectors as a float array"),
    ("wrong keys", lambda p: write_npz(p, x=vectors(5)),
     "d.npz: found keys x; expected queries + gallery (optional query_names, gallery_names) "
     "or features + names"),
    ("empty matrix", lambda p: write_npz(p, features=np.zeros((0, 4)), names=np.array([])),
     "d.npz holds no vectors"),
    ("no values per row", lambda p: write_npz(p, features=np.zeros((5, 0))),
     "d.npz (features): the vectors have no values (shape (5, 0))"),
    ("not 2-D", lambda p: write_npz(p, features=np.zeros(5), names=np.array(list("abcde"))),
     "d.npz (features): expected a 2-D matrix of row vectors, got shape (5,)"),
    ("complex", lambda p: write_npz(p, features=np.zeros((5, 2), dtype=complex),
                                    names=np.array(list("abcde"))),
     "d.npz (features): holds complex128 values, not real numbers"),
    ("strings as vectors", lambda p: write_npz(p, features=np.array([["1", "2"]] * 5)),
     "d.npz (features): holds <U1 values, not numbers"),
    ("float names", lambda p: write_npz(p, features=vectors(5), names=np.arange(5.0)),
     "d.npz (names): names must be strings, not float64 values"),
    ("names count", lambda p: write_npz(p, features=vectors(5), names=np.array(list("abc"))),
     "d.npz (names): 3 names for 5 rows"),
    ("names not UTF-8",
     lambda p: write_npz(p, features=vectors(2), names=np.array([b"a", b"\xff"])),
     "d.npz (names): name 1 is not UTF-8 text"),
    ("gallery without names, wrong count",
     lambda p: write_npz(p, queries=vectors(2), gallery=vectors(3)),
     "d.npz has 3 gallery vectors without names but the dataset has 4 gallery images; "
     "add a gallery_names array"),
    ("queries without names, wrong count",
     lambda p: write_npz(p, queries=vectors(3), gallery=vectors(4)),
     "d.npz has 3 query vectors without names but the dataset has 2 queries; "
     "add a query_names array"),
    ("features without names, wrong count", lambda p: write_npz(p, features=vectors(7)),
     "d.npz has 7 rows but the dataset has 4 gallery images (5 with the query that is not a "
     "gallery image); rows without names must follow the dataset's gallery order, then the "
     "query that is not a gallery image (or be named one per line by --row-names FILE), or "
     "add a 'names' array"),
    ("not a zip", lambda p: put(p / "d.npz", b"hello"),
     "d.npz: not a readable .npz archive (not a zip file)"),
    ("an npy named npz", lambda p: np.save(p / "d.npy", vectors(2)) or put(
        p / "d.npz", (p / "d.npy").read_bytes()),
     "d.npz holds a single .npy array, not an .npz archive of named arrays; name it .npy"),
    ("empty npz", lambda p: put(p / "d.npz", b""), "d.npz is empty"),
    # .npy
    ("npy row count", lambda p: np.save(p / "d.npy", vectors(3)) or p / "d.npy",
     "d.npy has 3 rows but the dataset has 4 gallery images (5 with the query that is not a "
     "gallery image); rows without names must follow the dataset's gallery order, then the "
     "query that is not a gallery image (or be named one per line by --row-names FILE)"),
    ("npy header cut", lambda p: put(p / "d.npy", b"\x93NUMPY\x01\x00v\x00{'descr'"),
     "d.npy: not a readable .npy array (its header is missing or damaged)"),
    ("npy not numpy", lambda p: put(p / "d.npy", b"1,2,3\n4,5,6\n"),
     "d.npy: not a readable .npy array (its header is missing or damaged)"),
    ("npy data cut", truncated_npy,
     "d.npy is truncated: its header promises 5 x 4 float32 values (80 bytes) but 60 bytes "
     "follow"),
    ("npy objects", lambda p: np.save(p / "d.npy", np.array([[1, "a"]], dtype=object))
     or p / "d.npy",
     "d.npy holds Python objects (pickle); irviewer only reads plain arrays: save the vectors "
     "as a float array"),
    ("npy 3-D", lambda p: np.save(p / "d.npy", np.zeros((2, 2, 2))) or p / "d.npy",
     "d.npy: expected a 2-D matrix of row vectors, got shape (2, 2, 2)"),
    ("npy no rows", lambda p: np.save(p / "d.npy", np.zeros((0, 8))) or p / "d.npy",
     "d.npy holds no vectors"),
    # .fvecs
    ("fvecs empty", lambda p: put(p / "d.fvecs", b""), "d.fvecs is empty"),
    ("fvecs truncated", lambda p: put(p / "d.fvecs", fvecs_bytes(vectors(5))[:-6]),
     "d.fvecs is truncated: 94 bytes is not a whole number of 5-value rows "
     "(4 whole rows and 14 bytes left over)"),
    ("fvecs too short", lambda p: put(p / "d.fvecs", b"\x04\x00"),
     "d.fvecs is truncated: 2 bytes hold no row"),
    ("fvecs headers", lambda p: put(p / "d.fvecs", fvecs_bytes(vectors(3))
                                     + np.array([5], "<i4").tobytes()
                                     + vectors(1, 4).astype("<f4").tobytes()),
     "d.fvecs: 1 row declares a dimension other than 4, e.g. row 3 declares 5; "
     "the file is damaged"),
    ("fvecs bad first dimension", lambda p: put(p / "d.fvecs", np.array(
        [-3, 0, 0, 0], "<i4").tobytes()),
     "d.fvecs: the first row declares dimension -3; not an .fvecs file (each row is an int32 "
     "dimension, then that many float32 values)"),
    ("fvecs row count", lambda p: put(p / "d.fvecs", fvecs_bytes(vectors(2))),
     "d.fvecs has 2 rows but the dataset has 4 gallery images (5 with the query that is not a "
     "gallery image); rows without names must follow the dataset's gallery order, then the "
     "query that is not a gallery image (or be named one per line by --row-names FILE)"),
    # .mat
    ("mat without Q", lambda p: mat_v5(p, X=vectors(4).T),
     "d.mat: a revisitop .mat file needs X (database vectors as columns) and Q (query vectors "
     "as columns)"),
    ("mat column count", lambda p: mat_v5(p, X=vectors(3).T, Q=vectors(2).T),
     "d.mat has 3 gallery vectors without names but the dataset has 4 gallery images; the "
     "columns of X must be the gallery images in the dataset's order"),
    ("mat complex", lambda p: mat_v5(p, X=vectors(4).T * 1j, Q=vectors(2).T),
     "d.mat (X): holds complex64 values, not real numbers"),
    ("mat garbage", lambda p: put(p / "d.mat", b"\0" * 200),
     None),  # scipy's own words follow the prefix; checked by prefix below
    # .h5
    ("h5 group", lambda p: h5(p, features={}, names=np.array([b"a"])),
     "d.h5: 'features' is a group, not an array"),
    ("h5 keys", lambda p: h5(p, vectors=vectors(2)),
     "d.h5: found keys vectors; expected queries + gallery (optional query_names, "
     "gallery_names) or features + names"),
    ("h5 garbage", lambda p: needs("h5py", put(p / "d.h5", b"not hdf5 at all")), None),
    # any file
    ("suffix", lambda p: put(p / "d.txt", "1 2 3"),
     "d.txt: unknown descriptor file type .txt; use one of .npz, .npy, .fvecs, .mat, .h5, "
     ".hdf5"),
    ("no suffix", lambda p: put(p / "d", "1 2 3"),
     "d: unknown descriptor file type (none); use one of .npz, .npy, .fvecs, .mat, .h5, "
     ".hdf5"),
]

PREFIXES = {"mat garbage": "d.mat: not a readable .mat file (",
            "h5 garbage": "d.h5: not a readable HDF5 file ("}


@pytest.mark.parametrize(("label", "make", "message"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_descriptor_files_give_one_sentence(tmp_path, label, make, message):
    path = make(tmp_path)
    with pytest.raises(InputError) as caught:
        read(path)
    text = str(caught.value)
    if message is None:
        assert text.startswith(PREFIXES[label]) and "\n" not in text
    else:
        assert text == message


def test_missing_file_and_folder_name_the_path(tmp_path):
    with pytest.raises(InputError) as caught:
        read(tmp_path / "nope.npz")
    assert str(caught.value) == f"{tmp_path / 'nope.npz'}: no such file"
    (tmp_path / "dir.npz").mkdir()
    with pytest.raises(InputError) as caught:
        read(tmp_path / "dir.npz")
    assert str(caught.value) == (f"{tmp_path / 'dir.npz'}: is a folder, not a descriptor file "
                                 "(nor an hpatches-benchmark <sequence>/<type>.csv folder)")


def test_unreadable_file_is_one_sentence(tmp_path, monkeypatch):
    np.save(tmp_path / "d.npy", vectors(4))

    def refuse(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "open", refuse)  # works as root too, unlike chmod
    with pytest.raises(InputError) as caught:
        read(tmp_path / "d.npy")
    assert str(caught.value) == f"{tmp_path / 'd.npy'}: permission denied"


def test_no_dataset_order_and_no_names_says_how_to_name_the_rows(tmp_path):
    np.savez(tmp_path / "d.npz", features=vectors(3))
    with pytest.raises(InputError) as caught:
        read_descriptors(tmp_path / "d.npz")
    assert str(caught.value) == (
        "d.npz has no image names for its 3 rows; give the dataset whose gallery order they "
        "follow (--row-names FILE names them one per line), or add a 'names' array")


# -- real data, when the shared samples are present ---------------------------------------

def test_oxford_fc7_fvecs_from_the_shared_samples(shared_samples):
    folder = shared_samples("oxford5k-lopq-fc7-features")
    names = (folder / "oxford5k_imlist_sorted.txt").read_text().split()
    d = read_descriptors(folder / "oxford_features.fvecs", gallery_names=names)
    vecs = d.tables[0].vectors
    assert vecs.shape == (5063, 128) and vecs.dtype == np.float32
    assert not isinstance(vecs, np.memmap)  # 2.6 MB: read whole
    assert d.sha256 == "a002574d9d5fb76bd3fe5c3d4b84566bebf099f3f545f11cc1bc461fa40fcd89"
    assert np.isfinite(np.asarray(vecs)).all()
