"""A Milvus collection as the ranking source: the gallery lives in the collection (one
vector field, image names in its primary key or another field), the queries' vectors come
from the descriptor file, and each query's top K is asked of the engine in batches.

The URI is Milvus's: a local path (Milvus Lite, embedded, no server to start: one machine,
the tests), or ``http://host:19530`` for a Milvus server or a distributed cluster, where a
gallery that outgrew one machine lives. A token, when the server asks for one, comes from
the environment variable :data:`TOKEN_VARIABLE`, never from the command line (where it
would stay in the shell's history and the process list): a URI with credentials
(``http://user:password@host``) is refused in a sentence that does not repeat them, and no
message, method name or session holds them (:func:`without_credentials`).

Reading never creates: a Milvus Lite database must exist, as a folder named ``*.db`` with
Milvus Lite's ``LOCK`` file and ``collections`` folder in it; a missing path, a file, or a
folder Milvus Lite did not make is refused before the client sees it (which would create or
write into it), and one that another program holds open is named as such.

Search parameters follow the URI as a FAISS SPEC's follow its index (``gallery.db:nprobe=8``,
``http://host:19530:ef=64,128``; a comma list sweeps): :mod:`irviewer.core.ann.engine_spec`
reads them and checks them against the collection's index type; :func:`iter_engine_search`
sends them.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from irviewer.core.ann.engine_spec import ENGINE_WHERE, TOKEN_VARIABLE, without_credentials
from irviewer.core.errors import InputError, install_extra

#: The sentence for a missing client.
NO_MILVUS = (f"{ENGINE_WHERE}: a vector engine needs the Milvus client, which is not "
             f"installed: {install_extra('milvus')}")
#: Queries asked of the engine per request (a step of progress, a point to cancel).
BATCH = 64
#: Seconds a connection or a request may take before the engine counts as unreachable.
TIMEOUT = 20.0
#: The most results Milvus returns per query (its ``topk`` limit).
MAX_TOPK = 16_384
_VECTOR_TYPES = {"FLOAT_VECTOR", "FLOAT16_VECTOR", "BFLOAT16_VECTOR"}
_NAME_TYPES = {"VARCHAR", "INT64"}


@dataclass(frozen=True)
class Collection:
    """What irviewer needs of a collection: its name, the vector field and its dimension,
    the field holding image names, the metric and index type of the vector index, and how
    many entities it holds."""

    name: str
    vector_field: str
    dim: int
    names_field: str
    metric: str
    index_type: str
    n_rows: int


def _client_module() -> Any:
    try:
        import pymilvus
    except ImportError:
        raise InputError(NO_MILVUS) from None
    return pymilvus


@contextmanager
def _quiet() -> Iterator[None]:
    """Silence pymilvus's and Milvus Lite's own error logs while a call runs (their
    failures become one sentence here; Milvus Lite logs a traceback when it cannot open a
    database)."""
    loggers = [logging.getLogger(name) for name in ("pymilvus", "milvus_lite")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def is_local(uri: str) -> bool:
    """Return True when ``uri`` names a Milvus Lite file rather than a server."""
    return "://" not in uri


def check_local(uri: str) -> Path:
    """Return the Milvus Lite database ``uri`` names; InputError (one sentence) when its
    folder does not exist, it does not exist, it is not named ``*.db``, or it is a file or
    a folder Milvus Lite did not make. Nothing is created or written."""
    path = Path(uri).expanduser()
    parent = path.resolve().parent
    if not parent.is_dir():
        raise InputError(f"{ENGINE_WHERE} {uri}: the folder {parent} does not exist")
    if path.suffix != ".db":
        raise InputError(f"{ENGINE_WHERE} {uri}: a Milvus Lite database is a folder named "
                         "*.db (gallery.db); a server's URI begins with http://")
    if not path.exists():
        raise InputError(f"{ENGINE_WHERE} {uri}: there is no Milvus Lite database there; "
                         "irviewer reads a vector engine and never creates one, so give the "
                         "path of one that holds the gallery")
    if not path.is_dir():
        raise InputError(f"{ENGINE_WHERE} {uri}: a file, not a Milvus Lite database (Milvus "
                         "Lite keeps a database in a folder named *.db); give the path of "
                         "the database that holds the gallery")
    if not ((path / "LOCK").is_file() and (path / "collections").is_dir()):
        raise InputError(f"{ENGINE_WHERE} {uri}: a folder Milvus Lite did not make (it has "
                         "no LOCK file and collections folder); irviewer writes nothing into "
                         "it: give the path of the database that holds the gallery")
    return path


def lock_holder(path: Path) -> str | None:
    """Return who else holds the lock of the Milvus Lite database ``path`` ("process 4242
    (python3)", or "another program" when the process cannot be named), or None when it is
    free, this process holds it (the client's embedded server, kept for the process's
    life), or the platform cannot say."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return None
    if _served_here(path):
        return None
    lock = path / "LOCK"
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            held = True
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)
            held = False
        inode = os.fstat(fd).st_ino
    finally:
        os.close(fd)
    if not held:
        return None
    pid = _locking_pid(inode)
    if pid == os.getpid():
        return None
    if pid is None:
        return "another program"
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8") as f:
            return f"process {pid} ({f.read().strip()})"
    except OSError:
        return f"process {pid}"


def _served_here(path: Path) -> bool:
    """Return True when this process's Milvus Lite serves the database ``path`` (the
    client starts one embedded server per database and keeps it until the process ends)."""
    manager = sys.modules.get("milvus_lite.server_manager")  # loaded once one is served
    instance = getattr(manager, "server_manager_instance", None)
    return os.path.abspath(path) in getattr(instance, "_servers", {})


def _locking_pid(inode: int) -> int | None:
    """Return the process holding a lock on the file with ``inode`` (Linux's /proc/locks),
    or None when it cannot be told."""
    try:
        with open("/proc/locks", encoding="ascii") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) < 6 or "->" in fields:
            continue
        try:
            pid, ino = int(fields[4]), int(fields[5].rsplit(":", 1)[-1])
        except ValueError:
            continue
        if ino == inode:
            return pid
    return None


def connect(uri: str, timeout: float = TIMEOUT) -> Any:
    """Return a ``MilvusClient`` for ``uri`` (a Milvus Lite database, :func:`check_local`,
    or a server's ``http://host:port``), the token read from :data:`TOKEN_VARIABLE`;
    InputError (one sentence) when the client is missing, the database is not one or is
    held by another program, or the server cannot be reached within ``timeout`` seconds."""
    pymilvus = _client_module()
    shown = without_credentials(uri)
    local = check_local(uri) if is_local(uri) else None
    token = os.environ.get(TOKEN_VARIABLE, "")
    try:
        with _quiet():
            return pymilvus.MilvusClient(uri=uri, token=token, timeout=timeout)
    except Exception as e:  # pymilvus raises its own and grpc's errors
        holder = None if local is None else lock_holder(local)
        if holder is not None:
            raise InputError(f"{ENGINE_WHERE} {shown}: the Milvus Lite database is open in "
                             f"{holder}, and Milvus Lite lets one program use a database at "
                             "a time; close that program (or its MilvusClient) and try again, "
                             "or serve it with Milvus Lite's server command and give its "
                             "http:// address") from None
        raise InputError(f"{ENGINE_WHERE} {shown}: the engine cannot be reached "
                         f"({_reason(e)})") from None


def describe(client: Any, uri: str, collection: str, names_field: str | None,
             dim: int) -> Collection:
    """Return the :class:`Collection` ``collection`` at ``uri``, loaded for search;
    InputError (one sentence) when it does not exist, has no single float vector field,
    its vectors' dimension is not ``dim``, the names field is missing or not text or
    integers, or it has no vector index."""
    try:
        with _quiet():
            if not client.has_collection(collection):
                held = sorted(client.list_collections())
                raise InputError(f"{ENGINE_WHERE} {uri}: there is no collection {collection!r}"
                                 + (f"; it holds {', '.join(held[:8])}" if held else
                                    "; it holds none"))
            info = client.describe_collection(collection)
    except InputError:
        raise
    except Exception as e:
        raise InputError(f"{ENGINE_WHERE} {uri}: the engine did not describe {collection!r} "
                         f"({_reason(e)})") from None
    fields = info.get("fields", [])
    vectors = [f for f in fields if _type_name(f) in _VECTOR_TYPES]
    if len(vectors) != 1:
        raise InputError(f"{ENGINE_WHERE} {collection}: irviewer ranks by one float vector "
                         f"field, and the collection has {len(vectors)}")
    vector = vectors[0]
    found_dim = int(vector.get("params", {}).get("dim", 0))
    if found_dim != dim:
        raise InputError(f"{ENGINE_WHERE} {collection}: its vectors have {found_dim} "
                         f"dimensions but the descriptor file's queries have {dim}")
    by_name = {f["name"]: f for f in fields}
    if names_field is None:
        primary = next((f for f in fields if f.get("is_primary")), None)
        if primary is None:  # pragma: no cover - Milvus requires a primary key
            raise InputError(f"{ENGINE_WHERE} {collection}: no primary key to name images")
        names = primary
    elif names_field not in by_name:
        raise InputError(f"{ENGINE_WHERE} {collection}: there is no field {names_field} "
                         f"to read image names from; it has {', '.join(by_name)}")
    else:
        names = by_name[names_field]
    if _type_name(names) not in _NAME_TYPES:
        raise InputError(f"{ENGINE_WHERE} {collection}: the field {names['name']} holds "
                         f"{_type_name(names).lower()} values, not image names")
    metric, index_type = _index_of(client, collection, vector["name"])
    try:
        with _quiet():
            client.load_collection(collection)
            rows = int(client.get_collection_stats(collection).get("row_count", 0))
    except Exception as e:
        raise InputError(f"{ENGINE_WHERE} {collection}: the engine cannot load the "
                         f"collection ({_reason(e)})") from None
    return Collection(collection, vector["name"], dim, names["name"], metric, index_type,
                      rows)


def _index_of(client: Any, collection: str, field: str) -> tuple[str, str]:
    try:
        with _quiet():
            for index_name in client.list_indexes(collection):
                about = client.describe_index(collection, index_name)
                if about.get("field_name", index_name) == field:
                    return str(about.get("metric_type", "IP")), str(about.get("index_type", ""))
    except Exception as e:
        raise InputError(f"{ENGINE_WHERE} {collection}: the engine did not describe its "
                         f"index ({_reason(e)})") from None
    raise InputError(f"{ENGINE_WHERE} {collection}: the vector field {field} has no index; "
                     "create one (FLAT ranks exactly) before searching")


def iter_engine_search(client: Any, found: Collection, queries: np.ndarray, depth: int,
                       label: str, batch: int = BATCH, params: dict[str, Any] | None = None
                       ) -> Generator[tuple[str, int, int], None,
                                      tuple[list[list[str]], np.ndarray, float]]:
    """Ask the engine for every query's top ``depth`` in batches of ``batch`` queries, with
    the search parameters ``params`` (:func:`search_params`; None or empty: the index's
    defaults), yielding (stage, done, total); return (names per query in returned order,
    similarities (n_queries, depth), -inf padding; seconds inside the client's search
    calls). L2 distances (Milvus returns them squared) become similarities as 1 - d / 2 on
    unit vectors; inner product and cosine are similarities already."""
    n = len(queries)
    k = int(min(depth, MAX_TOPK, max(found.n_rows, 1)))
    names: list[list[str]] = []
    sims = np.full((n, depth), -np.inf, dtype=np.float32)
    spent = 0.0
    request: dict[str, Any] = {"metric_type": found.metric}
    if params:
        request["params"] = dict(params)
    for a in range(0, n, batch):
        yield (label, a, n)
        b = min(a + batch, n)
        start = time.perf_counter()
        try:
            with _quiet():
                result = client.search(found.name, data=queries[a:b].tolist(), limit=k,
                                       output_fields=[found.names_field],
                                       anns_field=found.vector_field,
                                       search_params=request)
        except Exception as e:
            raise InputError(f"{ENGINE_WHERE} {found.name}: the engine's search failed "
                             f"({_reason(e)})") from None
        spent += time.perf_counter() - start
        for i, hits in enumerate(result):
            row = [str(h["entity"].get(found.names_field, h.get("id"))) for h in hits]
            dist = np.array([float(h["distance"]) for h in hits], dtype=np.float32)
            names.append(row)
            sims[a + i, :len(row)] = 1.0 - dist / 2.0 if found.metric.upper() == "L2" \
                else dist
    return names, sims, spent


def _type_name(field: dict) -> str:
    kind = field.get("type")
    return str(getattr(kind, "name", kind)).upper()


def _reason(e: BaseException) -> str:
    message = getattr(e, "message", None) or str(e) or type(e).__name__
    return str(message).strip().splitlines()[0][:160]


__all__ = ["ENGINE_WHERE", "NO_MILVUS", "TOKEN_VARIABLE", "Collection", "check_local", "connect",
           "describe", "is_local", "iter_engine_search", "lock_holder"]
