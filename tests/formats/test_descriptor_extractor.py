"""The ``extractor`` member of an .npz descriptor file (which extractor made the vectors)."""

from __future__ import annotations

import numpy as np
import pytest

from irviewer.core.errors import InputError
from irviewer.formats.descriptor_files import descriptor_extractor, read_descriptors


def write(path, **extra):
    np.savez(path, features=np.eye(2, dtype=np.float32), names=np.array(["a", "b"]), **extra)
    return path


def test_the_member_is_read_as_a_string_0d_1_element_or_bytes(tmp_path):
    assert descriptor_extractor(write(tmp_path / "a.npz", extractor="my-net")) == "my-net"
    assert descriptor_extractor(write(tmp_path / "b.npz", extractor=np.array(["x"]))) == "x"
    assert descriptor_extractor(write(tmp_path / "c.npz", extractor=np.bytes_(b"y"))) == "y"


def test_no_member_or_another_file_type_names_no_extractor(tmp_path):
    assert descriptor_extractor(write(tmp_path / "a.npz")) is None
    np.save(tmp_path / "m.npy", np.eye(2, dtype=np.float32))
    assert descriptor_extractor(tmp_path / "m.npy") is None
    assert descriptor_extractor(write(tmp_path / "e.npz", extractor="  ")) is None


def test_a_member_that_is_not_one_string_is_one_sentence(tmp_path):
    with pytest.raises(InputError, match=r"'extractor' member must be one string naming the "
                       r"extractor, not 2 <U1 value"):
        descriptor_extractor(write(tmp_path / "a.npz", extractor=np.array(["x", "y"])))
    with pytest.raises(InputError, match="not 1 int64 value"):
        descriptor_extractor(write(tmp_path / "b.npz", extractor=np.int64(3)))


def test_the_member_does_not_disturb_reading_the_vectors(tmp_path):
    d = read_descriptors(write(tmp_path / "a.npz", extractor="my-net"))
    assert d.tables[0].names == ("a", "b") and d.dim == 2


def test_a_written_descriptor_file_names_its_extractor_and_state_beside_it(tmp_path):
    from irviewer.formats.descriptor_files import (
        descriptor_extractor_state,
        read_descriptors,
        write_descriptor_file,
    )

    features = np.arange(12, dtype=np.float32).reshape(3, 4)
    write_descriptor_file(tmp_path / "d.npz", features, ["a", "b:1", "c"], "demo-vlad",
                          "vocabulary.npz")
    assert descriptor_extractor(tmp_path / "d.npz") == "demo-vlad"
    assert descriptor_extractor_state(tmp_path / "d.npz") == tmp_path / "vocabulary.npz"
    table = read_descriptors(tmp_path / "d.npz").tables[0]
    assert table.names == ("a", "b:1", "c") and np.array_equal(table.vectors, features)
    first = (tmp_path / "d.npz").read_bytes()
    write_descriptor_file(tmp_path / "d.npz", features, ["a", "b:1", "c"], "demo-vlad",
                          "vocabulary.npz")
    assert (tmp_path / "d.npz").read_bytes() == first  # equal arrays, equal bytes
    write_descriptor_file(tmp_path / "e.npz", features, ["a", "b", "c"])
    assert descriptor_extractor_state(tmp_path / "e.npz") is None
