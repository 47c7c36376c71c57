"""A curator's collection in the window, offscreen: File ▸ New collection from
a folder… indexes off the GUI thread with progress and opens the result; Cancel writes
nothing; skipped photos and bad folders are said in the dialog; photos added to an open
collection are described alone and the collection reopens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from irviewer.collection import indexing
from irviewer.collection.describing import SERIAL
from irviewer.formats.collection import read_record
from irviewer.gui.collections.dialog import CollectionDialog, default_collection_folder
from irviewer.gui.main_window import MainWindow
from irviewer.opening.request import OpenRequest
from tests.collection_photos import artwork_image, flat_folder, folder_of_subfolders, index_now


@pytest.fixture(autouse=True)
def small_vocabulary(monkeypatch):
    monkeypatch.setattr(indexing, "LEARN_ROWS", 3000)


@pytest.fixture
def window(qtbot):
    w = MainWindow(top_k=20, keep_sessions=False)
    qtbot.addWidget(w)
    w.collections.mode = SERIAL
    w.show()
    return w


def actions(w: MainWindow) -> list[str]:
    return [a.text() for a in w.menus.file.actions()]


def test_the_file_menu_offers_a_new_collection_and_updates_only_for_a_collection(window):
    assert "&New collection from a folder…" in actions(window)
    assert window.collections.new_action.shortcut().toString() == "Ctrl+Shift+N"
    assert not window.collections.add_action.isEnabled()
    assert not window.collections.update_action.isEnabled()


def test_a_new_collection_is_indexed_in_the_background_and_opened(window, qtbot, tmp_path):
    flat_folder(tmp_path / "photos", 4)
    (tmp_path / "titles.csv").write_text("id,title,artist,room\nart00,First,Ann,2\n")
    dialog = window.collections.new_collection()
    qtbot.addWidget(dialog)
    dialog.photos.edit.setText(str(tmp_path / "photos"))
    assert dialog.out.path() == default_collection_folder(tmp_path / "photos") == \
        tmp_path / "photos collection"
    dialog.titles.edit.setText(str(tmp_path / "titles.csv"))
    seen = []
    window.collections.indexer.progress.connect(lambda *step: seen.append(step))
    dialog.start()  # a worker thread, as the button does
    qtbot.waitUntil(lambda: window.opened is not None
                    and window.opened.dataset.format == "collection", timeout=60_000)
    assert ("describing the photos", 4, 4) in seen
    # what the titles file lacks is said in the dialog, which stays until it is closed
    assert dialog.isVisible()
    assert "artwork art01 has no row in titles.csv" in dialog.skipped.toPlainText()
    ds = window.opened.dataset
    assert ds.n_gallery == 4 and ds.titles["art00"] == "First — Ann"
    assert window.collections.current == tmp_path / "photos collection"
    assert window.collections.update_action.isEnabled()
    assert window.statusBar().currentMessage() == "photos collection: 4 artworks, 4 photos"
    header = window.results.query_title.text()
    assert "First" in header and "room 2" in header


def test_skipped_photos_are_listed_and_a_bad_folder_is_one_sentence(window, qtbot, tmp_path):
    flat_folder(tmp_path / "photos", 2)
    (tmp_path / "photos" / "broken.jpg").write_bytes(b"")
    (tmp_path / "empty").mkdir()
    dialog = window.collections.new_collection(tmp_path / "empty", tmp_path / "c1")
    qtbot.addWidget(dialog)
    dialog.start(sync=True)
    assert "holds no photo irviewer reads" in dialog.status.text()
    assert dialog.isVisible() and dialog.start_button.isEnabled()
    dialog.photos.edit.setText(str(tmp_path / "photos"))
    dialog.out.edit.setText(str(tmp_path / "c2"))
    dialog.start(sync=True)
    assert dialog.isVisible() and dialog.skipped.isVisible()
    assert dialog.skipped.toPlainText() == "broken.jpg: the file is empty"
    assert dialog.status.text().startswith("indexed 2 artworks, 2 photos, 1 photo skipped")
    qtbot.waitUntil(lambda: window.opened is not None, timeout=60_000)
    dialog.cancel()  # Close
    assert not dialog.isVisible()


def indexed_with_empty_photos(window, qtbot, folder, names):
    """Return the indexing dialog once it has indexed two photos and the empty files
    ``names`` in ``folder``, and shows its box of skipped photos."""
    flat_folder(folder / "photos", 2)
    for name in names:
        (folder / "photos" / name).write_bytes(b"")
    dialog = window.collections.new_collection(folder / "photos", folder / "c")
    qtbot.addWidget(dialog)
    dialog.start(sync=True)
    qtbot.waitUntil(lambda: window.opened is not None, timeout=60_000)
    qtbot.waitUntil(lambda: dialog.skipped.isVisible())
    return dialog


def test_the_summary_box_shows_all_its_lines(window, qtbot, tmp_path):
    """Eight skipped photos: eight lines, all in view without scrolling."""
    dialog = indexed_with_empty_photos(window, qtbot, tmp_path,
                                       [f"broken{i}.jpg" for i in range(8)])
    assert dialog.skipped.toPlainText().count("\n") == 7
    qtbot.waitUntil(lambda: dialog.skipped.verticalScrollBar().maximum() == 0)
    dialog.cancel()


def test_long_lines_wrap_in_the_summary_box_and_all_their_rows_show(window, qtbot, tmp_path):
    """Three skipped photos with long names: their sentences wrap to several rows each,
    and every row is in view without scrolling, with no empty rows below."""
    dialog = indexed_with_empty_photos(window, qtbot, tmp_path, [
        f"{i}-{'a very long name of a photo ' * 6}.jpg" for i in range(3)])
    box = dialog.skipped
    shape, block, rows = box.document().documentLayout(), box.document().begin(), 0
    while block.isValid():
        shape.blockBoundingRect(block)
        rows += block.layout().lineCount()
        block = block.next()
    assert rows > 3  # the sentences wrap
    qtbot.waitUntil(lambda: box.verticalScrollBar().maximum() == 0)
    assert box.height() < (rows + 2) * box.fontMetrics().lineSpacing() + 2 * box.frameWidth() + 12
    dialog.cancel()


def test_cancel_stops_indexing_and_writes_nothing(window, qtbot, tmp_path):
    flat_folder(tmp_path / "photos", 12)
    dialog = window.collections.new_collection(tmp_path / "photos", tmp_path / "coll")
    qtbot.addWidget(dialog)
    started = []
    window.collections.indexer.progress.connect(lambda *step: started.append(step))
    dialog.start()
    qtbot.waitUntil(lambda: any(s[0] == "describing the photos" for s in started),
                    timeout=60_000)
    dialog.cancel()
    assert dialog.status.text().startswith("Cancelled: nothing was written")
    window.collections.indexer.wait()
    assert not (tmp_path / "coll" / "collection.json").exists()
    assert window.opened is None


def test_photos_added_to_an_open_collection_are_described_alone(window, qtbot, tmp_path):
    folder_of_subfolders(tmp_path / "photos", {"mona": 2, "wave": 1})
    index_now(indexing.IndexRequest(tmp_path / "photos", tmp_path / "coll",
                                             mode=SERIAL))
    window.open_request(OpenRequest(tmp_path / "coll"), sync=True)
    assert window.collections.add_action.isEnabled()
    artwork_image(77).save(tmp_path / "new view.jpg")
    artwork_image(78).save(tmp_path / "swing.png")
    dialog = window.collections.add_photos([tmp_path / "new view.jpg"], "wave", sync=True)
    qtbot.addWidget(dialog)
    assert (tmp_path / "photos" / "wave" / "new view.jpg").is_file()
    record = read_record(tmp_path / "coll")
    assert (record.described, record.reused, len(record.photos)) == (1, 3, 4)
    qtbot.waitUntil(lambda: window.opened.dataset.n_gallery == 4, timeout=60_000)
    window.collections.add_photos([tmp_path / "swing.png"], None, sync=True)
    qtbot.waitUntil(lambda: window.opened.dataset.n_gallery == 5, timeout=60_000)
    assert "swing" in set(window.opened.dataset.gallery_labels.tolist())
    # a name already there is not copied over, and the window says so
    window.collections.add_photos([tmp_path / "swing.png"], None, sync=True)
    qtbot.waitUntil(lambda: "already there: swing.png" in window.statusBar().currentMessage()
                    or window.opened.dataset.n_gallery == 5, timeout=10_000)
    assert json.loads((tmp_path / "coll" / "collection.json").read_text())["counts"][
        "photos"] == 5


def test_update_reindexes_the_folder_of_the_open_collection(window, qtbot, tmp_path):
    flat_folder(tmp_path / "photos", 2)
    index_now(indexing.IndexRequest(tmp_path / "photos", tmp_path / "coll",
                                             mode=SERIAL))
    window.open_request(OpenRequest(tmp_path / "coll"), sync=True)
    Image.new("RGB", (10, 10)).save(tmp_path / "photos" / "blank.png")
    artwork_image(40).save(tmp_path / "photos" / "new.jpg")
    dialog = window.collections.update_collection()
    qtbot.addWidget(dialog)
    assert isinstance(dialog, CollectionDialog)
    assert dialog.photos.path() == (tmp_path / "photos").resolve()
    assert dialog.start_button.text() == "Update and open"
    dialog.start(sync=True)
    assert "nothing to describe" in dialog.skipped.toPlainText()
    assert read_record(tmp_path / "coll").described == 1
    dialog.cancel()


def test_a_screenshot_of_the_dialog_and_the_collection(window, qtbot, tmp_path):
    """Rendered offscreen, for a person to look at (kept in the test's folder)."""
    flat_folder(tmp_path / "photos", 3)
    dialog = window.collections.new_collection(tmp_path / "photos")
    qtbot.addWidget(dialog)
    shot = dialog.grab()
    assert shot.save(str(tmp_path / "dialog.png"))
    dialog.start(sync=True)
    qtbot.waitUntil(lambda: window.opened is not None, timeout=60_000)
    assert window.bar.summary.text().startswith("Every artwork has one photo")
    assert window.grab().save(str(tmp_path / "window.png"))
    with Image.open(tmp_path / "dialog.png") as im:
        assert im.size[0] >= 600
    assert Path(tmp_path / "window.png").stat().st_size > 10_000
