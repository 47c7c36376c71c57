"""Row-wise numpy work shared between threads.

numpy releases the GIL in the comparisons, sorts, searches and sums that dominate the
ranking and the norms, so the rows of a block, split into contiguous parts, are processed
at the same time on the cores that the matrix multiply has just left idle. Each part must
write only its own rows' results.

One thread per core this process may use (:func:`irviewer.core.threads.usable_cores`: its
affinity and its container's CPU quota), or the user's cap (``--threads``,
``IRVIEWER_THREADS``: :func:`limited_threads`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TypeVar, cast

from irviewer.core import threads

T = TypeVar("T")
R = TypeVar("R")

#: Threads that share one piece of work (this one included): the cores this process may
#: use, or :data:`irviewer.core.threads.ENV`'s cap when it is set.
WORKERS = threads.environment_threads() or threads.usable_cores()

_POOL: ThreadPoolExecutor | None = None
_POOL_SIZE = 0


def row_parts(n_rows: int, n_values: int, min_values: int) -> list[tuple[int, int]]:
    """Return contiguous (start, stop) row ranges covering ``n_rows`` rows: one per worker,
    fewer when a part would hold under ``min_values`` of the ``n_values`` values (a part
    that small costs more to hand over than it saves), at least one."""
    parts = max(1, min(WORKERS, n_rows, n_values // max(1, min_values)))
    bounds = [round(i * n_rows / parts) for i in range(parts + 1)]
    return [(bounds[i], bounds[i + 1]) for i in range(parts)]


def run_parts(work: Callable[[int, int], None], parts: list[tuple[int, int]]) -> None:
    """Run ``work(start, stop)`` for every part, the first on this thread and the others
    on the shared pool; return when all are done, raising the first error."""
    if len(parts) <= 1:
        for start, stop in parts:
            work(start, stop)
        return
    futures = [_pool().submit(work, start, stop) for start, stop in parts[1:]]
    try:
        work(*parts[0])
    finally:
        for future in futures:
            future.result()


def run_each(work: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """Return ``[work(x) for x in items]``, the items shared between the threads (the label
    audit's methods, whose evidence is computed independently). ``work`` must not write
    anything another item's work reads."""
    out: list[R | None] = [None] * len(items)

    def part(start: int, stop: int) -> None:
        for i in range(start, stop):
            out[i] = work(items[i])

    run_parts(part, row_parts(len(items), len(items), 1))
    return cast("list[R]", out)  # every slot is filled


@contextmanager
def limited_threads(count: int | None) -> Iterator[int]:
    """Within the block, cap this process's threads at ``count`` (None: the cores it may
    use): irviewer's own (:data:`WORKERS`) and those of BLAS, OpenMP and OpenCV
    (:func:`irviewer.core.threads.cap_libraries`, which only lowers theirs); yield the count
    in force, and put everything back after. Without a cap, the libraries are held to the
    cores only where a CPU quota lets fewer through than the affinity (they count the
    affinity's)."""
    global WORKERS
    before, usable = WORKERS, threads.usable_cores()
    WORKERS = count if count is not None else usable
    capped = count is not None or usable < threads.affinity_cores()
    put_back = threads.cap_libraries(WORKERS) if capped else None
    try:
        yield WORKERS
    finally:
        WORKERS = before
        if put_back is not None:
            put_back()


def _pool() -> ThreadPoolExecutor:
    global _POOL, _POOL_SIZE
    size = max(1, WORKERS - 1)
    if _POOL is not None and size != _POOL_SIZE:
        _POOL.shutdown(wait=False)  # the cap changed: later parts go to a pool of its size
        _POOL = None
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=size, thread_name_prefix="irviewer-rows")
        _POOL_SIZE = size
    return _POOL
