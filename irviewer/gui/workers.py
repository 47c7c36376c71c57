"""Long work off the GUI thread: the window's one mechanism for it.

A job is a generator: each step it yields (an object with ``stage``, ``done`` and
``total``) reports progress, and what it returns is its result; a plain function is a job
of no steps (:func:`call`). A :class:`Worker` runs its jobs on threads of its own pool and
reports on the GUI thread, by signal: ``progress(stage, done, total)``, ``done(result)``,
``failed(message)`` (bad input in the window's one sentence, memory, or a bug named as
one) and ``busy(bool)``. ``sync=True`` runs a job on the calling thread instead, for tests
and ``--screenshot``.

A worker is one of two kinds:

- *newest only* (the default): a newer request, or Cancel, makes the older ones stale
  (generation numbers). A stale job's generator is closed at its next step, a stale job
  still queued never starts, and nothing a stale job produces reaches the window. Opening,
  re-ranking, the audit, indexing, a photo search, compare mode's statistics.
- *every job* (``every=True``): each job runs and reports; with one thread they run in the
  order asked (the figure export), with more side by side
  (thumbnails, the comparison's two images).

:class:`Opener` opens datasets (:func:`irviewer.opening.opener.iter_open`, whose generator
returns the :class:`~irviewer.opening.opener.Opened`); :class:`Reranker` re-ranks one
method of them (:func:`irviewer.methods.reranked.iter_reranked`, returning the new
method); :class:`Auditor` audits labels (:func:`irviewer.core.audit.iter_audit`, whose last
step carries the result); :class:`Scorer` counts the score of every pair of an evaluation
(:func:`irviewer.core.score_distribution.iter_pair_scores`, whose last step carries it);
:class:`Indexer` indexes a folder of photos into a collection
(:func:`irviewer.collection.indexing.iter_index`, whose generator returns the
:class:`~irviewer.collection.indexing.Indexed`). No other module of the window makes threads
(``tests/test_architecture.py``)."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtCore import QObject, QThread, QThreadPool, Signal, SignalInstance

from irviewer.core.errors import InputError
from irviewer.opening.opener import Opened, iter_open
from irviewer.opening.request import OpenRequest

if TYPE_CHECKING:
    from irviewer.collection.indexing import IndexRequest
    from irviewer.core.dataset import Dataset
    from irviewer.core.evaluation import Evaluation
    from irviewer.core.ranking import Ranking
    from irviewer.methods.reranked import Reranking

# The audit, the indexer and the re-ranking are imported when first asked for (on the GUI
# thread, in the method that starts them): the window opens without them, about 60 ms sooner.

T = TypeVar("T")

#: How many jobs of a newest-only worker run at once: the newest starts at once even while
#: stale ones finish the step they are in (a step of reading a large file takes seconds).
NEWEST_THREADS = 4

#: A failure that is a bug, not the user's input: said so, never swallowed.
BUG = "internal error (a bug, please report it): {kind}: {error}"


def cores() -> int:
    """Return how many threads the machine runs at once (Qt's count of its cores)."""
    return QThread.idealThreadCount()


def call(function: Callable[[], T]) -> Generator[Any, None, T]:
    """Return a job of no steps whose result is ``function()`` (a plain function run by a
    :class:`Worker`)."""
    yield from ()  # a generator of no steps: its result is what it returns
    return function()


class _Relay(QObject):
    """The signals by which jobs on the pool's threads report to their worker, each with
    the job's number (its generation)."""

    progress = Signal(int, str, int, int)
    done = Signal(int, object)
    failed = Signal(int, object)  # a str; a WindowText keeps its template (not a QString)


class _Job:
    """One request: runs its generator to its result unless cancelled first."""

    def __init__(self, number: int, steps: Callable[[], Iterator[Any]],
                 result_of: Callable[[Any], object] | None, out_of_memory: str,
                 relay: _Relay) -> None:
        self.number, self.steps, self.result_of = number, steps, result_of
        self.out_of_memory, self.relay = out_of_memory, relay
        self.cancelled = False

    def run(self) -> None:
        if self.cancelled:  # stale before it started: it never starts
            return
        n, relay = self.number, self.relay
        try:
            steps = self.steps()
            while not self.cancelled:
                try:
                    step = next(steps)
                except StopIteration as done:  # a generator that returns its result
                    relay.done.emit(n, done.value)
                    return
                result = self.result_of(step) if self.result_of is not None else None
                if result is not None:  # a generator whose last step carries it
                    relay.done.emit(n, result)
                    return
                relay.progress.emit(n, step.stage, step.done, step.total)
            if isinstance(steps, Generator):  # cancelled: its finally blocks run now
                steps.close()
        except InputError as e:
            relay.failed.emit(n, e.for_window())  # options named by field
        except MemoryError:
            relay.failed.emit(n, self.out_of_memory)
        except Exception as e:  # a bug: shown, not swallowed
            relay.failed.emit(n, BUG.format(kind=type(e).__name__, error=e))


class Worker(QObject):
    """Runs jobs off the GUI thread (see the module); emits ``progress(stage, done,
    total)``, ``done(result)``, ``failed(message)`` for the jobs that still count (newest
    only: the newest request's), and ``busy(bool)`` when work starts and when the last job
    that counts ends (done, failed or cancelled)."""

    progress = Signal(str, int, int)
    done = Signal(object)
    failed = Signal(object)  # the message: a str (WindowText for bad input)
    busy = Signal(bool)

    def __init__(self, parent: QObject | None = None, *, every: bool = False,
                 threads: int | None = None) -> None:
        """``every``: every job counts (else the newest only); ``threads``: how many jobs
        run at once (newest only: :data:`NEWEST_THREADS`; every job: 1, in order)."""
        super().__init__(parent)
        self.every = every
        # Made before the relay: a child is deleted in the order made, and the pool's
        # deletion waits for its jobs, which report through the relay.
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(threads or (1 if every else NEWEST_THREADS))
        self._relay = _Relay(self)
        self._relay.progress.connect(self._progress)
        self._relay.done.connect(self._done)
        self._relay.failed.connect(self._failed)
        self.generation = 0
        self.running = False
        self._live: dict[int, _Job] = {}  # the jobs that count, by number

    def start(self, steps: Callable[[], Iterator[Any]], out_of_memory: str, *,
              result_of: Callable[[Any], object] | None = None, sync: bool = False) -> None:
        """Run the generator ``steps()`` (newest only: makes every earlier request stale);
        ``result_of(step)`` is the result carried by a step (None: none), for a generator
        whose last step carries it; ``out_of_memory`` is the sentence when memory runs
        out."""
        if not self.every:
            self._stop_all()
        self.generation += 1
        job = _Job(self.generation, steps, result_of, out_of_memory, self._relay)
        self._live[job.number] = job
        self._set_busy(True)
        if sync:
            job.run()
        else:
            self._pool.start(job.run)

    def run(self, function: Callable[[], object], out_of_memory: str,
            sync: bool = False) -> None:
        """Run ``function()`` as a job of no steps (:func:`call`)."""
        self.start(lambda: call(function), out_of_memory, sync=sync)

    def cancel(self) -> None:
        """Cancel every job that counts: each stops at its next step and reports nothing."""
        self._stop_all()
        self.generation += 1
        self._set_busy(False)

    def wait(self) -> None:
        """Block until the jobs end (closing the window, tests): a newest-only worker
        cancels its request first; every job of an every-job worker is finished (a figure asked
        for is written)."""
        if not self.every:
            self._stop_all()
        self._pool.waitForDone()

    def finish(self) -> None:
        """Block until every job, a stale one too, has run to its end; the results of those
        that count arrive with the next events (``--screenshot``, tests)."""
        self._pool.waitForDone()

    def _stop_all(self) -> None:
        for job in self._live.values():
            job.cancelled = True
        self._live.clear()

    def _set_busy(self, busy: bool) -> None:
        if busy != self.running:
            self.running = busy
            self.busy.emit(busy)

    def _progress(self, number: int, stage: str, done: int, total: int) -> None:
        if number in self._live:
            self.progress.emit(stage, done, total)

    def _done(self, number: int, result: object) -> None:
        if self._live.pop(number, None) is not None:
            self._set_busy(bool(self._live))
            self.done.emit(result)

    def _failed(self, number: int, message: str) -> None:
        if self._live.pop(number, None) is not None:
            self._set_busy(bool(self._live))
            self.failed.emit(message)


class Opener(Worker):
    """Opens datasets; ``opened(Opened)`` is :attr:`done`."""

    @property
    def opened(self) -> SignalInstance:
        """Return the signal emitted with the :class:`~irviewer.opening.opener.Opened`."""
        return self.done

    def open(self, request: OpenRequest, sync: bool = False) -> None:
        """Start opening ``request``; makes any earlier request stale."""
        self.start(lambda: iter_open(request),
                   "not enough memory to open this dataset; close other programs or open "
                   "fewer methods at once", sync=sync)


class Reranker(Worker):
    """Re-ranks one method of the open data (:mod:`irviewer.methods.reranked`);
    ``done(Method)``, the method "F + SPEC"."""

    def rerank(self, opened: Opened, plan: Reranking, sync: bool = False) -> None:
        """Start re-ranking ``plan``'s method of ``opened`` (what it needs is taken now, on
        the calling thread); makes any earlier request stale."""
        from irviewer.methods.reranked import iter_reranked

        job = iter_reranked(opened.methods[plan.method], plan, opened.dataset)
        self.start(lambda: job,
                   f"not enough memory to re-rank {plan.method} by {plan.chain.text}; close "
                   "other programs, or re-rank by a chain without k-reciprocal", sync=sync)


class AnnSearcher(Worker):
    """Searches one method's queries with an approximate index or a vector engine
    (:mod:`irviewer.opening.ann`); ``done(list[Method])``, the new methods."""

    def search(self, job: Iterator[Any], what: str, sync: bool = False) -> None:
        """Start ``job`` (:func:`irviewer.opening.ann.iter_ann` or ``iter_engine_job``,
        made on the calling thread); ``what`` names the search in the out-of-memory
        sentence; makes any earlier request stale."""
        self.start(lambda: job,
                   f"not enough memory to search {what}; close other programs, or choose "
                   "an index that compresses the vectors (PQ)", sync=sync)


class Auditor(Worker):
    """Audits a dataset's labels under every method; ``done(AuditResult)``."""

    def audit(self, dataset: Dataset, rankings: Mapping[str, Ranking],
              sync: bool = False) -> None:
        """Start auditing ``dataset`` under ``rankings``; makes any earlier request stale."""
        from irviewer.core.audit import iter_audit

        chosen = dict(rankings)
        self.start(lambda: iter_audit(dataset, chosen),
                   "not enough memory to audit this dataset; close other programs or open "
                   "fewer methods", result_of=lambda step: step.result, sync=sync)


class Scorer(Worker):
    """Counts the score of every pair of an evaluation
    (:func:`irviewer.core.score_distribution.iter_pair_scores`); ``done(PairScores)``."""

    def count(self, evaluation: Evaluation, sync: bool = False) -> None:
        """Start counting ``evaluation``'s pairs; makes any earlier request stale."""
        from irviewer.core.score_distribution import iter_pair_scores

        self.start(lambda: iter_pair_scores(evaluation),
                   "not enough memory to count the score of every pair; close other "
                   "programs and try again", result_of=lambda step: step.pairs, sync=sync)


class Indexer(Worker):
    """Indexes a folder of photos into a collection; ``done(Indexed)``. Cancelling closes
    the indexing generator, which stops its workers and writes nothing."""

    def index(self, request: IndexRequest, sync: bool = False) -> None:
        """Start indexing ``request``; makes any earlier request stale."""
        from irviewer.collection.indexing import iter_index

        self.start(lambda: iter_index(request),
                   "not enough memory to index these photos; close other programs and try "
                   "again", sync=sync)
