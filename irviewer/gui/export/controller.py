"""File ▸ Export figure…: the dialog (:mod:`.dialog`) asks which queries and how; the figure
is laid out (:func:`irviewer.view.figure_request.figure_layout`) and painted
(:func:`irviewer.gui.figure_painter.export_figure`) in a worker thread, and the status line
says where it went (``message``) or a dialog says why not."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDialog, QMessageBox, QWidget

from irviewer.core.evaluation import Evaluation
from irviewer.gui.export.dialog import ExportFigureDialog
from irviewer.gui.figure_painter import export_figure
from irviewer.gui.menus import Menus
from irviewer.gui.workers import Worker
from irviewer.view.figure_request import MAX_LISTED, FigureRequest, figure_layout


class Shown(Protocol):
    """What the export takes from the inspector."""

    evaluation: Evaluation | None
    current: int | None

    def method(self) -> str: ...
    def listed_queries(self, limit: int | None = None) -> list[int]: ...


class Compared(Protocol):
    """What the export takes from compare mode."""

    def compared_evaluation(self) -> tuple[str, Evaluation] | None: ...


class FigureExporter(QObject):
    """Adds File ▸ Export figure… and runs the export off the GUI thread; emits
    ``written(path)`` or ``failed(message)``, and ``message(text)`` for the status line."""

    written = Signal(str)
    failed = Signal(str)
    message = Signal(str)

    def __init__(self, parent: QWidget, shown: Shown, compared: Compared,
                 menus: Menus) -> None:
        super().__init__(parent)
        self.parent_widget, self.shown, self.compared = parent, shown, compared
        self.worker = Worker(self, every=True)  # each export asked for is written
        self.worker.done.connect(lambda path: self.written.emit(str(path)))
        self.worker.failed.connect(lambda message: self.failed.emit(str(message)))
        self.action = QAction("&Export figure…", parent)
        self.action.setShortcut("Ctrl+E")
        self.action.triggered.connect(self.ask)
        menus.add_file_action(self.action)
        self.written.connect(lambda p: self.message.emit(f"Figure written to {p}"))
        self.failed.connect(self._tell)

    def ask(self) -> None:
        """Show the dialog; on Export, write the figure in the background."""
        if self.shown.evaluation is None:
            self._tell("open a dataset first (File ▸ Open)")
            return
        compared = self.compared.compared_evaluation()
        dialog = ExportFigureDialog(self.parent_widget, compared[0] if compared else None,
                                    Path.cwd() / "figure.pdf")
        if dialog.exec() == QDialog.DialogCode.Accepted:
            self.export(dialog.request())

    def export(self, request: FigureRequest, sync: bool = False) -> None:
        """Lay out and write ``request``'s figure (``sync`` for tests)."""
        evaluation = self.shown.evaluation
        assert evaluation is not None
        shown = (self.shown.method(), evaluation)
        compared = self.compared.compared_evaluation()
        selected, listed = self.shown.current, self.shown.listed_queries(MAX_LISTED)

        def work() -> Path:
            layout = figure_layout(request, shown, compared, selected, listed)
            export_figure(layout, request.path)
            return request.path

        self.message.emit(f"Writing the figure to {request.path}…")
        self.worker.run(work, "not enough memory to lay out this figure; close other "
                        "programs or list fewer queries", sync=sync)

    def wait(self) -> None:
        """Block until the exports asked for are written."""
        self.worker.wait()

    def _tell(self, message: str) -> None:
        self.message.emit("The figure was not written")
        box = QMessageBox(QMessageBox.Icon.Warning, "Export figure", message,
                          parent=self.parent_widget)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
