"""Presentation mode: the controller. It enters on the query the inspector shows,
moves in the query list's order and filter (←/→, Page Up/Down, the slideshow), shows a
visitor's photo, and returns to the inspector on the query last shown. The slide itself is
:class:`~irviewer.gui.presentation.slide.PresentationView`; what the slide asks for a photo
(O, a drop) it passes on as its own signals."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QMessageBox,
    QSpinBox,
    QWidget,
)

from irviewer.core.evaluation import Evaluation
from irviewer.gui.menus import Menus
from irviewer.gui.presentation.kiosk import (
    KIOSK_HINT,
    KioskLock,
    lock_window,
    unlock_window,
    within,
)
from irviewer.gui.presentation.kiosk_dialog import KioskDialog, kiosk_settings
from irviewer.gui.presentation.slide import KEYS_HINT, PresentationView, presentation_settings
from irviewer.view.presentation import INTERVAL_RANGE_S, TOP_N_RANGE, Slide, neighbour, query_slide


class Shown(Protocol):
    """What presentation mode takes from the inspector: the query shown, the list's order,
    and the query shown before a visitor's photo."""

    evaluation: Evaluation | None
    current: int | None
    before_photo: int | None

    def show_query(self, q: int) -> None: ...
    def select(self, q: int) -> None: ...
    def first_query(self) -> None: ...
    def leave_photo(self) -> None: ...
    def listed_queries(self, limit: int | None = None) -> list[int]: ...


class Presentation(QObject):
    """Presentation mode: enters on the query shown, moves in the query list's order and
    filter, returns to the inspector on the query (or the photo) last shown.

    Signals: ``query_shown(q)`` when a dataset query's slide replaces whatever was shown;
    ``photo_requested()`` and ``photo_dropped(path)`` from the slide (a visitor's photo);
    ``message(text)`` for the status line."""

    query_shown = Signal(int)
    photo_requested = Signal()
    photo_dropped = Signal(object)
    message = Signal(str)

    def __init__(self, parent: QWidget, settings: QSettings, shown: Shown,
                 menus: Menus) -> None:
        super().__init__(parent)
        self.parent_widget, self.settings, self.shown = parent, settings, shown
        self.top_n, interval = presentation_settings(settings)
        self.view = PresentationView(parent, interval)
        self.view.step.connect(self.step)
        self.view.leave.connect(self.leave)
        self.view.photo_requested.connect(self.photo_requested)
        self.view.photo_dropped.connect(self.photo_dropped)
        self.photo_slide: Slide | None = None
        self._enter_on_data = False
        self._kiosk_on_data: tuple[float, Path | None] | None = None
        self.kiosk = KioskLock(self.view, (parent,))
        self._hidden_windows: list[QWidget] = []  # what the kiosk hid, shown when it ends
        self.kiosk.staff_left.connect(self.leave_kiosk)
        self.kiosk.idle.connect(self.back_to_slideshow)
        self.kiosk.photo_arrived.connect(self.photo_dropped)
        self._install_menu(menus)

    @property
    def active(self) -> bool:
        """Return whether presentation mode is shown."""
        return self.view.isVisible()

    def _install_menu(self, menus: Menus) -> None:
        enter = QAction("&Presentation", self.parent_widget)
        enter.setShortcut(QKeySequence("F11"))
        enter.triggered.connect(self.enter)
        settings = QAction("Presentation &settings…", self.parent_widget)
        settings.triggered.connect(self.settings_dialog)
        kiosk = QAction("&Kiosk mode…", self.parent_widget)
        kiosk.triggered.connect(self.kiosk_dialog)
        menus.add_view_action(enter, separated=True)
        menus.add_view_action(kiosk)
        menus.add_view_action(settings)

    def enter(self) -> None:
        """Show the query the inspector shows (the first listed when none), full screen."""
        w = self.shown
        if w.evaluation is None:
            self.message.emit("Open a dataset first: presentation mode shows its queries")
            return
        w.leave_photo()  # from a photo: the query shown before it
        if w.current is None:
            w.first_query()
        if w.current is None:
            return
        self.photo_slide = None
        self._show(w.current)
        self.view.showFullScreen()
        self.view.activateWindow()
        self.view.setFocus()

    def enter_when_opened(self) -> None:
        """Enter as soon as data is shown (``irviewer --present``): now when it is, else
        when the window next calls :meth:`data_shown`."""
        self._enter_on_data = self.shown.evaluation is None
        if not self._enter_on_data:
            self.enter()

    def data_shown(self) -> None:
        """Data was opened and shown: enter (or start the kiosk) if
        :meth:`enter_when_opened` (:meth:`kiosk_when_opened`) asked to."""
        if self._enter_on_data:
            self._enter_on_data = False
            self.enter()
        if self._kiosk_on_data is not None:
            idle_s, folder = self._kiosk_on_data
            self._kiosk_on_data = None
            self.enter_kiosk(idle_s, folder)

    # -- kiosk -----------------------------------------------------------------------------
    @property
    def kiosk_active(self) -> bool:
        """Return whether kiosk mode runs."""
        return self.kiosk.active

    def kiosk_when_opened(self, idle_s: float | None = None, folder: Path | None = None
                          ) -> None:
        """Start the kiosk as soon as data is shown (``irviewer --kiosk``); without
        ``folder``, the one set in View ▸ Kiosk mode (if any) is watched."""
        idle, saved = kiosk_settings(self.settings)
        idle_s, folder = idle_s or idle, folder if folder is not None else saved
        if self.shown.evaluation is None:
            self._kiosk_on_data = (idle_s, folder)
        else:
            self.enter_kiosk(idle_s, folder)

    def kiosk_dialog(self) -> None:
        """View ▸ Kiosk mode…: the watched folder and the idle time, then the kiosk."""
        dialog = KioskDialog(self.parent_widget, self.settings)
        if dialog.exec():
            self.enter_kiosk(dialog.idle_s(), dialog.folder())

    def enter_kiosk(self, idle_s: float | None = None, folder: Path | None = None) -> None:
        """Present full screen, locked for visitors (:mod:`~irviewer.gui.presentation.kiosk`):
        the program's only window (the inspector and any other window hidden), on top and
        on every desktop; the slideshow runs, photos come from a drop or ``folder``, and
        after ``idle_s`` seconds without input (the user's setting when None) the slideshow
        comes back. Nothing on screen names the staff's chord."""
        if self.shown.evaluation is None:
            self.enter()  # says what to open first
            return
        self._hidden_windows = lock_window(self.view)
        self.enter()
        self.view.hint = KIOSK_HINT
        self.view.set_slideshow(True)
        self.kiosk.start(idle_s or kiosk_settings(self.settings)[0], folder)
        self.message.emit("Kiosk mode")

    def leave_kiosk(self) -> None:
        """Staff's chord: unlock, show the windows the kiosk hid, and go back to the
        inspector."""
        self.kiosk.stop()
        unlock_window(self.view, self._hidden_windows)
        self._hidden_windows = []
        self.view.hint = KEYS_HINT
        self.parent_widget.show()  # also when the kiosk was the first window shown
        self.leave()
        self.message.emit("Kiosk mode ended")

    def back_to_slideshow(self) -> None:
        """Nobody has touched the kiosk for a while: a visitor's photo (and any message
        over it) gives way to the slideshow, which runs again."""
        for widget in QApplication.topLevelWidgets():
            if isinstance(widget, QMessageBox) and within(widget, self.view):
                widget.close()
        if self.photo_slide is not None:
            self.step(1)
        self.view.set_slideshow(True)

    def order(self) -> list[int]:
        """Return the queries as the inspector lists them (its sort and filter)."""
        return self.shown.listed_queries()

    def step(self, by: int) -> None:
        """Show the query ``by`` places on in the list (wrapping round); from a photo, the
        query that was shown before it comes back first."""
        w = self.shown
        if w.evaluation is None:
            return
        if self.photo_slide is not None or w.current is None:
            self.photo_slide = None
            q = w.current if w.current is not None else w.before_photo
        else:
            q = neighbour(self.order(), w.current, by)
        if q is None:
            return
        w.select(q)
        if w.current != q:
            w.show_query(q)
        self._show(q)

    def _show(self, q: int) -> None:
        w = self.shown
        assert w.evaluation is not None
        order = self.order()
        position = f"{order.index(q) + 1} / {len(order)}" if q in order else ""
        self.view.show_slide(query_slide(w.evaluation, q, self.top_n), position)
        self.query_shown.emit(q)

    def show_photo(self, slide: Slide) -> None:
        """Show a visitor's photo, irviewer's answer and the matches (entering
        presentation mode if needed)."""
        self.photo_slide = slide
        self.view.show_slide(slide, "")
        if self.kiosk_active:  # the answer stays until the kiosk is left idle, in front
            self.view.set_slideshow(False)
            self.kiosk.touched()
            self.kiosk.reclaim()
        if not self.active:
            self.view.showFullScreen()
        self.view.setFocus()

    def leave(self) -> None:
        """Back to the inspector, on the query (or the photo) last shown."""
        self.view.set_slideshow(False)
        self.view.hide()
        w = self.shown
        if self.photo_slide is None and w.current is not None and w.evaluation is not None:
            w.show_query(w.current)
        self.parent_widget.activateWindow()

    def settings_dialog(self) -> None:
        """View ▸ Presentation settings: how many matches, the slideshow's interval."""
        dialog = QDialog(self.parent_widget)
        dialog.setWindowTitle("Presentation settings")
        n_box, s_box = QSpinBox(), QSpinBox()
        n_box.setRange(*TOP_N_RANGE)
        n_box.setValue(self.top_n)
        s_box.setRange(*INTERVAL_RANGE_S)
        s_box.setSuffix(" s")
        s_box.setValue(round(self.view.interval()))
        form = QFormLayout(dialog)
        form.addRow("Matches shown per query", n_box)
        form.addRow("Slideshow: next query every", s_box)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(dialog.accept)
        buttons.rejected.connect(dialog.reject)
        form.addRow(buttons)
        if dialog.exec():
            self.apply_settings(n_box.value(), s_box.value())

    def apply_settings(self, top_n: int, interval_s: int) -> None:
        """Show ``top_n`` matches and change slides every ``interval_s`` seconds; kept in
        the user's settings."""
        self.top_n = top_n
        self.view.set_interval(interval_s)
        self.settings.setValue("presentation/top_n", top_n)
        self.settings.setValue("presentation/interval_s", interval_s)
        if self.active and self.photo_slide is None and self.shown.current is not None:
            self._show(self.shown.current)
