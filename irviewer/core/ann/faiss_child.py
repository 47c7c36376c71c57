"""The child process that holds a FAISS index: it reads an index file or builds one from a
factory string, sets search parameters and searches, on requests from irviewer's process
(:class:`irviewer.core.ann.faiss_index.FaissProcess`), under an address-space limit.

FAISS trusts what it is given: a corrupt index file declares sizes it does not hold, a
factory string's numbers reach assertions that abort the process, and some values crash it.
Everything FAISS does runs here, so that what goes wrong costs this process and irviewer
says what happened in one sentence. This module imports nothing of irviewer's, and FAISS
only once the limit is set.

Once FAISS is imported the child says ``("ready",)``. Requests are tuples ``(operation,
*arguments)``; an operation that takes vectors is followed by their bytes (float32, C
order). Each gets one reply: ``("ok", value, warnings)`` or
``("error", kind, text)``, ``kind`` one of ``"missing"`` (no FAISS), ``"memory"``,
``"param"`` (a parameter the index does not take; ``text`` is its name) and ``"faiss"``
(FAISS refused; ``text`` is its message's first line). ``warnings`` are the lines FAISS
wrote on its error stream beginning with "WARNING", without that word (too few training
vectors, ...).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

import numpy as np


class _RefusedError(Exception):
    """A request refused with a kind of its own (``"param"``)."""

    def __init__(self, kind: str, text: str) -> None:
        super().__init__(text)
        self.kind, self.text = kind, text


class _State:
    """The child's index, the queries of the setting being searched and FAISS's
    warnings."""

    def __init__(self, faiss: Any, errors: Any) -> None:
        self.faiss, self.errors, self.read_to = faiss, errors, 0
        self.index: Any = None
        self.queries: list[np.ndarray] = []

    def warnings(self) -> list[str]:
        """Return the warning lines FAISS wrote since the last call."""
        self.errors.seek(self.read_to)
        written = self.errors.read()
        self.read_to += len(written)
        text = written.decode("utf-8", "replace")
        return list(dict.fromkeys(line.removeprefix("WARNING").strip()
                                  for line in text.splitlines()
                                  if line.startswith("WARNING")))[:3]


def limit_memory(limit: int | None) -> None:
    """Set this process's soft address-space limit to ``limit`` bytes (None: no change;
    where the platform has no such limit, nothing)."""
    if limit is None:
        return
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows has no address-space limit
        return
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def serve(conn: Connection, limit: int | None) -> None:
    """Answer requests on ``conn`` until it closes or a ``("quit",)`` arrives, under an
    address-space limit of ``limit`` bytes; FAISS's error stream goes to a file whose
    warnings the replies carry."""
    errors = tempfile.TemporaryFile()  # noqa: SIM115 (open while the process lives)
    os.dup2(errors.fileno(), 2)
    limit_memory(limit)
    try:
        import faiss
    except ImportError:
        conn.send(("error", "missing", ""))
        return
    conn.send(("ready",))
    state = _State(faiss, errors)
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        operation, arguments = request[0], request[1:]
        if operation == "quit":
            return
        try:
            value = _OPERATIONS[operation](state, conn, *arguments)
            reply: tuple = ("ok", value, state.warnings())
        except MemoryError:
            reply = ("error", "memory", "")
        except _RefusedError as e:
            reply = ("error", e.kind, e.text)
        except Exception as e:  # FAISS raises RuntimeError, and its wrappers others
            reply = ("error", "faiss", _first_line(e))
        conn.send(reply)


def _vectors(conn: Connection, shape: tuple[int, int]) -> np.ndarray:
    """Return the float32 vectors of ``shape`` that follow a request, received in place."""
    buffer = bytearray(int(shape[0]) * int(shape[1]) * 4)
    conn.recv_bytes_into(buffer)
    return np.frombuffer(buffer, dtype=np.float32).reshape(shape)


def _read(state: _State, _conn: Connection, path: str) -> dict:
    state.index = state.faiss.read_index(path)
    return _facts(state)


def _factory(state: _State, _conn: Connection, dim: int, factory: str) -> dict:
    faiss = state.faiss
    state.index = faiss.index_factory(int(dim), factory, faiss.METRIC_INNER_PRODUCT)
    return _facts(state)


def _train(state: _State, conn: Connection, shape: tuple[int, int]) -> None:
    state.index.train(_vectors(conn, shape))


def _add(state: _State, conn: Connection, shape: tuple[int, int]) -> None:
    state.index.add(_vectors(conn, shape))


def _limit(_state: _State, _conn: Connection, limit: int | None) -> None:
    limit_memory(limit)


def _threads(state: _State, _conn: Connection, n: int) -> int:
    """Set FAISS's threads to ``n``; return how many it had."""
    before = int(state.faiss.omp_get_max_threads())
    state.faiss.omp_set_num_threads(int(n))
    return before


def _set(state: _State, _conn: Connection, params: list[tuple[str, float]]) -> dict:
    """Set each (name, value) on the index; return its search beam (below)."""
    space = state.faiss.ParameterSpace()
    for name, value in params:
        try:
            space.set_index_parameter(state.index, name, float(value))
        except RuntimeError:
            raise _RefusedError("param", name) from None
    state.queries = []
    return _beam(state)


def _beam(state: _State) -> dict:
    """Return ``{"beam": efSearch, "factor": how many results it is asked for per result}``
    of the HNSW graph that gives the results (through transforms, an id map and a
    refinement, which asks its base index for ``k_factor`` times more); beam None when the
    results do not come from an HNSW graph."""
    faiss = state.faiss
    index, factor = faiss.downcast_index(state.index), 1.0
    while True:
        if isinstance(index, (faiss.IndexPreTransform, faiss.IndexIDMap,
                              faiss.IndexIDMap2)):
            index = faiss.downcast_index(index.index)
        elif isinstance(index, faiss.IndexRefine):
            factor *= float(index.k_factor)
            index = faiss.downcast_index(index.base_index)
        else:
            break
    beam = int(index.hnsw.efSearch) if isinstance(index, faiss.IndexHNSW) else None
    return {"beam": beam, "factor": factor}


def _search(state: _State, conn: Connection, k: int, keep: bool,
            shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, float]:
    """Return (distances, ids, seconds in FAISS's search) of the vectors that follow;
    ``keep``: remember them for :func:`_retime`."""
    queries = _vectors(conn, shape)
    start = time.perf_counter()
    dist, ids = state.index.search(queries, int(k))
    took = time.perf_counter() - start
    if keep:
        state.queries.append(queries)
    return dist, ids, took


def _retime(state: _State, _conn: Connection, k: int, spent: float, runs: int,
            below: float) -> float:
    """Return the fastest of searching every kept query again while the runs so far took
    under ``below`` seconds in all, up to ``runs`` runs in all, the first run (``spent``
    seconds) counted (ann-benchmarks' best search time)."""
    best, total, done = spent, spent, 1
    while total < below and done < runs:
        start = time.perf_counter()
        for block in state.queries:
            state.index.search(block, int(k))
        took = time.perf_counter() - start
        best, total, done = min(best, took), total + took, done + 1
    return best


def _facts(state: _State) -> dict:
    """Return what the index is: class, dimension, vectors, metric, trained, and for an id
    map the smallest and largest id it maps to."""
    faiss, index = state.faiss, state.index
    base = faiss.downcast_index(index)
    facts: dict[str, Any] = {"kind": type(base).__name__, "dim": int(index.d),
                             "ntotal": int(index.ntotal), "metric": int(index.metric_type),
                             "trained": bool(index.is_trained), "ids": None}
    if isinstance(base, (faiss.IndexIDMap, faiss.IndexIDMap2)) and index.ntotal:
        ids = faiss.vector_to_array(base.id_map)
        facts["ids"] = (int(ids.min()), int(ids.max()))
    return facts


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if "Error in" in text and ": " in text:
        text = text.rsplit(": ", 1)[-1]
    return text[:160]


_OPERATIONS: dict[str, Callable[..., Any]] = {
    "read": _read, "factory": _factory, "train": _train, "add": _add, "limit": _limit,
    "threads": _threads, "set": _set, "search": _search, "retime": _retime}

__all__ = ["limit_memory", "serve"]
