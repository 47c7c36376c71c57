"""In-Shop's ``list_eval_partition.txt``: query and gallery rows read as a query -> gallery set
by item id (train rows left out), detected among the readers, refused in one sentence when it
is not one."""

from __future__ import annotations

import pytest

from irviewer.core.errors import InputError
from irviewer.formats.inshop import read_inshop, sniff_inshop
from irviewer.formats.registry import detect, read_dataset
from tests.formats.learning_files import write_inshop

ROWS = [("id_1", "train"), ("id_2", "query"), ("id_2", "gallery"), ("id_3", "gallery"),
        ("id_3", "query"), ("id_2", "gallery"), ("id_4", "query")]


def test_queries_and_gallery_by_item_with_names_unique_without_folders(tmp_path):
    file, paths = write_inshop(tmp_path / "inshop", ROWS, images=True)
    d = read_inshop(tmp_path / "inshop")
    assert d.format == "inshop" and d.protocols == ("inshop",)
    assert d.gallery == ("img-WOMEN-Dresses-id_2-02_1_front",
                         "img-WOMEN-Dresses-id_3-01_1_front",
                         "img-WOMEN-Dresses-id_2-03_1_front")
    assert [q.name for q in d.queries] == ["img-WOMEN-Dresses-id_2-01_1_front",
                                           "img-WOMEN-Dresses-id_3-02_1_front",
                                           "img-WOMEN-Dresses-id_4-01_1_front"]
    assert [q.group("positive").tolist() for q in d.queries] == [[0, 2], [1], []]
    assert [q.self_index for q in d.queries] == [-1, -1, -1]
    assert d.image_paths[d.gallery[0]] == tmp_path / "inshop" / "Img" / paths[2]
    assert "file names repeat in different folders" in d.notes[0]
    assert d.notes[1].startswith("1 query has no gallery image of its label")
    assert read_inshop(file).gallery == d.gallery


def test_the_file_and_the_dataset_folder_are_detected(tmp_path):
    file, _ = write_inshop(tmp_path / "inshop", ROWS)
    assert detect(file).name == "inshop" and detect(tmp_path / "inshop").name == "inshop"
    assert detect(file.parent).name == "inshop"
    (tmp_path / "other.txt").write_text("12\nimage_name item_id\n")
    assert not sniff_inshop(tmp_path / "other.txt")


def test_a_count_line_that_disagrees_is_noted(tmp_path):
    file, _ = write_inshop(tmp_path / "inshop", ROWS, count=52712)
    d = read_inshop(file)
    assert ("list_eval_partition.txt: its first line says 52,712 images but 7 images are "
            "listed; the listed ones are read") in d.notes


@pytest.mark.parametrize(("text", "message"), [
    ("image_name item_id evaluation_status\n", "list_eval_partition.txt: not an In-Shop "
     "partition list; it starts with the number of images, then the header image_name "
     "item_id evaluation_status"),
    ("1\nimage_name item_id evaluation_status\na.jpg id_1\n", "list_eval_partition.txt: "
     "line 3: 2 fields, not 3 (image_name item_id evaluation_status)"),
    ("1\nimage_name item_id evaluation_status\na.jpg id_1 test\n", "list_eval_partition.txt: "
     "line 3: evaluation_status 'test' is not train, query or gallery"),
    ("1\nimage_name item_id evaluation_status\na.jpg id_1 gallery\n",
     "list_eval_partition.txt: lists no query image (evaluation_status query)"),
    ("2\nimage_name item_id evaluation_status\na/b.jpg id_1 gallery\na/b.jpg id_1 query\n",
     "list_eval_partition.txt: 1 image is listed twice, e.g. a/b"),
])
def test_what_is_not_a_partition_list_is_refused_in_one_sentence(tmp_path, text, message):
    (tmp_path / "list_eval_partition.txt").write_text(text)
    with pytest.raises(InputError) as e:
        read_dataset(tmp_path / "list_eval_partition.txt", format="inshop")
    assert str(e.value) == message
