"""Adding approximate-search methods to the open data: File ▸ Add an approximate index
method… and File ▸ Add an engine method… open their dialogs; the chosen method's queries
are searched in the background (:class:`irviewer.gui.workers.AnnSearcher`) with the
opening's progress bar and Cancel (Esc); the new methods join the Method list and the first
is compared with the exact one (exact ↔ approximate: ΔAP = approximate − exact, the queries
the index broke, the results that moved or vanished), as ``irviewer compare -d F --ann
SPEC`` gives. A sweep also opens its figure and table. A refusal or a failure (a bad index
file, an unreachable engine) is one sentence in a message box."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QObject, Qt, Signal, SignalInstance
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMessageBox, QWidget

from irviewer.core.errors import InputError, window_text
from irviewer.gui.ann.dialogs import AnnDialog, EngineDialog, SweepDialog
from irviewer.gui.menus import Menus
from irviewer.gui.workers import AnnSearcher, Worker
from irviewer.opening.ann import (
    AnnPlan,
    EnginePlan,
    ann_refusal,
    iter_ann,
    iter_engine_job,
    plan_ann,
    plan_engine,
)
from irviewer.opening.opener import Method, Opened

TIP = ("Search a descriptor method with an approximate index (FAISS: IVF, PQ, HNSW), one "
       "more method per setting, compared with the exact ranking")
ENGINE_TIP = ("Rank by a vector engine's collection holding the gallery (Milvus), compared "
              "with the exact ranking")


class Shown(Protocol):
    """What the feature takes from the inspector."""

    opened: Opened | None
    evaluation_shown: SignalInstance
    methods_changed: SignalInstance

    def method(self) -> str: ...
    def show_method(self, name: str) -> None: ...
    def add_methods(self, after: str, methods: list[Method]) -> None: ...


class Jobs(Protocol):
    """What it takes from the opening: its progress bar with Cancel, and whether it runs."""

    busy: SignalInstance

    def track(self, worker: Worker, cancelled: str) -> None: ...


class Comparing(Protocol):
    """What it takes from compare mode."""

    def set_compared(self, name: str | None) -> None: ...


class AnnUI(QObject):
    """The actions, the dialogs and the worker; ``message(text)`` for the status bar.
    ``ask`` and ``ask_engine`` return the dialogs' answers or None (tests replace them);
    :attr:`sweep` is the last sweep's dialog."""

    message = Signal(str)

    def __init__(self, parent: QWidget, shown: Shown, jobs: Jobs, compare: Comparing,
                 menus: Menus) -> None:
        super().__init__(parent)
        self.parent_widget, self.shown, self.compare = parent, shown, compare
        self.worker = AnnSearcher(self)
        self.worker.done.connect(self._done)
        self.worker.failed.connect(self._failed)
        jobs.track(self.worker, "Approximate search cancelled")
        self.action = QAction("Add an &approximate index method…", parent)
        self.action.triggered.connect(lambda _=False: self.choose())
        self.engine_action = QAction("Add an &engine method…", parent)
        self.engine_action.triggered.connect(lambda _=False: self.choose_engine())
        for action in (self.action, self.engine_action):
            menus.add_file_action(action, with_opening=True)
        self._busy = False
        jobs.busy.connect(self._set_busy)
        shown.evaluation_shown.connect(lambda *_: self.refresh())
        shown.methods_changed.connect(self.refresh)
        self.job: tuple[Opened, AnnPlan | EnginePlan] | None = None
        self.last_error: str | None = None
        self.sweep: SweepDialog | None = None
        self.ask = self._ask
        self.ask_engine = self._ask_engine
        self.refresh()

    def refresh(self) -> None:
        """Enable the actions when a method of the open data can be searched (and nothing
        runs); their tooltips say why not otherwise."""
        opened = self.shown.opened
        why = "Open a dataset with a descriptor file first (Ctrl+O)" if opened is None else None
        if opened is not None:
            refusals = [ann_refusal(m, opened.dataset) for m in opened.methods.values()]
            if all(refusals):
                why = refusals[0]
        if why is None and self._busy:
            why = "Wait for the opening or search that runs (Esc stops it)"
        for action, tip in ((self.action, TIP), (self.engine_action, ENGINE_TIP)):
            action.setEnabled(why is None)
            action.setToolTip(tip if why is None else f"{why}.")

    def choose(self) -> None:
        """File ▸ Add an approximate index method…: the dialog, then the search."""
        opened = self.shown.opened
        if opened is None or not self.action.isEnabled():
            return
        answer = self.ask(opened)
        if answer is not None:
            self.start(*answer)

    def choose_engine(self) -> None:
        """File ▸ Add an engine method…: the dialog, then the engine's search."""
        opened = self.shown.opened
        if opened is None or not self.engine_action.isEnabled():
            return
        answer = self.ask_engine(opened)
        if answer is not None:
            self.start_engine(*answer)

    def start(self, method: str, spec: str, sync: bool = False) -> None:
        """Search ``method`` of the open data by ``spec`` in the background (``sync`` for
        tests); a refusal is a message box."""
        opened = self.shown.opened
        assert opened is not None
        try:
            plan = plan_ann(opened, method, spec)
        except InputError as e:
            self._failed(e.for_window())
            return
        self.job = (opened, plan)
        self.message.emit(f"Searching {method} by {plan.spec.text}…")
        self.worker.search(iter_ann(opened, plan), f"{method} by {plan.spec.text}", sync=sync)

    def start_engine(self, method: str, uri: str, collection: str,
                     names_field: str | None = None, sync: bool = False) -> None:
        """Search ``method``'s queries in ``collection`` at ``uri`` in the background."""
        opened = self.shown.opened
        assert opened is not None
        try:
            plan = plan_engine(opened, method, uri, collection, names_field)
        except InputError as e:
            self._failed(e.for_window())
            return
        self.job = (opened, plan)
        self.message.emit(f"Searching {method}'s queries in {collection} at {uri}…")
        self.worker.search(iter_engine_job(opened, plan), f"{collection} at {uri}", sync=sync)

    def wait(self) -> None:
        """Block until the search thread has ended (closing the window, tests)."""
        self.worker.wait()

    def _ask(self, opened: Opened) -> tuple[str, str] | None:
        dialog = AnnDialog(self.parent_widget, opened, self.shown.method())
        if dialog.exec() and dialog.plan is not None:
            return dialog.method(), dialog.spec_text()
        return None

    def _ask_engine(self, opened: Opened) -> tuple[str, str, str, str | None] | None:
        dialog = EngineDialog(self.parent_widget, opened, self.shown.method())
        return dialog.answer() if dialog.exec() else None

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.refresh()

    def _done(self, methods: list[Method]) -> None:
        assert self.job is not None
        opened, plan = self.job
        self.job = None
        if self.shown.opened is not opened:  # another dataset was opened meanwhile
            self.message.emit("The approximate search was not added: other data is open now")
            return
        self.shown.add_methods(plan.method, methods)
        self.shown.show_method(plan.method)  # the baseline: ΔAP = approximate − exact
        self.compare.set_compared(methods[0].name)
        self.message.emit(f"{', '.join(m.name for m in methods)} added to the methods, "
                          f"compared with {plan.method}: ΔAP = approximate − exact")
        if len(methods) > 1:
            self.show_sweep(opened, methods)

    def show_sweep(self, opened: Opened, methods: list[Method]) -> None:
        """Open the sweep's figure and table for ``methods`` (the settings, in order)."""
        from irviewer.reports.ann_report import sweep_record

        protocol = opened.protocols[0]
        rows = [(m.name, m.ann, opened.evaluation(m.name, protocol)) for m in methods
                if m.ann is not None]
        record = sweep_record(rows)
        title = methods[0].name.rsplit(":", 1)[0] if ":" in methods[0].name else \
            methods[0].name
        self.sweep = SweepDialog(self.parent_widget, record, title)
        self.sweep.show()

    def _failed(self, message: str) -> None:
        self.job = None
        self.last_error = window_text(message)
        self.message.emit("The approximate search failed")
        box = QMessageBox(QMessageBox.Icon.Warning, "irviewer", self.last_error,
                          parent=self.parent_widget)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
