"""The approximate-search dialogs: Add an approximate index method (which descriptor
method, the SPEC or an index file, checked as it changes), Add an engine method (the
method, the engine's URI, the collection, the names field), and a sweep's figure and table.
What a SPEC means and why one is refused comes from
:mod:`irviewer.methods.searched`."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from irviewer.core.errors import InputError, window_text
from irviewer.gui.sweep_painter import SweepFigure
from irviewer.methods.searched import AnnPlan, ann_refusal, plan_ann
from irviewer.opening.opener import Opened
from irviewer.view import palette
from irviewer.view.sweep_view import SweepView

#: The SPEC the dialog offers first: an inverted file over a few lists, swept.
EXAMPLE = "IVF16,Flat:nprobe=1,2,4,8"
HELP = ("A FAISS index factory string built from the method's gallery vectors (IVF256,Flat, "
        "IVF1024,PQ32, HNSW32, OPQ16,IVF256,PQ16), or an index file built over them in the "
        "descriptor file's order; search parameters after a colon (:nprobe=8, "
        ":efSearch=64), a comma list of values sweeps them. Inner product on L2-normalised "
        "vectors, as the exact ranking; each setting is compared with it.")


def _methods_box(opened: Opened, shown: str) -> QComboBox:
    """Return a box of the methods that can be searched approximately, ``shown`` first."""
    box = QComboBox()
    ok = [n for n, m in opened.methods.items() if ann_refusal(m, opened.dataset) is None]
    box.addItems(ok)
    if shown in ok:
        box.setCurrentText(shown)
    return box


def _ok_cancel(dialog: QDialog) -> QDialogButtonBox:
    """Return OK and Cancel buttons that accept and reject ``dialog``."""
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                               | QDialogButtonBox.StandardButton.Cancel)
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    return buttons


class AnnDialog(QDialog):
    """Which method and which SPEC; :attr:`plan` is the checked answer (None while
    refused)."""

    def __init__(self, parent: QWidget | None, opened: Opened, shown: str) -> None:
        super().__init__(parent)
        self.setWindowTitle("Add an approximate index method")
        self.opened = opened
        self.plan: AnnPlan | None = None
        self.method_box = _methods_box(opened, shown)
        self.spec = QLineEdit(EXAMPLE)
        self.spec.setMinimumWidth(360)
        self.spec.setToolTip(HELP)
        browse = QPushButton("Index file…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.spec, 1)
        row.addWidget(browse)
        form = QFormLayout()
        form.addRow("Search:", self.method_box)
        form.addRow("Index (SPEC):", row)
        explain = QLabel(HELP)
        explain.setWordWrap(True)
        explain.setStyleSheet(f"color: {palette.MUTED_TEXT}")
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.buttons = _ok_cancel(self)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(explain)
        layout.addWidget(self.note)
        layout.addWidget(self.buttons)
        self.spec.textChanged.connect(self._check)
        self.method_box.currentTextChanged.connect(self._check)
        self._check()

    def method(self) -> str:
        """Return the chosen method's name."""
        return self.method_box.currentText()

    def spec_text(self) -> str:
        """Return the SPEC as typed."""
        return self.spec.text().strip()

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "FAISS index file", "",
                                              "FAISS index (*.faiss *.index *.idx *.ivf "
                                              "*.hnsw *.bin);;Any file (*)")
        if path:
            self.spec.setText(path)

    def _check(self) -> None:
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        try:
            self.plan = plan_ann(self.opened.methods, self.opened.dataset, self.method(),
                                 self.spec_text())
        except (InputError, KeyError) as e:
            self.plan = None
            self.note.setText(window_text(e.for_window()) if isinstance(e, InputError)
                              else "Choose a method with vectors")
            self.note.setStyleSheet(f"color: {palette.ALERT_TEXT}")
            ok.setEnabled(False)
            return
        settings = self.plan.spec.settings()
        what = (f"{len(settings)} settings, each one more method, and a sweep figure"
                if len(settings) > 1 else "one more method")
        self.note.setText(f"Adds {what}: {', '.join(self.plan.names[:4])}"
                          + (" …" if len(settings) > 4 else ""))
        self.note.setStyleSheet("")
        ok.setEnabled(True)


class EngineDialog(QDialog):
    """Which method's queries, and which engine collection holds the gallery."""

    def __init__(self, parent: QWidget | None, opened: Opened, shown: str) -> None:
        super().__init__(parent)
        self.setWindowTitle("Add an engine method")
        self.method_box = _methods_box(opened, shown)
        self.uri = QLineEdit()
        self.uri.setPlaceholderText("gallery.db (Milvus Lite) or http://host:19530")
        self.uri.setMinimumWidth(340)
        browse = QPushButton("Milvus Lite file…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.uri, 1)
        row.addWidget(browse)
        self.collection = QLineEdit()
        self.names = QLineEdit()
        self.names.setPlaceholderText("the primary key")
        form = QFormLayout()
        form.addRow("Queries of:", self.method_box)
        form.addRow("Engine (URI):", row)
        form.addRow("Collection:", self.collection)
        form.addRow("Image names in:", self.names)
        note = QLabel("The gallery lives in a Milvus collection; each query's top K is asked "
                      "of the engine and compared with the exact ranking. A token is read "
                      "from the environment variable IRVIEWER_MILVUS_TOKEN.")
        note.setWordWrap(True)
        note.setStyleSheet(f"color: {palette.MUTED_TEXT}")
        self.buttons = _ok_cancel(self)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addWidget(self.buttons)

    def answer(self) -> tuple[str, str, str, str | None]:
        """Return (method, URI, collection, names field or None)."""
        return (self.method_box.currentText(), self.uri.text().strip(),
                self.collection.text().strip(), self.names.text().strip() or None)

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Milvus Lite file", "",
                                              "Milvus Lite (*.db);;Any file (*)")
        if path:
            self.uri.setText(path)


class SweepDialog(QDialog):
    """A sweep's figure (mAP against time per query) and table (per setting: mAP, recall,
    time, queries broken)."""

    def __init__(self, parent: QWidget | None, view: SweepView) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Sweep: {view.title}")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.figure = SweepFigure(view)
        table = QTableWidget(len(view.rows), len(view.columns))
        table.setHorizontalHeaderLabels(list(view.columns))
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        for r, cells in enumerate(view.rows):
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight
                                          | Qt.AlignmentFlag.AlignVCenter)
                table.setItem(r, c, item)
        table.resizeColumnsToContents()
        table.verticalHeader().setVisible(False)
        line = QLabel(view.reaching)
        line.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.figure, 1)
        layout.addWidget(table)
        layout.addWidget(line)
        layout.addWidget(buttons)
        self.resize(720, 640)


__all__ = ["AnnDialog", "EngineDialog", "SweepDialog"]
