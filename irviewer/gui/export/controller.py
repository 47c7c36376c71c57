"""File ▸ Export figure…: the dialog (:mod:`.dialog`) asks which queries and how; the figure
is laid out (:func:`irviewer.view.figure_request.figure_layout`) and painted
(:func:`irviewer.gui.figure_painter.export_figure`) in a worker thread, and the status line
says where it went (``message``) or a dialog says why not.

File ▸ Export ranked list…: the selected query's ranked list, written by the command
line's writers (``irviewer eval --export-csv`` / ``--export-trec``): a CSV of names, ranks,
scores and relevance (:mod:`irviewer.formats.ranked_csv`), or a TREC run with its qrels
beside it (:mod:`irviewer.formats.trec`), chosen by the file's suffix."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDialog, QFileDialog, QWidget

from irviewer.core.errors import InputError, window_text
from irviewer.core.evaluation import Evaluation
from irviewer.formats.ranked_csv import write_ranked_csv
from irviewer.formats.trec import write_qrels, write_trec_run
from irviewer.gui.export.dialog import ExportFigureDialog
from irviewer.gui.figure_painter import export_figure
from irviewer.gui.menus import Menus
from irviewer.gui.widgets.warning import warn
from irviewer.gui.workers import Worker
from irviewer.view.figure_request import MAX_LISTED, FigureRequest, figure_layout

#: The file dialog's choices: the suffix chooses the writer.
LIST_FILTERS = ("CSV: names, ranks, scores, relevance (*.csv);;"
                "TREC run, its qrels beside it (*.run)")


class Shown(Protocol):
    """What the export takes from the inspector."""

    evaluation: Evaluation | None
    current: int | None

    def method(self) -> str: ...
    def listed_queries(self, limit: int | None = None) -> list[int]: ...


class Compared(Protocol):
    """What the export takes from compare mode."""

    def compared_evaluation(self) -> tuple[str, Evaluation] | None: ...
    def compared_pair(self) -> tuple[Evaluation, Evaluation] | None: ...


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
        self.list_action = QAction("Export ranked &list…", parent)
        self.list_action.setShortcut("Ctrl+Shift+E")
        self.list_action.setToolTip("Write the selected query's ranked list: names, ranks, "
                                    "scores and relevance (CSV), or a TREC run and qrels")
        self.list_action.triggered.connect(self.ask_list)
        menus.add_file_action(self.list_action)
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
        paired = self.compared.compared_pair()
        selected, listed = self.shown.current, self.shown.listed_queries(MAX_LISTED)

        def work() -> Path:
            layout = figure_layout(request, shown, compared, selected, listed, paired)
            export_figure(layout, request.path)
            return request.path

        self.message.emit(f"Writing the figure to {request.path}…")
        self.worker.run(work, "not enough memory to lay out this figure; close other "
                        "programs or list fewer queries", sync=sync)

    def ask_list(self) -> None:
        """Ask where to write the selected query's ranked list, and write it."""
        ev, q = self.shown.evaluation, self.shown.current
        if ev is None or q is None:
            self._tell("select a query first", "Export ranked list")
            return
        stem = ev.dataset.queries[q].name.rsplit("/", 1)[-1]
        path, _ = QFileDialog.getSaveFileName(
            self.parent_widget, "Export ranked list", str(Path.cwd() / f"{stem}.csv"),
            LIST_FILTERS)
        if path:
            self.export_list(Path(path))

    def export_list(self, path: Path) -> list[Path]:
        """Write the selected query's ranked list to ``path``: a TREC run for a ``.run``
        suffix (with its qrels at the ``.qrels`` suffix), else a CSV; return the files
        written (none, with a dialog saying why, when it cannot be written)."""
        ev, q = self.shown.evaluation, self.shown.current
        assert ev is not None and q is not None
        name = ev.dataset.queries[q].name
        if not ev.evaluated[q]:
            self._tell(f"{name} has no positive under {ev.protocol.name}, so it is left out "
                       "of the means and has no ranked list to export", "Export ranked list")
            return []
        try:
            if path.suffix.lower() == ".run":
                qrels = path.with_suffix(".qrels")
                write_trec_run(path, ev, queries=[q])
                write_qrels(qrels, ev, queries=[q])
                written = [path, qrels]
            else:
                write_ranked_csv(path, ev, [q])
                written = [path]
        except InputError as e:
            self._tell(window_text(e), "Export ranked list")
            return []
        self.message.emit(f"Ranked list of {name} written to "
                          + " and ".join(str(p) for p in written))
        return written

    def wait(self) -> None:
        """Block until the exports asked for are written."""
        self.worker.wait()

    def _tell(self, message: str, title: str = "Export figure") -> None:
        self.message.emit("The figure was not written" if title == "Export figure"
                          else "The ranked list was not written")
        warn(self.parent_widget, message, title)
