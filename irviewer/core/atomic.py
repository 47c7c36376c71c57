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
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{path.name}.", suffix=".tmp")
    except FileNotFoundError:
        raise InputError(f"{path}: the folder {parent} does not exist") from None
    except OSError as e:
        raise InputError(f"{path}: cannot write there ({e.strerror})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as stream:
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
