"""A curator's edits of a collection, Qt-free: an artwork's fields written to the titles
file and the manifest (and undone), kept by a re-run of the indexer; a titles file made
and recorded for a collection that had none; photos removed into the hidden folder and
back, never deleted; the last photo kept."""

from __future__ import annotations

import csv

import pytest

from irviewer.collection.curation import (
    NEW_TITLES,
    REMOVED,
    EditArtwork,
    RemovePhotos,
    artwork_fields,
    titles_path,
)
from irviewer.collection.describing import SERIAL
from irviewer.collection.indexing import IndexRequest
from irviewer.core.errors import InputError
from irviewer.formats.collection import MANIFEST, read_collection, read_record
from tests.collection_photos import flat_folder, folder_of_subfolders, index_now


def index(photos, out, titles=None):
    return index_now(IndexRequest(photos, out, titles, mode=SERIAL))


def test_an_edit_goes_to_the_titles_file_and_the_manifest_and_survives_a_rerun(tmp_path):
    flat_folder(tmp_path / "p", 3)
    (tmp_path / "t.csv").write_text("id,Title,artist,room\nart00.jpg,Old,Ann,2\n"
                                    "art01,Other,Bob,4\n")
    index(tmp_path / "p", tmp_path / "c", tmp_path / "t.csv")
    assert artwork_fields(tmp_path / "c", "art00") == {
        "title": "Old", "artist": "Ann", "room": "2", "year": ""}
    edit = EditArtwork(tmp_path / "c", "art00", {"title": "New, with a comma",
                                                 "artist": "Ann", "year": "1503"})
    assert edit.old == {"title": "Old", "artist": "Ann", "year": ""}
    edit.do()
    rows = list(csv.reader((tmp_path / "t.csv").read_text().splitlines()))
    assert rows[0] == ["id", "Title", "artist", "room", "year"]
    assert rows[1] == ["art00.jpg", "New, with a comma", "Ann", "2", "1503"]
    assert rows[2] == ["art01", "Other", "Bob", "4", ""]
    ds = read_collection(tmp_path / "c")
    assert ds.titles["art00"] == "New, with a comma — Ann"
    assert ds.details_line("art00") == "room 2 · year 1503"
    index(tmp_path / "p", tmp_path / "c")  # a re-run reads the titles file again
    assert read_collection(tmp_path / "c").titles["art00"] == "New, with a comma — Ann"
    edit.undo()
    ds = read_collection(tmp_path / "c")
    assert ds.titles["art00"] == "Old — Ann" and ds.details_line("art00") == "room 2"


def test_a_collection_without_titles_gets_a_titles_file_on_its_first_edit(tmp_path):
    folder_of_subfolders(tmp_path / "p", {"mona": 2, "wave": 1})
    index(tmp_path / "p", tmp_path / "c")
    assert titles_path(tmp_path / "c") is None
    EditArtwork(tmp_path / "c", "mona", {"title": "Mona Lisa", "artist": "Leonardo"}).do()
    assert read_record(tmp_path / "c").titles == NEW_TITLES
    assert titles_path(tmp_path / "c") == tmp_path / "c" / NEW_TITLES
    assert (tmp_path / "c" / NEW_TITLES).read_text() == "id,title,artist\nmona,Mona Lisa,Leonardo\n"
    ds = read_collection(tmp_path / "c")
    assert ds.titles["mona:1"] == ds.titles["mona:2"] == "Mona Lisa — Leonardo"
    index(tmp_path / "p", tmp_path / "c")
    assert read_collection(tmp_path / "c").titles["mona:2"] == "Mona Lisa — Leonardo"


def test_removed_photos_move_to_the_hidden_folder_and_back(tmp_path):
    folder_of_subfolders(tmp_path / "p", {"mona": 2, "wave": 1})
    index(tmp_path / "p", tmp_path / "c")
    remove = RemovePhotos(tmp_path / "c", ("wave/1.jpg",), "the artwork wave")
    remove.do()
    assert not (tmp_path / "p" / "wave").exists()  # the emptied folder went too
    assert (tmp_path / "p" / REMOVED / "wave" / "1.jpg").is_file()
    record = index(tmp_path / "p", tmp_path / "c").record
    assert [p.artwork for p in record.photos] == ["mona", "mona"]
    assert "wave" not in (tmp_path / "c" / MANIFEST).read_text()
    remove.undo()
    assert (tmp_path / "p" / "wave" / "1.jpg").is_file()
    assert not (tmp_path / "p" / REMOVED).exists()
    assert index(tmp_path / "p", tmp_path / "c").record.artworks == 2


def test_the_last_photos_and_bad_fields_are_refused(tmp_path):
    flat_folder(tmp_path / "p", 2)
    index(tmp_path / "p", tmp_path / "c")
    with pytest.raises(InputError, match="these are all of its photos"):
        RemovePhotos(tmp_path / "c", ("art00.jpg", "art01.jpg"), "everything").do()
    with pytest.raises(InputError, match="'instance' cannot be a field of an artwork"):
        EditArtwork(tmp_path / "c", "art00", {"instance": "x"})
    with pytest.raises(InputError, match="no photo is of the artwork nope"):
        artwork_fields(tmp_path / "c", "nope")
