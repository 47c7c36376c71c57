"""Local features as one image's and as a table of many: rows by offset, round trip, and
bad shapes refused."""

from __future__ import annotations

import numpy as np
import pytest

from irviewer.core.local_features import FeatureTable, LocalFeatures


def features(n: int, seed: int) -> LocalFeatures:
    rng = np.random.default_rng(seed)
    return LocalFeatures(rng.uniform(0, 500, (n, 2)).astype(np.float32),
                         rng.integers(0, 256, (n, 128)).astype(np.uint8), 512)


def test_a_table_gives_each_image_its_own_rows():
    a, b, c = features(3, 1), LocalFeatures.empty(512), features(5, 2)
    table = FeatureTable.of({"a": a, "b": b, "c": c}, 512)
    assert table.offsets.tolist() == [0, 3, 3, 8]
    assert "b" in table and "d" not in table and table.get("d") is None
    for name, f in (("a", a), ("b", b), ("c", c)):
        got = table.get(name)
        assert got is not None and len(got) == len(f)
        assert np.array_equal(got.points, f.points)
        assert np.array_equal(got.descriptors, f.descriptors)
    assert len(FeatureTable.of({}, 512).names) == 0


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match="3 points need 3 x 128 descriptors"):
        LocalFeatures(np.zeros((3, 2), np.float32), np.zeros((2, 128), np.uint8), 512)
    with pytest.raises(ValueError, match="offsets do not divide"):
        FeatureTable(("a", "b"), np.array([0, 2, 1]), np.zeros((1, 2), np.float32),
                     np.zeros((1, 128), np.uint8), 512)
    with pytest.raises(ValueError, match="offsets do not divide"):
        FeatureTable(("a",), np.array([0, 4]), np.zeros((3, 2), np.float32),
                     np.zeros((3, 128), np.uint8), 512)
