"""The query table: a Qt item model over the evaluation's per-query arrays (no item widgets),
and a proxy that sorts by value and filters by text and "failures only"."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from PySide6.QtCore import (
    QAbstractItemModel,
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QColor

from irviewer.core.curves import in_ap_range
from irviewer.core.evaluation import Evaluation
from irviewer.view import palette
from irviewer.view.answers_view import has_answers, top_scores
from irviewer.view.compare_view import compared_header
from irviewer.view.result_list import titles
from irviewer.view.ties_view import TIE_MARK, ap_tie_tooltip, tied_queries

COLUMNS = ("Query", "AP", "P@1", "Pos.", "1st", "Title", "AP ⇄", "ΔAP", "Top")
HEADER_TIPS = ("The query's name", "Average precision (%) under the protocol's convention",
               "Precision at 1 (%): is the first result relevant?",
               "Number of positives (relevant gallery images) of the query",
               "1st: the rank of the first relevant result",
               "The query's title, where the dataset gives one",
               "Compare mode: AP (%) under the method compared with the shown one",
               "Compare mode: AP under the compared method − AP under the shown one "
               "(percent points); sorted ascending, the largest losses come first",
               "Top: the best score among the query's answers (copy detection: for a query "
               "without a copy, its strongest false positive); sort it to see them first")
TITLE, TOP = COLUMNS.index("Title"), COLUMNS.index("Top")
VALUE_OF_TOP = 4  # its place among the per-query values (after AP, P@1, Pos., 1st)
OTHER_AP, DELTA = COLUMNS.index("AP ⇄"), COLUMNS.index("ΔAP")
COMPARE_COLUMNS = (OTHER_AP, DELTA)
SORT_ROLE = Qt.ItemDataRole.UserRole
GAIN, LOSS = palette.GAIN, palette.LOSS  # ΔAP text: better / worse (the sign says it too)


class QueryTableModel(QAbstractTableModel):
    """One row per query: name, AP, P@1, number of positives, rank of the first positive.

    Sorting happens here, with one numpy argsort (20,000 rows in milliseconds), not in the
    proxy's Python comparisons; ``query_of(row)`` maps a row to the query it shows.
    """

    def __init__(self) -> None:
        super().__init__()
        self._names: list[str] = []
        self._files: list[str] = []
        self._titles: list[str] = []
        self._values: np.ndarray = np.zeros((0, 5))
        self._compare: np.ndarray = np.zeros((0, 2))  # compare mode: other AP, ΔAP
        self.compared_with = ""
        self._order: np.ndarray = np.zeros(0, dtype=np.int64)
        self._sorted_by: tuple[int, Qt.SortOrder] | None = None
        self._names_array: np.ndarray | None = None
        self._order_list: list[int] | None = None
        self._evaluation: Evaluation | None = None
        self._tied: np.ndarray = np.zeros(0, dtype=bool)  # AP depends on the ties' order
        self._delta_tied: np.ndarray = np.zeros(0, dtype=bool)  # ΔAP within the tie range
        self._delta_tips: dict[int, str] = {}
        self._first_header = COLUMNS[0]

    def set_evaluation(self, evaluation: Evaluation) -> None:
        """Show ``evaluation``'s per-query values. The same queries re-scored (another
        protocol, method or convention) update the rows in place (``dataChanged``, and a
        layout change when the sort moves them), so the current index and the selection stay
        on their query; other queries reset the model."""
        pq = evaluation.per_query
        ds = evaluation.dataset
        names = [q.name.rsplit("/", 1)[-1] for q in ds.queries]
        known = titles(ds)
        files = [q.name + (f"\n{d}" if (d := ds.details_line(q.image)) else "")
                 for q in ds.queries]  # hover text: the whole name, then any details
        query_titles = [known.get(q.image, "") for q in ds.queries]
        first = pq["first_positive_rank"].astype(float)
        first[first < 0] = np.nan
        values = np.column_stack([pq["AP"], pq["P@1"], pq["n_positives"], first + 1,
                                  top_scores(evaluation)])
        self._evaluation = evaluation
        self._tied = tied_queries(evaluation)
        self._delta_tied = np.zeros(len(names), dtype=bool)
        self._delta_tips = {}
        if names == self._names and len(names):
            self._values = values
            self._compare = np.full((len(names), 2), np.nan)
            self._titles, self._files = query_titles, files
            self._names_array = None
            if self._sorted_by is not None:
                self.sort(*self._sorted_by)
            self.dataChanged.emit(self.index(0, 1), self.index(len(names) - 1,
                                                               len(COLUMNS) - 1))
            return
        self.beginResetModel()
        self._names = names
        self._titles, self._files = query_titles, files
        self._names_array = None
        self._values = values
        self._compare = np.full((len(names), 2), np.nan)
        self._order = np.arange(len(self._names), dtype=np.int64)
        self._order_list = None
        if self._sorted_by is not None:
            self._order = self._sorted_order(*self._sorted_by)
            self._order_list = None
        self.endResetModel()

    def set_first_header(self, text: str) -> None:
        """Head the name column with ``text`` ("Query"; "Artwork" in a curator's window)."""
        if text != self._first_header:
            self._first_header = text
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, 0)

    def update_queries(self, evaluation: Evaluation, queries: np.ndarray,
                       notify: bool = True) -> bool:
        """Show the new values of the queries at positions ``queries`` only (a label
        correction re-scored them): their rows change in place (``dataChanged`` for those
        rows unless ``notify`` is False: the caller repaints), and the rows are sorted again
        when the sort is by a value. Returns whether rows moved."""
        q = np.asarray(queries, dtype=np.int64)
        if not len(q) or len(evaluation.dataset.queries) != len(self._names):
            return False
        pq = evaluation.per_query
        first = pq["first_positive_rank"][q].astype(float)
        first[first < 0] = np.nan
        self._values[q] = np.column_stack([pq["AP"][q], pq["P@1"][q], pq["n_positives"][q],
                                           first + 1, top_scores(evaluation)[q]])
        self._evaluation = evaluation
        self._tied = tied_queries(evaluation)
        if self._sorted_by is not None and 0 < self._sorted_by[0] < TITLE:
            self.sort(*self._sorted_by)
            return True
        if not notify:
            return False
        rows = np.empty(len(self._order), dtype=np.int64)
        rows[self._order] = np.arange(len(self._order))
        for row in rows[q].tolist():
            self.dataChanged.emit(self.index(row, 1), self.index(row, len(COLUMNS) - 1))
        return False

    def set_compared_ties(self, explained: np.ndarray | None,
                          tips: dict[int, str] | None = None) -> None:
        """Mark the ΔAPs (per query position) that the order of tied scores alone could make:
        grey, with :data:`TIE_MARK`, ``tips`` their hover sentences (None: none marked)."""
        n = len(self._names)
        self._delta_tied = (np.zeros(n, dtype=bool) if explained is None
                            else np.asarray(explained, dtype=bool))
        self._delta_tips = dict(tips or {})
        if n:
            self.dataChanged.emit(self.index(0, DELTA), self.index(n - 1, DELTA))

    def set_compared(self, name: str, other_ap: np.ndarray | None,
                     delta: np.ndarray | None) -> None:
        """Show the compared method's AP and ΔAP per query position (None: compare mode off;
        the two columns then read "—"). Rows re-sort when sorted by those columns."""
        n = len(self._names)
        if other_ap is None:
            self._delta_tied = np.zeros(n, dtype=bool)
            self._delta_tips = {}
        self.compared_with = name
        self._compare = (np.full((n, 2), np.nan) if other_ap is None or delta is None
                         else np.column_stack([other_ap, delta]))
        if self._sorted_by is not None and self._sorted_by[0] in COMPARE_COLUMNS:
            self.sort(*self._sorted_by)
        if n:
            self.dataChanged.emit(self.index(0, OTHER_AP), self.index(n - 1, DELTA))
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, OTHER_AP, OTHER_AP)

    def column_values(self, column: int) -> np.ndarray:
        """Return a numeric column by query position (AP, P@1, Pos., 1st, AP ⇄, ΔAP)."""
        if column in COMPARE_COLUMNS:
            return self._compare[:, column - OTHER_AP]
        return self._values[:, VALUE_OF_TOP if column == TOP else column - 1]

    @property
    def has_answers(self) -> bool:
        """Return whether the queries' answers are scored (the Top column is worth showing:
        copy detection)."""
        return self._evaluation is not None and has_answers(self._evaluation)

    @property
    def has_titles(self) -> bool:
        """Return whether any query has a title (the Title column is worth showing)."""
        return any(self._titles)

    @property
    def sorted_by(self) -> tuple[int, Qt.SortOrder] | None:
        """Return the (column, order) the rows are sorted by, or None (query order)."""
        return self._sorted_by

    def query_of(self, row: int) -> int:
        """Return the query position shown in ``row``."""
        return int(self._order[row])

    def row_of(self, query: int) -> int:
        """Return the row showing query position ``query``."""
        return int(np.flatnonzero(self._order == query)[0])

    def _sorted_order(self, column: int, order: Qt.SortOrder) -> np.ndarray:
        if column in (0, TITLE):
            keys = np.array(self._names if column == 0 else self._titles)
            idx = np.argsort(keys, kind="stable")
            return idx[::-1].copy() if order == Qt.SortOrder.DescendingOrder else idx
        values = self.column_values(column)
        missing = np.isnan(values)
        key = np.where(missing, 0.0, values)
        key = -key if order == Qt.SortOrder.DescendingOrder else key
        return np.lexsort((key, missing))  # skipped queries last, either way

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort rows by ``column`` (stable; skipped queries last)."""
        self.layoutAboutToBeChanged.emit()
        old = self._order
        self._sorted_by = (column, order)
        self._order = self._sorted_order(column, order)
        self._order_list = None
        # Keep selections and the current index on the same query, now in another row.
        new_row = np.empty(len(self._order), dtype=np.int64)
        new_row[self._order] = np.arange(len(self._order))
        before = self.persistentIndexList()
        after = [self.index(int(new_row[old[i.row()]]), i.column()) for i in before]
        self.changePersistentIndexList(before, after)
        self.layoutChanged.emit()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self._names)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            if section == OTHER_AP and self.compared_with:
                return compared_header(self.compared_with)
            return self._first_header if section == 0 else COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            if section == OTHER_AP and self.compared_with:
                return f"Compare mode: AP (%) under {self.compared_with}"
            return HEADER_TIPS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        row, col = int(self._order[index.row()]), index.column()
        if col in (0, TITLE):
            if role in (Qt.ItemDataRole.DisplayRole, SORT_ROLE):
                return self._names[row] if col == 0 else self._titles[row]
            if role == Qt.ItemDataRole.ToolTipRole:  # the title and the whole file name
                return "\n".join(t for t in (self._titles[row], self._files[row]) if t)
            return None
        value = float(self.column_values(col)[row])
        if role == SORT_ROLE:
            return -1.0 if math.isnan(value) else value
        tie_marked = (col == 1 and self._tied[row]) or (col == DELTA and self._delta_tied[row])
        if role == Qt.ItemDataRole.DisplayRole:
            if math.isnan(value):
                return "—"
            mark = f"{TIE_MARK} " if tie_marked else ""
            if col == DELTA:
                return f"{mark}{100 * value:+.1f}"
            if col == TOP:
                return f"{value:.3f}"
            return (f"{mark}{100 * value:.1f}" if col in (1, 2, OTHER_AP)
                    else f"{int(value)}")
        if role == Qt.ItemDataRole.ToolTipRole and tie_marked:
            if col == DELTA:
                return self._delta_tips.get(row)
            return ap_tie_tooltip(self._evaluation, row) if self._evaluation else None
        if role == Qt.ItemDataRole.ForegroundRole and col == DELTA and value != 0:
            return QColor(palette.TIE if tie_marked else GAIN if value > 0 else LOSS)
        if role == Qt.ItemDataRole.TextAlignmentRole and col > 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def columns_by_query(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return (names and titles, AP, P@1) indexed by query position, for filtering: the
        text is the name, a line break and the title, lower case."""
        if self._names_array is None:
            self._names_array = np.char.lower(np.array(
                [f"{n}\n{t}" for n, t in zip(self._names, self._titles, strict=True)],
                dtype=str))
        return self._names_array, self._values[:, 0], self._values[:, 1]

    def order_list(self) -> list[int]:
        """Return the query position shown in each row, as a list (fast to index)."""
        if self._order_list is None:
            self._order_list = self._order.tolist()
        return self._order_list

    def ap(self, row: int) -> float:
        """Return the AP of the query in ``row`` (nan when skipped)."""
        return float(self._values[self._order[row], 0])

    def p_at_1(self, row: int) -> float:
        """Return the P@1 of the query in ``row`` (nan when skipped)."""
        return float(self._values[self._order[row], 1])


class QueryFilter(QSortFilterProxyModel):
    """Filters by name text, "failures only" (P@1 = 0) and an AP range; sorting is passed on
    to the source model, which sorts with numpy.

    The filters are evaluated once per change with numpy into a per-query mask, so the
    per-row check Qt makes is a list lookup: 20,000 rows filter in milliseconds, not in the
    tenth of a second that a Python comparison per row costs.
    """

    def __init__(self) -> None:
        super().__init__()
        self.setSortRole(SORT_ROLE)
        self.setDynamicSortFilter(False)
        self.text = ""
        self.failures_only = False
        self.ap_range: tuple[float, float] | None = None
        self.change = 0  # compare mode: +1 only queries that got better, -1 worse, 0 all
        self._accept: list[bool] | None = None  # per query position; None: all
        self._source: QueryTableModel | None = None

    def setSourceModel(self, model: QAbstractItemModel) -> None:  # noqa: N802
        super().setSourceModel(model)
        self._source = model if isinstance(model, QueryTableModel) else None
        model.modelAboutToBeReset.connect(self._forget)

    def set_text(self, text: str) -> None:
        """Show only queries whose name or title contains ``text`` (case-insensitive)."""
        self._change(lambda: setattr(self, "text", text))

    def set_failures_only(self, on: bool) -> None:
        """Show only queries whose first result is not relevant."""
        self._change(lambda: setattr(self, "failures_only", on))

    def set_ap_range(self, ap_range: tuple[float, float] | None) -> None:
        """Show only queries with AP in ``ap_range`` (:func:`irviewer.core.curves.in_ap_range`:
        low <= AP < high, <= 1 for the last bin); None for all."""
        self._change(lambda: setattr(self, "ap_range", ap_range))

    def set_change(self, change: int) -> None:
        """Compare mode: show only queries whose ΔAP is > 0 (``change`` 1) or < 0 (-1); 0
        for all."""
        self._change(lambda: setattr(self, "change", change))

    def refresh(self) -> None:
        """Re-apply the filters to new values (the source model was reset)."""
        self._change(lambda: None)

    def _forget(self) -> None:
        self._accept = None

    def _mask(self) -> list[bool] | None:
        """Return whether each query position passes every filter (None: all pass)."""
        model = self.sourceModel()
        if not isinstance(model, QueryTableModel) or not (
                self.text or self.failures_only or self.ap_range is not None
                or self.change):
            return None
        names, ap, p1 = model.columns_by_query()
        keep = np.ones(len(ap), dtype=bool)
        if self.text:
            keep &= np.char.find(names, self.text.lower()) >= 0
        if self.failures_only:
            keep &= p1 == 0
        if self.ap_range is not None:
            keep &= in_ap_range(ap, *self.ap_range)
        if self.change:
            delta = model.column_values(DELTA)
            keep &= delta > 0 if self.change > 0 else delta < 0
        return keep.tolist()

    def _change(self, apply: Callable[[], object]) -> None:
        if hasattr(self, "beginFilterChange"):  # Qt >= 6.10
            self.beginFilterChange()
            apply()
            self._accept = self._mask()
            self.endFilterChange()
        else:
            apply()
            self._accept = self._mask()
            self.invalidateFilter()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort by asking the source model (one numpy argsort), keeping the filter."""
        source = self.sourceModel()
        if isinstance(source, QueryTableModel) and column >= 0:
            source.sort(column, order)

    def filterAcceptsRow(self, row: int, parent: QModelIndex | QPersistentModelIndex) -> bool:  # noqa: N802
        accept = self._accept
        if accept is None or self._source is None:
            return True
        return accept[self._source.order_list()[row]]
