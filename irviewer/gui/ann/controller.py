"""Adding approximate-search methods to the open data: File ▸ Add an approximate index
method… and File ▸ Add an engine method… open their dialogs; the chosen method's queries
are searched in the background (:class:`irviewer.gui.workers.AnnSearcher`) with the
opening's progress bar and Cancel (Esc); the new methods join the Method list and the first
is compared with the exact one (exact ↔ approximate: ΔAP = approximate − exact, the queries
the index broke, the results that moved or vanished), as ``irviewer compare -d F --ann
SPEC`` gives. A sweep also opens its figure and table. A refusal or a failure (a bad index
file, an unreachable engine) is one sentence in a message box."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

from irviewer.gui import method_job
from irviewer.gui.ann.dialogs import AnnDialog, EngineDialog, SweepDialog
from irviewer.gui.menus import Menus
from irviewer.gui.method_job import Comparing, Jobs, MethodJob
from irviewer.gui.workers import AnnSearcher
from irviewer.methods.method import Method
from irviewer.methods.searched import (
    AnnPlan,
    EnginePlan,
    ann_refusal,
    iter_searched,
    plan_ann,
    plan_engine,
)
from irviewer.opening.opener import Opened

TIP = ("Search a descriptor method with an approximate index (FAISS: IVF, PQ, HNSW), one "
       "more method per setting, compared with the exact ranking")
ENGINE_TIP = ("Rank by a vector engine's collection holding the gallery (Milvus), compared "
              "with the exact ranking")


class Shown(method_job.Shown, Protocol):
    """What the feature takes from the inspector."""

    def add_methods(self, methods: list[Method]) -> None: ...


class AnnUI(MethodJob):
    """The actions, the dialogs and the worker; ``message(text)`` for the status bar.
    ``ask`` and ``ask_engine`` return the dialogs' answers or None (tests replace them);
    :attr:`sweep` is the last sweep's dialog."""

    def __init__(self, parent: QWidget, shown: Shown, jobs: Jobs, compare: Comparing,
                 menus: Menus) -> None:
        worker = AnnSearcher()
        super().__init__(parent, shown, jobs, compare, worker,
                         ("Approximate search cancelled", "The approximate search failed",
                          "search"))
        self.worker: AnnSearcher = worker
        self.shown = shown
        self.worker.done.connect(self._done)
        self.action = QAction("Add an &approximate index method…", parent)
        self.action.triggered.connect(lambda _=False: self.choose())
        self.engine_action = QAction("Add an &engine method…", parent)
        self.engine_action.triggered.connect(lambda _=False: self.choose_engine())
        for action in (self.action, self.engine_action):
            menus.add_file_action(action, with_opening=True)
        self.job: tuple[Opened, AnnPlan | EnginePlan] | None = None
        self.sweep: SweepDialog | None = None
        self.ask = self._ask
        self.ask_engine = self._ask_engine
        self.refresh()

    def controls(self) -> Sequence[tuple[QAction | QWidget, str]]:
        """Return the two actions with their tooltips."""
        return ((self.action, TIP), (self.engine_action, ENGINE_TIP))

    def refusal(self, opened: Opened) -> str | None:
        """Return why no method of ``opened`` can be searched approximately, or None."""
        refusals = [ann_refusal(m, opened.dataset) for m in opened.methods.values()]
        return refusals[0] if all(refusals) else None

    def choose(self) -> None:
        """File ▸ Add an approximate index method…: the dialog, then the search."""
        self.ask_and_start(self.action, self.ask, self.start)

    def choose_engine(self) -> None:
        """File ▸ Add an engine method…: the dialog, then the engine's search."""
        self.ask_and_start(self.engine_action, self.ask_engine, self.start_engine)

    def start(self, method: str, spec: str, sync: bool = False) -> None:
        """Search ``method`` of the open data by ``spec`` in the background (``sync`` for
        tests); a refusal is a message box."""
        found = self.planned(lambda opened: plan_ann(opened.methods, opened.dataset, method,
                                                     spec))
        if found is None:
            return
        opened, plan = found
        self.message.emit(f"Searching {method} by {plan.spec.text}…")
        self.worker.search(iter_searched(opened.methods[method], plan, opened.dataset),
                           f"{method} by {plan.spec.text}", sync=sync)

    def start_engine(self, method: str, uri: str, collection: str,
                     names_field: str | None = None, sync: bool = False) -> None:
        """Search ``method``'s queries in ``collection`` at ``uri`` in the background."""
        found = self.planned(lambda opened: plan_engine(opened.methods, opened.dataset,
                                                        method, uri, collection, names_field))
        if found is None:
            return
        opened, engine = found
        self.message.emit(f"Searching {method}'s queries in {collection} at {uri}…")
        self.worker.search(iter_searched(opened.methods[method], engine, opened.dataset),
                           f"{collection} at {uri}", sync=sync)

    def _ask(self, opened: Opened) -> tuple[str, str] | None:
        dialog = AnnDialog(self.parent_widget, opened, self.shown.method())
        if dialog.exec() and dialog.plan is not None:
            return dialog.method(), dialog.spec_text()
        return None

    def _ask_engine(self, opened: Opened) -> tuple[str, str, str, str | None] | None:
        dialog = EngineDialog(self.parent_widget, opened, self.shown.method())
        return dialog.answer() if dialog.exec() else None

    def _done(self, methods: list[Method]) -> None:
        assert self.job is not None
        opened, plan = self.job
        self.job = None
        if self.shown.opened is not opened:  # another dataset was opened meanwhile
            self.message.emit("The approximate search was not added: other data is open now")
            return
        self.shown.add_methods(methods)
        self.shown.show_method(plan.method)  # the baseline: ΔAP = approximate − exact
        self.compare.set_compared(methods[0].name)
        self.message.emit(f"{', '.join(m.name for m in methods)} added to the methods, "
                          f"compared with {plan.method}: ΔAP = approximate − exact")
        if len(methods) > 1:
            self.show_sweep(opened, methods)

    def show_sweep(self, opened: Opened, methods: list[Method]) -> None:
        """Open the sweep's figure and table for ``methods`` (the settings, in order)."""
        from irviewer.opening.base_comparison import sweep_of
        from irviewer.view.sweep_view import sweep_view

        sweep = sweep_of(opened, [m.name for m in methods], opened.protocols[0])
        title = methods[0].name.rsplit(":", 1)[0] if ":" in methods[0].name else \
            methods[0].name
        self.sweep = SweepDialog(self.parent_widget, sweep_view(sweep, title))
        self.sweep.show()
