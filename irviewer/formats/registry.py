"""The reader registry: which reader opens a path, by sniffing, with priorities.

Each benchmark family registers a :class:`Reader` with a ``sniff`` (does this path look like
my format?) and a ``read`` (return the core's :class:`~irviewer.core.dataset.Dataset`).
:func:`read_dataset` tries the sniffers from the highest priority down, so a specific format
(revisited Oxford's pickle) wins over a generic one; ``format=`` skips sniffing.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError
from irviewer.formats.base import Reader, ReadOptions, option, refuse_options_not_taken

#: Modules of irviewer.formats that each define ``READER`` (one benchmark family each).
BUILTIN = ("collection", "manifest", "oxford", "revisited", "reid", "holidays", "instance_names",
           "hpatches", "hpatches_tasks", "sop", "cub", "cars", "inshop", "gldv2", "disc21")

_READERS: dict[str, Reader] = {}


def register(reader: Reader) -> None:
    """Add ``reader`` to the registry (a later reader with the same name replaces it)."""
    _READERS[reader.name] = reader


def readers() -> list[Reader]:
    """Return the registered readers, highest priority first."""
    return sorted(_READERS.values(), key=lambda r: (-r.priority, r.name))


def detect(path: Path) -> Reader:
    """Return the reader for ``path``; InputError when none recognises it."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file or folder")
    for reader in readers():
        if reader.sniff(path):
            return reader
    names = ", ".join(r.name for r in readers())
    raise InputError(f"{path}: not a dataset irviewer recognises; give {option('format')} "
                     f"(one of {names})")


def read_dataset(path: Path, format: str | None = None,
                 options: ReadOptions | None = None) -> Dataset:
    """Return the Dataset at ``path``, read by ``format`` or by the reader that sniffs it."""
    path = Path(path)
    if format is None:
        reader = detect(path)
    else:
        try:
            reader = _READERS[format]
        except KeyError:
            raise InputError(f"unknown format {format!r}; known formats: "
                             f"{', '.join(r.name for r in readers())}") from None
        if not path.exists():
            raise InputError(f"{path}: no such file or folder")
    options = options or ReadOptions()
    refuse_options_not_taken(reader, path, options)
    return reader.read(path, options)


for _module in BUILTIN:
    register(importlib.import_module(f"irviewer.formats.{_module}").READER)
