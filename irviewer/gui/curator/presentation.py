"""Presentation mode (issue #13): the controller. It enters on the query the inspector shows,
moves in the query list's order and filter (←/→, Page Up/Down, the slideshow), shows a
visitor's photo, and returns to the inspector on the query last shown. The slide itself is
:class:`~irviewer.gui.curator.slide.PresentationView`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QSpinBox

from irviewer.gui.curator.slide import PresentationView, presentation_settings
from irviewer.view.presentation import INTERVAL_RANGE_S, TOP_N_RANGE, Slide, neighbour, query_slide

if TYPE_CHECKING:
    from irviewer.gui.main_window import MainWindow


class Presentation(QObject):
    """Presentation mode for a :class:`MainWindow`: enters on the query shown, moves in the
    query list's order and filter, returns to the inspector on the query (or the photo) last
    shown. ``query_shown(q)`` when a dataset query's slide replaces whatever was shown."""

    query_shown = Signal(int)

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.top_n, interval = presentation_settings(window.settings)
        self.view = PresentationView(window, interval)
        self.view.step.connect(self.step)
        self.view.leave.connect(self.leave)
        self.photo_slide: tuple[Slide, dict[str, str], str | None] | None = None
        self.resume: int | None = None  # the query to come back to from a photo
        self._install_menu()

    @property
    def active(self) -> bool:
        """Return whether presentation mode is shown."""
        return self.view.isVisible()

    def _install_menu(self) -> None:
        w = self.window
        enter = QAction("&Presentation", w)
        enter.setShortcut(QKeySequence("F11"))
        enter.triggered.connect(self.enter)
        settings = QAction("Presentation &settings…", w)
        settings.triggered.connect(self.settings_dialog)
        w.menus.view.addSeparator()
        w.menus.view.addAction(enter)
        w.menus.view.addAction(settings)
        self.enter_action = enter

    def enter(self) -> None:
        """Show the query the inspector shows (the first listed when none), full screen."""
        w = self.window
        if w.evaluation is None:
            w.show_message("Open a dataset first: presentation mode shows its queries")
            return
        if w.current is None and self.resume is not None:
            w.show_query(self.resume)  # from a photo: the query shown before it
        if w.current is None:
            w.queries.jump(0)
        if w.current is None:
            return
        self.photo_slide = None
        self._show(w.current)
        self.view.showFullScreen()
        self.view.activateWindow()
        self.view.setFocus()

    def enter_when_opened(self) -> None:
        """Enter as soon as data is shown (``irviewer --present``)."""
        if self.window.evaluation is not None:
            self.enter()
            return

        def once(_opened: object) -> None:
            self.window.opening.opened.disconnect(once)
            self.enter()
        self.window.opening.opened.connect(once)

    def order(self) -> list[int]:
        """Return the queries as the inspector lists them (its sort and filter)."""
        panel = self.window.queries
        proxy = panel.proxy
        return [panel.model.query_of(proxy.mapToSource(proxy.index(r, 0)).row())
                for r in range(proxy.rowCount())]

    def step(self, by: int) -> None:
        """Show the query ``by`` places on in the list (wrapping round); from a photo, the
        query that was shown before it comes back first."""
        w = self.window
        if w.evaluation is None:
            return
        if self.photo_slide is not None or w.current is None:
            self.photo_slide = None
            q = w.current if w.current is not None else self.resume
        else:
            q = neighbour(self.order(), w.current, by)
        if q is None:
            return
        if not w.queries.select_query(q) or w.current != q:
            w.show_query(q)
        self._show(q)

    def _show(self, q: int) -> None:
        w = self.window
        assert w.evaluation is not None
        order = self.order()
        position = f"{order.index(q) + 1} / {len(order)}" if q in order else ""
        self.view.show_slide(query_slide(w.evaluation, q, self.top_n), position)
        self.query_shown.emit(q)

    def show_photo(self, slide: Slide, instances: dict[str, str],
                   instance: str | None) -> None:
        """Show a visitor's photo and its matches (entering presentation mode if needed)."""
        self.photo_slide = (slide, instances, instance)
        self.view.show_slide(slide, "", instances, instance)
        if not self.active:
            self.view.showFullScreen()
        self.view.setFocus()

    def leave(self) -> None:
        """Back to the inspector, on the query (or the photo) last shown."""
        self.view.set_slideshow(False)
        self.view.hide()
        w = self.window
        if self.photo_slide is None and w.current is not None and w.evaluation is not None:
            w.show_query(w.current)
        w.activateWindow()

    def settings_dialog(self) -> None:
        """View ▸ Presentation settings: how many matches, the slideshow's interval."""
        dialog = QDialog(self.window)
        dialog.setWindowTitle("Presentation settings")
        n_box, s_box = QSpinBox(), QSpinBox()
        n_box.setRange(*TOP_N_RANGE)
        n_box.setValue(self.top_n)
        s_box.setRange(*INTERVAL_RANGE_S)
        s_box.setSuffix(" s")
        s_box.setValue(round(self.view.timer.interval() / 1000))
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
        self.window.settings.setValue("presentation/top_n", top_n)
        self.window.settings.setValue("presentation/interval_s", interval_s)
        if self.active and self.photo_slide is None and self.window.current is not None:
            self._show(self.window.current)
