"""Atomic file writes: a temporary file beside the target, then a rename.

A reader never sees a half-written file, and a crash mid-write leaves the old file intact.
Used for every file irviewer writes (reports, exports; later sessions and label corrections).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from irviewer.core.errors import InputError


@contextlib.contextmanager
def atomic_open(path: Path, newline: str | None = None) -> Iterator[IO[str]]:
    """Yield a UTF-8 text stream whose content replaces ``path`` only if the block succeeds.

    InputError with one sentence when the folder does not exist or cannot be written.
    """
    with _replacing(path, "w", encoding="utf-8", newline=newline) as stream:
        yield stream


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (an exported figure; see :func:`atomic_open`)."""
    with _replacing(path, "wb") as stream:
        stream.write(data)


@contextlib.contextmanager
def _replacing(path: Path, mode: str, **options: object) -> Iterator[IO]:
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{path.name}.", suffix=".tmp")
    except FileNotFoundError:
        raise InputError(f"{path}: the folder {parent} does not exist") from None
    except OSError as e:
        raise InputError(f"{path}: cannot write there ({e.strerror})") from None
    try:
        with os.fdopen(fd, mode, **options) as stream:  # type: ignore[call-overload]
            yield stream
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_open`)."""
    with atomic_open(path) as stream:
        stream.write(text)
