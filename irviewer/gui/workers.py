"""Opening a dataset off the GUI thread: the core's generator runs in a QThread and reports
by signal; a newer request makes older results stale (generation numbers). ``sync=True``
runs on the calling thread, for tests and --screenshot."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QThread, Signal

from irviewer.core.errors import InputError
from irviewer.session import iter_open


class _Runner(QObject):
    progress = Signal(int, str, int, int)
    opened = Signal(int, object)
    failed = Signal(int, str)

    def __init__(self, generation: int, dataset: Path, descriptors: Path) -> None:
        super().__init__()
        self.generation, self.dataset, self.descriptors = generation, dataset, descriptors
        self.cancelled = False

    def run(self) -> None:
        try:
            for step in iter_open(self.dataset, self.descriptors):
                if self.cancelled:
                    return
                if step.opened is not None:
                    self.opened.emit(self.generation, step.opened)
                else:
                    self.progress.emit(self.generation, step.stage, step.done, step.total)
        except InputError as e:
            self.failed.emit(self.generation, str(e))
        except Exception as e:  # a bug: shown, not swallowed
            self.failed.emit(self.generation, f"internal error: {type(e).__name__}: {e}")


class Opener(QObject):
    """Opens datasets; emits ``progress(stage, done, total)``, ``opened(Opened)``,
    ``failed(message)`` for the newest request only."""

    progress = Signal(str, int, int)
    opened = Signal(object)
    failed = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.generation = 0
        self._threads: list[tuple[QThread, _Runner]] = []

    def open(self, dataset: Path, descriptors: Path, sync: bool = False) -> None:
        """Start opening; cancels (makes stale) any earlier request."""
        self.cancel()
        self.generation += 1
        runner = _Runner(self.generation, Path(dataset), Path(descriptors))
        runner.progress.connect(self._progress)
        runner.opened.connect(self._opened)
        runner.failed.connect(self._failed)
        if sync:
            runner.run()
            return
        thread = QThread()
        runner.moveToThread(thread)
        thread.started.connect(runner.run)
        runner.opened.connect(thread.quit)
        runner.failed.connect(thread.quit)
        thread.finished.connect(lambda: self._forget(thread))
        self._threads.append((thread, runner))
        thread.start()

    def cancel(self) -> None:
        """Mark running requests cancelled; their results are dropped."""
        for _, runner in self._threads:
            runner.cancelled = True

    def wait(self) -> None:
        """Block until every thread has ended (closing the window, tests)."""
        self.cancel()
        for thread, _ in list(self._threads):
            thread.quit()
            thread.wait()

    def _forget(self, thread: QThread) -> None:
        self._threads = [(t, r) for t, r in self._threads if t is not thread]

    def _progress(self, generation: int, stage: str, done: int, total: int) -> None:
        if generation == self.generation:
            self.progress.emit(stage, done, total)

    def _opened(self, generation: int, opened: object) -> None:
        if generation == self.generation:
            self.opened.emit(opened)

    def _failed(self, generation: int, message: str) -> None:
        if generation == self.generation:
            self.failed.emit(message)
