"""The provenance record of a corrected copy (``apply-corrections``): a JSON file beside the
output, ``<output>.provenance.json``, naming every correction applied (with its author, time
and note), the corrections file and every published and written file with its sha256, and
irviewer's version. It is what a maintainer reads before accepting a fix, and how a later
run recognises a folder it may write over (:func:`refuse_foreign_output`)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from irviewer import __version__
from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError
from irviewer.formats.corrections_file import LoadedCorrections
from irviewer.formats.line_edits import CorrectedFile
from irviewer.io.atomic import atomic_write_text

SUFFIX = ".provenance.json"
#: The key that marks a record as written by apply-corrections, and its layout's version.
MARK = "irviewer_corrected_copy"
LAYOUT = 1


def record_path(out: Path) -> Path:
    """Return where the provenance record of the output ``out`` is kept: beside it."""
    out = Path(out)
    return out.with_name(out.name + SUFFIX)


def sha256_of(data: bytes) -> str:
    """Return the hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def recorded_files(out: Path) -> set[str] | None:
    """Return the names of the files the provenance record beside ``out`` says were written
    (None: no readable record of apply-corrections there)."""
    try:
        record = json.loads(record_path(out).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get(MARK) != LAYOUT:
        return None
    return {str(f.get("name")) for f in record.get("files", []) if isinstance(f, dict)}


def refuse_foreign_output(out: Path) -> None:
    """Return when ``out`` may be written: it does not exist, is an empty folder, or holds
    only what a previous apply-corrections wrote (its provenance record names every file);
    else InputError in one sentence (nothing is touched)."""
    out = Path(out)
    if not out.exists() and not out.is_symlink():
        return
    known = recorded_files(out)
    if out.is_dir():
        foreign = _first_foreign_file(out, known or set())
        if foreign is None:
            return
        raise InputError(f"{out}: the folder already holds files that apply-corrections did "
                         f"not write (no {record_path(out).name} beside it names them, e.g. "
                         f"{foreign}); give a new or empty folder, nothing in it was changed")
    if known is not None and out.name in known:
        return
    raise InputError(f"{out}: the file already exists and is not a corrected copy written "
                     f"by apply-corrections (no {record_path(out).name} beside it); give a "
                     "new file name, the file was not changed")


def _first_foreign_file(folder: Path, known: set[str]) -> str | None:
    """Return the first file below ``folder`` (by path) that ``known`` does not name, None
    when there is none; the walk stops there (a folder of many files is not listed whole)."""
    for root, dirs, files in os.walk(folder, onerror=_unreadable):
        dirs.sort()
        for name in sorted(files):
            relative = (Path(root) / name).relative_to(folder).as_posix()
            if relative not in known:
                return relative
    return None


def _unreadable(error: OSError) -> None:
    raise InputError(f"{error.filename}: cannot be read ({error.strerror}); give a new or "
                     "empty folder, nothing was changed")


def write_record(out: Path, dataset: Dataset, files: Sequence[CorrectedFile],
                 applied: LoadedCorrections | None, notes: Sequence[str],
                 folder: bool) -> None:
    """Write the provenance record of the corrected copy ``files`` of ``dataset`` at
    ``out`` (atomically, before the copy itself, so an interrupted run is recognised as
    this tool's output on the next): the corrections of ``applied`` in file order (each
    with ``applied`` False when it set what the ground truth already had), the corrections
    file's path and sha256, each file with its published source's sha256 and what changed."""
    left = {c for _, c in applied.left_out} if applied else set()
    record: dict[str, Any] = {
        MARK: LAYOUT,
        "irviewer_version": __version__,
        "written_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "dataset": {"path": str(dataset.path) if dataset.path is not None else None,
                    "format": dataset.format, "name": dataset.name},
        "output": {"path": str(Path(out).absolute()), "kind": "folder" if folder else "file"},
        "corrections_file": None if applied is None else {
            "path": str(Path(applied.path).absolute()),
            "sha256": sha256_of(Path(applied.path).read_bytes())},
        "corrections": [] if applied is None else [
            {"query": c.query, "item": c.item, "label": c.label, "author": c.author,
             "time": c.time, "note": c.note, "applied": c not in left}
            for c in applied.corrections],
        "files": [_file_entry(f) for f in files],
        "notes": list(notes),
    }
    atomic_write_text(record_path(out), json.dumps(record, indent=2, ensure_ascii=False)
                      + "\n")


def _file_entry(f: CorrectedFile) -> dict[str, Any]:
    """Return the record of one written file: its name, sha256, the published file and its
    sha256 (None for a new file), and how many units its edit changed, removed and added."""
    published = None if f.published is None else f.published.read_bytes()
    return {"name": f.name, "sha256": sha256_of(f.edit.data),
            "published": None if f.published is None else str(f.published.absolute()),
            "published_sha256": None if published is None else sha256_of(published),
            "unchanged": published == f.edit.data, "unit": f.edit.unit,
            "changed": f.edit.changed, "removed": f.edit.removed, "added": f.edit.added}
