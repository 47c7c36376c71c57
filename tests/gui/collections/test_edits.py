"""The curator's own edits in the window, offscreen: an artwork's details edited (F2) are
written to the titles file, show in the inspector and in presentation, survive a restart
and are undone and redone from the Collection menu; a photo and an artwork removed (moved
aside, never deleted) and put back; the Update dialog names the titles file in use; "Add
photos" offers titles, not ids."""

from __future__ import annotations

import pytest

from irviewer.collection import indexing
from irviewer.collection.curation import REMOVED
from irviewer.collection.describing import SERIAL
from irviewer.gui.collections.controller import artwork_choices
from irviewer.gui.main_window import MainWindow
from irviewer.opening.request import OpenRequest
from tests.collection_photos import flat_folder, folder_of_subfolders, index_now


@pytest.fixture(autouse=True)
def small_vocabulary(monkeypatch):
    monkeypatch.setattr(indexing, "LEARN_ROWS", 3000)


def new_window(qtbot) -> MainWindow:
    w = MainWindow(top_k=20, keep_sessions=False)
    qtbot.addWidget(w)
    qtbot.addWidget(w.presentation.view)
    w.collections.mode = SERIAL
    w.show()
    return w


@pytest.fixture
def collection(tmp_path):
    flat_folder(tmp_path / "photos", 3)
    (tmp_path / "titles.csv").write_text("id,title,artist\nart00,First,Ann\n"
                                         "art01,Second,Bob\nart02,Third,Cy\n")
    index_now(indexing.IndexRequest(tmp_path / "photos", tmp_path / "coll",
                                             tmp_path / "titles.csv", mode=SERIAL))
    return tmp_path / "coll"


def test_an_edited_title_shows_everywhere_survives_a_restart_and_undoes(qtbot, collection,
                                                                      tmp_path):
    window = new_window(qtbot)
    edits = window.collections.edits
    assert not edits.edit_action.isEnabled()
    window.open_request(OpenRequest(collection), sync=True)
    assert edits.edit_action.isEnabled() and edits.edit_action.shortcut().toString() == "F2"
    window.select_query("art00")  # the first photo: the one shown when it opens again
    dialog = edits.edit_dialog()
    qtbot.addWidget(dialog)
    assert list(dialog.edits) == ["title", "artist", "year"]
    assert f"Saved in the titles file {tmp_path / 'titles.csv'}" in dialog.where.text()
    dialog.edits["title"].setText("The Renamed One")
    dialog.edits["year"].setText("1889")
    dialog.accept()
    qtbot.waitUntil(lambda: window.opened.dataset.titles.get("art00", "").startswith(
        "The Renamed One"), timeout=30_000)
    qtbot.waitUntil(lambda: "The Renamed One — Ann" in window.results.query_title.text())
    assert window.opened.dataset.queries[window.current].image == "art00"
    assert "year 1889" in window.results.query_title.text()
    window.presentation.enter()
    assert window.presentation.view.slide.query_caption.title == "The Renamed One"
    window.presentation.leave()
    assert "art00,The Renamed One,Ann,1889" in (tmp_path / "titles.csv").read_text()
    edits.stack.undo()
    qtbot.waitUntil(lambda: window.opened.dataset.titles.get("art00") == "First — Ann",
                    timeout=30_000)
    qtbot.waitUntil(lambda: "First — Ann" in window.results.query_title.text())
    edits.stack.redo()
    qtbot.waitUntil(lambda: window.opened.dataset.titles.get("art00", "").startswith(
        "The Renamed One"), timeout=30_000)
    window.close()
    again = new_window(qtbot)  # a restart: the edit is in the files
    again.open_request(OpenRequest(collection), sync=True)
    assert again.opened.dataset.titles["art00"] == "The Renamed One — Ann"


def test_a_photo_and_an_artwork_are_removed_and_put_back(qtbot, tmp_path):
    folder_of_subfolders(tmp_path / "photos", {"mona": 2, "wave": 1, "swing": 1})
    index_now(indexing.IndexRequest(tmp_path / "photos", tmp_path / "coll",
                                             mode=SERIAL))
    window = new_window(qtbot)
    window.open_request(OpenRequest(tmp_path / "coll"), sync=True)
    edits = window.collections.edits
    questions = []
    edits.confirm = lambda question: questions.append(question) or True
    window.select_query("mona:2")
    edits.remove(artwork=False)
    qtbot.waitUntil(lambda: window.opened.dataset.n_gallery == 3, timeout=60_000)
    assert "the photo mona:2" in questions[0] and "never deleted" in questions[0]
    assert (tmp_path / "photos" / REMOVED / "mona" / "2.jpg").is_file()
    window.select_query("wave:1")
    edits.remove(artwork=True)
    qtbot.waitUntil(lambda: window.opened.dataset.n_gallery == 2, timeout=60_000)
    assert "wave" not in set(window.opened.dataset.gallery_labels.tolist())
    edits.stack.undo()
    qtbot.waitUntil(lambda: window.opened.dataset.n_gallery == 3, timeout=60_000)
    edits.stack.undo()
    qtbot.waitUntil(lambda: window.opened.dataset.n_gallery == 4, timeout=60_000)
    assert (tmp_path / "photos" / "mona" / "2.jpg").is_file()
    window.collections.dialog.cancel()


def test_the_update_dialog_names_the_titles_file_and_add_photos_offers_titles(
        qtbot, collection, tmp_path):
    window = new_window(qtbot)
    window.open_request(OpenRequest(collection), sync=True)
    dialog = window.collections.update_collection()
    qtbot.addWidget(dialog)
    assert dialog.titles.path() == tmp_path / "titles.csv"
    dialog.cancel()
    choices = artwork_choices(window.opened.dataset)
    assert choices == {"First — Ann": "art00", "Second — Bob": "art01",
                       "Third — Cy": "art02"}
