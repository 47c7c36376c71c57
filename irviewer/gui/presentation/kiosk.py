"""Kiosk mode: presentation mode locked for visitors in a gallery.

While the kiosk runs it is the program's only window (:func:`lock_window`): every other
window of the program is hidden (not lowered: Alt+Tab cannot bring it back), and the slide
is full screen, on top of other windows, on every virtual desktop, without the window
manager's minimize, move, resize and close; it raises itself again when another window
takes the focus and shows itself again when the window manager hides it
(:data:`RECLAIM_MS` later). An application-wide event filter lets through only what a
visitor may do: the arrows and Page Up/Down (and a click or a drop) on the slide. Esc, F11,
Alt+F4 and the window manager's close, every key with Ctrl, Alt or Meta, the letter keys
(O's file dialog, M's numbers) and every event aimed at another window (the inspector, its
menus) do nothing. Staff leave with :data:`STAFF_CHORD`, which nothing on screen names.
After :attr:`idle` seconds without input the slideshow runs again (a visitor's photo gives
way to it). A visitor's photo comes from a drop on the slide or from a watched folder
(:class:`~irviewer.collection.photo_inbox.PhotoInbox`, looked at on a change the
QFileSystemWatcher reports and every :data:`POLL_MS` as well, for folders it cannot
watch); the search itself runs in the photo search's worker, off the GUI thread.

What a program cannot lock — the window manager's own keys (switching desktops, showing
the desktop, its window menu), switching to a text console, another program's windows —
is the kiosk account's set-up (docs/presentation.md, "Setting up a kiosk account").
"""

from __future__ import annotations

import traceback
from pathlib import Path

from PySide6.QtCore import QEvent, QFileSystemWatcher, QKeyCombination, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import QApplication, QWidget

from irviewer.collection.photo_inbox import PhotoInbox
from irviewer.gui.presentation.desktops import on_every_desktop
from irviewer.view.presentation import DEFAULT_IDLE_S, IDLE_RANGE_S

__all__ = ["DEFAULT_IDLE_S", "IDLE_RANGE_S", "STAFF_CHORD", "KioskLock", "lock_window",
           "unlock_window"]

#: The key chord that ends kiosk mode (staff only; documented in docs/presentation.md).
STAFF_KEYS = QKeyCombination(Qt.KeyboardModifier.ControlModifier
                             | Qt.KeyboardModifier.AltModifier
                             | Qt.KeyboardModifier.ShiftModifier, Qt.Key.Key_Q)
STAFF_CHORD = QKeySequence(STAFF_KEYS)
#: How often the watched folder is looked at besides the watcher's reports (ms).
POLL_MS = 1000
#: How soon the kiosk takes the screen back after another window took the focus, or after
#: the window manager hid it (ms): soon enough that a visitor sees nothing else for long,
#: late enough not to fight a window manager's own focus change while it happens.
RECLAIM_MS = 300
#: How often the kiosk looks whether it still has the screen, besides the events that say
#: it lost it (ms): a window manager may unmap it without telling Qt (showing the desktop).
WATCH_MS = 1000
#: The window flags of the kiosk's slide: a window of its own, on top of the others,
#: without the window manager's frame buttons (no minimize, maximize or close offered).
KIOSK_FLAGS = (Qt.WindowType.Window | Qt.WindowType.WindowStaysOnTopHint
               | Qt.WindowType.CustomizeWindowHint | Qt.WindowType.FramelessWindowHint)
#: Keys a visitor may use on the slide.
VISITOR_KEYS = frozenset({Qt.Key.Key_Left, Qt.Key.Key_Right, Qt.Key.Key_Up, Qt.Key.Key_Down,
                          Qt.Key.Key_PageUp, Qt.Key.Key_PageDown, Qt.Key.Key_Space,
                          Qt.Key.Key_Backspace})
#: What the slide's footer says in kiosk mode.
KIOSK_HINT = "← →  previous / next     drop a photo here to find its artwork"

_INPUT = frozenset({QEvent.Type.KeyPress, QEvent.Type.MouseButtonPress,
                    QEvent.Type.MouseMove, QEvent.Type.Wheel, QEvent.Type.TouchBegin,
                    QEvent.Type.Drop})
_BLOCKED_ANYWHERE = frozenset({QEvent.Type.Close, QEvent.Type.ContextMenu})
#: What happens to the kiosk's slide when something takes the screen from it.
_TAKEN_AWAY = frozenset({QEvent.Type.WindowDeactivate, QEvent.Type.Hide,
                         QEvent.Type.WindowStateChange})
_MODIFIERS = (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
              | Qt.KeyboardModifier.MetaModifier)


def is_staff_chord(key: int, modifiers: Qt.KeyboardModifier) -> bool:
    """Return whether ``key`` with ``modifiers`` is :data:`STAFF_CHORD` (keypad or not)."""
    return key == STAFF_KEYS.key() and \
        (modifiers & ~Qt.KeyboardModifier.KeypadModifier) == STAFF_KEYS.keyboardModifiers()


def lock_window(view: QWidget) -> list[QWidget]:
    """Make ``view`` the program's only window, full screen, on top and on every desktop
    (asked before it is mapped: a window manager may forget what a window it unmapped
    asked); return the other windows it hid (for :func:`unlock_window`)."""
    hidden = [w for w in QApplication.topLevelWidgets()
              if w.isWindow() and w.isVisible() and not within(w, view)]
    for w in hidden:
        w.hide()
    if view.windowFlags() != KIOSK_FLAGS:
        view.setWindowFlags(KIOSK_FLAGS)  # hides a shown window: shown again below
    view.winId()  # the native window, to be marked for every desktop before it is mapped
    on_every_desktop(view)
    view.showFullScreen()
    view.raise_()
    view.activateWindow()
    return hidden


def unlock_window(view: QWidget, hidden: list[QWidget]) -> None:
    """Give ``view`` back its presentation flags (a window like any other; this hides it)
    and show the windows :func:`lock_window` hid."""
    if view.windowFlags() != Qt.WindowType.Window:
        view.setWindowFlags(Qt.WindowType.Window)
    for w in hidden:
        w.show()


def within(widget: object, top: QWidget) -> bool:
    """Return whether ``widget`` is ``top`` or inside it (its popups and dialogs too)."""
    w = widget if isinstance(widget, QWidget) else None
    while w is not None:
        if w is top:
            return True
        w = w.parentWidget()
    return False


class KioskLock(QObject):
    """The lock around ``view`` (the presentation's slide) while the kiosk runs.

    Signals: ``staff_left()`` on the staff chord; ``idle()`` after :attr:`idle_s` seconds
    without input; ``photo_arrived(path)`` for each photo complete in the watched folder.
    """

    staff_left = Signal()
    idle = Signal()
    photo_arrived = Signal(object)

    def __init__(self, view: QWidget, windows: tuple[QWidget, ...]) -> None:
        super().__init__(view)
        self.view, self.windows = view, windows
        self.active = False
        self.idle_timer = QTimer(self)
        self.idle_timer.setSingleShot(True)
        self.idle_timer.timeout.connect(self.idle)
        self.poll = QTimer(self)
        self.poll.setInterval(POLL_MS)
        self.poll.timeout.connect(self.look)
        self.watcher: QFileSystemWatcher | None = None
        self.inbox: PhotoInbox | None = None
        self.reclaim_timer = QTimer(self)
        self.reclaim_timer.setSingleShot(True)
        self.reclaim_timer.setInterval(RECLAIM_MS)
        self.reclaim_timer.timeout.connect(self.reclaim)
        self._unexposed = 0  # looks in a row that found the slide not on screen
        self.watch = QTimer(self)
        self.watch.setInterval(WATCH_MS)
        self.watch.timeout.connect(self.reclaim)

    def start(self, idle_s: float, folder: Path | None = None) -> None:
        """Lock: filter every event of the application, go back to the slideshow after
        ``idle_s`` seconds without input, answer the photos arriving in ``folder``."""
        self.idle_timer.setInterval(max(50, int(1000 * idle_s)))
        self.active = True
        app = QApplication.instance()
        assert app is not None
        app.installEventFilter(self)
        self.idle_timer.start()
        self.watch.start()
        QTimer.singleShot(RECLAIM_MS, self._every_desktop)  # asked again once mapped
        if folder is not None:
            self.inbox = PhotoInbox(folder)
            # a folder not there yet (a share not mounted) is looked at by the poll alone
            self.watcher = QFileSystemWatcher([str(folder)] if folder.is_dir() else [], self)
            self.watcher.directoryChanged.connect(lambda _path: self.look())
            self.poll.start()

    def stop(self) -> None:
        """Unlock: every key, close and menu works again; the folder is no longer watched."""
        self.active = False
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)
        self.idle_timer.stop()
        self.poll.stop()
        self.reclaim_timer.stop()
        self.watch.stop()
        if self.watcher is not None:
            self.watcher.deleteLater()
        self.watcher = self.inbox = None

    def reclaim(self) -> None:
        """Take the screen back when it was lost: show the slide again (full screen, on
        every desktop) if the window manager hid, unmapped or minimized it, and raise and
        activate it unless it, or one of its own windows (a message over it), is active."""
        if not self.active:
            return
        view = self.view
        handle = view.windowHandle()
        exposed = handle is None or handle.isExposed() or \
            QGuiApplication.platformName() != "xcb"
        self._unexposed = 0 if exposed else self._unexposed + 1
        if self._unexposed >= 2:  # unmapped behind Qt's back (not just being mapped)
            self._unexposed = 0
            view.hide()  # shown again below: mapped anew, which a window manager honours
        if not view.isVisible() or view.isMinimized() or not view.isFullScreen():
            view.showFullScreen()
            on_every_desktop(view)
        active = QApplication.activeWindow()
        if active is not None and within(active, view):
            return
        view.raise_()
        view.activateWindow()
        on_every_desktop(view)

    def _every_desktop(self) -> None:
        if self.active:
            on_every_desktop(self.view)

    def touched(self) -> None:
        """Count from now to the return of the slideshow (a visitor's photo was shown)."""
        if self.active:
            self.idle_timer.start()

    def look(self) -> None:
        """Look at the watched folder; the newest complete photo is answered (an older one
        that arrived in the same moment would be replaced at once)."""
        if self.inbox is None:
            return
        arrived = self.inbox.look()
        if arrived:
            self.idle_timer.start()
            self.photo_arrived.emit(arrived[-1])

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        try:
            return self._filter(watched, event)
        except Exception:  # a bug here must not take the kiosk down: say it, let it pass
            traceback.print_exc()
            return False

    def _filter(self, watched: QObject, event: QEvent) -> bool:
        """Return True to swallow ``event`` (see the module docstring)."""
        kind = event.type()
        if kind in _INPUT:
            self.idle_timer.start()
        if watched is self.view and kind in _TAKEN_AWAY:
            self.reclaim_timer.start()  # another window took the focus, or it was hidden
            return False
        if kind in _BLOCKED_ANYWHERE and (watched is self.view or watched in self.windows
                                          or kind == QEvent.Type.ContextMenu):
            event.ignore()
            return True
        if kind in (QEvent.Type.KeyPress, QEvent.Type.ShortcutOverride,
                    QEvent.Type.KeyRelease):
            key, modifiers = event.key(), event.modifiers()  # type: ignore[attr-defined]
            if is_staff_chord(key, modifiers):
                if kind == QEvent.Type.KeyPress:
                    self.staff_left.emit()
                return True
            if kind == QEvent.Type.ShortcutOverride:
                event.accept()  # no shortcut of any window fires
                return True
            return bool(modifiers & _MODIFIERS) or key not in VISITOR_KEYS \
                or not within(watched, self.view)
        if kind in (QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonDblClick,
                    QEvent.Type.MouseButtonRelease, QEvent.Type.Wheel, QEvent.Type.Drop,
                    QEvent.Type.DragEnter) and isinstance(watched, QWidget):
            return not within(watched, self.view)
        return False
