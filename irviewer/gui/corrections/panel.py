"""The Corrections panel (a dock: every correction made, newest last, clicking one jumps to
its query, Delete reverts it) and the corrections line under the summary (both numbers and
the published / corrected switch). They paint :mod:`irviewer.view.corrections`'s rows and
sentences; they compute nothing."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from irviewer.view import palette
from irviewer.view.corrections import LogRow
from irviewer.view.corrections_saving import Saving

HEADERS = ("query", "item", "from → to", "author", "time", "note")


class CorrectionsPanel(QWidget):
    """The corrections as a table. Signals: ``jump(query position)`` when a row is clicked,
    ``remove(log position)`` for Delete or the button (the window reverts it, undoably)."""

    jump = Signal(int)
    remove = Signal(int)

    def __init__(self) -> None:
        super().__init__()
        self.rows: tuple[LogRow, ...] = ()
        self.refused = False  # the corrections file could not be read: none can be made
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.cellClicked.connect(self._clicked)
        self.delete_button = QPushButton("Delete (revert)")
        self.delete_button.setToolTip("Revert the selected correction (Delete); Ctrl+Z undoes "
                                      "the deletion")
        self.delete_button.clicked.connect(self._delete_selected)
        self.count = QLabel("")
        self.empty = QLabel("No corrections yet. Right-click a result (or click it and press 1–4) "
                            "to set its relation to the query.")
        self.empty.setWordWrap(True)
        self.empty.setStyleSheet(f"color:{palette.MUTED_TEXT}")
        self.file = QLabel("")
        self.file.setWordWrap(True)
        self.file.setStyleSheet(f"color:{palette.MUTED_TEXT}")
        self.file.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        bottom = QHBoxLayout()
        bottom.addWidget(self.count, 1)
        bottom.addWidget(self.delete_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.empty)
        layout.addWidget(self.table, 1)
        layout.addLayout(bottom)
        layout.addWidget(self.file)
        delete = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.table,
                           context=Qt.ShortcutContext.WidgetShortcut)
        delete.activated.connect(self._delete_selected)
        self.set_rows(())

    def set_rows(self, rows: tuple[LogRow, ...]) -> None:
        """Show ``rows`` (oldest first); the selection stays on its position if it can."""
        selected = self.table.currentRow()
        self.rows = rows
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            cells = (row.query, row.item, row.change(), row.author, row.time.replace("T", " "),
                     row.note)
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(f"made by {row.writer}" if HEADERS[c] == "author" and row.writer
                                else text)
                self.table.setItem(r, c, item)
        if 0 <= selected < len(rows):
            self.table.selectRow(selected)
        self.empty.setVisible(not rows and not self.refused)
        self.delete_button.setEnabled(bool(rows))
        self.count.setText(f"{len(rows)} correction{'s' if len(rows) != 1 else ''}"
                           if rows else "")

    def set_saving(self, saving: Saving) -> None:
        """Say where the corrections are saved, or will be (a file that does not exist yet
        is never said to hold them), and what is not saved yet and why (in the alert
        colour)."""
        self.refused = bool(saving.refused)
        self.file.setText(saving.panel_line())
        self.empty.setVisible(not self.rows and not self.refused)  # "right-click…": not now
        self.file.setToolTip(str(saving.path) if saving.path is not None else "")
        colour = palette.ALERT_TEXT if saving.alert else palette.MUTED_TEXT
        self.file.setStyleSheet(f"color:{colour}")

    def _clicked(self, row: int, _column: int) -> None:
        target = self.rows[row].jump_to
        if target is not None:
            self.jump.emit(target)

    def _delete_selected(self) -> None:
        row = self.table.currentRow()
        if 0 <= row < len(self.rows):
            self.remove.emit(row)


class CorrectionsLine(QWidget):
    """Under the summary: published → corrected numbers and the switch that shows the
    published ground truth again. ``published_toggled(bool)`` when the switch changes."""

    published_toggled = Signal(bool)

    def __init__(self) -> None:
        super().__init__()
        self.text = QLabel("")
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.mark = QLabel("")  # "1 unsaved": what is not in the file yet
        self.mark.setStyleSheet(f"color:{palette.ALERT_TEXT}; font-weight:bold")
        self.mark.setToolTip("Not in the corrections file yet: the Corrections panel says why; "
                             "irviewer saves as soon as it can")
        self.mark.setVisible(False)
        self.switch = QCheckBox("Show the published ground truth")
        self.switch.setToolTip("Score and colour the results with the benchmark's own labels, "
                               "without your corrections. A correction made meanwhile edits "
                               "the corrected ground truth and shows it again.")
        self.switch.toggled.connect(self.published_toggled)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("<b>Corrections:</b>"))
        layout.addWidget(self.text, 1)
        layout.addWidget(self.mark)
        layout.addWidget(self.switch)

    def show_line(self, html: str, showing_published: bool, switchable: bool) -> None:
        """Show ``html``; the switch reflects what is shown and is enabled when there is
        something to switch between."""
        self.text.setText(html)
        self.switch.blockSignals(True)
        self.switch.setChecked(showing_published)
        self.switch.blockSignals(False)
        self.switch.setEnabled(switchable or showing_published)

    def set_mark(self, text: str) -> None:
        """Show ``text`` ("1 unsaved") beside the numbers in the alert colour ("": none)."""
        self.mark.setText(f"⚠ {text}" if text else "")
        self.mark.setVisible(bool(text))
