"""The query table: a Qt item model over the evaluation's per-query arrays (no item widgets),
and a proxy that sorts by value and filters by text and "failures only"."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt

from irviewer.core.evaluation import Evaluation

COLUMNS = ("Query", "AP", "P@1", "Positives", "First positive")
SORT_ROLE = Qt.ItemDataRole.UserRole


class QueryTableModel(QAbstractTableModel):
    """One row per query: name, AP, P@1, number of positives, rank of the first positive."""

    def __init__(self) -> None:
        super().__init__()
        self._names: list[str] = []
        self._values: np.ndarray = np.zeros((0, 4))

    def set_evaluation(self, evaluation: Evaluation) -> None:
        """Show ``evaluation``'s per-query values (a reset: one signal for all rows)."""
        self.beginResetModel()
        pq = evaluation.per_query
        self._names = [q.name.rsplit("/", 1)[-1] for q in evaluation.dataset.queries]
        first = pq["first_positive_rank"].astype(float)
        first[first < 0] = np.nan
        self._values = np.column_stack([pq["AP"], pq["P@1"], pq["n_positives"], first + 1])
        self.endResetModel()

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self._names)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        return None

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        if col == 0:
            return self._names[row] if role in (Qt.ItemDataRole.DisplayRole, SORT_ROLE) else None
        value = float(self._values[row, col - 1])
        if role == SORT_ROLE:
            return -1.0 if math.isnan(value) else value
        if role == Qt.ItemDataRole.DisplayRole:
            if math.isnan(value):
                return "—"
            return f"{100 * value:.1f}" if col in (1, 2) else f"{int(value)}"
        if role == Qt.ItemDataRole.TextAlignmentRole and col > 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def p_at_1(self, row: int) -> float:
        """Return the query's P@1 (nan when skipped)."""
        return float(self._values[row, 1])


class QueryFilter(QSortFilterProxyModel):
    """Sorts by the numeric value; filters by name text and by "failures only" (P@1 = 0)."""

    def __init__(self) -> None:
        super().__init__()
        self.setSortRole(SORT_ROLE)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterKeyColumn(0)
        self.failures_only = False

    def set_failures_only(self, on: bool) -> None:
        """Show only queries whose first result is not relevant."""
        if hasattr(self, "beginFilterChange"):  # Qt >= 6.10
            self.beginFilterChange()
            self.failures_only = on
            self.endFilterChange()
        else:
            self.failures_only = on
            self.invalidateFilter()

    def filterAcceptsRow(self, row: int, parent: QModelIndex) -> bool:  # noqa: N802
        if not super().filterAcceptsRow(row, parent):
            return False
        if self.failures_only:
            model = self.sourceModel()
            return isinstance(model, QueryTableModel) and model.p_at_1(row) == 0
        return True
