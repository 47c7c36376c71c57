"""Descriptor files: every format round-trips, alignment by name, and one sentence per bad file."""

from __future__ import annotations

import pickle
import re

import numpy as np
import pytest

from irviewer.core.dataset import Dataset, build_query
from irviewer.core.descriptors import align, name_key
from irviewer.core.errors import InputError
from irviewer.formats import descriptor_files
from irviewer.formats.descriptor_files import read_descriptors

GALLERY = ("a", "b", "c", "d")


def dataset(queries=(("q1", "q1"), ("b", "b"))) -> Dataset:
    qs = tuple(build_query(name, image, {"positive": [0]}) for name, image in queries)
    return Dataset(name="t", format="test", path=None, gallery=GALLERY, queries=qs,
                   groups=("positive",), protocols=("instance",))


def vectors(n: int, dim: int = 4, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32) + 3


def read(path, ds=None):
    ds = ds or dataset()
    return read_descriptors(path, gallery_names=ds.gallery,
                            query_names=tuple(q.name for q in ds.queries))


def test_npz_features_and_names_align_by_name_with_extensions(tmp_path):
    f = vectors(5)
    np.savez(tmp_path / "d.npz", features=f,
             names=np.array(["x/d.jpg", "c.JPG", "q1.png", "b", "a"]))
    d = read(tmp_path / "d.npz")
    assert d.dim == 4 and len(d.sha256) == 64
    al = align(d, dataset())
    np.testing.assert_array_equal(al.gallery_rows, [4, 3, 1, 0])
    np.testing.assert_allclose(al.queries[0], f[2] / np.linalg.norm(f[2]), rtol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(al.queries, axis=1), 1, rtol=1e-6)


def test_query_id_row_wins_over_the_image_row(tmp_path):
    # Query "crop1" is cut from image "b": a row named "crop1" (a cropped-query descriptor)
    # is used when present, else b's row.
    f = vectors(5)
    np.savez(tmp_path / "d.npz", features=f, names=np.array(["a", "b", "c", "d", "crop1"]))
    ds = dataset(queries=(("crop1", "b"), ("other", "c")))
    al = align(read(tmp_path / "d.npz", ds), ds)
    np.testing.assert_allclose(al.queries[0], f[4] / np.linalg.norm(f[4]), rtol=1e-6)
    np.testing.assert_allclose(al.queries[1], f[2] / np.linalg.norm(f[2]), rtol=1e-6)


def test_npz_two_tables_with_and_without_names(tmp_path):
    q, g = vectors(2, seed=1), vectors(4, seed=2)
    np.savez(tmp_path / "named.npz", queries=q, gallery=g, query_names=np.array(["q1", "b"]),
             gallery_names=np.array(GALLERY))
    np.savez(tmp_path / "plain.npz", queries=q, gallery=g)
    for name in ("named.npz", "plain.npz"):
        al = align(read(tmp_path / name), dataset())
        assert al.gallery_rows is None
        np.testing.assert_allclose(al.queries[1], q[1] / np.linalg.norm(q[1]), rtol=1e-6)


def test_npy_is_memory_mapped_and_kept_as_is(tmp_path):
    g = vectors(5).astype(np.float16)  # gallery a..d, then query q1 (not in the gallery)
    np.save(tmp_path / "d.npy", g)
    al = align(read(tmp_path / "d.npy"), dataset())
    assert isinstance(al.gallery, np.memmap) and al.gallery.dtype == np.float16
    assert al.gallery_rows is None


def test_fvecs_round_trip(tmp_path):
    f = vectors(5)
    rows = np.hstack([np.full((5, 1), 4, dtype=np.int32).view(np.float32), f])
    rows.astype("<f4").tofile(tmp_path / "d.fvecs")
    d = read(tmp_path / "d.fvecs")
    np.testing.assert_array_equal(np.asarray(d.tables[0].vectors), f)
    assert isinstance(d.tables[0].vectors, np.memmap)


def test_mat_revisitop_layout(tmp_path):
    scipy_io = pytest.importorskip("scipy.io")
    q, g = vectors(2, seed=1), vectors(4, seed=2)
    scipy_io.savemat(tmp_path / "d.mat", {"X": g.T, "Q": q.T})
    al = align(read(tmp_path / "d.mat"), dataset())
    np.testing.assert_allclose(al.queries[0], q[0] / np.linalg.norm(q[0]), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(al.gallery), g)


def test_h5_keys(tmp_path):
    h5py = pytest.importorskip("h5py")
    f = vectors(5)
    with h5py.File(tmp_path / "d.h5", "w") as h:
        h["features"] = f
        h["names"] = np.array([b"a", b"b", b"c", b"d", b"q1"])
    al = align(read(tmp_path / "d.h5"), dataset())
    assert al.gallery_rows is None


def test_missing_optional_reader_names_the_extra(tmp_path, monkeypatch):
    (tmp_path / "d.mat").write_bytes(b"MATLAB 5.0 MAT-file" + b" " * 200)
    real = descriptor_files.importlib.import_module

    def fake(name, *a, **k):
        if name.startswith("scipy"):
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(descriptor_files.importlib, "import_module", fake)
    with pytest.raises(InputError, match=re.escape(
            "reading .mat files needs scipy.io: pip install 'irviewer[mat]'")):
        read(tmp_path / "d.mat")


def test_name_key():
    assert name_key("oxford/all_souls_000013.jpg") == "all_souls_000013"
    assert name_key("v_bricks.e3.85") == "v_bricks.e3.85"  # not an image extension


def write_npz(tmp_path, **arrays):
    np.savez(tmp_path / "d.npz", **arrays)
    return tmp_path / "d.npz"


def put(path, data: bytes | str):
    """Write ``data`` to ``path`` and return the path."""
    if isinstance(data, str):
        path.write_text(data)
    else:
        path.write_bytes(data)
    return path


def fvecs_bytes(rows: int, dim: int = 4) -> bytes:
    data = np.hstack([np.full((rows, 1), dim, dtype=np.int32).view(np.float32),
                      vectors(rows, dim)])
    return data.astype("<f4").tobytes()


BAD_FILES = [
    ("missing names in the file",
     lambda p: write_npz(p, features=vectors(3), names=np.array(["a", "b", "q1"])),
     "d.npz: 2 gallery images have no descriptor, e.g. c, d"),
    ("no query row",
     lambda p: write_npz(p, features=vectors(4), names=np.array(GALLERY)),
     "d.npz: 1 queries have no descriptor (neither by query id nor by image name), e.g. q1"),
    ("repeated names",
     lambda p: write_npz(p, features=vectors(6), names=np.array([*GALLERY, "q1", "a.jpg"])),
     "d.npz: 1 names appear more than once, e.g. a"),
    ("NaN rows",
     lambda p: write_npz(p, features=np.where(np.arange(5)[:, None] == 2, np.nan, vectors(5)),
                         names=np.array([*GALLERY, "q1"])),
     "d.npz: 1 rows contain NaN or infinite values, e.g. row 2 (c)"),
    ("zero rows",
     lambda p: write_npz(p, features=np.where(np.isin(np.arange(5), [0, 2])[:, None], 0,
                                              vectors(5)), names=np.array([*GALLERY, "q1"])),
     "d.npz: 2 rows are all zero (no direction to compare), e.g. row 0 (a), row 2 (c)"),
    ("zero query row",
     lambda p: write_npz(p, features=np.where(np.arange(5)[:, None] == 4, 0, vectors(5)),
                         names=np.array([*GALLERY, "q1"])),
     "d.npz: 1 query rows are all zero (no direction to compare), e.g. row 0 (q1)"),
    ("different dimensions",
     lambda p: write_npz(p, queries=vectors(2, 3), gallery=vectors(4, 4)),
     "d.npz: the query and gallery vectors have different dimensions (3 and 4)"),
    ("pickled names",
     lambda p: write_npz(p, features=vectors(5),
                         names=np.array([*GALLERY, "q1"], dtype=object)),
     "d.npz holds Python objects (pickle) in 'names'; irviewer only reads plain arrays"),
    ("wrong keys", lambda p: write_npz(p, x=vectors(5)),
     "d.npz: found keys x; expected queries + gallery (optional query_names, gallery_names) "
     "or features + names"),
    ("empty matrix", lambda p: write_npz(p, features=np.zeros((0, 4)), names=np.array([])),
     "d.npz holds no vectors"),
    ("not 2-D", lambda p: write_npz(p, features=np.zeros(5), names=np.array(list("abcde"))),
     "d.npz (features): expected a 2-D matrix of row vectors, got shape (5,)"),
    ("complex", lambda p: write_npz(p, features=np.zeros((5, 2), dtype=complex),
                                    names=np.array(list("abcde"))),
     "d.npz (features): holds complex128 values, not real numbers"),
    ("not a zip", lambda p: put(p / "d.npz", b"hello"),
     "d.npz: not a readable .npz archive"),
    ("npy row count", lambda p: np.save(p / "d.npy", vectors(3)) or p / "d.npy",
     "d.npy: 3 rows but the dataset has 4 gallery images (+ 1 queries not in the gallery); "
     "the rows must follow the dataset's gallery order"),
    ("npy truncated",
     lambda p: put(p / "d.npy", b"\x93NUMPY\x01\x00v\x00{'descr'"),
     "d.npy: not a readable .npy array"),
    ("fvecs empty", lambda p: put(p / "d.fvecs", b""),
     "d.fvecs is empty"),
    ("fvecs truncated", lambda p: put(p / "d.fvecs", fvecs_bytes(5)[:-6]),
     "d.fvecs is truncated: 94 bytes is not a whole number of 5-value rows "
     "(4 whole rows and 14 bytes left over)"),
    ("fvecs headers", lambda p: put(p / "d.fvecs", fvecs_bytes(3)
                                     + np.array([5], "<i4").tobytes()
                                     + vectors(1, 4).astype("<f4").tobytes()),
     "d.fvecs: 1 rows declare a dimension other than 4, e.g. row 3 declares 5; "
     "the file is damaged"),
    ("suffix", lambda p: put(p / "d.txt", "1 2 3"),
     "d.txt: unknown descriptor file type .txt; use one of .npz, .npy, .fvecs, .mat, .h5, "
     ".hdf5"),
    ("missing", lambda p: p / "nope.npz", "nope.npz: no such file"),
    ("folder", lambda p: (p / "dir.npz").mkdir() or p / "dir.npz", "dir.npz: is a folder"),
]


@pytest.mark.parametrize(("label", "make", "message"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_descriptor_files_give_one_sentence(tmp_path, label, make, message):
    path = make(tmp_path)
    with pytest.raises(InputError, match=re.escape(message)):
        align(read(path), dataset())


def test_a_pickle_payload_never_runs(tmp_path):
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    np.savez(tmp_path / "d.npz", features=vectors(5),
             names=np.array([Evil()] * 5, dtype=object))
    with pytest.raises(InputError, match="Python objects"):
        read(tmp_path / "d.npz")
    assert not marker.exists()
    assert pickle  # the payload above is a real pickle reduce


def test_large_memmap_gallery_is_checked_during_ranking(tmp_path, monkeypatch):
    """Galleries above LAZY_CHECK_ROWS are validated chunk by chunk while ranking."""
    from irviewer.core import descriptors
    from irviewer.core.ranking import rank

    monkeypatch.setattr(descriptors, "LAZY_CHECK_ROWS", 2)
    g = vectors(5)
    g[3] = 0
    np.save(tmp_path / "d.npy", g)
    ds = dataset()
    al = align(read(tmp_path / "d.npy"), ds)  # not checked here: "large"
    with pytest.raises(InputError, match=re.escape(
            "d.npy: 1 rows are all zero (no direction to compare), e.g. row 3 (d)")):
        rank(al, ds)
