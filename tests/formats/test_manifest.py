"""The CSV manifest reader: instances, roles, ignore list, orphan removal, bad files."""

from __future__ import annotations

import re

import numpy as np
import pytest

from irviewer.core.errors import InputError
from irviewer.formats.base import ReadOptions
from irviewer.formats.manifest import read_manifest, sniff_manifest
from irviewer.formats.registry import detect, read_dataset

GOOD = """image,instance,role,title
paintings/mona_1.jpg,mona,both,Mona Lisa
paintings/mona_2.jpg,mona,gallery,
paintings/wave_1.jpg,wave,gallery,The Great Wave
queries/wave_q.jpg,wave,query,
queries/lonely.jpg,lonely,query,
paintings/blank_1.jpg,blank,both,
paintings/blank_2.jpg,blank,gallery,
"""


def write(tmp_path, text, name="set.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_reads_instances_roles_and_self_index(tmp_path):
    ds = read_manifest(write(tmp_path, GOOD))
    assert ds.gallery == ("paintings/mona_1", "paintings/mona_2", "paintings/wave_1",
                          "paintings/blank_1", "paintings/blank_2")
    names = [q.name for q in ds.queries]
    assert names == ["paintings/mona_1", "queries/wave_q", "paintings/blank_1"]
    mona = ds.queries[0]
    assert mona.self_index == 0
    assert mona.group("positive").tolist() == [0, 1]  # itself too: the protocol removes it
    assert mona.meta["title"] == "Mona Lisa"
    assert ds.queries[1].self_index == -1 and ds.queries[1].group("positive").tolist() == [2]
    assert ds.protocols == ("instance",)
    assert ds.skipped_queries[0].name == "queries/lonely"
    assert "has no other gallery image" in ds.skipped_queries[0].reason
    assert ds.image_paths["paintings/mona_1"] == (tmp_path / "paintings/mona_1.jpg").resolve()
    assert any("7 image files are missing" in n for n in ds.notes)


def test_titles_of_every_titled_image_gallery_included(tmp_path):
    ds = read_manifest(write(tmp_path, GOOD))
    assert dict(ds.titles) == {"paintings/mona_1": "Mona Lisa",
                               "paintings/wave_1": "The Great Wave"}


def test_ignore_list_removes_queries_and_ignores_gallery_images(tmp_path):
    ds = read_manifest(write(tmp_path, GOOD), ReadOptions(ignore_labels=("blank", "nosuch")))
    assert [q.name for q in ds.queries] == ["paintings/mona_1", "queries/wave_q"]
    assert ds.global_ignored.tolist() == [3, 4]
    assert any(s.reason == "instance 'blank' is on the ignore list" for s in ds.skipped_queries)
    assert any("1 label(s) appear nowhere" in n for n in ds.notes)


def test_orphans_can_be_kept(tmp_path):
    ds = read_manifest(write(tmp_path, GOOD), ReadOptions(drop_orphans=False))
    assert "queries/lonely" in [q.name for q in ds.queries]


def test_sniff_and_registry(tmp_path):
    path = write(tmp_path, GOOD)
    assert sniff_manifest(path)
    assert detect(path).name == "manifest"
    assert not sniff_manifest(write(tmp_path, "a,b\n1,2\n", "other.csv"))
    assert read_dataset(path, "manifest").n_gallery == 5
    assert np.all(read_dataset(path).gallery_labels == ["mona", "mona", "wave", "blank", "blank"])


BAD = [
    ("", "set.csv is empty: a manifest needs the header image,instance,role"),
    ("image,instance\na.jpg,x\n",
     "set.csv: the header lacks column(s) role; it must have image,instance,role "
     "(found image,instance)"),
    ("image,instance,role\n", "set.csv has a header but no images"),
    ("image,instance,role\na.jpg,x,querry\n",
     "set.csv, line 2: role 'querry' is not one of query, gallery, both"),
    ("image,instance,role\na.jpg,,gallery\n", "set.csv, line 2: the instance field is empty"),
    ("image,instance,role\na.jpg,x\n", "set.csv, line 2: 2 fields where the header has 3"),
    ("image,instance,role\na.jpg,x,gallery\nb.jpg,x,gallery\na.jpg,x,query\n",
     "set.csv, line 4: image a.jpg is already listed on line 2; list each image once "
     "(role both for an image that is query and gallery)"),
    ("image,instance,role\na.jpg,x,query\n",
     "set.csv: no image has role gallery or both, so there is nothing to search"),
    ("image,instance,role\na.jpg,x,gallery\n",
     "set.csv: no image has role query or both, so there is nothing to evaluate"),
    ("image,instance,role\na.jpg,x,gallery\nb.jpg,y,query\n",
     "set.csv: all 1 queries were removed (instance 'y' has no other gallery image, ...); "
     "nothing is left to evaluate"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_manifests_give_one_clear_sentence(tmp_path, text, message):
    with pytest.raises(InputError, match=re.escape(message)):
        read_manifest(write(tmp_path, text))


def test_not_utf8_and_missing_file(tmp_path):
    path = tmp_path / "set.csv"
    path.write_bytes(b"image,instance,role\n\xff\xfe,x,query\n")
    with pytest.raises(InputError, match=re.escape("set.csv: not UTF-8 text (byte 20)")):
        read_manifest(path)
    with pytest.raises(InputError, match="no such file"):
        read_dataset(tmp_path / "nope.csv")
    with pytest.raises(InputError, match="not a dataset irviewer recognises"):
        read_dataset(write(tmp_path, "x\n", "notes.txt"))
    with pytest.raises(InputError, match="unknown format 'nosuch'"):
        read_dataset(path, "nosuch")



NAMED = """image,instance,role,name,title,artist,Year,Room
a/1.jpg,mona,both,mona:1,Mona Lisa,Leonardo,1503,3
b/1.jpg,wave,both,wave:1,,Hokusai,1831,
b/2.jpg,wave,gallery,wave:2,The Great Wave,,,
"""


def test_name_artist_and_other_columns_as_details(tmp_path):
    ds = read_manifest(write(tmp_path, NAMED))
    assert ds.gallery == ("mona:1", "wave:1", "wave:2")
    assert ds.image_paths["wave:2"] == (tmp_path / "b/2.jpg").resolve()
    assert dict(ds.titles) == {"mona:1": "Mona Lisa — Leonardo", "wave:1": "wave — Hokusai",
                               "wave:2": "The Great Wave"}
    assert ds.details == {"mona:1": (("Year", "1503"), ("Room", "3")),
                          "wave:1": (("Year", "1831"),)}
    assert ds.details_line("mona:1") == "Year 1503 · Room 3"
    assert ds.details_line("wave:2") == ""


def test_a_repeated_name_is_refused(tmp_path):
    text = "image,instance,role,name\na.jpg,x,both,n\nb.jpg,x,gallery,n\n"
    with pytest.raises(InputError, match="line 3: the name n is already listed on line 2"):
        read_manifest(write(tmp_path, text))


def test_written_manifests_keep_names_other_than_the_paths(tmp_path):
    from irviewer.formats.manifest import new_manifest

    ds = read_manifest(write(tmp_path, NAMED))
    (tmp_path / "out.csv").write_bytes(new_manifest(tmp_path / "out.csv", ds))
    again = read_manifest(tmp_path / "out.csv")
    assert again.gallery == ds.gallery
    assert (tmp_path / "out.csv").read_text().splitlines()[0] == "image,instance,role,name"
