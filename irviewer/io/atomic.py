"""Atomic file writes, as a careful editor writes: a temporary file beside the target, its
data flushed to the disk, then a rename, then the folder flushed.

A reader never sees a half-written file, and a crash or a power cut mid-write leaves the
old file intact (the data reach the disk before the rename makes them the file, and the
rename reaches it before the write is reported done). Permissions are those the user
expects of a new file: a new file follows the umask (0644 under umask 022), as ``open``
would create it, so a corrected ground-truth folder, a session or a figure made for a group
is readable by that group; a replaced file keeps its mode, and its owner and group where the
user may set them. A symbolic link stays a link: the file it points to is replaced (the
temporary file is made beside that file, so the rename stays on one file system), as
``open(path, "w")`` would write through it. Used for every file irviewer writes (reports,
exports, sessions, label corrections); a writer that wants a path (Qt's image writers) gets
one from :func:`atomic_path`.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from irviewer.core.errors import InputError

#: Mode a new file is created with before the umask applies (what ``open(path, "w")`` uses).
NEW_FILE_MODE = 0o666


@contextlib.contextmanager
def atomic_open(path: Path, newline: str | None = None) -> Iterator[IO[str]]:
    """Yield a UTF-8 text stream whose content replaces ``path`` only if the block succeeds.

    InputError with one sentence when the folder does not exist or cannot be written.
    """
    with _replacing(path, "w", encoding="utf-8", newline=newline) as stream:
        yield stream


@contextlib.contextmanager
def atomic_binary(path: Path) -> Iterator[IO[bytes]]:
    """Yield a binary stream whose content replaces ``path`` only if the block succeeds
    (an archive written member by member; see :func:`atomic_open`)."""
    with _replacing(path, "wb") as stream:
        yield stream


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (an exported figure; see :func:`atomic_open`)."""
    with _replacing(path, "wb") as stream:
        stream.write(data)


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_open`)."""
    with atomic_open(path) as stream:
        stream.write(text)


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` for a writer that wants a path (``QImage.save``);
    when the block succeeds the file written there replaces ``path`` the way
    :func:`atomic_open` does (mode, flush, rename, folder flush), otherwise it is removed.

    The temporary file exists (empty, with a new file's permissions) when the block starts;
    the writer truncates it. A writer that reports failure by a return value (Qt's) must
    raise inside the block, so that nothing replaces ``path``. InputError as
    :func:`atomic_open`.
    """
    path = _written(Path(path))
    fd, tmp = _create_temporary(path)
    os.close(fd)
    try:
        yield tmp
        fd = _opened(path, tmp)
        _finish(path, tmp, fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def _replacing(path: Path, mode: str, **options: object) -> Iterator[IO]:
    path = _written(Path(path))
    fd, tmp = _create_temporary(path)
    try:
        stream = os.fdopen(fd, mode, **options)  # type: ignore[call-overload]
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    try:
        with stream:
            yield stream
            _flushed(path, stream)
            fd = os.dup(stream.fileno())  # _finish closes it; the stream closes its own
        _finish(path, tmp, fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _written(path: Path) -> Path:
    """Return the file a write to ``path`` replaces: ``path``, or for a symbolic link the file
    it points to (through every link; it may not exist yet), so the link stays a link."""
    if os.path.islink(path):
        return Path(os.path.realpath(path))
    return path


def _create_temporary(path: Path) -> tuple[int, Path]:
    """Create an empty temporary file beside ``path`` and return (its descriptor, its path).

    Created with :data:`NEW_FILE_MODE` so that the umask applies as to any new file; the
    name is hidden (leading dot) and ends ``.tmp``."""
    parent = path.parent if str(path.parent) else Path(".")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = parent / f".{path.name}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(tmp, flags, NEW_FILE_MODE), tmp
        except FileExistsError:
            continue
        except FileNotFoundError:
            raise InputError(f"{path}: the folder {parent} does not exist") from None
        except OSError as e:
            raise InputError(f"{path}: cannot write there ({e.strerror})") from None
    raise InputError(f"{path}: cannot write there (no free temporary name beside it)")


def _flushed(path: Path, stream: IO) -> None:
    """Flush ``stream``'s buffer to its file (InputError naming ``path`` when the disk is
    full or the write fails)."""
    try:
        stream.flush()
    except OSError as e:
        raise InputError(f"{path}: cannot write there ({e.strerror}); the file is "
                         "unchanged") from None


def _opened(path: Path, tmp: Path) -> int:
    """Return a descriptor of the temporary file a path writer wrote (for its flush)."""
    try:
        return os.open(tmp, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise InputError(f"{path}: the file written there went away ({e.strerror})") from None


def _finish(path: Path, tmp: Path, fd: int) -> None:
    """Make the temporary file ``tmp`` (open as ``fd``, closed here) the file ``path``:
    the replaced file's mode (and owner and group, where allowed), the data flushed to the
    disk, the rename, the folder flushed."""
    try:
        try:
            _keep_permissions(path, tmp)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as e:
        raise InputError(f"{path}: cannot write there ({e.strerror}); the file is "
                         "unchanged") from None
    _sync_folder(path.parent if str(path.parent) else Path("."))


def _keep_permissions(path: Path, tmp: Path) -> None:
    """Give ``tmp`` the mode of the file at ``path`` when one exists (a new file keeps the
    umask's mode), its owner when the user may give it (the superuser), and its group when
    the user may set that group."""
    try:
        old = os.stat(path)
    except OSError:
        return
    if not stat.S_ISREG(old.st_mode):
        return
    if hasattr(os, "chown"):
        new = os.stat(tmp)
        if new.st_uid != old.st_uid:
            with contextlib.suppress(OSError):  # only the superuser gives files away
                os.chown(tmp, old.st_uid, -1)
        if new.st_gid != old.st_gid:
            with contextlib.suppress(OSError):  # a group the user is not in: the default
                os.chown(tmp, -1, old.st_gid)
    os.chmod(tmp, stat.S_IMODE(old.st_mode))


def _sync_folder(folder: Path) -> None:
    """Flush ``folder``'s entries (the rename) to the disk; a no-op where folders cannot be
    opened (Windows) or flushed (some network file systems)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
