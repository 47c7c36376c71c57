"""The window's menus and keyboard shortcuts.

:func:`install` builds the menu bar with the window's own entries (opening, sessions, the
inspector's keys) and returns :class:`Menus`, through which each feature adds its entries
(File ▸ Search with a photo…, Export figure…, the Edit menu, View ▸ Review suspects…):
features never look for an entry by its position or its text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import SignalInstance
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QLineEdit,
    QMenu,
    QMenuBar,
    QMessageBox,
    QWidget,
)

from irviewer.opening.request import OpenRequest, demo_request

KEYS_HELP = (
    "↑ / ↓  previous / next query\nF  next failure (P@1 = 0)\nHome / End  first / last "
    "query\n+ / −  larger / smaller thumbnails\nI  show ignored items\nCtrl+O  open\n"
    "Ctrl+Shift+N  new collection from a folder of photos\n"
    "Ctrl+Shift+O  add a descriptor file or ranking\nCtrl+R  add a re-ranked method (k-"
    "reciprocal, αQE, DBA), compared with its plain one\nCtrl+S / Ctrl+Shift+S  save the "
    "session / as\nCtrl+F  filter queries\nEsc  clear the filter (in the filter box), "
    "else cancel opening or re-ranking\n1–4  set the relation of the result under the "
    "mouse (or the one clicked) to the query\nCtrl+Z / Ctrl+Shift+Z  "
    "undo / redo a correction\nCtrl+Shift+R  review suspects; in the queue: ↑ / ↓  move, "
    "Enter  accept the fix, Delete  the label stands\nCtrl+E  export a figure\n"
    "Ctrl+Shift+E  export the selected query's ranked list (CSV, or a TREC run)\n"
    "Ctrl+P  search with a photo (or drop one on the window)\nF11  presentation: ← / → "
    "or Page Up / Down  queries, M  numbers, R  frames, S  slideshow, O  photo, Esc  back\n"
    "In the comparison: ← / →  previous / next result, 1–4  set its relation, Ctrl+0  fit")


class Menus:
    """The menus that change while the window lives, and the places features add to."""

    def __init__(self, bar: QMenuBar, file: QMenu, recent: QMenu, view: QMenu,
                 after_opening: QAction, quit_action: QAction) -> None:
        self.bar, self.file, self.recent, self.view = bar, file, recent, view
        self._after_opening, self._quit = after_opening, quit_action

    def add_file_action(self, action: QAction, with_opening: bool = False) -> None:
        """Add ``action`` to File: among the opening entries (``with_opening``, after Open
        a session…), else above Quit, after the entries added before."""
        self.file.insertAction(self._after_opening if with_opening else self._quit, action)

    def add_menu(self, menu: QMenu) -> None:
        """Put ``menu`` in the menu bar, before View (the Edit menu)."""
        self.bar.insertMenu(self.view.menuAction(), menu)

    def add_view_action(self, action: QAction, separated: bool = False) -> None:
        """Add ``action`` at the end of View (``separated``: after a separator)."""
        if separated:
            self.view.addSeparator()
        self.view.addAction(action)


class OpeningActions(Protocol):
    @property
    def busy(self) -> SignalInstance: ...

    def open_dialog(self) -> None: ...
    def add_methods_dialog(self) -> None: ...


class SessionActions(Protocol):
    def open_session_dialog(self) -> None: ...
    def fill_recent(self, menu: QMenu) -> None: ...


class InspectorKeys(Protocol):
    def zoom(self, step: int) -> None: ...
    def toggle_ignored(self) -> None: ...
    def focus_filter(self) -> None: ...
    def filter_has_focus(self) -> bool: ...
    def clear_filter(self) -> None: ...
    def first_query(self) -> None: ...
    def last_query(self) -> None: ...


class MenuHost(Protocol):
    """What the menus act on: the window's opening, sessions and inspector."""

    @property
    def opening(self) -> OpeningActions: ...
    @property
    def sessions(self) -> SessionActions: ...
    @property
    def inspector(self) -> InspectorKeys: ...
    def menuBar(self) -> QMenuBar: ...  # noqa: N802 (Qt's name)
    def open_request(self, request: OpenRequest, sync: bool = False) -> None: ...
    def save_session(self) -> bool: ...
    def save_session_as(self) -> bool: ...
    def next_failure(self) -> None: ...
    def cancel_opening(self) -> None: ...
    def close(self) -> bool: ...


def install(w: MenuHost, parent: QWidget) -> Menus:
    """Build the window's menus and shortcuts (``parent``: the window, which owns the
    actions); return the :class:`Menus` features add to."""
    bar = w.menuBar()
    file_menu = bar.addMenu("&File")
    file_menu.setToolTipsVisible(True)  # a disabled entry's tooltip says why
    opening_actions = []
    entries: tuple[tuple[str, QKeySequence.StandardKey | str | None, Callable[[], object]],
                   ...] = (
        ("&Open…", QKeySequence.StandardKey.Open, w.opening.open_dialog),
        ("&Add a descriptor file or ranking…", "Ctrl+Shift+O", w.opening.add_methods_dialog),
        ("Open the &demo", None, lambda: w.open_request(demo_request())),
        ("Open a &session…", None, w.sessions.open_session_dialog),
        ("&Save session", QKeySequence.StandardKey.Save, w.save_session),
        ("Save session &as…", "Ctrl+Shift+S", w.save_session_as))
    after_opening: QAction | None = None  # the first entry after the opening ones
    for text, shortcut, slot in entries:
        action = QAction(text, parent)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(lambda _=False, s=slot: s())
        file_menu.addAction(action)
        if "ave" not in text:
            opening_actions.append(action)
        elif after_opening is None:
            after_opening = action
    recent = file_menu.addMenu("&Recent")
    # One opening at a time: what would start another waits until this one ends (Esc or
    # Cancel stops it).
    for item in (*opening_actions, recent.menuAction()):
        w.opening.busy.connect(lambda busy, a=item: a.setEnabled(not busy))
    recent.aboutToShow.connect(lambda: w.sessions.fill_recent(recent))
    file_menu.addSeparator()
    quit_action = QAction("&Quit", parent)
    quit_action.setShortcut(QKeySequence.StandardKey.Quit)
    quit_action.triggered.connect(w.close)
    file_menu.addAction(quit_action)
    view = bar.addMenu("&View")
    keys = w.inspector
    for text, key, slot in (("Next &failure", "F", w.next_failure),
                            ("&Larger thumbnails", "+", lambda: keys.zoom(16)),
                            ("&Smaller thumbnails", "-", lambda: keys.zoom(-16)),
                            ("Show &ignored items", "I", keys.toggle_ignored)):
        action = QAction(text, parent)
        action.setShortcut(QKeySequence(key))
        action.triggered.connect(slot)
        view.addAction(action)
    help_menu = bar.addMenu("&Help")
    keys_action = QAction("&Keyboard shortcuts", parent)
    keys_action.triggered.connect(
        lambda: QMessageBox.information(parent, "Keyboard shortcuts", KEYS_HELP))
    help_menu.addAction(keys_action)
    for key_name, key_slot in ((QKeySequence.StandardKey.Find, keys.focus_filter),
                               ("=", lambda: keys.zoom(16)),
                               ("Home", keys.first_query), ("End", keys.last_query),
                               ("Escape", lambda: escape(w))):
        QShortcut(QKeySequence(key_name), parent).activated.connect(key_slot)
    assert after_opening is not None
    return Menus(bar, file_menu, recent, view, after_opening, quit_action)


def escape(w: MenuHost) -> None:
    """Esc: in the filter box it clears the filter; in another field it does nothing there;
    elsewhere it cancels opening (it never cancels from a place where it means something
    else)."""
    focus = QApplication.focusWidget()
    if w.inspector.filter_has_focus():
        w.inspector.clear_filter()
    elif isinstance(focus, QLineEdit | QAbstractSpinBox) or (
            focus is not None and isinstance(focus.parent(), QAbstractSpinBox)):
        return
    else:
        w.cancel_opening()
