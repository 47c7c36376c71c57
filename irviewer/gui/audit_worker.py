"""The label audit off the GUI thread: :func:`irviewer.core.audit.iter_audit` runs in a
QThread and reports by signal, as :mod:`irviewer.gui.workers` opens datasets. A newer
request, or Cancel, makes older ones stale (generation numbers): their generator is closed
at its next stage and nothing they produce reaches the window. ``sync=True`` runs on the
calling thread (tests, screenshots)."""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import QObject, QThread, Signal

from irviewer.core.audit import iter_audit
from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError
from irviewer.core.ranking import Ranking


class _AuditRunner(QObject):
    progress = Signal(int, str, int, int)
    done = Signal(int, object)
    failed = Signal(int, str)
    finished = Signal()

    def __init__(self, generation: int, dataset: Dataset,
                 rankings: Mapping[str, Ranking]) -> None:
        super().__init__()
        self.generation, self.dataset, self.rankings = generation, dataset, dict(rankings)
        self.cancelled = False

    def run(self) -> None:
        try:
            steps = iter_audit(self.dataset, self.rankings)
            for step in steps:
                if self.cancelled:
                    steps.close()
                    return
                if step.result is not None:
                    self.done.emit(self.generation, step.result)
                    return
                self.progress.emit(self.generation, step.stage, step.done, step.total)
        except InputError as e:
            self.failed.emit(self.generation, e.for_window())
        except MemoryError:
            self.failed.emit(self.generation, "not enough memory to audit this dataset; "
                             "close other programs or open fewer methods")
        except Exception as e:  # a bug: shown, not swallowed
            self.failed.emit(self.generation, f"internal error (a bug, please report it): "
                             f"{type(e).__name__}: {e}")
        finally:
            self.finished.emit()


class Auditor(QObject):
    """Audits labels; emits ``progress(stage, done, total)``, ``done(AuditResult)`` and
    ``failed(message)`` for the newest request only, ``busy(bool)`` when work starts and
    when the newest request ends."""

    progress = Signal(str, int, int)
    done = Signal(object)
    failed = Signal(str)
    busy = Signal(bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.generation = 0
        self.running = False
        self._threads: list[tuple[QThread, _AuditRunner]] = []

    def start(self, dataset: Dataset, rankings: Mapping[str, Ranking],
              sync: bool = False) -> None:
        """Audit ``dataset`` under ``rankings``; makes any earlier request stale."""
        self._stop_all()
        self.generation += 1
        runner = _AuditRunner(self.generation, dataset, rankings)
        runner.progress.connect(self._progress)
        runner.done.connect(self._done)
        runner.failed.connect(self._failed)
        self._set_busy(True)
        if sync:
            runner.run()
            return
        thread = QThread()
        runner.moveToThread(thread)
        thread.started.connect(runner.run)
        runner.finished.connect(thread.quit)
        thread.finished.connect(lambda: self._forget(thread))
        self._threads.append((thread, runner))
        thread.start()

    def cancel(self) -> None:
        """Cancel the running audit: it stops at its next stage and reports nothing."""
        self._stop_all()
        self.generation += 1
        self._set_busy(False)

    def wait(self) -> None:
        """Block until every audit thread has ended (closing the window, tests)."""
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

    def _done(self, generation: int, result: object) -> None:
        if generation == self.generation:
            self._set_busy(False)
            self.done.emit(result)

    def _failed(self, generation: int, message: str) -> None:
        if generation == self.generation:
            self._set_busy(False)
            self.failed.emit(message)
