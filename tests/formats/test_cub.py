"""CUB-200-2011's lists (``images.txt``, ``image_class_labels.txt``): classes 101-200 read as a
leave-one-out set, detected among the readers, refused in one sentence when broken."""

from __future__ import annotations

import pytest

from irviewer.core.errors import InputError
from irviewer.formats.cub import read_cub, sniff_cub
from irviewer.formats.registry import detect, read_dataset
from tests.formats.learning_files import write_cub


def test_only_classes_101_to_200_are_read_in_list_order(tmp_path):
    paths = write_cub(tmp_path / "CUB_200_2011", [1, 101, 100, 200, 101, 200, 150],
                      images=True)
    d = read_cub(tmp_path / "CUB_200_2011")
    assert d.format == "cub200" and d.protocols == ("metric-learning",)
    kept = [paths[i][:-len(".jpg")] for i in (1, 3, 4, 5, 6)]
    assert d.gallery == tuple(kept)
    assert d.gallery_labels.tolist() == ["101", "200", "101", "200", "150"]
    assert [q.group("positive").tolist() for q in d.queries][:2] == [[0, 2], [1, 3]]
    assert d.image_paths[d.gallery[0]] == tmp_path / "CUB_200_2011" / "images" / paths[1]
    assert d.notes[0].startswith("1 image is alone in its label, e.g. 150.Bird_150/")


def test_the_folder_and_either_list_are_detected(tmp_path):
    write_cub(tmp_path / "cub", [101, 101])
    for p in ("cub", "cub/images.txt", "cub/image_class_labels.txt"):
        assert detect(tmp_path / p).name == "cub200", p
    assert not sniff_cub(tmp_path / "cub" / "classes.txt")
    (tmp_path / "cub" / "images.txt").write_text("image_id path\n")
    assert not sniff_cub(tmp_path / "cub")


@pytest.mark.parametrize(("images", "labels", "message"), [
    ("1 a/x.jpg\n2 b/y.jpg\n", "1 101\n", "cub: 1 image of images.txt has no class in "
     "image_class_labels.txt, e.g. image_id 2"),
    ("1 a/x.jpg\n", "1 101\n3 101\n", "cub: image_class_labels.txt gives a class to 1 "
     "image_id not in images.txt, e.g. 3"),
    ("1 a/x.jpg\n1 b/y.jpg\n", "1 101\n", "images.txt: line 2: image_id 1 is listed again "
     "(first on line 1)"),
    ("1 a/x.jpg extra\n", "1 101\n", "images.txt: line 1: 3 fields, not 2 (image_id path)"),
    ("1 a/x.jpg\n", "1 bird\n", "image_class_labels.txt: line 1: class_id 'bird' is not a "
     "whole number"),
    ("1 a/x.jpg\n", "1 201\n", "image_class_labels.txt: line 1: class 201 is outside 1-200"),
    ("1 a/x.jpg\n", "1 100\n", "cub: no image of classes 101-200, the classes metric "
     "learning tests on"),
])
def test_broken_lists_are_refused_in_one_sentence(tmp_path, images, labels, message):
    folder = tmp_path / "cub"
    folder.mkdir()
    (folder / "images.txt").write_text(images)
    (folder / "image_class_labels.txt").write_text(labels)
    with pytest.raises(InputError) as e:
        read_dataset(folder, format="cub200")
    assert str(e.value) == message


def test_a_folder_without_the_lists_is_refused(tmp_path):
    with pytest.raises(InputError, match=r"holds no images\.txt; give the CUB_200_2011 folder"):
        read_dataset(tmp_path, format="cub200")
