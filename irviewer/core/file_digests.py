"""The sha256 of the files a report names, computed on another thread while the work goes on.

A report identifies each input file by the sha256 of its bytes. Hashing a 2048-d
Market-1501 descriptor file (190 MB) takes about 0.3 s of one core; hashlib releases the GIL
on large buffers, so the hash runs beside the reading, the ranking and the scoring: it is
started as soon as the file is known (:func:`prefetch_sha256`, :func:`file_digest`) and
waited for only where its text is needed, when the report is written (:func:`digest_hex`).
A file is hashed through a memory map, 8 MiB at a time (no copy of its bytes), once per
version of the file (its path, size, modification time and inode).
"""

from __future__ import annotations

import hashlib
import mmap
import os
import threading
from concurrent.futures import Future
from pathlib import Path

from irviewer.core.errors import InputError

_HASH_BLOCK = 8 * 2**20

_DIGESTS: dict[tuple[str, int, int, int], Future[str]] = {}
_DIGESTS_LOCK = threading.Lock()


def file_sha256(path: Path) -> str:
    """Return the hex sha256 of a file's bytes (for a folder: of every file under it, in path
    order), computed now unless :func:`prefetch_sha256` or :func:`file_digest` started it
    for the same version of the file; errors reading the file are raised here either way."""
    p = Path(path)
    if p.is_dir():
        h = hashlib.sha256()
        for f in sorted(f for f in p.rglob("*") if f.is_file()):
            _hash_into(h, f)
        return h.hexdigest()
    return _digest(p, background=False).result()


def file_digest(path: Path) -> Future[str]:
    """Return the future hex sha256 of ``path``'s bytes: the one started for this version of
    the file, else one started now on another thread (a folder's is computed now). OSError
    here when the file cannot be found; an error reading it is raised by
    :func:`digest_hex`."""
    p = Path(path)
    if p.is_dir():
        return ready_digest(file_sha256(p))
    return _digest(p, background=True)


def prefetch_sha256(path: Path) -> None:
    """Start hashing the file ``path`` on another thread, so that a later
    :func:`file_sha256` or :func:`file_digest` of it finds the digest started; nothing for
    a folder or a missing file (whoever uses the file reports that)."""
    p = Path(path)
    try:
        if p.is_file():
            _digest(p, background=True)
    except OSError:
        pass


def ready_digest(text: str) -> Future[str]:
    """Return a future digest already known to be ``text`` (data without a file: "")."""
    future: Future[str] = Future()
    future.set_result(text)
    return future


def digest_hex(digest: Future[str], path: Path) -> str:
    """Return the hex text of ``digest``, waiting for its thread; InputError naming the file
    ``path`` when it could not be read to the end."""
    try:
        return digest.result()
    except OSError as e:
        raise InputError(f"{Path(path).name}: cannot be read to compute its sha256 "
                         f"({e.strerror or e})") from None


def _digest(p: Path, background: bool) -> Future[str]:
    """Return the future digest of file ``p``, started now (on a thread when
    ``background``) unless one for the same file and version is known."""
    st = p.stat()
    key = (str(p.resolve()), st.st_size, st.st_mtime_ns, st.st_ino)
    with _DIGESTS_LOCK:
        future = _DIGESTS.get(key)
        start = future is None
        if future is None:
            future = _DIGESTS[key] = Future()

    def run() -> None:
        try:
            h = hashlib.sha256()
            _hash_into(h, p)
            future.set_result(h.hexdigest())
        except BaseException as e:  # handed to whoever asks for the digest
            with _DIGESTS_LOCK:
                _DIGESTS.pop(key, None)
            future.set_exception(e)

    if start:
        if background:
            threading.Thread(target=run, name="sha256", daemon=True).start()
        else:
            run()
    return future


def _hash_into(h: hashlib._Hash, path: Path) -> None:
    """Add the bytes of file ``path`` to ``h`` (memory-mapped, 8 MiB at a time)."""
    with path.open("rb") as stream:
        if os.fstat(stream.fileno()).st_size == 0:
            return
        with mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            view = memoryview(mapped)
            try:
                for start in range(0, len(view), _HASH_BLOCK):
                    h.update(view[start:start + _HASH_BLOCK])
            finally:
                view.release()


__all__ = ["digest_hex", "file_digest", "file_sha256", "prefetch_sha256", "ready_digest"]
