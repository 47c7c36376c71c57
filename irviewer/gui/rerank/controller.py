"""Adding a re-ranked method to the open data: File ▸ Add a re-ranked method… (Ctrl+R) and
the Re-rank… button beside Method open the dialog; the chosen method's vectors are
re-ranked in the background (:class:`irviewer.gui.workers.Reranker`), with the opening's
progress bar and Cancel (Esc); the new method "F + SPEC" joins the Method list and is
compared with F (before ↔ after: ΔAP = re-ranked − plain, as ``irviewer compare -d F
--rerank SPEC`` gives). A SPEC over the budget, a bad one, or a method without vectors is
refused with its sentence, in the dialog or in a message box."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QToolButton, QWidget

from irviewer.gui import method_job
from irviewer.gui.menus import Menus
from irviewer.gui.method_job import Comparing, Jobs, MethodJob
from irviewer.gui.rerank.dialog import RerankDialog
from irviewer.gui.workers import Reranker
from irviewer.methods.method import Method
from irviewer.methods.reranked import Reranking, plan_reranking, rerank_refusal
from irviewer.opening.opener import Opened

SHORTCUT = "Ctrl+R"
TIP = ("Re-rank a descriptor method by k-reciprocal encoding, αQE or DBA (or a chain of "
       "them) as one more method, compared with the plain one (Ctrl+R)")


class Shown(method_job.Shown, Protocol):
    """What the feature takes from the inspector."""

    def add_methods(self, methods: list[Method]) -> None: ...
    def add_beside_method(self, label: str, widget: QWidget) -> None: ...


class RerankUI(MethodJob):
    """The action, the button, the dialog and the worker; ``message(text)`` for the status
    bar. ``ask`` returns the dialog's answer (method, SPEC) or None (tests replace it)."""

    def __init__(self, parent: QWidget, shown: Shown, jobs: Jobs, compare: Comparing,
                 menus: Menus) -> None:
        worker = Reranker()
        super().__init__(parent, shown, jobs, compare, worker,
                         ("Re-ranking cancelled", "Re-ranking failed", "re-ranking"))
        self.worker: Reranker = worker
        self.shown = shown
        self.worker.done.connect(self._done)
        self.action = QAction("Add a &re-ranked method…", parent)
        self.action.setShortcut(QKeySequence(SHORTCUT))
        self.action.triggered.connect(lambda _=False: self.choose())
        menus.add_file_action(self.action, with_opening=True)
        self.button = QToolButton()
        self.button.setText("Re-rank…")
        self.button.clicked.connect(self.action.trigger)
        shown.add_beside_method("", self.button)
        self.job: tuple[Opened, Reranking] | None = None
        self.ask = self._ask
        self.refresh()

    def controls(self) -> Sequence[tuple[QAction | QWidget, str]]:
        """Return the action and the Re-rank… button, with their tooltip."""
        return ((self.action, TIP), (self.button, TIP))

    def refusal(self, opened: Opened) -> str | None:
        """Return why no method of ``opened`` can be re-ranked (the shown method's reason
        first), or None."""
        def refused(name: str) -> str | None:
            return rerank_refusal(opened.methods[name], opened.dataset)

        if all(refused(m) for m in opened.methods):
            shown = self.shown.method()
            return (refused(shown) if shown in opened.methods else None) or refused(
                next(iter(opened.methods)))
        return None

    def choose(self) -> None:
        """File ▸ Add a re-ranked method…: the dialog, then the re-ranking it asks for."""
        self.ask_and_start(self.action, self.ask, self.start)

    def start(self, method: str, spec: str, sync: bool = False) -> None:
        """Re-rank ``method`` of the open data by ``spec`` in the background (``sync`` for
        tests); a refusal (bad SPEC, no vectors, over the budget) is a message box."""
        found = self.planned(lambda opened: plan_reranking(opened.methods, opened.dataset,
                                                           method, spec))
        if found is None:
            return
        opened, plan = found
        self.message.emit(f"Re-ranking {method} by {plan.chain.text}…")
        self.worker.rerank(opened, plan, sync=sync)

    def _ask(self, opened: Opened) -> tuple[str, str] | None:
        dialog = RerankDialog(self.parent_widget, opened, self.shown.method())
        if dialog.exec() and dialog.plan is not None:
            return dialog.method(), dialog.spec_text()
        return None

    def _done(self, method: Method) -> None:
        assert self.job is not None
        opened, plan = self.job
        self.job = None
        if self.shown.opened is not opened:  # another dataset was opened meanwhile
            self.message.emit(f"{plan.name} was not added: other data is open now")
            return
        self.shown.add_methods([method])
        self.shown.show_method(plan.method)  # the baseline: ΔAP = re-ranked − plain
        self.compare.set_compared(plan.name)
        self.message.emit(f"{plan.name} added to the methods, compared with {plan.method}: "
                          "ΔAP = AP after − AP before re-ranking")
