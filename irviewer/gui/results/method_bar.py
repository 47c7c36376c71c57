"""The bar on top: which method, protocol and conventions are shown, and the summary of the
evaluation under them (:mod:`irviewer.view.summary`)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from irviewer.core.convention_names import AP_LABELS, AP_RULES, KEEP, REMOVE, SELF_MATCH_LABELS
from irviewer.core.protocols import Protocol
from irviewer.view import palette
from irviewer.view.summary import Summary

AP_CHOICES = (("", None), *((AP_LABELS[rule], rule) for rule in AP_RULES))
SELF_CHOICES = (("", None), *((SELF_MATCH_LABELS[rule], rule) for rule in (REMOVE, KEEP)))


class MethodBar(QWidget):
    """Method, protocol, AP rule and self-match rule boxes over the summary line and, when
    there is something to warn about the method shown, a banner.

    Emits ``changed()`` when the user picks another method, protocol or convention (not
    while :meth:`set_choices` or :meth:`set_choice` fill them)."""

    changed = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.method_box = QComboBox()
        self.method_box.setToolTip("The descriptor file or ranking whose results are shown")
        self.protocol_box = QComboBox()
        self.protocol_box.setToolTip("The benchmark's metric conventions")
        self.ap_box = QComboBox()
        self.self_box = QComboBox()
        for box, choices in ((self.ap_box, AP_CHOICES), (self.self_box, SELF_CHOICES)):
            for text, value in choices:
                box.addItem(text, value)
        self.ap_box.setToolTip("AP convention: finite-sum (trec_eval, re-id), trapezoid "
                               "(Oxford/Paris and revisited compute_ap), all-point "
                               "interpolated (PASCAL VOC 2010+) or 11-point interpolated "
                               "(PASCAL VOC 2007)")
        self.self_box.setToolTip("Whether the query's own image stays in its ranking")
        for box in (self.method_box, self.protocol_box, self.ap_box, self.self_box):
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            box.currentIndexChanged.connect(self._on_change)
        self.choices = QWidget()  # the boxes' row: a research tool's, hidden for a curator
        top = self._top = QHBoxLayout(self.choices)
        top.setContentsMargins(0, 0, 0, 0)
        for label, widget in (("Method:", self.method_box), ("Protocol:", self.protocol_box),
                              ("", self.ap_box), ("", self.self_box)):
            if label:
                top.addWidget(QLabel(label))
            top.addWidget(widget)
        top.addStretch(1)
        self.summary = QLabel("Open a dataset (Ctrl+O) or drop its files here")
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.banner = QLabel()
        self.banner.setWordWrap(True)
        self.banner.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.banner.setStyleSheet(f"QLabel {{ background: {palette.BANNER_BACKGROUND}; color: "
                                  f"{palette.BANNER_TEXT}; border: 1px solid "
                                  f"{palette.ACTIVE}; padding: 4px; }}")
        self.banner.setVisible(False)
        layout = self._lines = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.choices)
        layout.addWidget(self.summary)
        layout.addWidget(self.banner)
        self._filling = False

    def add_beside_method(self, label: str, widget: QWidget) -> None:
        """Put ``widget``, after ``label``, right after the method box (compare mode's
        "Compare with")."""
        at = self._top.indexOf(self.method_box) + 1
        self._top.insertWidget(at, QLabel(label))
        self._top.insertWidget(at + 1, widget)

    def add_line(self, widget: QWidget) -> None:
        """Add ``widget`` as a line under the summary and the banner."""
        self._lines.addWidget(widget)

    def method(self) -> str:
        """Return the name of the method shown ("" before data is open)."""
        return self.method_box.currentText()

    def set_choices(self, methods: list[str], protocols: list[str],
                    ap: str | None = None) -> None:
        """Offer ``methods`` and ``protocols`` (the first of each chosen) and choose the AP
        rule ``ap`` (None leaves the AP box as it is); emits nothing."""
        self._filling = True
        for box, items in ((self.method_box, methods), (self.protocol_box, protocols)):
            box.clear()
            box.addItems(items)
        if ap is not None:
            self.ap_box.setCurrentIndex(max(0, self.ap_box.findData(ap)))
        self.method_box.setEnabled(len(methods) > 1)
        self._filling = False

    def set_methods(self, methods: list[str]) -> None:
        """Offer ``methods``, the one shown staying chosen; emits nothing."""
        shown = self.method()
        self._filling = True
        self.method_box.clear()
        self.method_box.addItems(methods)
        if shown in methods:
            self.method_box.setCurrentText(shown)
        self.method_box.setEnabled(len(methods) > 1)
        self._filling = False

    def choice(self) -> tuple[str, str, str | None, str | None]:
        """Return (method, protocol, AP rule or None, self-match rule or None)."""
        return (self.method_box.currentText(), self.protocol_box.currentText(),
                self.ap_box.currentData(), self.self_box.currentData())

    def set_choice(self, method: str | None, protocol: str | None, ap: str | None,
                   self_match: str | None) -> None:
        """Choose these (None or unknown names leave a box as it is); emits ``changed()``
        once when anything changed."""
        before = self.choice()
        self._filling = True
        for box, text in ((self.method_box, method), (self.protocol_box, protocol)):
            if text and box.findText(text) >= 0:
                box.setCurrentText(text)
        for box, value in ((self.ap_box, ap), (self.self_box, self_match)):
            box.setCurrentIndex(max(0, box.findData(value)))
        self._filling = False
        if self.choice() != before:
            self.changed.emit()

    def set_protocol_defaults(self, protocol: Protocol) -> None:
        """Name the protocol's own conventions in the first entry of each convention box."""
        self.ap_box.setItemText(0, f"{AP_LABELS[protocol.ap]} (the protocol's)")
        self.self_box.setItemText(0, f"{SELF_MATCH_LABELS[protocol.self_match]} (the protocol's)")

    def set_research(self, on: bool) -> None:
        """Show the method, protocol and conventions boxes (and what features put beside
        them), or leave them out (a curator's collection without ground truth:
        :mod:`irviewer.view.window_layout`)."""
        self.choices.setVisible(on)

    def show_summary(self, summary: Summary) -> None:
        """Show the evaluation's summary line."""
        self.summary.setText(summary.html())

    def set_banner(self, text: str | None) -> None:
        """Show ``text`` as a warning banner under the summary (None: no banner); the window
        says there that the shown method's rows were matched by position."""
        self.banner.setVisible(text is not None)
        self.banner.setText(f"⚠ {text}" if text else "")

    def _on_change(self, _index: int) -> None:
        if not self._filling:
            self.changed.emit()
