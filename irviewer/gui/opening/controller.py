"""Opening data in the window: File ▸ Open and Add, drag and drop, the progress bar with
Cancel in the status bar, and the background worker (:class:`~irviewer.gui.workers.Opener`).

The controller emits ``opened(Opened)`` for the newest request, ``failed(message)`` with a
reader's sentence, and ``message(text)`` for the status bar; the window decides what to show.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QFileDialog, QProgressBar, QPushButton, QStatusBar, QWidget

from irviewer.gui.opening.open_dialog import OpenDialog
from irviewer.gui.workers import Opener, Worker
from irviewer.opening.opener import Opened
from irviewer.opening.request import OpenRequest, classify_paths


class OpeningController(QObject):
    """Starts, shows and cancels opening (``busy(bool)`` when it starts and ends); opens
    files dropped on the window (which passes
    its drag events to :meth:`drag_enter` and :meth:`drop`).

    ``current`` is the :class:`Opened` being shown (set by the window), which Add and drops
    of descriptor files extend."""

    opened = Signal(object)
    failed = Signal(object)  # the message: a str (WindowText for bad input)
    message = Signal(str)
    session_dropped = Signal(object, bool)
    busy = Signal(bool)

    def __init__(self, window: QWidget, status: QStatusBar) -> None:
        super().__init__(window)
        self.window = window
        self.current: Opened | None = None
        self.opener = Opener()
        self.opener.progress.connect(self._on_progress)
        self.opener.opened.connect(self.opened)
        self.opener.failed.connect(self.failed)
        self.opener.busy.connect(self._on_busy)
        self._tracked: list[tuple[Worker, str]] = []
        #: Applied to every request before it opens, whichever way it came (the command
        #: line, File ▸ Open or Add, a drop): the window sets the corrections' own step.
        self.prepare: Callable[[OpenRequest], OpenRequest] = lambda request: request
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(220)
        self.progress.setFormat("%p%")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        for widget in (self.progress, self.cancel_button):
            widget.setVisible(False)
            status.addPermanentWidget(widget)
        window.setAcceptDrops(True)

    @property
    def running(self) -> bool:
        """Return whether a request is being opened (or tracked work runs: :meth:`track`)."""
        return self.opener.running or any(worker.running for worker, _ in self._tracked)

    def track(self, worker: Worker, cancelled: str) -> None:
        """Show ``worker``'s progress in the status bar like opening's, with Cancel (and Esc)
        stopping it (then ``cancelled`` is said); while it runs, ``busy`` keeps the opening
        commands waiting, as during an opening (the window's other long work on the open
        data, re-ranking a method, runs one at a time with opening)."""
        worker.progress.connect(self._on_progress)
        worker.busy.connect(self._on_busy)
        self._tracked.append((worker, cancelled))

    def open_request(self, request: OpenRequest, sync: bool = False) -> None:
        """Read, rank and score ``request`` in the background (``sync`` for tests and
        screenshots); the window keeps showing what it showed until the result arrives."""
        self.message.emit(f"Opening {Path(request.dataset).name}…")
        self.opener.open(self.prepare(request), sync=sync)

    def open_paths(self, dataset: Path, *methods: Path, sync: bool = False) -> None:
        """Open ``dataset`` with the descriptor files and rankings in ``methods``."""
        roles = classify_paths(methods)
        self.open_request(OpenRequest(Path(dataset), (*roles.descriptors, *roles.datasets),
                                      roles.rankings), sync=sync)

    def open_dialog(self) -> None:
        """File ▸ Open: the dataset, its methods and the reader options in one dialog."""
        dialog = OpenDialog(self.window, self.current.request if self.current else None)
        if dialog.exec():
            request = dialog.request()
            if request is not None:
                self.open_request(request)

    def add_methods_dialog(self) -> None:
        """File ▸ Add: open more descriptor files or rankings for the open dataset."""
        if self.current is None:
            self.open_dialog()
            return
        paths, _ = QFileDialog.getOpenFileNames(self.window, "Descriptor files or rankings")
        if paths:
            self.add_methods([Path(p) for p in paths])

    def add_methods(self, paths: list[Path], sync: bool = False) -> None:
        """Reopen the current dataset with ``paths`` added as methods."""
        assert self.current is not None
        old = self.current.request
        roles = classify_paths(paths)
        known = set(old.sources())
        new = [p for p in (*roles.descriptors, *roles.datasets, *roles.rankings)
               if p not in known]
        if not new:
            self.message.emit(f"{', '.join(p.name for p in paths)}: already open "
                              f"({'it is' if len(paths) == 1 else 'they are'} in the Method "
                              "list)")
            return
        self.open_request(old.with_methods((*roles.descriptors, *roles.datasets),
                                           roles.rankings), sync=sync)

    def cancel(self) -> None:
        """Stop opening (or the tracked work running); the window keeps what it showed."""
        if self.opener.running:
            self.opener.cancel()
            self.message.emit("Opening cancelled")
        for worker, cancelled in self._tracked:
            if worker.running:
                worker.cancel()
                self.message.emit(cancelled)

    def wait(self) -> None:
        """Block until the worker threads have ended (closing the window)."""
        self.opener.wait()
        for worker, _ in self._tracked:
            worker.wait()

    def open_dropped(self, paths: list[Path], sync: bool = False) -> None:
        """Open what was dropped: a session; a dataset with its descriptor files or
        rankings; methods alone are added to the open dataset; a dataset alone asks for its
        methods."""
        roles = classify_paths(paths)
        methods = [*roles.descriptors, *roles.rankings]
        if roles.sessions:
            self.session_dropped.emit(roles.sessions[0], sync)
        elif len(roles.datasets) > 1:
            self.failed.emit("Drop one dataset at a time (with its descriptor files): got "
                             + ", ".join(p.name for p in roles.datasets))
        elif roles.datasets and methods and self._is_open(roles.datasets[0], methods):
            self.message.emit(f"{roles.datasets[0].name} with "
                              f"{', '.join(p.name for p in methods)}: already open")
        elif roles.datasets and methods:
            self.open_paths(roles.datasets[0], *methods, sync=sync)
        elif methods and self.current is not None:
            self.add_methods(methods, sync=sync)
        elif methods:
            self.failed.emit("Drop the dataset together with its descriptor files, or open "
                             "the dataset first (Ctrl+O)")
        elif roles.datasets:
            dialog = OpenDialog(self.window, OpenRequest(roles.datasets[0]))
            if dialog.exec():
                request = dialog.request()
                if request is not None:
                    self.open_request(request)

    def _is_open(self, dataset: Path, methods: list[Path]) -> bool:
        """Return whether ``dataset`` is open with every one of ``methods``."""
        if self.current is None:
            return False
        request = self.current.request
        return (Path(dataset) == Path(request.dataset)
                and set(methods) <= set(request.sources()))

    def drag_enter(self, event: QDragEnterEvent) -> None:
        """Accept a drag that carries files."""
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def drop(self, event: QDropEvent) -> None:
        """Open the dropped files (:meth:`open_dropped`)."""
        paths = [Path(u.toLocalFile()) for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.open_dropped(paths)

    def _on_busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)
        self.progress.setRange(0, 0)
        self.progress.setTextVisible(False)
        self.busy.emit(busy)

    def _on_progress(self, stage: str, done: int, total: int) -> None:
        if total:
            self.progress.setRange(0, total)
            self.progress.setValue(done)
            self.progress.setTextVisible(True)  # "42%"
        else:
            self.progress.setRange(0, 0)  # busy indicator
            self.progress.setTextVisible(False)
        suffix = f" {done:,}/{total:,}" if total else ""
        self.message.emit(f"{stage[:1].upper()}{stage[1:]}{suffix}…")
