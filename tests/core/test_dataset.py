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


def _titled() -> Dataset:
    return Dataset(name="d", format="test", path=None, gallery=("a", "b", "c"),
                   queries=(build_query("q1", "q1.jpg", {"positive": [0], "junk": []},
                                        meta={"title": "Query one"}),
                            build_query("q2", "q2.jpg", {"positive": [1], "junk": []})),
                   groups=("positive", "junk"), protocols=("instance",),
                   titles={"a": "Image a", "b": ""})


def test_image_titles_merge_query_titles_and_the_readers_and_survive_a_correction():
    ds = _titled()
    assert ds.image_titles == {"q1.jpg": "Query one", "a": "Image a"}
    corrected = ds.with_ground_truth({1: build_query("q2", "q2.jpg", {"positive": [2]})})
    assert corrected.image_titles is ds.image_titles  # computed once, shared by the copy


def test_has_members_says_whether_any_query_lists_the_group():
    ds = _titled()
    assert ds.has_members("positive") and not ds.has_members("junk")
    corrected = ds.with_ground_truth({1: build_query("q2", "q2.jpg",
                                                     {"positive": [1], "junk": [2]})})
    assert corrected.has_members("junk")
    corrected.group_table("junk")  # the table, once built, answers the same
    assert corrected.has_members("junk") and not corrected.has_members("ok")


def test_group_sizes_follow_corrections_without_recounting():
    ds = _titled()
    assert (ds.group_size("positive"), ds.group_size("junk")) == (2, 0)
    step = ds.with_ground_truth({0: build_query("q1", "q1.jpg", {"positive": [], "junk": [1, 2]},
                                                meta={"title": "Query one"})})
    assert (step.group_size("positive"), step.group_size("junk")) == (1, 2)
    fresh = Dataset(name="d", format="test", path=None, gallery=ds.gallery,
                    queries=step.queries, groups=ds.groups, protocols=ds.protocols)
    assert (fresh.group_size("positive"), fresh.group_size("junk")) == (1, 2)
    back = step.with_ground_truth({0: ds.queries[0]})
    assert not back.has_members("junk") and back.group_size("positive") == 2
    assert not ds.has_self_images
