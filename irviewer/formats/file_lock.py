"""A lock file that keeps two writers of one file from interleaving (two windows, two
annotators on a shared folder): ``<file>.lock``, created exclusively, holding who took it
(process id, host, login name, window, time) and a token that is this taking's alone.

A lock whose process is gone (same host) or that is older than :data:`STALE_AFTER` seconds
is a crashed writer's and is taken over. Taking over is atomic: the stale lock is renamed
aside under a name of this writer's own and removed only when the file renamed is the very
lock judged stale (its token); were it another writer's fresh lock, it is put back. Both
that and releasing (which removes the lock only when it is still this writer's, by its
token) run under a short guard (``<file>.lock.guard``, an ``flock`` the system releases
with its process, held for the few microseconds of the check and the rename), so no two
writers take over or release at once: between a check and its rename nobody else renames.
Where the system offers no ``flock`` (Windows) the token check still keeps a writer from
removing a lock that is not the one it judged.
"""

from __future__ import annotations

import getpass
import json
import os
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from irviewer.core.errors import InputError

try:
    import fcntl
except ImportError:  # Windows: no flock; the token check alone
    fcntl = None  # type: ignore[assignment]

SUFFIX = ".lock"
GUARD = ".guard"
#: Seconds after which a lock is a crashed writer's whatever it says (a write takes far less).
STALE_AFTER = 60.0
#: Seconds a writer waits for another one's lock before giving up (0: try once).
WAIT = 10.0


class LockHeldError(InputError):
    """Another writer holds the lock: ``holder`` says who in words ("anna's window 3f2a on
    lab-2 (process 123)"), ``lock`` is the lock file. A later try may succeed."""

    def __init__(self, message: str, holder: str, lock: Path) -> None:
        super().__init__(message)
        self.holder, self.lock = holder, lock


def lock_path(path: Path) -> Path:
    """Return the lock file of ``path``: ``<path>.lock`` beside it."""
    path = Path(path)
    return path.with_name(path.name + SUFFIX)


def _login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""


@contextmanager
def locked(path: Path, wait: float = WAIT, window: str = "") -> Iterator[None]:
    """Hold the lock of ``path`` while the block runs (waiting up to ``wait`` seconds for
    another writer, 0: one try; a stale lock is taken over atomically); ``window`` names the
    writer's window in the lock. :class:`LockHeldError` in one sentence when another writer
    holds it longer; InputError when the lock cannot be created. On leaving, the lock is
    removed only if it is still this writer's."""
    lock = lock_path(path)
    token = uuid.uuid4().hex
    deadline = time.monotonic() + wait
    while True:
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            judged = _identity(lock)
            if judged is not None and is_stale(lock, judged[1]):
                take_over(lock, judged)
                continue
            if time.monotonic() >= deadline:
                who = holder(lock, judged[1] if judged is not None else None)
                raise LockHeldError(f"{Path(path).name} is being written by {who}; try again, or "
                               f"delete {lock} if that writer is gone", who, lock) from None
            time.sleep(0.02)
            continue
        except OSError as e:
            raise InputError(f"cannot lock {path} for writing ({e.strerror})") from None
        break
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            json.dump({"pid": os.getpid(), "host": socket.gethostname(), "user": _login(),
                       "window": window, "time": time.time(), "token": token}, stream)
        yield
    finally:
        release(lock, token)


Identity = tuple[tuple[int, int, int], dict[str, object] | None]


def _identity(lock: Path) -> Identity | None:
    """Return what tells one lock file from another: (its device, inode and modification
    time, its content), None when there is none."""
    try:
        st = lock.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns), _owner(lock)


def take_over(lock: Path, judged: Identity) -> bool:
    """Remove the stale ``lock`` that was ``judged`` (:func:`_identity`), atomically: under
    the guard, rename it aside under a name of this writer's own, and remove what was
    renamed when it is the very file judged; else put it back. Return True when the stale
    lock is gone."""
    with _guard(lock):
        if _identity(lock) != judged:  # replaced since it was judged: not that lock any more
            return False
        aside = lock.with_name(f"{lock.name}.{uuid.uuid4().hex}.stale")
        try:
            os.rename(lock, aside)
        except FileNotFoundError:
            return True
        except OSError:
            return False
        if _identity(aside) == judged:
            _remove(aside)
            return True
        _put_back(aside, lock)
        return False


def release(lock: Path, token: str) -> None:
    """Remove ``lock`` when it is still the one taken with ``token`` (a writer taken over as
    stale leaves the new holder's lock alone)."""
    with _guard(lock):
        owner = _owner(lock)
        if owner is None or owner.get("token") != token:
            return
        aside = lock.with_name(f"{lock.name}.{token}.done")
        try:
            os.rename(lock, aside)
        except OSError:
            return
        owner = _owner(aside)
        if owner is not None and owner.get("token") == token:
            _remove(aside)
        else:
            _put_back(aside, lock)


def _put_back(aside: Path, lock: Path) -> None:
    """Put the lock renamed ``aside`` back in place, unless a lock is there again."""
    with suppress(OSError):
        os.link(aside, lock)
    _remove(aside)


@contextmanager
def _guard(lock: Path) -> Iterator[None]:
    """Hold ``<lock>.guard`` (an exclusive ``flock``, released by the system if this process
    ends) while the block runs; the guard file is removed after. Without ``flock`` (Windows,
    or a file system that has none), the block runs unguarded."""
    if fcntl is None:
        yield
        return
    guard = lock.with_name(lock.name + GUARD)
    while True:
        try:
            fd = os.open(guard, os.O_CREAT | os.O_RDWR, 0o644)
        except OSError:
            yield
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            os.close(fd)
            yield
            return
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(guard))
        except OSError:
            same = False
        if same:
            break
        os.close(fd)  # removed by its holder while this writer waited: take the new one
    try:
        yield
    finally:
        with suppress(OSError):
            os.unlink(guard)
        os.close(fd)


def _owner(lock: Path) -> dict[str, object] | None:
    """Return what the lock file says about its writer (None: unreadable, or being
    written this instant)."""
    try:
        owner = json.loads(lock.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return owner if isinstance(owner, dict) else None


def is_stale(lock: Path, owner: dict[str, object] | None = None) -> bool:
    """Return True when ``lock`` was left by a writer that is gone: its process no longer
    runs on this host, or it is older than :data:`STALE_AFTER` seconds. ``owner``: its
    content as read (read here when None)."""
    try:
        age = time.time() - lock.stat().st_mtime
    except OSError:
        return False
    if age > STALE_AFTER:
        return True
    owner = owner if owner is not None else _owner(lock)
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


def holder(lock: Path, owner: dict[str, object] | None = None) -> str:
    """Return who holds ``lock`` in words ("anna's window 3f2a on lab-2 (process 123)",
    "process 123 on host-a" for a lock without a login name)."""
    owner = owner if owner is not None else _owner(lock)
    if owner is None:
        return "another writer"
    where = f"process {owner.get('pid')} on {owner.get('host')}"
    user, window = owner.get("user"), owner.get("window")
    if not user:
        return where
    what = f"window {window}" if window else "irviewer"
    return f"{user}'s {what} on {owner.get('host')} (process {owner.get('pid')})"


def _remove(lock: Path) -> None:
    with suppress(FileNotFoundError):
        lock.unlink()
