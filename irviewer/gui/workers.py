"""Long work off the GUI thread: a core generator runs in a QThread and reports by signal.
A newer request, or Cancel, makes older ones stale (generation numbers): their generator is
closed at its next step and nothing they produce reaches the window. ``sync=True`` runs on
the calling thread, for tests and --screenshot.

:class:`Opener` opens datasets (:func:`irviewer.opening.opener.iter_open`, whose generator returns
the :class:`~irviewer.opening.opener.Opened`); :class:`Reranker` re-ranks one method of them
(:func:`irviewer.opening.reranking.iter_reranked`, returning the new method);
:class:`Auditor` audits labels (:func:`irviewer.core.audit.iter_audit`, whose last step
carries the result); :class:`Indexer` indexes a folder of photos into a collection
(:func:`irviewer.opening.indexing.iter_index`, whose generator returns the
:class:`~irviewer.opening.indexing.Indexed`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QThread, Signal

from irviewer.core.errors import InputError
from irviewer.opening.opener import Opened, iter_open
from irviewer.opening.request import OpenRequest

if TYPE_CHECKING:
    from irviewer.core.dataset import Dataset
    from irviewer.core.ranking import Ranking
    from irviewer.opening.indexing import IndexRequest
    from irviewer.opening.reranking import Reranking

# The audit, the indexer and the re-ranking are imported when first asked for (on the GUI
# thread, in the method that starts them): the window opens without them, about 60 ms sooner.


class _Runner(QObject):
    progress = Signal(int, str, int, int)
    done = Signal(int, object)
    failed = Signal(int, object)  # a str; a WindowText keeps its template (not a QString)
    finished = Signal()

    def __init__(self, generation: int, steps: Callable[[], Iterator[Any]],
                 result_of: Callable[[Any], object], out_of_memory: str) -> None:
        super().__init__()
        self.generation, self.steps, self.result_of = generation, steps, result_of
        self.out_of_memory = out_of_memory
        self.cancelled = False

    def run(self) -> None:
        try:
            steps = self.steps()
            while not self.cancelled:
                try:
                    step = next(steps)
                except StopIteration as done:  # a generator that returns its result
                    self.done.emit(self.generation, done.value)
                    return
                result = self.result_of(step)
                if result is not None:  # a generator whose last step carries it
                    self.done.emit(self.generation, result)
                    return
                self.progress.emit(self.generation, step.stage, step.done, step.total)
            steps.close()
        except InputError as e:
            self.failed.emit(self.generation, e.for_window())  # options named by field
        except MemoryError:
            self.failed.emit(self.generation, self.out_of_memory)
        except Exception as e:  # a bug: shown, not swallowed
            self.failed.emit(self.generation, f"internal error (a bug, please report it): "
                             f"{type(e).__name__}: {e}")
        finally:
            self.finished.emit()


class Worker(QObject):
    """Runs one generator at a time; emits ``progress(stage, done, total)``,
    ``done(result)``, ``failed(message)`` for the newest request only, and ``busy(bool)``
    when work starts and when the newest request ends (done, failed or cancelled)."""

    progress = Signal(str, int, int)
    done = Signal(object)
    failed = Signal(object)  # the message: a str (WindowText for bad input)
    busy = Signal(bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.generation = 0
        self.running = False
        self._threads: list[tuple[QThread, _Runner]] = []

    def start(self, steps: Callable[[], Iterator[Any]], result_of: Callable[[Any], object],
              out_of_memory: str, sync: bool = False) -> None:
        """Run the generator ``steps()``; ``result_of(step)`` is the result carried by a
        step (None: none); makes any earlier request stale."""
        self._stop_all()
        self.generation += 1
        runner = _Runner(self.generation, steps, result_of, out_of_memory)
        runner.progress.connect(self._progress)
        runner.done.connect(self._done)
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

    def _done(self, generation: int, result: object) -> None:
        if generation == self.generation:
            self._set_busy(False)
            self.done.emit(result)

    def _failed(self, generation: int, message: str) -> None:
        if generation == self.generation:
            self._set_busy(False)
            self.failed.emit(message)


class Opener(Worker):
    """Opens datasets; ``opened(Opened)`` is :attr:`done`."""

    @property
    def opened(self) -> Any:
        """Return the signal emitted with the :class:`~irviewer.opening.opener.Opened`."""
        return self.done

    def open(self, request: OpenRequest, sync: bool = False) -> None:
        """Start opening ``request``; makes any earlier request stale."""
        self.start(lambda: iter_open(request), lambda _step: None,
                   "not enough memory to open this dataset; close other programs or open "
                   "fewer methods at once", sync)


class Reranker(Worker):
    """Re-ranks one method of the open data (:mod:`irviewer.opening.reranking`);
    ``done(Method)``, the method "F + SPEC"."""

    def rerank(self, opened: Opened, plan: Reranking, sync: bool = False) -> None:
        """Start re-ranking ``plan``'s method of ``opened`` (what it needs is taken now, on
        the calling thread); makes any earlier request stale."""
        from irviewer.opening.reranking import iter_reranked

        job = iter_reranked(opened, plan)
        self.start(lambda: job, lambda _step: None,
                   f"not enough memory to re-rank {plan.method} by {plan.chain.text}; close "
                   "other programs, or re-rank by a chain without k-reciprocal", sync)


class AnnSearcher(Worker):
    """Searches one method's queries with an approximate index or a vector engine
    (:mod:`irviewer.opening.ann`); ``done(list[Method])``, the new methods."""

    def search(self, job: Iterator[Any], what: str, sync: bool = False) -> None:
        """Start ``job`` (:func:`irviewer.opening.ann.iter_ann` or ``iter_engine_job``,
        made on the calling thread); ``what`` names the search in the out-of-memory
        sentence; makes any earlier request stale."""
        self.start(lambda: job, lambda _step: None,
                   f"not enough memory to search {what}; close other programs, or choose "
                   "an index that compresses the vectors (PQ)", sync)


class Auditor(Worker):
    """Audits a dataset's labels under every method; ``done(AuditResult)``."""

    def audit(self, dataset: Dataset, rankings: Mapping[str, Ranking],
              sync: bool = False) -> None:
        """Start auditing ``dataset`` under ``rankings``; makes any earlier request stale."""
        from irviewer.core.audit import iter_audit

        chosen = dict(rankings)
        self.start(lambda: iter_audit(dataset, chosen), lambda step: step.result,
                   "not enough memory to audit this dataset; close other programs or open "
                   "fewer methods", sync)


class Indexer(Worker):
    """Indexes a folder of photos into a collection; ``done(Indexed)``. Cancelling closes
    the indexing generator, which stops its workers and writes nothing."""

    def index(self, request: IndexRequest, sync: bool = False) -> None:
        """Start indexing ``request``; makes any earlier request stale."""
        from irviewer.opening.indexing import iter_index

        self.start(lambda: iter_index(request), lambda _step: None,
                   "not enough memory to index these photos; close other programs and try "
                   "again", sync)
