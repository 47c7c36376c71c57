"""The query list on the left: filters (text, failures only, AP range), the sortable table
over the evaluation's per-query values, and the count of queries shown. Emits
``query_selected(query position)`` when the current row changes."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from irviewer.core.evaluation import Evaluation
from irviewer.gui.results.query_model import (
    COMPARE_COLUMNS,
    OTHER_AP,
    TITLE,
    TOP,
    QueryFilter,
    QueryTableModel,
)
from irviewer.view.ties_view import TIE_MARK
from irviewer.view.window_layout import RESEARCH, WindowLayout

#: The compared method's AP column is at least this wide (px), wider when its name needs.
OTHER_AP_WIDTH = 90


class QueryListPanel(QWidget):
    """Filter box, "failures only", AP range boxes, the query table and its count.

    The details follow the selection: ``query_selected(int)`` is emitted when a row becomes
    current *and* selected with another query (a click, a key, :meth:`select_query`), never
    when Qt only moves the cursor (focus coming back, rows filtered away). When the filters
    hide the query shown, it stays shown and ``query_hidden(True)`` says so (``False``
    when it is listed again).

    ``ap_range_changed(range)`` gives the AP filter as (low, high) fractions or None.
    """

    query_selected = Signal(int)
    query_hidden = Signal(bool)
    ap_range_changed = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.model = QueryTableModel()
        self.proxy = QueryFilter()
        self.proxy.setSourceModel(self.model)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setMinimumSectionSize(36)
        # Numbers get the width of their header or of "100.0", measured once (resizing to
        # contents would measure a thousand rows at every change of a 20,000-row table);
        # the names and titles share the rest.
        metrics = self.table.fontMetrics()
        for column in (*range(1, TITLE), TOP):
            text = str(self.model.headerData(column, Qt.Orientation.Horizontal))
            widest = (f"{TIE_MARK} 100.0" if column == 1 else "-100.000" if column == TOP
                      else "100.0")  # AP: a tie mark too; Top: a score
            width = max(metrics.horizontalAdvance(text) + 24,
                        metrics.horizontalAdvance(widest) + 12)
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Fixed)
            header.resizeSection(column, width)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(TITLE, QHeaderView.ResizeMode.Stretch)
        self.table.setColumnHidden(TITLE, True)
        self.table.setColumnHidden(TOP, True)
        delta_width = max(56, metrics.horizontalAdvance(f"{TIE_MARK} +100.0") + 12)
        for column, width in zip(COMPARE_COLUMNS, (OTHER_AP_WIDTH, delta_width), strict=True):
            # compare mode shows them; a fixed width, as measuring 20,000 rows takes seconds
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Fixed)
            self.table.setColumnWidth(column, width)
            self.table.setColumnHidden(column, True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.selectionModel().currentRowChanged.connect(self._follow)
        self.table.selectionModel().selectionChanged.connect(self._follow)
        self.shown: int | None = None  # the query whose details are shown
        self.hidden = False
        self._changing = False
        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Filter queries by name or title…  (Ctrl+F)")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self._on_filter)
        self.failures = QCheckBox("Failures only (P@1 = 0)")
        self.failures.toggled.connect(self._on_failures)
        self.better = QCheckBox("Got better")
        self.worse = QCheckBox("Got worse")
        for box, sign, other in ((self.better, 1, self.worse), (self.worse, -1, self.better)):
            box.setToolTip("Compare mode: only the queries whose AP the compared method "
                           + ("raises (ΔAP > 0)" if sign > 0 else "lowers (ΔAP < 0)"))
            box.setEnabled(False)  # shown always: the row keeps its layout (no re-measuring)
            box.toggled.connect(lambda on, s=sign, o=other: self._on_change_filter(on, s, o))
        self.failures_row = QWidget()  # the research filters' rows: hidden for a curator
        failures_row = QHBoxLayout(self.failures_row)
        failures_row.setContentsMargins(0, 0, 0, 0)
        failures_row.addWidget(self.failures)
        failures_row.addWidget(self.better)
        failures_row.addWidget(self.worse)
        failures_row.addStretch(1)
        self.ap_low, self.ap_high = QDoubleSpinBox(), QDoubleSpinBox()
        for spin, value in ((self.ap_low, 0.0), (self.ap_high, 100.0)):
            spin.setRange(0.0, 100.0)
            spin.setDecimals(0)
            spin.setSingleStep(10.0)
            spin.setSuffix(" %")
            spin.setValue(value)
            spin.setKeyboardTracking(False)  # a value counts when committed, not per key
            spin.valueChanged.connect(self._on_ap_spin)
        self.ap_low.setToolTip("Lowest AP listed (%): Enter or Tab applies it")
        self.ap_high.setToolTip("Highest AP listed (%): Enter or Tab applies it")
        self.ap_row = QWidget()
        ap_row = QHBoxLayout(self.ap_row)
        ap_row.setContentsMargins(0, 0, 0, 0)
        ap_row.addWidget(QLabel("AP from"))
        ap_row.addWidget(self.ap_low)
        ap_row.addWidget(QLabel("to"))
        ap_row.addWidget(self.ap_high)
        ap_row.addStretch(1)
        self.count = QLabel("")
        self.layout_shown: WindowLayout = RESEARCH
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.filter_edit)
        layout.addWidget(self.failures_row)
        layout.addWidget(self.ap_row)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.count)

    # -- content ---------------------------------------------------------------------------
    def set_evaluation(self, evaluation: Evaluation) -> None:
        """Show ``evaluation``'s per-query values; the same queries re-scored keep their
        row selected and current."""
        if self.model.rowCount() != evaluation.dataset.n_queries:
            self.shown = None  # other queries: nothing to keep
        with self._rows_changing():
            self.model.set_evaluation(evaluation)
            self.proxy.refresh()
        self.table.setColumnHidden(TITLE, self.layout_shown.research
                                   and not self.model.has_titles)
        self.table.setColumnHidden(TOP, not self.model.has_answers)

    def set_layout(self, layout: WindowLayout) -> None:
        """Show the research columns and filters, or the curator's list (names and
        titles, no AP, P@1, positives or first-positive columns, no failure or AP filter):
        :mod:`irviewer.view.window_layout`."""
        if layout == self.layout_shown:
            return
        self.layout_shown = layout
        if not layout.research:
            self.failures.setChecked(False)  # a hidden filter must not hide rows
            self.set_ap_range(None)
        for widget in (self.failures_row, self.ap_row):
            widget.setVisible(layout.research)
        for column in range(1, TITLE):
            self.table.setColumnHidden(column, not layout.research)
        self.table.setColumnHidden(TITLE, layout.research and not self.model.has_titles)
        self.model.set_first_header(layout.first_column)
        self.filter_edit.setPlaceholderText(layout.filter_hint())
        self._count()

    def update_queries(self, evaluation: Evaluation, queries: np.ndarray) -> None:
        """Show the re-scored values of ``queries`` only (after a label correction); the
        filters are applied again when rows moved or a value filter is on."""
        # Repainted rather than announced with dataChanged: the value columns resize to
        # their contents, and any dataChanged makes the header measure 1,000 rows in every
        # role again (0.4 s on a 20,000-query table); the numbers' widths do not change.
        moved = self.model.update_queries(evaluation, queries, notify=False)
        if moved or self.proxy.failures_only or self.proxy.ap_range is not None:
            self.proxy.refresh()
            self._count()
        self.table.viewport().update()

    def set_compared(self, name: str, other_ap: np.ndarray | None,
                     delta: np.ndarray | None) -> None:
        """Compare mode: show the compared method's AP and ΔAP columns and the better/worse
        filters (``other_ap`` None: compare mode off, columns and filters gone)."""
        on = other_ap is not None
        if not on:
            for box in (self.better, self.worse):
                box.setChecked(False)
        if on or self.model.compared_with:  # off and already off: nothing to refilter
            with self._rows_changing():
                self.model.set_compared(name, other_ap, delta)
                self.proxy.refresh()
        for column in COMPARE_COLUMNS:
            self.table.setColumnHidden(column, not on)
        if on:  # the compared method's whole name: the widest line of its header
            lines = str(self.model.headerData(OTHER_AP, Qt.Orientation.Horizontal)).split("\n")
            metrics = self.table.fontMetrics()
            self.table.setColumnWidth(OTHER_AP, max(OTHER_AP_WIDTH, 24 + max(
                metrics.horizontalAdvance(line) for line in lines)))
        # The title leaves its room to ΔAP (the name's tooltip still gives it).
        self.table.setColumnHidden(TITLE, on or not self.model.has_titles)
        for box in (self.better, self.worse):
            box.setEnabled(on)

    def set_compared_ties(self, explained: np.ndarray | None,
                          tips: dict[int, str] | None = None) -> None:
        """Compare mode: mark the ΔAPs the order of tied scores alone could make."""
        self.model.set_compared_ties(explained, tips)

    def listed_queries(self, limit: int | None = None) -> list[int]:
        """Return the query positions the table lists, in its order (its sort and filters;
        the first ``limit`` of them when given)."""
        n = self.proxy.rowCount() if limit is None else min(limit, self.proxy.rowCount())
        return [self.model.query_of(self.proxy.mapToSource(self.proxy.index(r, 0)).row())
                for r in range(n)]

    def current_query(self) -> int | None:
        """Return the query position of the current row, or None."""
        index = self.table.currentIndex()
        if not index.isValid():
            return None
        return self.model.query_of(self.proxy.mapToSource(index).row())

    def select_query(self, q: int) -> bool:
        """Make query ``q``'s row current and selected; False when the filters hide it (then
        it is the query shown, said to be hidden, and no row is selected)."""
        index = self.proxy.mapFromSource(self.model.index(self.model.row_of(q), 0))
        if not index.isValid():
            self.shown = q
            self.table.selectionModel().clearSelection()
            self.table.selectionModel().clearCurrentIndex()
            self._set_hidden(True)
            return False
        self.table.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows)
        return True

    def jump(self, row: int) -> None:
        """Select row ``row`` of the shown rows (negative: from the end)."""
        n = self.proxy.rowCount()
        if n:
            self.table.selectRow(row % n)

    def next_failure(self) -> bool:
        """Select the next shown query (in table order, after the current row) whose first
        result is wrong; False when none is shown."""
        n = self.proxy.rowCount()
        current = self.table.currentIndex()
        start = current.row() + 1 if current.isValid() else 0
        for i in range(n):
            row = (start + i) % n
            if self.model.p_at_1(self.proxy.mapToSource(self.proxy.index(row, 0)).row()) == 0:
                self.table.selectRow(row)
                return True
        return False

    def filter_has_focus(self) -> bool:
        """Return whether the keyboard is in the filter box."""
        return self.filter_edit.hasFocus()

    def clear_filter_text(self) -> None:
        """Empty the filter box (Esc there)."""
        self.filter_edit.clear()

    def focus_filter(self) -> None:
        """Put the cursor in the filter box, its text selected (Ctrl+F)."""
        self.filter_edit.setFocus()
        self.filter_edit.selectAll()

    # -- filters and sort ------------------------------------------------------------------
    def set_filters(self, text: str, failures_only: bool,
                    ap_range: tuple[float, float] | None) -> None:
        """Set the three filters."""
        self.filter_edit.setText(text)
        self.failures.setChecked(failures_only)
        self.set_ap_range(ap_range)

    def filters(self) -> tuple[str, bool, tuple[float, float] | None]:
        """Return (filter text, failures only, AP range or None)."""
        return self.filter_edit.text(), self.failures.isChecked(), self.proxy.ap_range

    def set_ap_range(self, ap_range: tuple[float, float] | None) -> None:
        """Show only queries with AP in ``ap_range`` (fractions; None for all)."""
        low, high = ap_range if ap_range is not None else (0.0, 1.0)
        for spin, value in ((self.ap_low, low), (self.ap_high, high)):
            spin.blockSignals(True)
            spin.setRange(0.0, 100.0)
            spin.setValue(100 * value)
            spin.blockSignals(False)
        self._bound_ap_boxes()
        active = None if (low, high) == (0.0, 1.0) else (low, high)
        with self._rows_changing():
            self.proxy.set_ap_range(active)
        self.ap_range_changed.emit(active)

    def sort_state(self) -> tuple[int, str] | None:
        """Return the table's sort as (column, "ascending" | "descending"), or None."""
        sorted_by = self.model.sorted_by
        if sorted_by is None:
            return None
        column, order = sorted_by
        return column, ("descending" if order == Qt.SortOrder.DescendingOrder
                        else "ascending")

    def sort_by(self, column: int, order: str) -> None:
        """Sort the table by ``column`` in ``order`` ("ascending" or "descending")."""
        if 0 <= column < self.model.columnCount():
            self.table.sortByColumn(column, Qt.SortOrder.DescendingOrder
                                    if order == "descending" else Qt.SortOrder.AscendingOrder)

    # -- slots -----------------------------------------------------------------------------
    def _follow(self, *_args: object) -> None:
        if self._changing:
            return
        current = self.table.currentIndex()
        if not current.isValid() or not self.table.selectionModel().isRowSelected(
                current.row(), QModelIndex()):
            return  # the cursor moved without a selection (focus in, rows removed)
        q = self.model.query_of(self.proxy.mapToSource(current).row())
        self._set_hidden(False)
        if q != self.shown:  # listed again after being hidden: already shown
            self.shown = q
            self.query_selected.emit(q)

    def _filtered(self) -> None:
        """After the rows changed: keep the shown query selected, or say it is hidden."""
        if self.shown is not None:
            index = self.proxy.mapFromSource(self.model.index(self.model.row_of(self.shown), 0))
            selection = self.table.selectionModel()
            if index.isValid():
                if self.table.currentIndex() != index or not selection.isRowSelected(
                        index.row(), QModelIndex()):
                    self.select_query(self.shown)
                self._set_hidden(False)
            else:
                selection.clearSelection()
                selection.clearCurrentIndex()
                self._set_hidden(True)
        self._count()

    def _set_hidden(self, hidden: bool) -> None:
        if hidden != self.hidden:
            self.hidden = hidden
            self.query_hidden.emit(hidden)

    def _on_filter(self, text: str) -> None:
        with self._rows_changing():
            self.proxy.set_text(text)

    def _on_change_filter(self, on: bool, sign: int, other: QCheckBox) -> None:
        if on and other.isChecked():
            other.blockSignals(True)  # one direction at a time
            other.setChecked(False)
            other.blockSignals(False)
        with self._rows_changing():
            self.proxy.set_change(sign if on else 0)

    def _on_failures(self, on: bool) -> None:
        with self._rows_changing():
            self.proxy.set_failures_only(on)

    @contextlib.contextmanager
    def _rows_changing(self) -> Iterator[None]:
        """Ignore what Qt does to the cursor while rows change; then keep the shown query
        selected, or say that it is hidden."""
        self._changing = True
        try:
            yield
        finally:
            self._changing = False
            self._filtered()

    def _on_ap_spin(self, _value: float) -> None:
        low, high = self.ap_low.value() / 100, self.ap_high.value() / 100
        self.set_ap_range((min(low, high), max(low, high)))

    def _bound_ap_boxes(self) -> None:
        """Keep "from" at most "to" and "to" at least "from" (the arrows stop there)."""
        for spin, low, high in ((self.ap_low, 0.0, self.ap_high.value()),
                                (self.ap_high, self.ap_low.value(), 100.0)):
            spin.blockSignals(True)
            spin.setRange(low, high)
            spin.blockSignals(False)

    def _count(self) -> None:
        self.count.setText(self.layout_shown.count(self.proxy.rowCount(),
                                                   self.model.rowCount()))
