"""The dataset's globally ignored mask: one cached, read-only array."""

from __future__ import annotations

import numpy as np
import pytest

from irviewer.core.dataset import Dataset, build_query


def test_ignored_mask_marks_global_ignored_once_and_is_read_only():
    ds = Dataset(name="d", format="test", path=None, gallery=("a", "b", "c", "d"),
                 queries=(build_query("q", "q", {"positive": [0]}),), groups=("positive",),
                 protocols=("instance",), global_ignored=np.array([1, 3]))
    mask = ds.ignored_mask
    assert mask.tolist() == [False, True, False, True]
    assert ds.ignored_mask is mask  # computed once per dataset
    with pytest.raises(ValueError):
        mask[0] = True
