"""The Review suspects panel: paints a :class:`~irviewer.view.review_queue.ReviewQueue`
(Qt model/view, no item widgets) with the audit's progress, the kind filter, the reviewed
count and the selected suspect's details.

Keys in the queue: ↑/↓ move, Enter accepts the suggested fix, Delete marks "checked, the
label stands" (again: unmarks). The panel only asks (signals); the review controller
(:mod:`irviewer.gui.review.controller`) answers through the corrections' undo stack.
"""

from __future__ import annotations

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
    SignalInstance,
)
from PySide6.QtGui import QColor, QFont, QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from irviewer.view import palette
from irviewer.view.review_queue import (
    ACCEPTED,
    CHECKED,
    KIND_WORDS,
    OPEN,
    STATE_MARKS,
    ReviewQueue,
    fix_words,
    query_words,
    score_words,
)

Index = QModelIndex | QPersistentModelIndex
COLUMNS = ("", "score", "kind", "query", "item", "fix", "evidence")
COLUMN_WIDTHS = (62, 80, 150, 170, 200, 170)  # the evidence column takes the rest
REVIEWED_COLOUR = QColor(palette.REVIEWED)


class ReviewTableModel(QAbstractTableModel):
    """The queue's shown suspects as table rows (one per suspect, most suspicious first)."""

    def __init__(self) -> None:
        super().__init__()
        self.queue = ReviewQueue()
        self.positions: tuple[int, ...] = ()

    def set_queue(self, queue: ReviewQueue) -> None:
        """Show ``queue`` (after an audit)."""
        self.beginResetModel()
        self.queue, self.positions = queue, queue.rows()
        self.endResetModel()

    def refresh(self) -> None:
        """Repaint after the queue's state, filter or hiding changed."""
        rows = self.queue.rows()
        if rows != self.positions:
            self.beginResetModel()
            self.positions = rows
            self.endResetModel()
        elif rows:
            self.dataChanged.emit(self.index(0, 0), self.index(len(rows) - 1, len(COLUMNS) - 1))

    def position(self, row: int) -> int:
        """Return the queue position shown in ``row``."""
        return self.positions[row]

    def row_of(self, position: int) -> int | None:
        """Return the row showing queue position ``position`` (None: hidden)."""
        try:
            return self.positions.index(position)
        except ValueError:
            return None

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.positions)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        position = self.positions[index.row()]
        s = self.queue.suspects[position]
        state = self.queue.state(position)
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (STATE_MARKS[state], score_words(s), KIND_WORDS.get(s.kind, s.kind),
                    query_words(s), s.item, fix_words(s), s.evidence)[col]
        if role == Qt.ItemDataRole.ToolTipRole:
            return s.evidence
        if role == Qt.ItemDataRole.ForegroundRole and state != OPEN:
            return REVIEWED_COLOUR
        if role == Qt.ItemDataRole.FontRole and state != OPEN and col > 0:
            font = QFont()
            font.setStrikeOut(True)
            return font
        if role == Qt.ItemDataRole.TextAlignmentRole and col == 1:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class EndElided(QStyledItemDelegate):
    """The evidence column: a sentence, cut at its end (its start says the most)."""

    def initStyleOption(self, option: QStyleOptionViewItem, index: Index) -> None:  # noqa: N802
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideRight


class QueueView(QTableView):
    """The queue's table: Enter and Delete ask for the answer of the current suspect."""

    enter = Signal()
    delete = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.enter.emit()
        elif event.key() in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace):
            self.delete.emit()
        else:
            super().keyPressEvent(event)


class ReviewPanel(QWidget):
    """Signals: ``run_requested()`` (Audit / Cancel button: the controller decides),
    ``selected(position)``, ``accept_requested(position)``, ``check_requested(position)``."""

    run_requested = Signal()
    selected = Signal(int)
    accept_requested = Signal(int)
    check_requested = Signal(int)

    def __init__(self) -> None:
        super().__init__()
        self.model = ReviewTableModel()
        self.run_button = QPushButton("Audit labels")
        self.run_button.setToolTip("Rank the labels every loaded method disagrees with "
                                   "(irviewer audit), most suspicious first")
        self.kind = QComboBox()
        self.kind.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.hide_reviewed = QCheckBox("Hide reviewed")
        self.count = QLabel()
        self.progress = QProgressBar()
        self.progress.setVisible(False)
        self.status = QLabel("Press Audit labels to find the labels that look wrong.")
        self.status.setWordWrap(True)
        self.table = QueueView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # names keep both ends
        self.table.setItemDelegateForColumn(len(COLUMNS) - 1, EndElided(self.table))
        self.table.setMinimumHeight(150)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for col, width in enumerate(COLUMN_WIDTHS):
            header.resizeSection(col, width)
        header.setStretchLastSection(True)
        self.detail = QLabel()
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail.setStyleSheet(f"QLabel {{ background: {palette.DETAIL_BACKGROUND}; border: "
                                  f"1px solid {palette.DETAIL_BORDER}; padding: 4px; }}")
        # a long evidence sentence (an image in the wrong list: both lists' evidence) scrolls
        # rather than being cut off when the dock is short
        self.detail_area = QScrollArea()
        self.detail_area.setWidgetResizable(True)
        self.detail_area.setFrameShape(QFrame.Shape.NoFrame)
        self.detail_area.setWidget(self.detail)
        self.detail_area.setMinimumHeight(96)
        self.accept_button = QPushButton("Accept fix (Enter)")
        self.check_button = QPushButton("Label stands (Delete)")
        for b in (self.accept_button, self.check_button):
            b.setEnabled(False)

        top = QHBoxLayout()
        for w in (self.run_button, QLabel("Kind:"), self.kind, self.hide_reviewed):
            top.addWidget(w)
        top.addStretch(1)
        top.addWidget(self.count)
        answer = QHBoxLayout()
        answer.addWidget(self.accept_button)
        answer.addWidget(self.check_button)
        answer.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.detail_area)
        layout.addLayout(answer)

        self.run_button.clicked.connect(self.run_requested)
        self.kind.currentIndexChanged.connect(self._kind_changed)
        self.hide_reviewed.toggled.connect(self._hide_changed)
        self.table.selectionModel().currentRowChanged.connect(self._current_changed)
        self.table.enter.connect(lambda: self._answer(self.accept_requested))
        self.table.delete.connect(lambda: self._answer(self.check_requested))
        self.accept_button.clicked.connect(lambda: self._answer(self.accept_requested))
        self.check_button.clicked.connect(lambda: self._answer(self.check_requested))

    # -- the controller's calls ------------------------------------------------------------
    def focus_queue(self) -> None:
        """Give the queue the keyboard (↑ / ↓, Enter, Delete)."""
        self.table.setFocus()

    def set_busy(self, busy: bool) -> None:
        """Show the audit running (progress, Cancel) or idle."""
        self.run_button.setText("Cancel audit" if busy else "Audit labels")
        self.progress.setVisible(busy)
        if busy:
            self.progress.setRange(0, 0)

    def show_progress(self, stage: str, done: int, total: int) -> None:
        """Show the audit's stage."""
        self.progress.setRange(0, total)
        self.progress.setValue(done)
        self.progress.setFormat(f"{stage} (%v of %m)")

    def show_status(self, text: str) -> None:
        """Show one line under the buttons (what was audited, notes, errors)."""
        self.status.setText(text)

    def set_queue(self, queue: ReviewQueue) -> None:
        """Show a new queue: the kind filter's choices, every kind, first suspect current."""
        self.kind.blockSignals(True)
        self.kind.clear()
        self.kind.addItem(f"all kinds ({len(queue.suspects)})", None)
        for kind, n in queue.kinds():
            self.kind.addItem(f"{KIND_WORDS.get(kind, kind)} ({n})", kind)
        self.kind.blockSignals(False)
        queue.set_kind(None)
        queue.hide_reviewed = self.hide_reviewed.isChecked()
        self.model.set_queue(queue)
        self._count()
        self.select_position(queue.rows()[0] if queue.rows() else None)

    def refresh(self) -> None:
        """Repaint after a suspect was answered, or an answer undone."""
        current = self.current_position()
        self.model.refresh()
        self._count()
        if current is not None and self.model.row_of(current) is not None:
            self.select_position(current)
        self._update_buttons()

    def current_position(self) -> int | None:
        """Return the queue position of the current row (None: none)."""
        index = self.table.currentIndex()
        return self.model.position(index.row()) if index.isValid() else None

    def select_position(self, position: int | None) -> None:
        """Make the suspect at queue ``position`` current (None: clear the selection)."""
        row = self.model.row_of(position) if position is not None else None
        if row is None:
            self.table.clearSelection()
            self.detail.setText("")
            self._update_buttons()
            return
        index = self.model.index(row, 0)
        if index != self.table.currentIndex():
            self.table.setCurrentIndex(index)
        self.table.scrollTo(index)

    def show_detail(self, html: str) -> None:
        """Show the selected suspect's details (rich text)."""
        self.detail.setText(html)
        self._update_buttons()

    # -- inside ------------------------------------------------------------------------------
    def _answer(self, signal: SignalInstance) -> None:
        position = self.current_position()
        if position is not None:
            signal.emit(position)

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self.selected.emit(self.model.position(current.row()))
        self._update_buttons()

    def _update_buttons(self) -> None:
        position = self.current_position()
        queue = self.model.queue
        self.accept_button.setEnabled(position is not None and queue.can_accept(position))
        self.check_button.setEnabled(position is not None
                                     and queue.state(position) != ACCEPTED)
        if position is not None:
            self.check_button.setText("Ask again (Delete)" if queue.state(position) == CHECKED
                                      else "Label stands (Delete)")

    def _kind_changed(self, _index: int) -> None:
        current = self.current_position()
        self.model.queue.set_kind(self.kind.currentData())
        self.model.refresh()
        self._count()
        rows = self.model.positions
        self.select_position(current if current in rows else (rows[0] if rows else None))

    def _hide_changed(self, on: bool) -> None:
        self.model.queue.hide_reviewed = on
        self._kind_changed(self.kind.currentIndex())

    def _count(self) -> None:
        self.count.setText(f"<b>{self.model.queue.count().text()}</b>")
