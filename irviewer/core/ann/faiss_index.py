"""FAISS indexes as ranking sources: an index built from a factory string over a descriptor
file's gallery rows, or an index file read safely; search parameters set through FAISS's
``ParameterSpace``; each query's top K found in blocks.

Reading an index file is where FAISS can be hurt: its own documentation warns that a faulty
or malicious file can exhaust memory or crash the process (``read_index`` trusts the sizes
the file declares). So a file is first checked here without FAISS (it exists, is a file,
is long enough, begins with a four-letter FAISS header), then read once by FAISS in a child
process with a memory limit and a time limit (:func:`probe_index_file`); only a file that
child read whole, of the right dimension and number of vectors, is read in this process.
A crash, a memory exhaustion or a hang costs the child, and the user gets one sentence.
(docs/ann.md, "Index files and safety".)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from irviewer.core.ann.spec import WHERE, AnnSetting
from irviewer.core.descriptors import normalise_rows
from irviewer.core.errors import InputError, install_extra

#: The sentence for a missing FAISS.
NO_FAISS = (f"{WHERE}: approximate indexes need FAISS, which is not installed: "
            f"{install_extra('ann')}")
#: Seconds the child process may take to read an index file.
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


def faiss_module() -> ModuleType:
    """Return the ``faiss`` module; InputError (one sentence naming the extra) when FAISS is
    not installed."""
    try:
        import faiss
    except ImportError:
        raise InputError(NO_FAISS) from None
    return faiss


@dataclass(frozen=True)
class IndexFacts:
    """What an index file holds, as FAISS read it: its class, dimension, number of vectors
    and metric (``"inner product"`` or ``"L2"``)."""

    kind: str
    dim: int
    ntotal: int
    metric: str


def check_index_header(path: Path) -> None:
    """Return None when ``path`` may be a FAISS index file; InputError (one sentence) when it
    is missing, a folder, empty, shorter than a header, or does not begin with a FAISS
    index header (four letters, then a dimension)."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{WHERE} {p}: no such index file")
    if p.is_dir():
        raise InputError(f"{WHERE} {p}: is a folder, not a FAISS index file")
    size = p.stat().st_size
    if size < _HEADER_BYTES:
        raise InputError(f"{WHERE} {p.name}: {size} bytes, too short to be a FAISS index file "
                         "(truncated or another kind of file)")
    with p.open("rb") as f:
        head = f.read(_HEADER_BYTES)
    fourcc, dim = head[:4], int.from_bytes(head[4:8], "little", signed=True)
    if not all(48 <= c < 123 for c in fourcc) or not (0 < dim < 1 << 20):
        raise InputError(f"{WHERE} {p.name}: not a FAISS index file (it does not begin with "
                         "a FAISS index header)")


_PROBE = """
import json, resource, sys
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import faiss
index = faiss.read_index(sys.argv[1])
base = faiss.downcast_index(index)
print(json.dumps({"kind": type(base).__name__, "dim": int(index.d),
                  "ntotal": int(index.ntotal), "metric": int(index.metric_type),
                  "trained": bool(index.is_trained)}))
"""


def probe_index_file(path: Path, timeout: float = PROBE_SECONDS) -> IndexFacts:
    """Return what the index file ``path`` holds, read by FAISS in a child process with a
    memory limit (three times the file plus 3 GB of address space) and ``timeout`` seconds;
    InputError (one sentence) when the child fails, crashes, runs out of memory or time,
    or the index's metric is neither inner product nor L2."""
    p = Path(path)
    check_index_header(p)
    faiss_module()
    limit = 3 * p.stat().st_size + 3 * 2**30
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    try:
        done = subprocess.run([sys.executable, "-c", _PROBE, str(p), str(limit)],
                              capture_output=True, text=True, timeout=timeout, env=env,
                              check=False)
    except subprocess.TimeoutExpired:
        raise InputError(f"{WHERE} {p.name}: FAISS did not finish reading the index file in "
                         f"{timeout:.0f} s; it is probably corrupt") from None
    if done.returncode != 0:
        why = _faiss_reason(done.stderr)
        raise InputError(f"{WHERE} {p.name}: FAISS cannot read this index file (corrupt, "
                         f"truncated or not an index{why})")
    try:
        facts = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise InputError(f"{WHERE} {p.name}: FAISS cannot read this index file") from None
    metric = {0: "inner product", 1: "L2"}.get(int(facts["metric"]))
    if metric is None:
        raise InputError(f"{WHERE} {p.name}: the index uses FAISS metric {facts['metric']}; "
                         "irviewer ranks by inner product (or L2) on L2-normalised vectors")
    if not facts["trained"]:
        raise InputError(f"{WHERE} {p.name}: the index was never trained, so it holds no "
                         "searchable vectors")
    return IndexFacts(str(facts["kind"]), int(facts["dim"]), int(facts["ntotal"]), metric)


def _faiss_reason(stderr: str) -> str:
    """Return what a failed read says beyond "corrupt or truncated": that the file declares
    more data than the memory limit allows, or that the reader crashed."""
    if "MemoryError" in stderr or "bad_alloc" in stderr:
        return "; it declares more data than it holds"
    if not stderr.strip():
        return "; the reader crashed"
    return ""


def check_index_fits(facts: IndexFacts, name: str, dim: int, n_rows: tuple[int, ...],
                     method: str) -> None:
    """Return None when an index file's vectors can be the descriptor file's gallery rows:
    the same dimension and as many vectors as one of ``n_rows`` (the file's gallery rows;
    the dataset's gallery when it is the file's first rows); InputError (one sentence)
    otherwise."""
    if facts.dim != dim:
        raise InputError(f"{WHERE} {name}: the index holds {facts.dim}-dimensional vectors "
                         f"but {method} has {dim} dimensions")
    if facts.ntotal not in n_rows:
        counts = " or ".join(f"{n:,}" for n in dict.fromkeys(n_rows))
        raise InputError(f"{WHERE} {name}: the index holds {facts.ntotal:,} vectors but "
                         f"{method} has {counts} gallery rows; build it over those rows, in "
                         "the file's order")


@dataclass
class BuiltIndex:
    """A FAISS index ready to search: the index, the seconds it took to build (or read),
    and how its result scores become similarities (``l2``: squared L2 distances on unit
    vectors, similarity = 1 - d / 2)."""

    index: Any
    build_s: float
    l2: bool
    facts: IndexFacts


def read_index_file(path: Path, name: str, dim: int, n_rows: tuple[int, ...],
                    method: str) -> BuiltIndex:
    """Return the index file ``path`` read (after :func:`probe_index_file` and
    :func:`check_index_fits`), with the seconds reading took."""
    faiss = faiss_module()
    facts = probe_index_file(path)
    check_index_fits(facts, name, dim, n_rows, method)
    start = time.perf_counter()
    try:
        index = faiss.read_index(str(path))
    except (RuntimeError, MemoryError) as e:
        raise InputError(f"{WHERE} {name}: FAISS cannot read this index file "
                         f"({_first_line(e)})") from None
    return BuiltIndex(index, time.perf_counter() - start, facts.metric == "L2", facts)


def iter_build_factory(factory: str, gallery: np.ndarray, rows: np.ndarray | None,
                       n_gallery: int) -> Generator[tuple[str, int, int], None, BuiltIndex]:
    """Build the FAISS index ``factory`` (inner product) over the L2-normalised gallery
    rows ``gallery[rows]`` (``rows`` None: the first ``n_gallery`` rows), in that order, so
    that its ids are the dataset's gallery indices; yield (stage, done, total) while it
    trains and adds; return it with the seconds it took. Training uses at most
    :data:`TRAIN_ROWS` evenly spaced rows. InputError (one sentence) for a factory string
    FAISS cannot parse or an index it cannot train on these rows."""
    faiss = faiss_module()
    dim = int(gallery.shape[1])
    start = time.perf_counter()
    try:
        index = faiss.index_factory(dim, factory, faiss.METRIC_INNER_PRODUCT)
    except RuntimeError as e:
        raise InputError(f"{WHERE} {factory}: FAISS cannot build this index factory string "
                         f"({_first_line(e)})") from None

    def take(idx: np.ndarray) -> np.ndarray:
        return normalise_rows(gallery[idx if rows is None else rows[idx]])

    if not index.is_trained:
        n_train = min(n_gallery, TRAIN_ROWS)
        yield (f"training {factory} on {n_train:,} gallery vectors", 0, 0)
        sample = np.linspace(0, n_gallery - 1, n_train).astype(np.int64)
        try:
            index.train(take(sample))
        except RuntimeError as e:
            raise InputError(f"{WHERE} {factory}: FAISS cannot train this index on "
                             f"{n_train:,} gallery vectors ({_first_line(e)})") from None
    for a in range(0, n_gallery, ADD_ROWS):
        b = min(a + ADD_ROWS, n_gallery)
        yield (f"adding the gallery to {factory}", a, n_gallery)
        index.add(take(np.arange(a, b)))
    facts = IndexFacts(type(index).__name__, dim, int(index.ntotal), "inner product")
    return BuiltIndex(index, time.perf_counter() - start, False, facts)


def set_parameters(built: BuiltIndex, setting: AnnSetting, label: str) -> None:
    """Set ``setting``'s search parameters on the index (FAISS's ``ParameterSpace``);
    InputError (one sentence naming the setting as ``label``) for a parameter the index does
    not take."""
    faiss = faiss_module()
    space = faiss.ParameterSpace()
    for name, value in setting.params:
        try:
            space.set_index_parameter(built.index, name, float(value))
        except RuntimeError:
            raise InputError(f"{WHERE} {label}: the index ({built.facts.kind}) takes no "
                             f"search parameter {name} (IVF indexes take nprobe, HNSW "
                             "indexes efSearch)") from None


def warm_up(built: BuiltIndex, queries: np.ndarray) -> None:
    """Search the first query once, untimed: FAISS starts its thread pool on the first
    search, which would otherwise be counted in the first setting's time."""
    if len(queries) and built.index.ntotal:
        built.index.search(np.ascontiguousarray(queries[:1], dtype=np.float32), 1)


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
    the index."""
    faiss = faiss_module()
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(SEARCH_THREADS)
    try:
        return (yield from _iter_search(built, queries, depth, label))
    finally:
        faiss.omp_set_num_threads(threads)


def _iter_search(built: BuiltIndex, queries: np.ndarray, depth: int,
                 label: str) -> Generator[tuple[str, int, int], None,
                                          tuple[np.ndarray, np.ndarray, float]]:
    n = len(queries)
    k = int(min(depth, max(built.index.ntotal, 1)))
    ids = np.full((n, depth), -1, dtype=np.int64)
    sims = np.full((n, depth), -np.inf, dtype=np.float32)
    spent = 0.0
    q32 = np.ascontiguousarray(queries, dtype=np.float32)
    for a in range(0, n, SEARCH_BLOCK):
        yield (label, a, n)
        b = min(a + SEARCH_BLOCK, n)
        start = time.perf_counter()
        dist, found = built.index.search(q32[a:b], k)
        spent += time.perf_counter() - start
        ids[a:b, :k] = found
        sims[a:b, :k] = 1.0 - dist / 2.0 if built.l2 else dist
    best, total, runs = spent, spent, 1
    while total < REPEAT_BELOW and runs < RUNS:
        start = time.perf_counter()
        for a in range(0, n, SEARCH_BLOCK):
            built.index.search(q32[a:a + SEARCH_BLOCK], k)
        took = time.perf_counter() - start
        best, total, runs = min(best, took), total + took, runs + 1
    sims[ids < 0] = -np.inf
    return ids, sims, best


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if "Error in" in text and ": " in text:
        text = text.rsplit(": ", 1)[-1]
    return text[:160]


__all__ = ["NO_FAISS", "BuiltIndex", "IndexFacts", "check_index_fits", "check_index_header",
           "faiss_module", "iter_build_factory", "iter_search", "probe_index_file",
           "read_index_file", "set_parameters", "warm_up"]
