"""Opening .npz archives without leaking their file: ``numpy.load`` leaves the file open
when the archive is not a readable zip (its file handle outlives the error), which a reader
that refuses broken files in one sentence would otherwise do on every refusal."""

from __future__ import annotations

from pathlib import Path

from numpy.lib.npyio import NpzFile


def load_npz(path: Path | str) -> NpzFile:
    """Return the .npz archive at ``path`` (pickled members refused), which closes its file
    when it is closed (use it in a ``with``); the file is closed at once when the archive
    cannot be read, and the error (``zipfile.BadZipFile``, ``OSError``, ...) raised."""
    stream = open(path, "rb")  # noqa: SIM115 - the archive owns it from here on
    try:
        return NpzFile(stream, own_fid=True, allow_pickle=False)
    except BaseException:
        stream.close()
        raise
