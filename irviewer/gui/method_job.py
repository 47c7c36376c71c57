"""What the features that add a method computed off the GUI thread share (re-ranking,
approximate search): what they take from the window, and a job's life around the
feature's own dialog and result — the opening's progress bar and Cancel, actions disabled
while anything runs, ``wait`` for closing, and a failure told in one message box."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from PySide6.QtCore import QObject, Signal, SignalInstance
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

from irviewer.core.errors import InputError, window_text
from irviewer.gui.widgets.warning import warn
from irviewer.gui.workers import Worker
from irviewer.opening.opener import Opened

#: A feature's plan of work (a re-ranking, an approximate search).
P = TypeVar("P")


class Shown(Protocol):
    """What such a feature takes from the inspector (a feature may ask for more)."""

    opened: Opened | None
    evaluation_shown: SignalInstance
    methods_changed: SignalInstance

    def method(self) -> str: ...
    def show_method(self, name: str) -> None: ...


class Jobs(Protocol):
    """What it takes from the opening: its progress bar with Cancel, and whether it runs."""

    busy: SignalInstance

    def track(self, worker: Worker, cancelled: str) -> None: ...


class Comparing(Protocol):
    """What it takes from compare mode."""

    def set_compared(self, name: str | None) -> None: ...


class MethodJob(QObject):
    """The shared part of a feature that adds a method in the background: ``worker`` runs
    its jobs (tracked by ``jobs``, ``cancelled`` and ``failed`` are the status lines when
    one is cancelled or fails), ``running`` names the work while it runs ("re-ranking");
    ``message(text)`` for the status bar. A subclass connects the worker's ``done``, keeps
    its ``job``, and says which controls start it (:meth:`controls`) and why the open
    data cannot be used (:meth:`refusal`)."""

    message = Signal(str)

    def __init__(self, parent: QWidget, shown: Shown, jobs: Jobs, compare: Comparing,
                 worker: Worker, words: tuple[str, str, str]) -> None:
        super().__init__(parent)
        worker.setParent(self)
        self.parent_widget, self.compare, self.worker = parent, compare, worker
        self.job: object | None = None
        self.last_error: str | None = None
        self.busy = False
        self._inspector = shown
        cancelled, self._failed_words, self._running = words
        worker.failed.connect(self._failed)
        jobs.track(worker, cancelled)
        jobs.busy.connect(self._set_busy)
        shown.evaluation_shown.connect(lambda *_: self.refresh())
        shown.methods_changed.connect(self.refresh)

    def controls(self) -> Sequence[tuple[QAction | QWidget, str]]:
        """Return the actions and buttons that start the work, each with its tooltip."""
        raise NotImplementedError

    def refusal(self, opened: Opened) -> str | None:
        """Return why no method of ``opened`` can be used (one sentence), or None."""
        raise NotImplementedError

    def refresh(self) -> None:
        """Enable the controls when the open data can be used and nothing runs; their
        tooltips say why not otherwise."""
        opened = self._inspector.opened
        why = "Open a dataset with a descriptor file first (Ctrl+O)" if opened is None \
            else self.refusal(opened)
        if why is None and self.busy:
            why = f"Wait for the opening or {self._running} that runs (Esc stops it)"
        for control, tip in self.controls():
            control.setEnabled(why is None)
            control.setToolTip(tip if why is None else f"{why}.")

    def ask_and_start(self, action: QAction, ask: Callable[[Opened], tuple[Any, ...] | None],
                      start: Callable[..., None]) -> None:
        """What a control does: unless ``action`` is disabled, ``ask`` (a dialog) for the
        arguments of ``start``, and start (nothing when the dialog is cancelled)."""
        opened = self._inspector.opened
        if opened is None or not action.isEnabled():
            return
        answer = ask(opened)
        if answer is not None:
            start(*answer)

    def planned(self, make: Callable[[Opened], P]) -> tuple[Opened, P] | None:
        """Return (the open data, the plan ``make`` checks for it) and remember it as the
        running job, or None after telling the refusal (``make``'s InputError) in the
        message box."""
        opened = self._inspector.opened
        assert opened is not None
        try:
            plan = make(opened)
        except InputError as e:
            self._failed(e.for_window())
            return None
        self.job = (opened, plan)
        return opened, plan

    def wait(self) -> None:
        """Block until the worker's thread has ended (closing the window, tests)."""
        self.worker.wait()

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.refresh()

    def _failed(self, message: str) -> None:
        self.job = None
        self.last_error = window_text(message)
        self.message.emit(self._failed_words)
        warn(self.parent_widget, self.last_error)
