"""The window's menus and keyboard shortcuts, wired to the panels and controllers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QLineEdit, QMenu, QMessageBox

from irviewer.opening.opener import demo_request

if TYPE_CHECKING:
    from irviewer.gui.main_window import MainWindow

KEYS_HELP = (
    "↑ / ↓  previous / next query\nF  next failure (P@1 = 0)\nHome / End  first / last "
    "query\n+ / −  larger / smaller thumbnails\nI  show ignored items\nCtrl+O  open\n"
    "Ctrl+Shift+O  add a descriptor file or ranking\nCtrl+S / Ctrl+Shift+S  save the "
    "session / as\nCtrl+F  filter queries\nEsc  clear "
    "the filter (in the filter box), else cancel opening\n1–4  set the relation of the "
    "result under the mouse (or the one clicked) to the query\nCtrl+Z / Ctrl+Shift+Z  "
    "undo / redo a correction\nCtrl+Shift+R  review suspects; in the queue: ↑ / ↓  move, "
    "Enter  accept the fix, Delete  the label stands\nCtrl+E  export a figure\n"
    "Ctrl+P  search with a photo (or drop one on the window)\nF11  presentation: ← / → "
    "or Page Up / Down  queries, M  numbers, R  frames, S  slideshow, O  photo, Esc  back\n"
    "In the comparison: ← / →  previous / next result, 1–4  set its relation, Ctrl+0  fit")


@dataclass
class Menus:
    """The menus that change while the window lives."""

    file: QMenu
    recent: QMenu
    view: QMenu


def install(w: MainWindow) -> Menus:
    """Build the window's menus and shortcuts; return the menus (``w.menus``)."""
    bar = w.menuBar()
    file_menu = bar.addMenu("&File")
    opening_actions = []
    for text, keys, slot in (
            ("&Open…", QKeySequence.StandardKey.Open, w.opening.open_dialog),
            ("&Add a descriptor file or ranking…", "Ctrl+Shift+O",
             w.opening.add_methods_dialog),
            ("Open the &demo", None, lambda: w.open_request(demo_request())),
            ("Open a &session…", None, w.sessions.open_session_dialog),
            ("&Save session", QKeySequence.StandardKey.Save, w.save_session),
            ("Save session &as…", "Ctrl+Shift+S", w.save_session_as)):
        action = QAction(text, w)
        if keys is not None:
            action.setShortcut(QKeySequence(keys))
        action.triggered.connect(lambda _=False, s=slot: s())
        file_menu.addAction(action)
        if "ave" not in text:
            opening_actions.append(action)
    recent = file_menu.addMenu("&Recent")
    # One opening at a time: what would start another waits until this one ends (Esc or
    # Cancel stops it).
    for item in (*opening_actions, recent.menuAction()):
        w.opening.busy.connect(lambda busy, a=item: a.setEnabled(not busy))
    recent.aboutToShow.connect(lambda: w.sessions.fill_recent(recent))
    file_menu.addSeparator()
    quit_action = QAction("&Quit", w)
    quit_action.setShortcut(QKeySequence.StandardKey.Quit)
    quit_action.triggered.connect(w.close)
    file_menu.addAction(quit_action)
    view = bar.addMenu("&View")
    for text, keys, slot in (("Next &failure", "F", w.next_failure),
                             ("&Larger thumbnails", "+", lambda: w.results.zoom(16)),
                             ("&Smaller thumbnails", "-", lambda: w.results.zoom(-16)),
                             ("Show &ignored items", "I", w.results.toggle_ignored)):
        action = QAction(text, w)
        action.setShortcut(QKeySequence(keys))
        action.triggered.connect(slot)
        view.addAction(action)
    w.corrections.install_menus(file_menu, view)
    w.review.install_menus(view)
    help_menu = bar.addMenu("&Help")
    keys_action = QAction("&Keyboard shortcuts", w)
    keys_action.triggered.connect(
        lambda: QMessageBox.information(w, "Keyboard shortcuts", KEYS_HELP))
    help_menu.addAction(keys_action)
    for keys, slot in ((QKeySequence.StandardKey.Find, w.queries.focus_filter),
                       ("=", lambda: w.results.zoom(16)),
                       ("Home", lambda: w.queries.jump(0)), ("End", lambda: w.queries.jump(-1)),
                       ("Escape", lambda: escape(w))):
        QShortcut(QKeySequence(keys), w, activated=slot)
    return Menus(file_menu, recent, view)


def escape(w: MainWindow) -> None:
    """Esc: in the filter box it clears the filter; in another field it does nothing there;
    elsewhere it cancels opening (it never cancels from a place where it means something
    else)."""
    focus = QApplication.focusWidget()
    if w.queries.filter_has_focus():
        w.queries.clear_filter_text()
    elif isinstance(focus, QLineEdit | QAbstractSpinBox) or (
            focus is not None and isinstance(focus.parent(), QAbstractSpinBox)):
        return
    else:
        w.cancel_opening()
