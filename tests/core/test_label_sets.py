"""Datasets built from label arrays: the leave-one-out set (every image a query, its label's
images positive, itself removed by index) and the query -> gallery set, their checks of bad
labels, and a relabel re-deriving their queries by the instance sets' rule."""

from __future__ import annotations

import numpy as np
import pytest

from irviewer.core.corrections import Correction, apply_correction
from irviewer.core.errors import InputError
from irviewer.core.evaluation import evaluate, query_roles
from irviewer.core.label_sets import label_array, leave_one_out_dataset, query_gallery_dataset
from irviewer.core.protocols import get_protocol
from irviewer.core.ranking import rank
from tests.core.helpers import aligned


def test_every_image_is_a_query_whose_positives_are_its_label_without_itself():
    d = leave_one_out_dataset([7, 3, 7, 7, 3], names=["a", "b", "c", "d", "e"])
    assert d.gallery == ("a", "b", "c", "d", "e")
    assert [q.name for q in d.queries] == list(d.gallery)
    assert [q.self_index for q in d.queries] == [0, 1, 2, 3, 4]
    protocol = get_protocol("metric-learning")
    positives = [query_roles(q, protocol, d.ignored_mask)[0].tolist() for q in d.queries]
    assert positives == [[2, 3], [4], [0, 3], [0, 2], [1]]
    assert d.gallery_labels.tolist() == ["7", "3", "7", "7", "3"]
    assert d.protocols == ("metric-learning",) and d.notes == ()


def test_names_default_to_positions_and_a_query_gallery_set_to_prefixed_ones():
    assert leave_one_out_dataset(["x", "x"]).gallery == ("0", "1")
    d = query_gallery_dataset([1, 2], [2, 2, 1])
    assert d.gallery == ("gallery-0", "gallery-1", "gallery-2")
    assert [q.name for q in d.queries] == ["query-0", "query-1"]
    assert [q.group("positive").tolist() for q in d.queries] == [[2], [0, 1]]
    assert [q.self_index for q in d.queries] == [-1, -1]


def test_a_query_named_as_a_gallery_image_is_that_image():
    d = query_gallery_dataset(["a"], ["a", "a"], query_names=["g1"],
                              gallery_names=["g0", "g1"])
    assert d.queries[0].self_index == 1


def test_queries_with_nothing_to_retrieve_are_noted_and_skipped():
    d = query_gallery_dataset([1, 5, 6], [1, 1])
    assert d.notes == ("2 queries have no gallery image of their label, e.g. query-1, "
                       "query-2: reported as skipped and left out of the means",)
    x = np.eye(3, dtype=np.float32)
    ev = evaluate(d, rank(aligned(x, x[:2]), d), get_protocol("inshop"))
    assert ev.summary["n_skipped"] == 2 and ev.summary["n_evaluated"] == 1
    alone = leave_one_out_dataset([1, 2, 2, 3])
    assert alone.notes[0].startswith("2 images are alone in their label, e.g. 0, 3:")


def test_labels_are_read_as_whole_numbers_or_strings():
    assert label_array([3, 3.0, np.int16(4)]).tolist() == ["3", "3", "4"]
    assert label_array(np.array([[1.0], [2.0]])).tolist() == ["1", "2"]
    assert label_array(np.array(["cat", "dog"], dtype=object)).tolist() == ["cat", "dog"]
    assert not label_array([1, 2]).flags.writeable


@pytest.mark.parametrize(("labels", "message"), [
    ([], "labels: no label given"),
    (np.zeros((3, 2)), "labels: one label per image is needed, got an array of shape (3, 2)"),
    ([1.0, float("nan")], "labels: 1 label is missing (NaN or infinite), e.g. at position 1"),
    ([1.0, 2.5], "labels: labels must be whole numbers or strings, but position 1 holds 2.5"),
    (np.array([1, None], dtype=object), "labels: labels must be whole numbers or strings, "
     "not None"),
    (np.array([1 + 2j]), "labels: labels must be whole numbers or strings, not complex128 "
     "values"),
])
def test_bad_labels_are_refused_in_one_sentence(labels, message):
    with pytest.raises(InputError) as e:
        leave_one_out_dataset(labels)
    assert str(e.value) == message


def test_names_must_be_one_per_label_and_unique():
    with pytest.raises(InputError, match=r"labels: 1 name for 2 labels; give one name per "
                                         r"image"):
        leave_one_out_dataset([1, 2], names=["a"])
    with pytest.raises(InputError, match="gallery names are repeated"):
        leave_one_out_dataset([1, 2], names=["a", "a"])


def test_a_relabel_moves_the_image_between_the_queries_of_both_labels():
    d = leave_one_out_dataset(["a", "a", "b", "b"], names=["p", "q", "r", "s"])
    change = apply_correction(d, Correction("", "q", "b"))
    new = change.dataset
    assert new.gallery_labels.tolist() == ["a", "b", "b", "b"]
    assert [q.group("positive").tolist() for q in new.queries] == [[0], [1, 2, 3], [1, 2, 3],
                                                                   [1, 2, 3]]
    assert change.changed.tolist() == [0, 1, 2, 3]
