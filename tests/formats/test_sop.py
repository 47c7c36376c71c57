"""Stanford Online Products' list (``Ebay_test.txt``): read as a leave-one-out set by product,
detected among the readers, and refused in one sentence when it is not one."""

from __future__ import annotations

import pytest

from irviewer.core.errors import InputError
from irviewer.formats.base import ReadOptions
from irviewer.formats.registry import detect, read_dataset
from irviewer.formats.sop import read_sop, sniff_sop
from tests.formats.learning_files import write_sop


def test_every_listed_image_is_a_query_labelled_by_its_product(tmp_path):
    file, paths = write_sop(tmp_path / "Stanford_Online_Products", [11319, 11320, 11319, 11320],
                            images=True)
    d = read_sop(file.parent)
    assert d.format == "sop" and d.protocols == ("sop",)
    assert d.gallery == tuple(p[:-len(".JPG")] for p in paths)
    assert [q.self_index for q in d.queries] == [0, 1, 2, 3]
    assert d.gallery_labels.tolist() == ["11319", "11320", "11319", "11320"]
    assert [q.group("positive").tolist() for q in d.queries] == [[0, 2], [1, 3], [0, 2], [1, 3]]
    assert d.image_paths[d.gallery[1]] == file.parent / paths[1]
    assert d.notes == ()
    assert read_sop(file).gallery == d.gallery


def test_it_is_detected_from_its_header_as_a_file_or_a_folder(tmp_path):
    file, _ = write_sop(tmp_path / "sop", [1, 1], name="Ebay_train.txt")
    assert detect(file).name == "sop"
    assert not sniff_sop(tmp_path / "sop")  # the folder's list is Ebay_test.txt
    write_sop(tmp_path / "sop", [1, 1])
    assert detect(tmp_path / "sop").name == "sop"
    other = tmp_path / "list.txt"
    other.write_text("image_id class_id path\n1 2 a.jpg\n")
    assert not sniff_sop(other)


def test_missing_images_are_noted_and_another_folder_can_hold_them(tmp_path):
    file, paths = write_sop(tmp_path / "sop", [5, 5, 6])
    d = read_sop(file)
    assert d.image_paths == {}
    assert "the images are not under" in d.notes[0] and "--images DIR" in d.notes[0]
    write_sop(tmp_path / "elsewhere", [5, 5, 6], images=True)
    d = read_dataset(file, options=ReadOptions(images=tmp_path / "elsewhere"))
    assert d.image_paths[d.gallery[0]] == tmp_path / "elsewhere" / paths[0]


@pytest.mark.parametrize(("text", "message"), [
    ("image_id class_id path\n1 2 a.jpg\n", "Ebay_test.txt: not a Stanford Online Products "
     "list; its first line must be the header image_id class_id super_class_id path"),
    ("image_id class_id super_class_id path\n", "Ebay_test.txt: lists no image after its "
     "header"),
    ("image_id class_id super_class_id path\n1 2 3\n", "Ebay_test.txt: line 2: 3 fields, "
     "not 4 (image_id class_id super_class_id path)"),
    ("image_id class_id super_class_id path\n1 x 3 a/b.JPG\n", "Ebay_test.txt: line 2: "
     "class_id 'x' is not a whole number"),
    ("image_id class_id super_class_id path\n1 2 3 a/b.JPG\n2 2 3 a/b.JPG\n",
     "Ebay_test.txt: 1 image is listed twice, e.g. a/b"),
])
def test_what_is_not_a_list_is_refused_in_one_sentence(tmp_path, text, message):
    (tmp_path / "Ebay_test.txt").write_text(text)
    with pytest.raises(InputError) as e:
        read_dataset(tmp_path / "Ebay_test.txt", format="sop")
    assert str(e.value) == message


def test_a_folder_without_the_list_is_refused(tmp_path):
    with pytest.raises(InputError, match=r"holds no Ebay_test\.txt; give the Stanford Online "
                                         r"Products folder or its list file"):
        read_dataset(tmp_path, format="sop")
