"""Stored (uncompressed) .npz members are read from their offset in the archive: whole and
aligned when small, memory-mapped when larger than READ_WHOLE_BYTES; both equal what np.load
reads. Other members are read by np.load; a member cut short gets one sentence."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest

from irviewer.core.errors import InputError
from irviewer.formats import descriptor_files
from irviewer.formats.descriptor_files import descriptor_names, read_descriptors

NAMES = ("a", "b", "c", "d", "e")


def stored_zip(path: Path, members: dict[str, np.ndarray]) -> Path:
    """Write ``members`` (.npy bytes under the given member names) into an uncompressed
    zip at ``path``, in that order; return ``path``."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for key, value in members.items():
            buf = io.BytesIO()
            np.save(buf, value)
            z.writestr(key, buf.getvalue())
    return path


def read(path: Path):
    return read_descriptors(path, gallery_names=NAMES, query_names=("a", "b"))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.uint8])
@pytest.mark.parametrize("order", ["C", "F"])
def test_stored_members_equal_np_load(tmp_path, dtype, order, storage):
    rng = np.random.default_rng(1)
    g = np.asarray(rng.integers(1, 9, (5, 7)), dtype=dtype, order=order)
    q = np.asarray(rng.integers(1, 9, (2, 7)), dtype=dtype, order=order)
    path = tmp_path / "d.npz"
    np.savez(path, queries=q, gallery=g, gallery_names=np.array(NAMES),
             query_names=np.array(["a", "b"]))
    d = read(path)
    with np.load(path) as archive:
        for table, key in zip(d.tables, ("queries", "gallery"), strict=True):
            assert isinstance(table.vectors, np.memmap) == (storage == "mapped")
            assert not table.vectors.flags.writeable
            if storage == "read":  # its own memory, aligned for the multiply
                assert table.vectors.flags.aligned and table.vectors.base is not None
            assert table.vectors.dtype == dtype
            assert table.vectors.flags.f_contiguous == (order == "F")
            np.testing.assert_array_equal(table.vectors, archive[key])
    assert d.tables[1].names == NAMES and d.tables[0].names == ("a", "b")
    assert descriptor_names(path) == NAMES


def test_features_member_without_npy_suffix_is_read_from_the_archive(tmp_path, storage):
    f = np.arange(20, dtype=np.float32).reshape(5, 4) + 1
    path = stored_zip(tmp_path / "d.npz", {"features": f, "names": np.array(NAMES)})
    table = read(path).tables[0]  # members named without ".npy"
    assert isinstance(table.vectors, np.memmap) == (storage == "mapped")
    np.testing.assert_array_equal(table.vectors, f)


def test_a_member_at_an_odd_offset_is_read_aligned(tmp_path, monkeypatch):
    """numpy.savez places members at any byte offset: here the values of "features.npy"
    start at byte 30 + 12 + 128 = 170, 2 bytes past a multiple of 4, as the gallery of a
    real Market-1501 file does. Mapped, the array is misaligned, and every matrix multiply
    copies it first; read, it is aligned."""
    f = np.arange(20, dtype=np.float32).reshape(5, 4) + 1
    path = stored_zip(tmp_path / "d.npz", {"features.npy": f, "names.npy": np.array(NAMES)})
    read_whole = read(path).tables[0].vectors
    assert read_whole.flags.aligned
    np.testing.assert_array_equal(read_whole, f)
    monkeypatch.setattr(descriptor_files, "READ_WHOLE_BYTES", 0)
    mapped = read(path).tables[0].vectors
    assert isinstance(mapped, np.memmap) and not mapped.flags.aligned
    np.testing.assert_array_equal(mapped, f)


def test_compressed_members_are_read(tmp_path):
    f = np.random.default_rng(2).standard_normal((5, 4)).astype(np.float32)
    path = tmp_path / "d.npz"
    np.savez_compressed(path, features=f, names=np.array(NAMES))
    table = read(path).tables[0]
    assert not isinstance(table.vectors, np.memmap)
    np.testing.assert_array_equal(table.vectors, f)


def test_a_member_cut_short_gives_one_sentence(tmp_path):
    buf = io.BytesIO()
    np.save(buf, np.ones((5, 4), dtype=np.float32))
    path = tmp_path / "d.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("features.npy", buf.getvalue()[:-24])  # the last rows are missing
    with pytest.raises(InputError) as caught:
        read(path)
    assert str(caught.value) == ("d.npz: 'features' is truncated: its header promises 5 x 4 "
                                 "float32 values (80 bytes) but 56 bytes follow")


def test_a_truncated_file_gives_one_sentence(tmp_path):
    path = tmp_path / "d.npz"
    np.savez(path, features=np.ones((50, 4), dtype=np.float32), names=np.array(list("x" * 50)))
    path.write_bytes(path.read_bytes()[:600])
    with pytest.raises(InputError) as caught:
        read(path)
    message = str(caught.value)
    assert message.startswith("d.npz: not a readable .npz archive (") and "\n" not in message
