"""Kiosk mode, offscreen: Esc, Alt+F4, closing, the letter keys and the other windows do
nothing; the staff chord leaves; after the idle time the slideshow comes back (a visitor's
photo gives way to it); a photo put into the watched folder is searched and shown, in
front; the kiosk is the program's only window, on top, takes the screen back when hidden or
left, names no staff chord, and is the first window ``--kiosk`` shows; the command line's
kiosk options are checked."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget

from irviewer.cli import main
from irviewer.gui.main_window import MainWindow
from irviewer.gui.presentation.kiosk import STAFF_CHORD
from irviewer.opening.request import demo_paths

CHORD = (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
         | Qt.KeyboardModifier.ShiftModifier)


@pytest.fixture
def window(qtbot):
    w = MainWindow(top_k=20)

    def unlock(_widget) -> None:  # a test that ends inside the kiosk: let it close
        if w.presentation.kiosk_active:
            w.presentation.leave_kiosk()

    qtbot.addWidget(w, before_close_func=unlock)
    qtbot.addWidget(w.presentation.view, before_close_func=unlock)
    w.show()
    w.open_paths(*demo_paths(), sync=True)
    return w


def kiosk(window, qtbot, idle_s=60.0, folder=None):
    window.presentation.enter_kiosk(idle_s, folder)
    view = window.presentation.view
    view.resize(1280, 720)
    qtbot.waitUntil(view.isVisible)
    return view


def test_esc_alt_f4_closing_and_the_letter_keys_do_nothing(window, qtbot):
    view = kiosk(window, qtbot)
    presentation = window.presentation
    assert presentation.kiosk_active and view.slideshow
    requested = []
    presentation.photo_requested.connect(lambda: requested.append(True))
    for key, modifiers in ((Qt.Key.Key_Escape, Qt.KeyboardModifier.NoModifier),
                           (Qt.Key.Key_F11, Qt.KeyboardModifier.NoModifier),
                           (Qt.Key.Key_F4, Qt.KeyboardModifier.AltModifier),
                           (Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier),
                           (Qt.Key.Key_O, Qt.KeyboardModifier.NoModifier),
                           (Qt.Key.Key_M, Qt.KeyboardModifier.NoModifier)):
        QTest.keyClick(view, key, modifiers)
        assert view.isVisible() and presentation.kiosk_active, key
    assert not requested and not view.show_metrics  # O and M did nothing
    assert not view.close() and view.isVisible()  # the window manager's close (Alt+F4)
    assert not window.close() and not window.isVisible()  # hidden, and stays so
    QTest.keyClick(window, Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)  # File ▸ Open
    assert view.isVisible()
    shown = view.slide.query
    QTest.keyClick(view, Qt.Key.Key_Right)  # a visitor may browse
    assert view.slide.query != shown


def test_the_staff_chord_leaves_to_the_inspector(window, qtbot):
    view = kiosk(window, qtbot)
    QTest.keyClick(view, Qt.Key.Key_Q, CHORD)
    assert not window.presentation.kiosk_active and not view.isVisible()
    assert window.isVisible()  # the inspector the kiosk hid is back
    QTest.keyClick(view, Qt.Key.Key_Escape)  # unlocked: everything works again
    assert window.close()


def test_after_the_idle_time_the_slideshow_comes_back_from_a_photo(window, qtbot):
    view = kiosk(window, qtbot, idle_s=0.3)
    presentation = window.presentation
    view.set_slideshow(False)
    qtbot.waitUntil(lambda: view.slideshow, timeout=3000)
    before = view.slide
    presentation.show_photo(before.__class__(None, before.query_caption, before.query_path,
                                             None, "", before.tiles, before.captions, False))
    assert presentation.photo_slide is not None and not view.slideshow
    qtbot.waitUntil(lambda: presentation.photo_slide is None and view.slideshow,
                    timeout=3000)
    assert view.slide.query is not None


def test_a_photo_put_into_the_watched_folder_is_searched_and_shown(window, qtbot, tmp_path):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    gallery = Path(demo_paths()[0]).parent / "images"
    shutil.copy(gallery / "leonardo_mona-lisa_g1.jpg", inbox / "there-before.jpg")
    view = kiosk(window, qtbot, folder=inbox)
    shutil.copy(gallery / "hokusai_great-wave-off-kanagawa_g1.jpg", inbox / "visitor.jpg")
    qtbot.waitUntil(lambda: window.presentation.photo_slide is not None, timeout=20_000)
    assert view.slide.query is None and view.slide.query_path == inbox / "visitor.jpg"
    assert view.isVisible() and window.presentation.kiosk_active


def test_the_kiosk_options_on_the_command_line(tmp_path, capsys):
    for argv, message in (
            (["--watch", str(tmp_path)], "--watch and --idle set up a kiosk: add --kiosk"),
            (["--kiosk", "--watch", str(tmp_path / "nope")], "nope: no such folder"),
            (["--kiosk", "--idle", "2"], "--idle 2: give a number of seconds from 5 to 3600")):
        assert main(["--demo", *argv]) == 2
        assert message in capsys.readouterr().err


MIME: list[QMimeData] = []  # a drop event does not own its data: kept alive here


def drop_event(path: Path) -> QDropEvent:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    MIME.append(mime)
    return QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime,
                      Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)


def test_a_drop_on_the_slide_is_answered_and_the_menus_and_the_inspector_do_nothing(
        window, qtbot):
    view = kiosk(window, qtbot)
    lock = window.presentation.kiosk
    photo = Path(demo_paths()[0]).parent / "images" / "leonardo_mona-lisa_g1.jpg"
    assert lock.eventFilter(window, drop_event(photo))  # on the inspector: swallowed
    assert not lock.eventFilter(view, drop_event(photo))  # on the slide: let through
    QTest.mouseClick(window.menuBar(), Qt.MouseButton.LeftButton, pos=QPoint(15, 8))
    assert QApplication.activePopupWidget() is None  # no menu opened
    assert window.presentation.photo_slide is None
    view.dropEvent(drop_event(photo))
    qtbot.waitUntil(lambda: window.presentation.photo_slide is not None, timeout=20_000)
    assert view.slide.query is None and view.isVisible()


def visible_windows() -> list:
    return [w for w in QApplication.topLevelWidgets() if w.isWindow() and w.isVisible()]


def test_the_kiosk_is_the_programs_only_window_on_top_and_gives_the_others_back(
        window, qtbot):
    tiles = window.inspector.shown_tiles()
    window.inspector.show_tile(tiles, 0, sync=True)  # the side-by-side window, open
    side = window.inspector.side_by_side_window()
    assert side is not None and side.isVisible()
    window.presentation.enter_kiosk(60, None)
    view = window.presentation.view
    assert visible_windows() == [view]  # the inspector hidden, not lowered
    assert view.isFullScreen()
    assert view.windowFlags() & Qt.WindowType.WindowStaysOnTopHint
    assert view.windowFlags() & Qt.WindowType.FramelessWindowHint
    QTest.keyClick(view, Qt.Key.Key_Q, CHORD)
    assert window.isVisible() and side.isVisible() and not view.isVisible()
    assert not view.windowFlags() & Qt.WindowType.WindowStaysOnTopHint
    window.presentation.enter()  # presentation mode is a window like any other again
    assert view.isVisible() and window.isVisible()
    window.presentation.leave()


def test_nothing_on_screen_names_the_staff_chord(window, qtbot):
    view = kiosk(window, qtbot)
    chord = STAFF_CHORD.toString()
    assert chord == "Ctrl+Alt+Shift+Q"
    assert chord not in window.statusBar().currentMessage()
    assert chord not in view.hint and "Q" not in view.hint.split()
    assert visible_windows() == [view]


def test_the_kiosk_takes_the_screen_back_when_hidden_or_left(window, qtbot):
    window.presentation.enter_kiosk(60, None)
    view = window.presentation.view
    view.showMinimized()  # what a window manager's "show the desktop" does
    qtbot.waitUntil(lambda: view.isVisible() and view.isFullScreen()
                    and not view.isMinimized(), timeout=3000)
    other = QWidget()  # another program's window takes the focus
    qtbot.addWidget(other)
    other.show()
    other.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is other, timeout=3000)
    qtbot.waitUntil(lambda: QApplication.activeWindow() is view, timeout=3000)
    other.close()


def test_a_photo_from_the_inbox_is_answered_in_front(window, qtbot, tmp_path):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    view = kiosk(window, qtbot, folder=inbox)
    window.presentation.kiosk.reclaim_timer.setInterval(60_000)  # only the answer raises it
    other = QWidget()
    qtbot.addWidget(other)
    other.show()
    other.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is other, timeout=3000)
    gallery = Path(demo_paths()[0]).parent / "images"
    shutil.copy(gallery / "hokusai_great-wave-off-kanagawa_g1.jpg", inbox / "visitor.jpg")
    qtbot.waitUntil(lambda: window.presentation.photo_slide is not None, timeout=20_000)
    qtbot.waitUntil(lambda: QApplication.activeWindow() is view, timeout=3000)
    assert view.slide.query_caption.title.startswith("This is ")
    other.close()


def test_irviewer_kiosk_never_shows_the_inspector(qtbot, monkeypatch):
    """``irviewer --demo --kiosk``: the kiosk is the first and only window shown."""
    from irviewer.gui import app as app_module

    seen: list[list] = []
    made: list[MainWindow] = []
    real = app_module.MainWindow

    def window_made(*args, **kwargs):
        made.append(real(*args, **kwargs))
        shown = made[-1].show
        made[-1].show = lambda: (seen.append(["inspector shown"]), shown())
        return made[-1]

    def run_until_kiosk(_app):
        w = made[0]
        qtbot.waitUntil(lambda: w.presentation.kiosk_active, timeout=30_000)
        seen.append(visible_windows())
        w.presentation.leave_kiosk()
        w.close()
        return 0

    monkeypatch.setattr(app_module, "MainWindow", window_made)
    monkeypatch.setattr(QApplication, "exec", run_until_kiosk)
    assert main(["--demo", "--kiosk"]) == 0
    qtbot.addWidget(made[0].presentation.view)
    assert seen[0] == [made[0].presentation.view]
