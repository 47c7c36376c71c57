"""File ▸ Export figure…: a dialog asking which queries, how many results, scores, the
compared method as a second row and the file; the figure is laid out and written in a worker
thread (:mod:`irviewer.view.figure_request`,
:func:`irviewer.gui.export.figure_painter.export_figure`) and the status bar says where it went."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSpinBox,
)

from irviewer.core.errors import InputError
from irviewer.gui.export.figure_painter import export_figure
from irviewer.view.figure_request import CHOICES, MAX_LISTED, FigureRequest, figure_layout

if TYPE_CHECKING:
    from irviewer.gui.main_window import MainWindow


class ExportFigureDialog(QDialog):
    """The questions; :meth:`request` returns the answers."""

    def __init__(self, parent, compared: str | None, default_path: Path) -> None:  # type: ignore[no-untyped-def]
        super().__init__(parent)
        self.setWindowTitle("Export figure")
        self.choice = QComboBox()
        for key, words in CHOICES:
            self.choice.addItem(words, key)
        if compared is None:  # the largest changes need a compared method
            self.choice.removeItem(self.choice.findData("largest_changes"))
        self.n = QSpinBox()
        self.n.setRange(1, MAX_LISTED)
        self.n.setValue(4)
        self.top_k = QSpinBox()
        self.top_k.setRange(1, 50)
        self.top_k.setValue(8)
        self.scores = QCheckBox("Print each result's score under its tile")
        self.second_row = QCheckBox(f"{compared} as a second row per query" if compared
                                    else "a second row needs a method in Compare with")
        self.second_row.setChecked(compared is not None)
        self.second_row.setEnabled(compared is not None)
        self.path = QLineEdit(str(default_path))
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        path_row = QHBoxLayout()
        path_row.addWidget(self.path, 1)
        path_row.addWidget(browse)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Export")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow("Queries:", self.choice)
        form.addRow("N:", self.n)
        form.addRow("Results per row:", self.top_k)
        form.addRow("", self.scores)
        form.addRow("", self.second_row)
        form.addRow("File (.pdf, .svg, .png):", path_row)
        form.addRow(buttons)
        self.choice.currentIndexChanged.connect(self._enable_n)
        self._enable_n()

    def request(self) -> FigureRequest:
        """Return the answers."""
        return FigureRequest(self.choice.currentData(), self.n.value(), self.top_k.value(),
                             self.scores.isChecked(), self.second_row.isChecked(),
                             Path(self.path.text().strip()).expanduser())

    def _enable_n(self, *_args: object) -> None:
        self.n.setEnabled(self.choice.currentData() in ("worst", "best", "largest_changes"))

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export figure", self.path.text(),
                                              "Figures (*.pdf *.svg *.png)")
        if path:
            self.path.setText(path)


class _Export(QRunnable):
    def __init__(self, work, done: Signal, failed: Signal) -> None:  # type: ignore[no-untyped-def]
        super().__init__()
        self.work, self.done, self.failed = work, done, failed

    def run(self) -> None:
        try:
            self.done.emit(str(self.work()))
        except InputError as e:
            self.failed.emit(str(e))
        except Exception as e:  # a bug: shown, not swallowed
            self.failed.emit(f"internal error (a bug, please report it): "
                             f"{type(e).__name__}: {e}")


class FigureExporter(QObject):
    """Adds File ▸ Export figure… to ``window`` and runs the export off the GUI thread;
    emits ``written(path)`` or ``failed(message)``."""

    written = Signal(str)
    failed = Signal(str)

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.w = window
        self.pool = QThreadPool(self)
        self.action = QAction("&Export figure…", window)
        self.action.setShortcut("Ctrl+E")
        self.action.triggered.connect(self.ask)
        menu = window.menus.file
        quit_at = next((a for a in menu.actions() if a.text() == "&Quit"), None)
        menu.insertAction(quit_at, self.action)
        self.written.connect(lambda p: window.statusBar().showMessage(f"Figure written to {p}"))
        self.failed.connect(self._tell)

    def ask(self) -> None:
        """Show the dialog; on Export, write the figure in the background."""
        if self.w.evaluation is None:
            self._tell("open a dataset first (File ▸ Open)")
            return
        compared = self.w.compare_mode.compared() if self.w.compare_mode.active else None
        dialog = ExportFigureDialog(self.w, compared, Path.cwd() / "figure.pdf")
        if dialog.exec() == QDialog.DialogCode.Accepted:
            self.export(dialog.request())

    def export(self, request: FigureRequest, sync: bool = False) -> None:
        """Lay out and write ``request``'s figure (``sync`` for tests)."""
        w = self.w
        assert w.evaluation is not None
        method = w.bar.choice()[0]
        mode = w.compare_mode
        compared = ((mode.compared(), mode.other) if mode.active and mode.other is not None
                    else None)
        panel = w.queries
        listed = [panel.model.query_of(panel.proxy.mapToSource(panel.proxy.index(r, 0)).row())
                  for r in range(min(panel.proxy.rowCount(), MAX_LISTED))]
        shown = (method, w.evaluation)

        def work() -> Path:
            layout = figure_layout(request, shown, compared, w.current, listed)
            export_figure(layout, request.path)
            return request.path

        w.statusBar().showMessage(f"Writing the figure to {request.path}…")
        job = _Export(work, self.written, self.failed)
        if sync:
            job.run()
        else:
            self.pool.start(job)

    def wait(self) -> None:
        """Block until a running export ends."""
        self.pool.waitForDone()

    def _tell(self, message: str) -> None:
        self.w.statusBar().showMessage("The figure was not written")
        box = QMessageBox(QMessageBox.Icon.Warning, "Export figure", message, parent=self.w)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
