"""The "Conventions" tab: the shown ranking's numbers under every convention, in a table
(a Qt item model, no item widgets), computed when the tab is looked at."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QHeaderView, QLabel, QTableView, QVBoxLayout, QWidget

from irviewer.core.evaluation import Evaluation
from irviewer.view.conventions_view import HEADERS, convention_lines, conventions_caption


class ConventionsTable(QWidget):
    """A caption over a read-only table of :func:`convention_lines`. :meth:`show_evaluation`
    only remembers the evaluation; the lines are computed by :meth:`refresh`, which the
    panel calls when the tab is (or becomes) the one shown."""

    def __init__(self) -> None:
        super().__init__()
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.model = QStandardItemModel(0, len(HEADERS))
        self.model.setHorizontalHeaderLabels(list(HEADERS))
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setEditTriggers(QTableView.EditTrigger.NoEditTriggers)
        self.view.verticalHeader().setVisible(False)
        self.view.setWordWrap(False)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.caption)
        layout.addWidget(self.view, 1)
        self.evaluation: Evaluation | None = None
        self._shown_for: Evaluation | None = None

    def show_evaluation(self, evaluation: Evaluation) -> None:
        """Remember ``evaluation``; its lines are computed on :meth:`refresh`."""
        self.evaluation = evaluation

    def refresh(self) -> None:
        """Fill the table for the remembered evaluation (nothing when it is already shown)."""
        ev = self.evaluation
        if ev is None or ev is self._shown_for:
            return
        self._shown_for = ev
        self.caption.setText(conventions_caption(ev))
        self.model.setRowCount(0)
        bold = QFont()
        bold.setBold(True)
        for line in convention_lines(ev):
            cells = [QStandardItem(t) for t in (line.value, line.metric, line.convention,
                                                line.source)]
            cells[0].setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            for cell in cells:
                cell.setToolTip(f"{line.convention}: used by {line.source}")
            if line.own:
                for cell in cells:
                    cell.setFont(bold)
            self.model.appendRow(cells)
