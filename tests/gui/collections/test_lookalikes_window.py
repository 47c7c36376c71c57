"""Two artworks that show one picture, in the window, offscreen: opening the collection
says so in a box (once, not again when it opens again unchanged), Collection ▸ These are
one artwork… puts them together (the collection indexed again, the box's reason gone) and
Collection ▸ Undo takes it back; a kiosk opening the same collection shows visitors no
box."""

from __future__ import annotations

import shutil

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox

from irviewer.collection import indexing
from irviewer.collection.describing import SERIAL
from irviewer.gui.main_window import MainWindow
from irviewer.io.resources import resources_dir
from irviewer.opening.request import OpenRequest
from tests.collection_photos import index_now

IMAGES = resources_dir() / "demo" / "images"
TITLES = ("id,title,artist\nleonardo_mona-lisa,Mona Lisa,Leonardo\n"
          "mona-lisa-print,Mona Lisa (print),Leonardo\n")


@pytest.fixture
def duplicated(tmp_path):
    """Four paintings and a second photo of the Mona Lisa filed as its own artwork."""
    photos = tmp_path / "photos"
    photos.mkdir()
    for artwork in ("leonardo_mona-lisa", "hokusai_great-wave-off-kanagawa",
                    "bruegel_the-harvesters", "vermeer_girl-with-a-pearl-earring"):
        shutil.copy(IMAGES / f"{artwork}_g1.jpg", photos / f"{artwork}.jpg")
    shutil.copy(IMAGES / "leonardo_mona-lisa_g2.jpg", photos / "mona-lisa-print.jpg")
    (tmp_path / "titles.csv").write_text(TITLES, encoding="utf-8")
    index_now(indexing.IndexRequest(photos, tmp_path / "coll",
                                             tmp_path / "titles.csv", mode=SERIAL))
    return tmp_path / "coll"


def new_window(qtbot) -> MainWindow:
    w = MainWindow(top_k=20, keep_sessions=False)
    qtbot.addWidget(w)
    qtbot.addWidget(w.presentation.view)
    w.collections.mode = SERIAL
    return w


def artworks(window: MainWindow) -> int:
    return len(set(window.opened.dataset.gallery_labels.tolist()))


def boxes() -> list[QMessageBox]:
    return [w for w in QApplication.topLevelWidgets()
            if isinstance(w, QMessageBox) and w.isVisible()]


def test_the_window_warns_and_puts_the_two_together_with_undo(qtbot, duplicated):
    window = new_window(qtbot)
    window.show()
    window.open_request(OpenRequest(duplicated), sync=True)
    shown = boxes()
    assert len(shown) == 1 and window.last_error is not None
    assert window.last_error.startswith("These artworks look like one picture filed twice: "
                                        "«Mona Lisa — Leonardo» and «Mona Lisa (print) — "
                                        "Leonardo» (")
    assert "Collection ▸ These are one artwork…" in window.last_error
    shown[0].close()
    window.open_request(OpenRequest(duplicated), sync=True)  # the same: said once
    assert not boxes()
    edits = window.collections.edits
    assert edits.merge_action.isEnabled() and artworks(window) == 5
    offered: list[list[str]] = []
    edits.choose = lambda _title, choices: offered.append(choices) or next(
        c for c in choices if c.startswith("Keep «Mona Lisa — Leonardo»"))
    edits.merge_dialog()
    qtbot.waitUntil(lambda: artworks(window) == 4, timeout=60_000)
    assert len(offered[0]) == 2
    assert (duplicated.parent / "photos" / "leonardo_mona-lisa" / "mona-lisa-print.jpg"
            ).is_file()
    qtbot.waitUntil(lambda: not edits.merge_action.isEnabled(), timeout=10_000)
    assert edits.stack.undoText() == "make «Mona Lisa — Leonardo» and «Mona Lisa (print) — " \
        "Leonardo» one artwork"
    edits.stack.undo()
    qtbot.waitUntil(lambda: artworks(window) == 5, timeout=60_000)
    assert (duplicated.parent / "photos" / "mona-lisa-print.jpg").is_file()
    assert not (duplicated.parent / "photos" / "leonardo_mona-lisa").exists()
    for box in boxes():
        box.close()
    window.collections.dialog.cancel()


def test_a_kiosk_shows_visitors_no_box_about_them(qtbot, duplicated):
    window = new_window(qtbot)
    window.presentation.kiosk_when_opened(60, None)
    window.open_request(OpenRequest(duplicated), sync=True)
    assert window.presentation.kiosk_active and not boxes()
    assert "look like one picture" in window.statusBar().currentMessage()
    window.presentation.leave_kiosk()
