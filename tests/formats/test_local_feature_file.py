"""A collection's local-feature file: written and read back exactly; a missing or damaged
file is one sentence that says to index again."""

from __future__ import annotations

import numpy as np
import pytest

from irviewer.core.errors import InputError
from irviewer.core.local_features import FeatureTable, LocalFeatures
from irviewer.formats.local_feature_file import read_local_features, write_local_features


def test_the_table_reads_back_as_written(tmp_path):
    rng = np.random.default_rng(3)
    rows = {f"p{i}": LocalFeatures(rng.uniform(0, 512, (n, 2)).astype(np.float32),
                                   rng.integers(0, 256, (n, 128)).astype(np.uint8), 512)
            for i, n in enumerate((4, 0, 7))}
    table = FeatureTable.of(rows, 512)
    write_local_features(tmp_path / "f.npz", table)
    back = read_local_features(tmp_path / "f.npz")
    assert back.names == ("p0", "p1", "p2") and back.side == 512
    assert np.array_equal(back.offsets, table.offsets)
    assert np.array_equal(back.points, table.points)
    assert np.array_equal(back.descriptors, table.descriptors)


def test_a_missing_or_damaged_file_says_to_index_again(tmp_path):
    with pytest.raises(InputError, match=r"f\.npz: no such file; index the photos again"):
        read_local_features(tmp_path / "f.npz")
    (tmp_path / "f.npz").write_bytes(b"PK\x03\x04 not really")
    with pytest.raises(InputError, match=r"not a local-feature file irviewer wrote .*index "
                                         r"the photos again"):
        read_local_features(tmp_path / "f.npz")
    np.savez(tmp_path / "g.npz", names=np.array(["a"]))
    with pytest.raises(InputError, match="not a local-feature file"):
        read_local_features(tmp_path / "g.npz")
    np.save(tmp_path / "h.npy", np.zeros(3))  # an array, not an archive
    (tmp_path / "h.npy").rename(tmp_path / "h.npz")
    with pytest.raises(InputError, match="not a local-feature file"):
        read_local_features(tmp_path / "h.npz")
