"""Adding a re-ranked method to the open data: File ▸ Add a re-ranked method… (Ctrl+R) and
the Re-rank… button beside Method open the dialog; the chosen method's vectors are
re-ranked in the background (:class:`irviewer.gui.workers.Reranker`), with the opening's
progress bar and Cancel (Esc); the new method "F + SPEC" joins the Method list and is
compared with F (before ↔ after: ΔAP = re-ranked − plain, as ``irviewer compare -d F
--rerank SPEC`` gives). A SPEC over the budget, a bad one, or a method without vectors is
refused with its sentence, in the dialog or in a message box."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QObject, Qt, Signal, SignalInstance
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMessageBox, QToolButton, QWidget

from irviewer.core.errors import InputError, window_text
from irviewer.gui.menus import Menus
from irviewer.gui.rerank.dialog import RerankDialog
from irviewer.gui.workers import Reranker, Worker
from irviewer.opening.opener import Method, Opened
from irviewer.opening.reranking import Reranking, plan_reranking, rerank_refusal

SHORTCUT = "Ctrl+R"
TIP = ("Re-rank a descriptor method by k-reciprocal encoding, αQE or DBA (or a chain of "
       "them) as one more method, compared with the plain one (Ctrl+R)")


class Shown(Protocol):
    """What the feature takes from the inspector."""

    opened: Opened | None
    evaluation_shown: SignalInstance
    methods_changed: SignalInstance

    def method(self) -> str: ...
    def show_method(self, name: str) -> None: ...
    def add_reranked(self, index: int, method: Method) -> None: ...
    def add_beside_method(self, label: str, widget: QWidget) -> None: ...


class Jobs(Protocol):
    """What it takes from the opening: its progress bar with Cancel, and whether it runs."""

    busy: SignalInstance

    def track(self, worker: Worker, cancelled: str) -> None: ...


class Comparing(Protocol):
    """What it takes from compare mode."""

    def set_compared(self, name: str | None) -> None: ...


class RerankUI(QObject):
    """The action, the button, the dialog and the worker; ``message(text)`` for the status
    bar. ``ask`` returns the dialog's answer (method, SPEC) or None (tests replace it)."""

    message = Signal(str)

    def __init__(self, parent: QWidget, shown: Shown, jobs: Jobs, compare: Comparing,
                 menus: Menus) -> None:
        super().__init__(parent)
        self.parent_widget, self.shown, self.compare = parent, shown, compare
        self.worker = Reranker(self)
        self.worker.done.connect(self._done)
        self.worker.failed.connect(self._failed)
        jobs.track(self.worker, "Re-ranking cancelled")
        self.action = QAction("Add a &re-ranked method…", parent)
        self.action.setShortcut(QKeySequence(SHORTCUT))
        self.action.triggered.connect(lambda _=False: self.choose())
        menus.add_file_action(self.action, with_opening=True)
        self.button = QToolButton()
        self.button.setText("Re-rank…")
        self.button.clicked.connect(self.action.trigger)
        shown.add_beside_method("", self.button)
        self._busy = False
        jobs.busy.connect(self._set_busy)
        shown.evaluation_shown.connect(lambda *_: self.refresh())
        shown.methods_changed.connect(self.refresh)
        self.job: tuple[Opened, Reranking] | None = None
        self.last_error: str | None = None
        self.ask = self._ask
        self.refresh()

    def refresh(self) -> None:
        """Enable the action when a method of the open data can be re-ranked (and nothing
        runs); its tooltip says why not otherwise."""
        opened = self.shown.opened
        why = "Open a dataset with a descriptor file first (Ctrl+O)" if opened is None else None
        if opened is not None and all(rerank_refusal(opened, m) for m in opened.methods):
            why = rerank_refusal(opened, self.shown.method()) or rerank_refusal(
                opened, next(iter(opened.methods)))
        if why is None and self._busy:
            why = "Wait for the opening or re-ranking that runs (Esc stops it)"
        for widget in (self.action, self.button):
            widget.setEnabled(why is None)
            widget.setToolTip(TIP if why is None else f"{why}.")

    def choose(self) -> None:
        """File ▸ Add a re-ranked method…: the dialog, then the re-ranking it asks for."""
        opened = self.shown.opened
        if opened is None or not self.action.isEnabled():
            return
        answer = self.ask(opened)
        if answer is not None:
            self.start(*answer)

    def start(self, method: str, spec: str, sync: bool = False) -> None:
        """Re-rank ``method`` of the open data by ``spec`` in the background (``sync`` for
        tests); a refusal (bad SPEC, no vectors, over the budget) is a message box."""
        opened = self.shown.opened
        assert opened is not None
        try:
            plan = plan_reranking(opened, method, spec)
        except InputError as e:
            self._failed(e.for_window())
            return
        self.job = (opened, plan)
        self.message.emit(f"Re-ranking {method} by {plan.chain.text}…")
        self.worker.rerank(opened, plan, sync=sync)

    def wait(self) -> None:
        """Block until the re-ranking thread has ended (closing the window, tests)."""
        self.worker.wait()

    def _ask(self, opened: Opened) -> tuple[str, str] | None:
        dialog = RerankDialog(self.parent_widget, opened, self.shown.method())
        if dialog.exec() and dialog.plan is not None:
            return dialog.method(), dialog.spec_text()
        return None

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.refresh()

    def _done(self, method: Method) -> None:
        assert self.job is not None
        opened, plan = self.job
        self.job = None
        if self.shown.opened is not opened:  # another dataset was opened meanwhile
            self.message.emit(f"{plan.name} was not added: other data is open now")
            return
        self.shown.add_reranked(plan.index, method)
        self.shown.show_method(plan.method)  # the baseline: ΔAP = re-ranked − plain
        self.compare.set_compared(plan.name)
        self.message.emit(f"{plan.name} added to the methods, compared with {plan.method}: "
                          "ΔAP = AP after − AP before re-ranking")

    def _failed(self, message: str) -> None:
        self.job = None
        self.last_error = window_text(message)
        self.message.emit("Re-ranking failed")
        box = QMessageBox(QMessageBox.Icon.Warning, "irviewer", self.last_error,
                          parent=self.parent_widget)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
