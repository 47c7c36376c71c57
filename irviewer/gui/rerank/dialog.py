"""The Add a re-ranked method dialog: which descriptor method, the chain (DBA, αQE,
k-reciprocal, applied in that order) with every parameter, and the SPEC they make, checked
as it changes. Every default, range and source comes from :mod:`irviewer.core.rerank.spec`;
what a SPEC would cost, or why it is refused, from :mod:`irviewer.methods.reranked`."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from irviewer.core.errors import InputError, window_text
from irviewer.core.protocols import get_protocol
from irviewer.core.rerank import parse_spec
from irviewer.core.rerank.chain import BUDGET_MULTIPLY_ADDS
from irviewer.core.rerank.spec import CHAIN_ORDER, METHODS, ParamRule, write_spec
from irviewer.methods.reranked import Reranking, plan_reranking, rerank_refusal
from irviewer.opening.opener import Opened
from irviewer.view import palette


def _field(rule: ParamRule) -> QSpinBox | QDoubleSpinBox:
    """Return the spin box of one parameter: its range, its default, what the help says."""
    box: QSpinBox | QDoubleSpinBox
    if rule.whole:
        box = QSpinBox()
        box.setRange(int(rule.low), int(rule.high))
        box.setValue(int(rule.default))
    else:
        box = QDoubleSpinBox()
        box.setDecimals(3)
        box.setRange(rule.low, rule.high)
        box.setSingleStep(0.1 if rule.high <= 1 else 0.5)
        box.setValue(rule.default)
    box.setToolTip(f"{rule.key}: {rule.describe_range()}; default {rule.default:g} "
                   f"({rule.source})")
    return box


class RerankDialog(QDialog):
    """The questions; :attr:`plan` is the checked answer (None while the SPEC is refused)."""

    def __init__(self, parent: QWidget | None, opened: Opened, shown: str) -> None:
        super().__init__(parent)
        self.setWindowTitle("Add a re-ranked method")
        self.opened = opened
        self.plan: Reranking | None = None
        self.method_box = QComboBox()
        self._fill_methods(shown)
        self.steps: dict[str, QGroupBox] = {}
        self.values: dict[str, dict[str, QSpinBox | QDoubleSpinBox]] = {}
        layout = QVBoxLayout(self)
        top = QFormLayout()
        top.addRow("Re-rank:", self.method_box)
        layout.addLayout(top)
        first = "k-reciprocal" if self._reid() else "aqe"
        for name in CHAIN_ORDER:
            rule = METHODS[name]
            group = QGroupBox(f"{rule.title} ({name})")
            group.setCheckable(True)
            group.setChecked(name == first)
            group.setToolTip(f"{rule.paper}. Defaults: {rule.defaults_from}")
            form = QFormLayout(group)
            self.values[name] = {}
            for p in rule.params:
                box = self.values[name][p.key] = _field(p)
                box.valueChanged.connect(self._write)
                form.addRow(f"{p.key}:", box)
            group.toggled.connect(self._write)
            self.steps[name] = group
            layout.addWidget(group)
        self.spec = QLineEdit()
        self.spec.setToolTip("The SPEC the choices make (irviewer ... --rerank SPEC); type "
                             "one to set them")
        self.spec.textEdited.connect(self._read)
        self.name = QLabel()
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.RichText)
        bottom = QFormLayout()
        bottom.addRow("SPEC:", self.spec)
        bottom.addRow("New method:", self.name)
        layout.addLayout(bottom)
        layout.addWidget(self.note)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Re-rank")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.method_box.currentIndexChanged.connect(self._check)
        self._write()

    # -- the answers ---------------------------------------------------------------------
    def method(self) -> str:
        """Return the name of the method to re-rank."""
        return self.method_box.currentText()

    def set_method(self, name: str) -> None:
        """Choose the method called ``name`` (when it can be re-ranked)."""
        i = self.method_box.findText(name)
        if i >= 0 and self._enabled(i):
            self.method_box.setCurrentIndex(i)

    def spec_text(self) -> str:
        """Return the SPEC as it stands."""
        return self.spec.text().strip()

    def set_spec(self, text: str) -> None:
        """Type ``text`` as the SPEC (the choices follow when it reads as one)."""
        self.spec.setText(text)
        self._read(text)

    # -- internals ----------------------------------------------------------------------
    def _fill_methods(self, shown: str) -> None:
        """Offer every method; those that cannot be re-ranked are disabled, their tooltip
        saying why; the shown method (or its plain one) is chosen when it can be."""
        model = self.method_box.model()
        assert isinstance(model, QStandardItemModel)
        for i, name in enumerate(self.opened.methods):
            self.method_box.addItem(name)
            refusal = rerank_refusal(self.opened.methods[name], self.opened.dataset)
            if refusal is not None:
                item = model.item(i)
                item.setEnabled(False)
                item.setToolTip(refusal)
        plain = self.opened.methods[shown].base if shown in self.opened.methods else None
        for candidate in (shown, plain, *self.opened.methods):
            i = self.method_box.findText(candidate) if candidate else -1
            if i >= 0 and self._enabled(i):
                self.method_box.setCurrentIndex(i)
                break

    def _enabled(self, i: int) -> bool:
        model = self.method_box.model()
        assert isinstance(model, QStandardItemModel)
        return model.item(i).isEnabled()

    def _reid(self) -> bool:
        """Return whether the data is re-identification (k-reciprocal's home)."""
        return any(get_protocol(p).family == "reid" for p in self.opened.protocols)

    def _write(self, *_args: object) -> None:
        """The choices changed: write their SPEC."""
        steps = [(name, {k: box.value() for k, box in self.values[name].items()})
                 for name in CHAIN_ORDER if self.steps[name].isChecked()]
        self.spec.setText(write_spec(steps))
        self._check()

    def _read(self, text: str) -> None:
        """The SPEC was typed: set the choices from it when it reads as a chain they can
        show (each method once, in the dialog's order); check it either way."""
        try:
            chain = parse_spec(text)
        except InputError:
            chain = None
        names = [s.method for s in chain.steps] if chain is not None else []
        if chain is not None and names == sorted(set(names), key=CHAIN_ORDER.index):
            for widget in (*self.steps.values(),
                           *(b for boxes in self.values.values() for b in boxes.values())):
                widget.blockSignals(True)
            for name in CHAIN_ORDER:
                self.steps[name].setChecked(name in names)
            for step in chain.steps:
                for key, value, _given in step.values:
                    box = self.values[step.method][key]
                    if isinstance(box, QSpinBox):
                        box.setValue(round(value))  # an integer parameter (parse_spec)
                    else:
                        box.setValue(value)
            for widget in (*self.steps.values(),
                           *(b for boxes in self.values.values() for b in boxes.values())):
                widget.blockSignals(False)
        self._check()

    def _check(self, *_args: object) -> None:
        """Check the method and SPEC: the new method's name and its cost, or the sentence
        that refuses them (then Re-rank is disabled)."""
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        text = self.spec_text()
        self.plan = None
        try:
            if not text:
                raise InputError("choose at least one step (or type a SPEC)")
            self.plan = plan_reranking(self.opened.methods, self.opened.dataset,
                                       self.method(), text)
        except InputError as e:
            self.name.setText("")
            self.note.setText(f'<span style="color:{palette.ALERT_TEXT}">{window_text(e)}</span>')
            ok.setEnabled(False)
            return
        self.name.setText(self.plan.name)
        cost = self.plan.cost
        self.note.setText(
            f"Neighbour searches of about {cost:.1e} multiply-adds (the budget is "
            f"{BUDGET_MULTIPLY_ADDS:.0e}); computed in the background, Esc or Cancel stops "
            "it." if cost else "No all-pairs neighbour search: one more query × gallery "
            "multiply; computed in the background.")
        ok.setEnabled(True)
