"""A lock file that keeps two writers of one file from interleaving (two windows, two
annotators on a shared folder): ``<file>.lock`` created exclusively, holding who took it
(process id, host, time). A lock whose process is gone (same host) or that is older than
:data:`STALE_AFTER` seconds is a crashed writer's and is taken over."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from irviewer.core.errors import InputError

SUFFIX = ".lock"
#: Seconds after which a lock is a crashed writer's whatever it says (a write takes far less).
STALE_AFTER = 60.0
#: Seconds a writer waits for another one's lock before giving up.
WAIT = 10.0


def lock_path(path: Path) -> Path:
    """Return the lock file of ``path``: ``<path>.lock`` beside it."""
    path = Path(path)
    return path.with_name(path.name + SUFFIX)


@contextmanager
def locked(path: Path, wait: float = WAIT) -> Iterator[None]:
    """Hold the lock of ``path`` while the block runs (waiting up to ``wait`` seconds for
    another writer; a stale lock is taken over). InputError in one sentence when another
    writer holds it longer, or the lock cannot be created."""
    lock = lock_path(path)
    deadline = time.monotonic() + wait
    while True:
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            if is_stale(lock):
                _remove(lock)
                continue
            if time.monotonic() > deadline:
                raise InputError(f"{Path(path).name} is being written by {holder(lock)}; "
                                 f"try again, or delete {lock} if that writer is gone"
                                 ) from None
            time.sleep(0.02)
            continue
        except OSError as e:
            raise InputError(f"cannot lock {path} for writing ({e.strerror})") from None
        break
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            json.dump({"pid": os.getpid(), "host": socket.gethostname(),
                       "time": time.time()}, stream)
        yield
    finally:
        _remove(lock)


def _owner(lock: Path) -> dict[str, object] | None:
    """Return what the lock file says about its writer (None: unreadable, or being
    written this instant)."""
    try:
        owner = json.loads(lock.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return owner if isinstance(owner, dict) else None


def is_stale(lock: Path) -> bool:
    """Return True when ``lock`` was left by a writer that is gone: its process no longer
    runs on this host, or it is older than :data:`STALE_AFTER` seconds."""
    try:
        age = time.time() - lock.stat().st_mtime
    except OSError:
        return False
    if age > STALE_AFTER:
        return True
    owner = _owner(lock)
    if owner is None or owner.get("host") != socket.gethostname():
        return False
    pid = owner.get("pid")
    if not isinstance(pid, int) or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def holder(lock: Path) -> str:
    """Return who holds ``lock`` in words ("process 123 on host-a")."""
    owner = _owner(lock)
    if owner is None:
        return "another writer"
    return f"process {owner.get('pid')} on {owner.get('host')}"


def _remove(lock: Path) -> None:
    with suppress(FileNotFoundError):
        lock.unlink()
