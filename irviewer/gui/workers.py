"""Opening a dataset off the GUI thread: the core's generator runs in a QThread and reports
by signal. A newer request, or Cancel, makes older ones stale (generation numbers): their
generator is closed at its next step and nothing they produce reaches the window.
``sync=True`` runs on the calling thread, for tests and --screenshot."""

from __future__ import annotations

from PySide6.QtCore import QObject, QThread, Signal

from irviewer.core.errors import InputError
from irviewer.session import OpenRequest, iter_open


class _Runner(QObject):
    progress = Signal(int, str, int, int)
    opened = Signal(int, object)
    failed = Signal(int, str)
    finished = Signal()

    def __init__(self, generation: int, request: OpenRequest) -> None:
        super().__init__()
        self.generation, self.request = generation, request
        self.cancelled = False

    def run(self) -> None:
        steps = iter_open(self.request)
        try:
            while not self.cancelled:
                try:
                    step = next(steps)
                except StopIteration as done:  # the generator returns its Opened
                    self.opened.emit(self.generation, done.value)
                    return
                self.progress.emit(self.generation, step.stage, step.done, step.total)
            steps.close()
        except InputError as e:
            self.failed.emit(self.generation, e.for_window())  # options named by field
        except MemoryError:
            self.failed.emit(self.generation, "not enough memory to open this dataset; "
                             "close other programs or open fewer methods at once")
        except Exception as e:  # a bug: shown, not swallowed
            self.failed.emit(self.generation, f"internal error (a bug, please report it): "
                             f"{type(e).__name__}: {e}")
        finally:
            self.finished.emit()


class Opener(QObject):
    """Opens datasets; emits ``progress(stage, done, total)``, ``opened(Opened)``,
    ``failed(message)`` for the newest request only, and ``busy(bool)`` when work starts
    and when the newest request ends (opened, failed or cancelled)."""

    progress = Signal(str, int, int)
    opened = Signal(object)
    failed = Signal(str)
    busy = Signal(bool)

    def __init__(self) -> None:
        super().__init__()
        self.generation = 0
        self.running = False
        self._threads: list[tuple[QThread, _Runner]] = []

    def open(self, request: OpenRequest, sync: bool = False) -> None:
        """Start opening ``request``; makes any earlier request stale."""
        self._stop_all()
        self.generation += 1
        runner = _Runner(self.generation, request)
        runner.progress.connect(self._progress)
        runner.opened.connect(self._opened)
        runner.failed.connect(self._failed)
        self._set_busy(True)
        if sync:
            runner.run()
            self._set_busy(False)
            return
        thread = QThread()
        runner.moveToThread(thread)
        thread.started.connect(runner.run)
        runner.finished.connect(thread.quit)
        thread.finished.connect(lambda: self._forget(thread))
        self._threads.append((thread, runner))
        thread.start()

    def cancel(self) -> None:
        """Cancel the running request: it stops at its next step and reports nothing."""
        self._stop_all()
        self.generation += 1
        self._set_busy(False)

    def wait(self) -> None:
        """Block until every worker thread has ended (closing the window, tests)."""
        self._stop_all()
        for thread, _ in list(self._threads):
            thread.quit()
            thread.wait()

    def _stop_all(self) -> None:
        for _, runner in self._threads:
            runner.cancelled = True

    def _set_busy(self, busy: bool) -> None:
        if busy != self.running:
            self.running = busy
            self.busy.emit(busy)

    def _forget(self, thread: QThread) -> None:
        self._threads = [(t, r) for t, r in self._threads if t is not thread]

    def _progress(self, generation: int, stage: str, done: int, total: int) -> None:
        if generation == self.generation:
            self.progress.emit(stage, done, total)

    def _opened(self, generation: int, opened: object) -> None:
        if generation == self.generation:
            self._set_busy(False)
            self.opened.emit(opened)

    def _failed(self, generation: int, message: str) -> None:
        if generation == self.generation:
            self._set_busy(False)
            self.failed.emit(message)
