"""Describing many photos at once: worker processes (or threads) that decode each photo
safely and run the extractor on it, as a generator of results in the order they finish.

Processes are the default (:data:`PROCESSES`): the demo's extractor spends much of its time
in many small numpy and Pillow calls that hold Python's global lock, so threads share one
core between them (``tests/benchmarks/bench_index.py`` measures both). Workers are started
with ``spawn``, never ``fork``: the window's threads must not be copied into a child
(a packaged app calls :func:`multiprocessing.freeze_support` first, see ``irviewer.cli``).
A photo that cannot be used is a sentence, never an exception: one bad photo in two
thousand must not stop the others.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import (
    FIRST_COMPLETED,
    Executor,
    Future,
    ProcessPoolExecutor,
    ThreadPoolExecutor,
    wait,
)
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from irviewer.core import parallel
from irviewer.core.errors import InputError
from irviewer.core.local_features import LocalFeatures
from irviewer.core.threads import cap_libraries
from irviewer.extract.base import Extractor, Learner, describe, input_side
from irviewer.extract.local_features import REFERENCE_SIDE, local_features, single_threaded
from irviewer.extract.registry import get_extractor
from irviewer.formats.image_files import read_rgb
from irviewer.io.allocator import keep_freed_memory

if TYPE_CHECKING:
    from PIL import Image

PROCESSES, THREADS, SERIAL = "processes", "threads", "serial"
#: Photos handed to a worker at once (fewer hand-overs; small enough to cancel quickly).
CHUNK = 4


def default_workers() -> int:
    """Return how many workers describe photos by default: one per thread this process may
    run (:data:`irviewer.core.parallel.WORKERS`: the cap in force, else one per core its
    affinity and CPU quota allow)."""
    return parallel.WORKERS


@dataclass(frozen=True)
class ExtractorSpec:
    """What a worker needs to make the extractor: its registered ``name`` and what it learnt
    (``state``, the arrays of :meth:`Learner.state`; None for the extractor as installed).
    Small enough to send with every task (the demo's vocabulary is 34 KB)."""

    name: str
    state: Mapping[str, np.ndarray] | None = None
    key: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        digest = hashlib.sha1(self.name.encode())
        for k in sorted(self.state or {}):
            digest.update(k.encode())
            digest.update(np.ascontiguousarray(self.state[k]).tobytes())  # type: ignore[index]
        object.__setattr__(self, "key", digest.hexdigest())

    @classmethod
    def of(cls, extractor: Extractor) -> ExtractorSpec:
        """Return the spec that remakes ``extractor`` in a worker."""
        state = extractor.state() if isinstance(extractor, Learner) else None
        return cls(extractor.name, state)


_made: dict[str, Extractor] = {}
_made_lock = threading.Lock()


def made(spec: ExtractorSpec) -> Extractor:
    """Return the extractor of ``spec``, made once per process."""
    with _made_lock:
        found = _made.get(spec.key)
        if found is None:
            found = get_extractor(spec.name)
            if spec.state is not None:
                assert isinstance(found, Learner)
                found = found.with_state(spec.state, spec.name)
            _made[spec.key] = found
        return found


@dataclass(frozen=True)
class Described:
    """A photo described for a collection: its ``vector`` (the extractor's) and its
    ``features`` (keypoints and descriptors for verification,
    :func:`irviewer.extract.local_features.local_features`)."""

    vector: np.ndarray
    features: LocalFeatures


def open_photo(path: Path, extractor: Extractor | None, side: int | None = None
               ) -> Image.Image:
    """Return the photo at ``path`` decoded as RGB (reduced to ``side``, else to the
    extractor's ``input_side`` when it has one); InputError with one sentence for an
    empty, missing, broken, non-image or decompression-bomb file."""
    path = Path(path)
    try:
        if path.stat().st_size == 0:
            raise InputError(f"{path.name}: the file is empty")
    except FileNotFoundError:
        raise InputError(f"{path.name}: the photo was removed while indexing") from None
    except OSError as e:
        raise InputError(f"{path.name}: cannot be read ({e.strerror})") from None
    return read_rgb(path, side or (input_side(extractor) if extractor else None))[0]


def describe_photo(extractor: Extractor, path: Path) -> np.ndarray | str:
    """Return the photo's descriptor, or the sentence saying why it cannot be described
    (a bad file, a blank image, or an error of the extractor, named with its type)."""
    try:
        return describe(extractor, open_photo(path, extractor), Path(path).name)
    except InputError as e:
        return str(e)
    except Exception as e:  # an extractor's own failure on one photo: skip it, say why
        return f"{Path(path).name}: the extractor failed on it ({type(e).__name__}: {e})"


def describe_with_features(extractor: Extractor, path: Path) -> Described | str:
    """Return the photo's descriptor and local features (one decoding, at the larger of
    the extractor's ``input_side`` and the features' side; the extractor is given the photo
    reduced to its own side), or the sentence saying why it cannot be described."""
    own = input_side(extractor)
    try:
        image = open_photo(path, extractor, max(own, REFERENCE_SIDE) if own else None)
        small = image
        if own is not None and max(image.size) > own:
            small = image.copy()
            small.thumbnail((own, own))
        return Described(describe(extractor, small, Path(path).name), local_features(image))
    except InputError as e:
        return str(e)
    except Exception as e:
        return f"{Path(path).name}: the extractor failed on it ({type(e).__name__}: {e})"


def sample_photo(extractor: Extractor, path: Path, count: int,
                 seed: int) -> np.ndarray | str:
    """Return up to ``count`` rows for the extractor to learn from (its
    :meth:`~irviewer.extract.base.Learner.learning_sample`), or the sentence saying why the
    photo cannot be used."""
    assert isinstance(extractor, Learner)
    try:
        return extractor.learning_sample(open_photo(path, extractor), count, seed)
    except InputError as e:
        return str(e)
    except Exception as e:
        return f"{Path(path).name}: the extractor failed on it ({type(e).__name__}: {e})"


def _describe_chunk(spec: ExtractorSpec, paths: Sequence[str]) -> list[np.ndarray | str]:
    extractor = made(spec)
    return [describe_photo(extractor, Path(p)) for p in paths]


def _one_thread_per_worker() -> None:
    """In a worker process, make OpenCV single-threaded: there is one worker per core
    already (the calling process keeps its threads)."""
    if multiprocessing.parent_process() is not None:
        single_threaded()


def _start_worker() -> None:
    """Start a worker process: keep what a photo frees for the next photo
    (:func:`irviewer.io.allocator.keep_freed_memory`; a third of the time went to the
    kernel without it), and run one thread (BLAS, OpenMP and OpenCV included: there is one
    worker per thread allowed already)."""
    keep_freed_memory()
    cap_libraries(1)


def _features_chunk(spec: ExtractorSpec, paths: Sequence[str]) -> list[Described | str]:
    _one_thread_per_worker()
    extractor = made(spec)
    return [describe_with_features(extractor, Path(p)) for p in paths]


def _call_chunk(spec: ExtractorSpec, jobs: Sequence[tuple[Callable[..., Any], tuple[Any, ...]]]
                ) -> list[Any]:
    _one_thread_per_worker()
    return [work(*args) for work, args in jobs]


def _sample_chunk(spec: ExtractorSpec, jobs: Sequence[tuple[str, int, int]]
                  ) -> list[np.ndarray | str]:
    extractor = made(spec)
    return [sample_photo(extractor, Path(p), count, seed) for p, count, seed in jobs]


class Pool:
    """Workers that describe photos (a context manager): ``mode`` is :data:`PROCESSES`,
    :data:`THREADS` or :data:`SERIAL` (in the calling thread), ``workers`` how many."""

    def __init__(self, mode: str = PROCESSES, workers: int | None = None) -> None:
        if mode not in (PROCESSES, THREADS, SERIAL):
            raise ValueError(f"unknown mode {mode!r}")
        self.workers = workers or default_workers()
        self.mode = SERIAL if self.workers == 1 and mode == THREADS else mode
        self._executor: Executor | None = None

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the workers; tasks not started are dropped."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None

    def _start(self) -> Executor:
        if self._executor is None:
            if self.mode == PROCESSES:
                self._executor = ProcessPoolExecutor(
                    self.workers, mp_context=multiprocessing.get_context("spawn"),
                    initializer=_start_worker)
            else:
                self._executor = ThreadPoolExecutor(self.workers,
                                                    thread_name_prefix="irviewer-index")
        return self._executor

    def describe(self, spec: ExtractorSpec, paths: Sequence[Path]
                 ) -> Iterator[tuple[int, np.ndarray | str]]:
        """Yield (position in ``paths``, descriptor or sentence) as photos are done."""
        jobs = [str(p) for p in paths]
        yield from self._run(_describe_chunk, spec, jobs)

    def describe_with_features(self, spec: ExtractorSpec, paths: Sequence[Path]
                               ) -> Iterator[tuple[int, Described | str]]:
        """Yield (position in ``paths``, :class:`Described` or sentence) as photos are
        done."""
        jobs = [str(p) for p in paths]
        yield from self._run(_features_chunk, spec, jobs)

    def call(self, work: Callable[..., Any], arguments: Sequence[tuple[Any, ...]]
             ) -> Iterator[tuple[int, Any]]:
        """Yield (position in ``arguments``, ``work(*its arguments)``) as calls are done;
        ``work`` is a module-level function (sent to a worker process by name)."""
        yield from self._run(_call_chunk, ExtractorSpec(""), [(work, a) for a in arguments])

    def sample(self, spec: ExtractorSpec, paths: Sequence[Path], count: int,
               seeds: Sequence[int]) -> Iterator[tuple[int, np.ndarray | str]]:
        """Yield (position in ``paths``, learning sample or sentence) as photos are done."""
        jobs = [(str(p), count, s) for p, s in zip(paths, seeds, strict=True)]
        yield from self._run(_sample_chunk, spec, jobs)

    def _run(self, work: Callable[[ExtractorSpec, Any], list[Any]],
             spec: ExtractorSpec, jobs: Sequence[Any]) -> Iterator[tuple[int, Any]]:
        chunks = [(i, jobs[i:i + CHUNK]) for i in range(0, len(jobs), CHUNK)]
        if self.mode == SERIAL:
            for start, chunk in chunks:
                for j, result in enumerate(work(spec, chunk)):
                    yield start + j, result
            return
        executor = self._start()
        pending: dict[Future[list[Any]], int] = {}
        queue = iter(chunks)
        try:
            while True:
                while len(pending) < 2 * self.workers:
                    nxt = next(queue, None)
                    if nxt is None:
                        break
                    pending[executor.submit(work, spec, nxt[1])] = nxt[0]
                if not pending:
                    return
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    start = pending.pop(future)
                    for j, result in enumerate(future.result()):
                        yield start + j, result
        finally:
            for future in pending:
                future.cancel()
