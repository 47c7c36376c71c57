"""Presentation mode and search with a photo in the window, offscreen: F11 and
``irviewer --present`` enter, the keys walk the inspector's list, Esc returns on the same
query, M and R change what is painted, the slideshow moves on, a dropped photo is searched
in a worker and its painting comes first, a method without an extractor and a broken photo
are one sentence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageEnhance
from PySide6.QtCore import QEvent, QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QColor, QDropEvent, QMouseEvent
from PySide6.QtWidgets import QApplication, QComboBox, QMessageBox

from irviewer.cli import main
from irviewer.cli.viewer import build_viewer_parser
from irviewer.core.evaluation import NEGATIVE, POSITIVE
from irviewer.gui.main_window import MainWindow
from irviewer.gui.presentation.slide import PresentationView
from irviewer.gui.results.query_model import TITLE
from irviewer.opening.request import demo_paths, demo_request
from irviewer.view.result_list import UNJUDGED
from tests.collection_photos import artwork_image

GREEN = QColor("#009E73")


@pytest.fixture
def window(qtbot):
    w = MainWindow(top_k=20)
    qtbot.addWidget(w)
    qtbot.addWidget(w.presentation.view)
    w.show()
    w.open_paths(*demo_paths(), sync=True)
    return w


@pytest.fixture
def visitor_photo(tmp_path) -> Path:
    """A demo gallery view of the Mona Lisa, cropped, darkened and recompressed: a photo the
    gallery has never seen as such."""
    gallery = Path(demo_paths()[0]).parent / "images"
    image = Image.open(gallery / "leonardo_mona-lisa_g1.jpg").convert("RGB")
    w, h = image.size
    image = image.crop((w // 12, h // 14, w - w // 10, h - h // 16)).resize((300, 420))
    image = ImageEnhance.Brightness(image).enhance(0.8)
    path = tmp_path / "visit.jpg"
    image.save(path, quality=60)
    return path


def enter(window, qtbot):
    window.presentation.enter()
    view = window.presentation.view
    view.resize(1280, 720)
    qtbot.waitUntil(view.isVisible)
    view.load_now()
    return view


def colour_count(view, colour: QColor) -> int:
    image = view.grab().toImage()
    step = 3
    return sum(image.pixelColor(x, y) == colour for x in range(0, image.width(), step)
               for y in range(0, image.height(), step))


def test_f11_enters_on_the_query_shown_and_the_keys_walk_the_list(window, qtbot):
    [enter] = [a for a in window.menus.view.actions() if a.text() == "&Presentation"]
    assert enter.shortcut().toString() == "F11"
    window.queries.jump(4)
    start = window.current
    enter.trigger()
    view = window.presentation.view
    assert view.isVisible() and view.slide.query == start
    assert [t.index for t in view.slide.tiles] == [
        t.index for t in window.results.grid.tiles[:5]]  # the same view model, cut to 5
    order = window.presentation.order()
    at = order.index(start)
    qtbot.keyClick(view, Qt.Key.Key_Right)
    assert view.slide.query == window.current == order[at + 1]
    qtbot.keyClick(view, Qt.Key.Key_PageDown)  # what a clicker sends
    assert window.current == order[at + 2]
    qtbot.keyClick(view, Qt.Key.Key_PageUp)
    qtbot.keyClick(view, Qt.Key.Key_Left)
    qtbot.keyClick(view, Qt.Key.Key_Left)
    assert window.current == order[at - 1]
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    assert not view.isVisible()
    assert window.queries.current_query() == order[at - 1]  # back on the same query
    assert window.results.grid.tiles[0].index == view.slide.tiles[0].index


def test_the_keys_follow_the_inspectors_filter(window, qtbot):
    window.queries.failures.setChecked(True)  # the demo's two P@1 failures
    failures = window.presentation.order()
    assert len(failures) == 2
    view = enter(window, qtbot)
    seen = []
    for _ in range(3):
        qtbot.keyClick(view, Qt.Key.Key_Right)
        seen.append(view.slide.query)
    # the query shown was hidden by the filter: the first listed comes next, then only
    # the listed ones, wrapping round
    assert seen == [failures[0], failures[1], failures[0]]
    for q in seen:
        assert window.evaluation.per_query["P@1"][q] == 0


def test_m_and_r_toggle_the_numbers_and_the_frames(window, qtbot):
    view = enter(window, qtbot)
    assert view.show_frames and not view.show_metrics  # no numbers by default
    framed = colour_count(view, GREEN)
    assert framed > 200  # the relevant matches' frames
    quiet = view.grab().toImage()
    qtbot.keyClick(view, Qt.Key.Key_R)
    assert not view.show_frames
    assert colour_count(view, GREEN) < framed / 20
    qtbot.keyClick(view, Qt.Key.Key_R)
    assert colour_count(view, GREEN) == framed
    qtbot.keyClick(view, Qt.Key.Key_M)
    assert view.show_metrics
    assert view.grab().toImage() != quiet  # the numbers are painted
    qtbot.keyClick(view, Qt.Key.Key_M)
    assert view.grab().toImage() == quiet


def test_the_slideshow_moves_on_by_itself(window, qtbot):
    view = enter(window, qtbot)
    view.set_interval(0.05)
    start = window.current
    qtbot.keyClick(view, Qt.Key.Key_S)
    assert view.slideshow
    qtbot.waitUntil(lambda: window.current != start, timeout=3000)
    assert view.slide.query == window.current
    qtbot.keyClick(view, Qt.Key.Key_S)
    assert not view.slideshow
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    assert not view.slideshow  # leaving stops it


def test_irviewer_present_opens_the_demo_in_presentation_mode(qtbot, monkeypatch):
    """``irviewer --present`` run as the command line runs it (the event loop replaced by
    one that waits for the first slide): full screen, on the query the inspector selected."""
    seen = {}

    def event_loop(*_args: object) -> int:
        def presenting() -> list[PresentationView]:
            return [w for w in QApplication.topLevelWidgets()
                    if isinstance(w, PresentationView) and w.isVisible()]

        qtbot.waitUntil(lambda: bool(presenting()), timeout=60_000)
        view = presenting()[0]
        window = view.parentWidget()
        assert isinstance(window, MainWindow)
        seen.update(full_screen=view.isFullScreen(), active=window.presentation.active,
                    query=view.slide.query, current=window.current)
        window.presentation.leave()
        window.close()
        return 0

    monkeypatch.setattr(QApplication, "exec", event_loop)
    assert main(["--present"]) == 0
    assert seen["full_screen"] and seen["active"]
    assert seen["current"] is not None and seen["query"] == seen["current"]


def test_without_present_the_inspector_opens(qtbot, monkeypatch):
    seen = {}

    def event_loop(*_args: object) -> int:
        window, = (w for w in QApplication.topLevelWidgets()
                   if isinstance(w, MainWindow) and w.isVisible())
        qtbot.waitUntil(lambda: window.evaluation is not None, timeout=60_000)
        seen["presenting"] = window.presentation.active
        window.close()
        return 0

    monkeypatch.setattr(QApplication, "exec", event_loop)
    assert main([]) == 0
    assert seen == {"presenting": False}


def test_enter_when_opened_waits_for_the_data(qtbot):
    args = build_viewer_parser().parse_args(["--present"])
    assert args.present
    w = MainWindow(top_k=20)
    qtbot.addWidget(w)
    qtbot.addWidget(w.presentation.view)
    w.show()
    w.presentation.enter_when_opened()
    assert not w.presentation.view.isVisible()
    w.open_paths(*demo_paths(), sync=True)
    assert w.presentation.view.isVisible()
    assert w.presentation.view.slide.query == w.current


def drop(window, paths: list[Path]) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)


def test_a_dropped_photo_is_searched_and_its_painting_comes_first(window, qtbot,
                                                                   visitor_photo):
    drop(window, [visitor_photo])
    search = window.photo_search
    qtbot.waitUntil(lambda: search.photo is not None, timeout=20000)
    tiles = window.results.grid.tiles
    assert tiles[0].name.startswith("images/leonardo_mona-lisa")
    assert {t.relevance for t in tiles} == {UNJUDGED}  # no ground truth: no colours
    assert search.bar.isVisible() and "visit.jpg" in search.bar.label.text()
    assert not window.plots.isEnabled()  # the curves shown are not the photo's
    before = window.inspector.before_photo
    assert window.current is None  # nothing can act on the query that was shown ...
    window.corrections.key_on(tuple(tiles), 1, "1")  # ... not even a correction key
    assert window.corrections.controller.stack.index() == 0
    assert window.comparison.query.name.endswith("visit.jpg")  # a click compares with it
    label = "leonardo_mona-lisa"
    search.bar.picker.setCurrentIndex(search.bar.picker.findData(label))
    search.bar.picker.activated.emit(search.bar.picker.currentIndex())
    tiles = window.results.grid.tiles
    assert tiles[0].relevance == POSITIVE
    labels = [str(x) for x in window.opened.dataset.gallery_labels]
    assert [t.relevance for t in tiles] == [
        POSITIVE if labels[t.index] == label else NEGATIVE for t in tiles]
    search.bar.back_button.click()  # back to the query that was shown
    assert not search.bar.isVisible() and window.plots.isEnabled()
    assert window.current == before
    assert window.results.grid.tiles[0].relevance != UNJUDGED


def test_a_photo_in_presentation_mode_is_a_slide_that_says_what_it_is(window, qtbot,
                                                                       visitor_photo):
    view = enter(window, qtbot)
    view.photo_dropped.emit(visitor_photo)  # what a drop on the slide sends
    qtbot.waitUntil(lambda: view.slide.query is None, timeout=20000)
    assert view.slide.query_caption.title == "This is Mona Lisa, c. 1503–19"
    assert view.slide.query_caption.artist == "Leonardo da Vinci"
    assert not view.findChildren(QComboBox)  # a statement, not a question
    assert not view.slide.judged and view.slide.matches_heading == ""
    assert view.slide.tiles[0].name.startswith("images/leonardo_mona-lisa")
    view.load_now()
    assert colour_count(view, GREEN) == 0  # no frames without ground truth
    qtbot.keyClick(view, Qt.Key.Key_Escape)  # the inspector shows the photo too
    assert window.photo_search.bar.isVisible()
    assert "This is <i>Mona Lisa, c. 1503–19</i> — Leonardo da Vinci" in \
        window.photo_search.bar.label.text()
    window.presentation.view.showFullScreen()
    qtbot.keyClick(view, Qt.Key.Key_Right)  # back to the queries, in both places
    assert view.slide.query is not None
    assert not window.photo_search.bar.isVisible()
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    assert window.results.grid.tiles[0].relevance != UNJUDGED


def test_a_photo_of_something_else_is_not_in_this_collection(window, qtbot, tmp_path):
    path = tmp_path / "friend.jpg"
    artwork_image(7, (480, 360)).save(path, quality=90)  # nothing the demo holds
    view = enter(window, qtbot)
    view.photo_dropped.emit(path)
    qtbot.waitUntil(lambda: view.slide.query is None, timeout=20000)
    assert view.slide.query_caption.title == "Not in this collection"
    assert view.slide.query_caption.artist.startswith("Closest: ")
    assert view.slide.matches_heading == "NOT IN THIS COLLECTION · THE CLOSEST"
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    text = window.photo_search.bar.label.text()
    assert "Not in this collection." in text and "Closest:" in text
    assert "Not in this collection." in window.results.query_title.text()
    assert "the most is" in window.results.query_metrics.text()  # the evidence, whole


def dialogs(qapp) -> list[QMessageBox]:
    return [w for w in qapp.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]


def test_a_method_without_an_extractor_says_which_can(window, qtbot, qapp, visitor_photo):
    window.open_request(demo_request(), sync=True)  # strong.npz and weak.npz
    window.bar.method_box.setCurrentText("weak.npz")
    window.photo_search.search(visitor_photo, sync=True)
    assert window.photo_search.last_error == (
        "weak.npz cannot search with a photo (its descriptor file names no extractor); "
        "choose strong.npz in the Method box")
    boxes = dialogs(qapp)
    assert len(boxes) == 1 and boxes[0].text() == window.photo_search.last_error
    boxes[0].close()
    assert window.photo_search.photo is None


@pytest.mark.parametrize("content", [b"these are notes, not a photo",
                                     "truncated"])
def test_a_broken_photo_is_one_sentence_in_a_dialog(window, qtbot, qapp, tmp_path,
                                                    visitor_photo, content):
    bad = tmp_path / "bad.jpg"
    if content == "truncated":
        data = visitor_photo.read_bytes()
        bad.write_bytes(data[: len(data) // 3])
    else:
        bad.write_bytes(content)
    window.photo_search.search(bad, sync=True)
    qapp.processEvents()
    message = window.photo_search.last_error
    assert message is not None and message.startswith("bad.jpg: ") and "\n" not in message
    boxes = dialogs(qapp)
    assert [b.text() for b in boxes] == [message]
    boxes[0].close()
    assert window.photo_search.photo is None and not window.photo_search.bar.isVisible()


def test_a_decompression_bomb_is_refused(window, qtbot, qapp, tmp_path, monkeypatch):
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100 * 100)
    big = tmp_path / "bomb.png"
    Image.fromarray(np.zeros((200, 200, 3), dtype=np.uint8) + 90).save(big)
    window.photo_search.search(big, sync=True)
    assert "decompression" in window.photo_search.last_error
    for box in dialogs(qapp):
        box.close()


def test_the_query_list_shows_the_demos_titles(window):
    assert not window.queries.table.isColumnHidden(TITLE)
    assert window.bar.method_box.width() >= window.bar.method_box.fontMetrics(
    ).horizontalAdvance("strong.npz")


def test_the_pointer_hides_when_it_rests_and_comes_back_when_moved(window, qtbot):
    view = enter(window, qtbot)
    view.rest.setInterval(20)
    view.rest.start()
    qtbot.waitUntil(lambda: view.cursor().shape() == Qt.CursorShape.BlankCursor)
    at = QPointF(view.rect().center())
    QApplication.sendEvent(view, QMouseEvent(
        QEvent.Type.MouseMove, at, view.mapToGlobal(at), Qt.MouseButton.NoButton,
        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier))
    assert view.cursor().shape() != Qt.CursorShape.BlankCursor




def test_the_bar_s_strictness_answers_the_photo_again(window, qtbot, visitor_photo):
    search = window.photo_search
    search.search(visitor_photo, sync=True)
    qtbot.waitUntil(lambda: search.answer is not None, timeout=20000)
    assert search.answer.strictness == "normal" and search.answer.threshold == 12
    search.set_strictness("stricter", sync=True)
    qtbot.waitUntil(lambda: search.answer.strictness == "stricter", timeout=20000)
    assert search.answer.threshold == 16 and search.strictness() == "stricter"
    assert search.bar.label.toolTip() == search.answer.evidence()


ORANGE = QColor("#D55E00")


def test_a_one_photo_collection_shows_no_ticks_or_crosses(qtbot, tmp_path):
    """A curator's collection of one photo per artwork: no ✗ frame or badge on the
    window's tiles, no ✓/✗ legend, and presentation shows "more like this" unframed."""
    from irviewer.opening.request import OpenRequest
    from irviewer.view.presentation import BROWSING_LABELS
    from tests.collection_photos import indexed

    w = MainWindow(top_k=20)
    qtbot.addWidget(w)
    qtbot.addWidget(w.presentation.view)
    w.show()
    w.open_request(OpenRequest(indexed(tmp_path / "p", tmp_path / "c", artworks=4)), sync=True)
    assert w.current is not None and len(w.results.grid.tiles) == 3
    assert colour_count(w.results.grid, ORANGE) == 0
    assert "not relevant" not in w.results.legend.text()
    assert w.results.results_label.text().startswith("<b>More like this</b>")
    view = enter(w, qtbot)
    assert (view.slide.query_label, view.slide.matches_label) == BROWSING_LABELS
    assert colour_count(view, ORANGE) == 0 and colour_count(view, GREEN) == 0
