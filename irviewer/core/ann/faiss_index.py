"""FAISS indexes as ranking sources: an index built from a factory string over a descriptor
file's gallery rows, or an index file; search parameters set through FAISS's
``ParameterSpace``; each query's top K found in blocks.

FAISS never runs in irviewer's own process. Its own documentation warns that a faulty or
malicious index file can exhaust memory or crash the process (``read_index`` trusts the
sizes the file declares), and its assertions end the process on a bad factory string
(``HNSW0``) or parameter. So every index lives in a child process
(:mod:`irviewer.core.ann.faiss_child`, started with ``spawn``, as the indexer's workers are)
that reads or builds it under an address-space limit, sets parameters and searches on
request; a crash, a memory exhaustion or a hang costs the child, and the user gets one
sentence. What can be checked without FAISS is checked first: a file exists, is long
enough and begins with a FAISS header; a factory string's numbers and every parameter
(:mod:`irviewer.core.ann.spec`, :mod:`irviewer.core.ann.factory`). (docs/ann.md, "Index
files and safety".)
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from irviewer.core.ann.factory import check_factory_fits
from irviewer.core.ann.faiss_process import (
    HEADROOM,
    ChildFailedError,
    FaissProcess,
    memory_limit,
)
from irviewer.core.ann.spec import WHERE, AnnSetting
from irviewer.core.descriptors import normalise_rows
from irviewer.core.errors import InputError, install_extra

#: The sentence for a missing FAISS.
NO_FAISS = (f"{WHERE}: approximate indexes need FAISS, which is not installed: "
            f"{install_extra('ann')}")
#: Seconds FAISS may take to read an index file.
PROBE_SECONDS = 50.0
#: Gallery rows an index built from a factory string trains on at most (evenly spaced).
TRAIN_ROWS = 100_000
#: Rows converted to float32 at once while adding a gallery to an index.
ADD_ROWS = 65_536
#: Queries searched per block (a step of progress, a point to cancel).
SEARCH_BLOCK = 256
#: FAISS threads while searching (building uses them all).
SEARCH_THREADS = 1
#: A search shorter than this (seconds) is timed again, the fastest of :data:`RUNS` kept.
REPEAT_BELOW = 0.5
#: At most this many runs of a short search (ann-benchmarks' default ``--runs``).
RUNS = 5
_HEADER_BYTES = 4 + 4 + 8
_FACTORY_WIKI = "github.com/facebookresearch/faiss/wiki/The-index-factory"


def require_faiss() -> None:
    """Return None when FAISS can be imported (without importing it here); InputError (one
    sentence naming the extra) when it is not installed."""
    if "faiss" in sys.modules:
        missing = sys.modules["faiss"] is None
    else:
        missing = importlib.util.find_spec("faiss") is None
    if missing:
        raise InputError(NO_FAISS)


@dataclass(frozen=True)
class IndexFacts:
    """What an index holds, as FAISS read or built it: its class, dimension, number of
    vectors, metric (``"inner product"`` or ``"L2"``) and, for an id map, the smallest and
    largest id it maps its vectors to (None: the ids are 0 to ``ntotal - 1``)."""

    kind: str
    dim: int
    ntotal: int
    metric: str
    ids: tuple[int, int] | None = None


def _gigabytes(limit: int | None) -> str:
    return "" if limit is None else f" (irviewer lets it use {limit / 2**30:.1f} GB)"


@dataclass
class BuiltIndex:
    """A FAISS index ready to search, held by its child process: the seconds it took to
    build (or read, the child's start included), how its result scores become similarities
    (``l2``: squared L2 distances on unit vectors, similarity = 1 - d / 2), what it is, and
    FAISS's warnings while building it. :meth:`close` ends the child."""

    process: FaissProcess
    build_s: float
    l2: bool
    facts: IndexFacts
    warnings: tuple[str, ...] = field(default=())

    @property
    def ntotal(self) -> int:
        """Return the number of vectors the index holds."""
        return self.facts.ntotal

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, float]:
        """Return FAISS's (distances, ids) of the top ``k`` of each query and the seconds
        its search took, at the parameters set last; InputError (one sentence) when FAISS
        fails."""
        try:
            found: tuple[np.ndarray, np.ndarray, float] = self.process.ask(
                "search", int(k), False, vectors=queries)
        except ChildFailedError as e:
            raise _failure(e, f"{WHERE} {self.facts.kind}", "searching this index",
                           self.process.limit) from None
        return found

    def close(self) -> None:
        """End the child process holding the index."""
        self.process.close()


def _failure(e: ChildFailedError, where: str, doing: str, limit: int | None) -> InputError:
    """Return the sentence for a child's failure while ``doing`` something."""
    if e.kind == "missing":
        return InputError(NO_FAISS)
    if e.kind == "start":
        return InputError(f"{where}: FAISS's process did not start ({e.text}); a Python "
                          "script that calls irviewer must do so under if __name__ == "
                          "\"__main__\":, as Python's child processes require")
    if e.kind == "memory":
        return InputError(f"{where}: FAISS ran out of memory {doing}{_gigabytes(limit)}")
    if e.kind == "crash":
        return InputError(f"{where}: FAISS crashed {doing} ({e.text})")
    return InputError(f"{where}: FAISS failed {doing} ({e.text})")


def check_index_header(path: Path) -> None:
    """Return None when ``path`` may be a FAISS index file; InputError (one sentence) when it
    is missing, a folder, empty, shorter than a header, or does not begin with a FAISS
    index header (four letters, then a dimension)."""
    p = Path(path)
    try:
        if not p.exists():
            raise InputError(f"{WHERE} {p}: no such index file")
        if p.is_dir():
            raise InputError(f"{WHERE} {p}: is a folder, not a FAISS index file")
        size = p.stat().st_size
        with p.open("rb") as f:
            head = f.read(_HEADER_BYTES)
    except OSError as e:
        raise InputError(f"{WHERE} {p.name[:80]}: cannot be read ({e.strerror})") from None
    if size < _HEADER_BYTES:
        raise InputError(f"{WHERE} {p.name}: {size} bytes, too short to be a FAISS index file "
                         "(truncated or another kind of file)")
    fourcc, dim = head[:4], int.from_bytes(head[4:8], "little", signed=True)
    if not all(48 <= c < 123 for c in fourcc) or not (0 < dim < 1 << 20):
        raise InputError(f"{WHERE} {p.name}: not a FAISS index file (it does not begin with "
                         "a FAISS index header)")


def _facts(found: dict, where: str) -> IndexFacts:
    """Return the facts a child replied; InputError for an index irviewer cannot use."""
    metric = {0: "inner product", 1: "L2"}.get(int(found["metric"]))
    if metric is None:
        raise InputError(f"{where}: the index uses FAISS metric {found['metric']}; "
                         "irviewer ranks by inner product (or L2) on L2-normalised vectors")
    ids = None if found["ids"] is None else (int(found["ids"][0]), int(found["ids"][1]))
    return IndexFacts(str(found["kind"]), int(found["dim"]), int(found["ntotal"]), metric, ids)


def read_index_file(path: Path, name: str, dim: int, method: str) -> BuiltIndex:
    """Return the index file ``path`` (shown as ``name``) read by FAISS in its child process,
    with an address-space limit of three times the file plus :data:`HEADROOM` and
    :data:`PROBE_SECONDS`, after :func:`check_index_header`; InputError (one sentence) when
    FAISS cannot read it (corrupt, truncated, declaring more data than it holds, crashing
    the reader, too slow), when it was never trained, uses another metric than inner
    product or L2, or holds vectors of another dimension than ``dim`` (``method``'s)."""
    p = Path(path)
    check_index_header(p)
    require_faiss()
    where = f"{WHERE} {name}"
    start = time.perf_counter()
    process = FaissProcess(memory_limit(3 * p.stat().st_size + HEADROOM))
    try:
        try:
            found = process.ask("read", str(p), timeout=PROBE_SECONDS)
        except ChildFailedError as e:
            if e.kind in ("missing", "start"):
                raise _failure(e, where, "reading this index file", None) from None
            if e.kind == "timeout":
                raise InputError(f"{where}: FAISS did not finish reading the index file in "
                                 f"{PROBE_SECONDS:.0f} s; it is probably corrupt") from None
            why = {"memory": "; it declares more data than it holds",
                   "crash": "; the reader crashed"}.get(e.kind, "")
            raise InputError(f"{where}: FAISS cannot read this index file (corrupt, "
                             f"truncated or not an index{why})") from None
        facts = _facts(found, where)
        if not found["trained"]:
            raise InputError(f"{where}: the index was never trained, so it holds no "
                             "searchable vectors")
        if facts.dim != dim:
            raise InputError(f"{where}: the index holds {facts.dim}-dimensional vectors "
                             f"but {method} has {dim} dimensions")
        process.ask("limit", memory_limit())
    except BaseException:
        process.close()
        raise
    return BuiltIndex(process, time.perf_counter() - start, facts.metric == "L2", facts)


def iter_build_factory(factory: str, gallery: np.ndarray, rows: np.ndarray | None,
                       n_gallery: int) -> Generator[tuple[str, int, int], None, BuiltIndex]:
    """Build the FAISS index ``factory`` (inner product) in its child process over the
    L2-normalised gallery rows ``gallery[rows]`` (``rows`` None: the first ``n_gallery``
    rows), in that order, so that its ids are the dataset's gallery indices; yield (stage,
    done, total) while it trains and adds; return it with the seconds it took (the child's
    start included). Training uses at most :data:`TRAIN_ROWS` evenly spaced rows.
    InputError (one sentence) for a factory string that cannot fit these vectors
    (:func:`~irviewer.core.ann.factory.check_factory_fits`), that FAISS cannot parse, or an
    index it cannot train, that runs out of memory or crashes FAISS."""
    dim = int(gallery.shape[1])
    where = f"{WHERE} {factory}"
    n_train = min(n_gallery, TRAIN_ROWS)
    check_factory_fits(factory, where, dim, n_train)
    require_faiss()

    def take(idx: np.ndarray) -> np.ndarray:
        return normalise_rows(gallery[idx if rows is None else rows[idx]])

    start = time.perf_counter()
    yield (f"starting FAISS for {factory}", 0, 0)
    process = FaissProcess(memory_limit())
    doing = "building this index"
    try:
        try:
            made = yield from process.iter_ask(f"building {factory}", "factory", dim, factory)
        except ChildFailedError as e:
            if e.kind == "faiss":
                raise InputError(f"{where}: FAISS cannot build this index factory string "
                                 f"({e.text})") from None
            raise
        if not made["trained"]:
            stage = f"training {factory} on {n_train:,} gallery vectors"
            yield (stage, 0, 0)
            sample = np.linspace(0, n_gallery - 1, n_train).astype(np.int64)
            doing = f"training this index on {n_train:,} gallery vectors"
            try:
                yield from process.iter_ask(stage, "train", vectors=take(sample))
            except ChildFailedError as e:
                if e.kind == "faiss":
                    raise InputError(f"{where}: FAISS cannot train this index on "
                                     f"{n_train:,} gallery vectors ({e.text})") from None
                raise
        doing = "adding the gallery to this index"
        stage = f"adding the gallery to {factory}"
        for a in range(0, n_gallery, ADD_ROWS):
            yield (stage, a, n_gallery)
            process.send("add", vectors=take(np.arange(a, min(a + ADD_ROWS, n_gallery))))
            yield from process.iter_reply(stage)
    except ChildFailedError as e:
        process.close()
        raise _crashed(e, where, doing, process.limit) from None
    except BaseException:
        process.close()
        raise
    facts = IndexFacts(str(made["kind"]), dim, n_gallery, "inner product")
    return BuiltIndex(process, time.perf_counter() - start, False, facts,
                      tuple(process.warnings))


def _crashed(e: ChildFailedError, where: str, doing: str, limit: int | None) -> InputError:
    """Return the sentence for a build that failed in FAISS's child process."""
    if e.kind == "crash":
        return InputError(f"{where}: FAISS crashed {doing} ({e.text}); check the factory "
                          f"string against FAISS's index factory ({_FACTORY_WIKI})")
    return _failure(e, where, doing, limit)


def set_parameters(built: BuiltIndex, setting: AnnSetting, label: str) -> int | None:
    """Set ``setting``'s search parameters on the index (FAISS's ``ParameterSpace``, in the
    child) and return the width of the search beam its results come from, in results asked
    of the index (an HNSW graph's ``efSearch`` over how many results a refinement asks of
    it per result; None when the index has no beam); InputError (one sentence naming the
    setting as ``label``) for a parameter the index does not take."""
    try:
        beam = built.process.ask("set", list(setting.params))
    except ChildFailedError as e:
        if e.kind == "param":
            raise InputError(f"{WHERE} {label}: the index ({built.facts.kind}) takes no "
                             f"search parameter {e.text} (IVF indexes take nprobe, HNSW "
                             "indexes efSearch)") from None
        raise _failure(e, f"{WHERE} {label}", "setting the parameters",
                       built.process.limit) from None
    if beam["beam"] is None:
        return None
    return int(beam["beam"] / max(float(beam["factor"]), 1.0))


def warm_up(built: BuiltIndex, queries: np.ndarray) -> None:
    """Search the first query once, untimed: FAISS starts its thread pool on the first
    search, which would otherwise be counted in the first setting's time."""
    if len(queries) and built.ntotal:
        built.search(queries[:1], 1)


def iter_search(built: BuiltIndex, queries: np.ndarray, depth: int,
                label: str) -> Generator[tuple[str, int, int], None,
                                         tuple[np.ndarray, np.ndarray, float]]:
    """Search every query's top ``depth`` in blocks of :data:`SEARCH_BLOCK`, yielding
    (stage, done, total); return (ids, similarities, seconds spent in FAISS's search): ids
    are the index's (-1 padding), similarities the index's scores as inner products (L2
    distances converted), -inf padding.

    The time is ann-benchmarks' "best search time": when the whole search took under
    :data:`REPEAT_BELOW` seconds it is run again, up to :data:`RUNS` times in all, and the
    fastest run counts (a short search's time is otherwise mostly the machine's noise); the
    results are the same every run. FAISS searches on :data:`SEARCH_THREADS` thread, as
    ann-benchmarks measures (one CPU): on a shared machine FAISS's thread pool spends more
    time waiting than searching for a few queries (1.6 ms against 0.01 ms per query
    measured on the demo), so a setting's time would say more about the load than about
    the index. The times are taken in the child, around FAISS's search alone."""
    n = len(queries)
    k = int(min(depth, max(built.ntotal, 1)))
    ids = np.full((n, depth), -1, dtype=np.int64)
    sims = np.full((n, depth), -np.inf, dtype=np.float32)
    spent = 0.0
    process = built.process
    try:
        threads = process.ask("threads", SEARCH_THREADS)
        try:
            for a in range(0, n, SEARCH_BLOCK):
                yield (label, a, n)
                b = min(a + SEARCH_BLOCK, n)
                dist, found, took = process.ask("search", k, True, vectors=queries[a:b])
                spent += took
                ids[a:b, :k] = found
                sims[a:b, :k] = 1.0 - dist / 2.0 if built.l2 else dist
            best = float(process.ask("retime", k, spent, RUNS, REPEAT_BELOW))
        finally:
            with contextlib.suppress(ChildFailedError):
                process.ask("threads", threads)
    except ChildFailedError as e:
        raise _failure(e, f"{WHERE} {label.removeprefix('searching ')}", "searching",
                       process.limit) from None
    sims[ids < 0] = -np.inf
    return ids, sims, best


__all__ = ["NO_FAISS", "BuiltIndex", "IndexFacts", "check_index_header", "iter_build_factory",
           "iter_search", "read_index_file", "require_faiss", "set_parameters", "warm_up"]
