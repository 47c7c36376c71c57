"""The reviewed file: the audit's suspects a person checked and whose label stands.

A label the review queue asked about and a person confirmed ("checked, the label stands") is
never asked about again. Such a record is not a correction (nothing changes), so it lives in
its own CSV beside the corrections file rather than in it, and every reader of corrections
files stays as it was: ``<dataset>.reviewed.csv`` (``demo.csv`` -> ``demo.reviewed.csv``; a
corrections file chosen elsewhere, ``x.corrections.csv`` -> ``x.reviewed.csv`` beside it;
corrections kept in the user's data folder because the dataset's folder cannot be written,
there beside them).

UTF-8, header ``kind,query,item,label,author,time,note``; ``kind``, ``query`` and ``item``
identify the question (an audit kind, the query's name or empty for an image-level suspect,
the image's name), ``label`` is the label that was checked (what it was when the person said
it stands), ``author``, ``time`` (ISO 8601) and ``note`` document it. Rows naming a query or
image the dataset no longer has are harmless (that question is never asked). Written
atomically.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from irviewer.core.errors import InputError
from irviewer.formats.corrections_file import SUFFIX as CORRECTIONS_SUFFIX
from irviewer.formats.corrections_file import read_csv_text
from irviewer.io import user_data
from irviewer.io.atomic import atomic_open
from irviewer.io.csv_table import csv_writer, iter_records

COLUMNS = ("kind", "query", "item", "label", "author", "time", "note")
REQUIRED = COLUMNS[:3]
SUFFIX = ".reviewed.csv"
#: The note written for a label checked in the review queue.
CHECKED = "checked, the label stands"


@dataclass(frozen=True)
class Reviewed:
    """One checked suspect: which question (kind, query or "", item), the label that stood,
    and who checked it when."""

    kind: str
    query: str
    item: str
    label: str = ""
    author: str = ""
    time: str = ""
    note: str = CHECKED

    @property
    def key(self) -> tuple[str, str, str]:
        """Return the question this record answers: (kind, query or "", item)."""
        return self.kind, self.query, self.item


def reviewed_path(corrections_path: Path) -> Path:
    """Return the reviewed file beside a corrections file: ``x.corrections.csv`` ->
    ``x.reviewed.csv``, any other ``x.csv`` -> ``x.reviewed.csv``."""
    p = Path(corrections_path)
    name = p.name
    stem = name[:-len(CORRECTIONS_SUFFIX)] if name.endswith(CORRECTIONS_SUFFIX) else p.stem
    return p.parent / f"{stem}{SUFFIX}"


def read_reviewed(path: Path) -> tuple[Reviewed, ...]:
    """Return the records of the reviewed file at ``path`` (none when it does not exist).

    InputError naming the file and line for binary or non-UTF-8 data, a missing column, a
    quoted field whose closing quote is missing (the line where it opens), a row with fewer
    fields than the header or an empty kind or item.
    """
    path = Path(path)
    if not path.exists():
        return ()
    where = path.name
    records = iter_records(read_csv_text(path, "a reviewed file", COLUMNS), where,
                           one_line=True)
    first = next(records, None)
    if first is None:
        return ()
    header = [h.strip().lower() for h in first[1]]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise InputError(f"{where}, line 1: the header lacks column(s) "
                         f"{', '.join(missing)}; it must be {','.join(COLUMNS)}")
    col = {c: header.index(c) for c in COLUMNS if c in header}
    out: list[Reviewed] = []
    for line, raw in records:
        if not raw or all(not cell.strip() for cell in raw):
            continue
        if len(raw) < len(header):
            raise InputError(f"{where}, line {line}: {len(raw)} fields where the header "
                             f"has {len(header)}")
        cells = {c: raw[i].strip() for c, i in col.items()}
        if not cells["kind"] or not cells["item"]:
            raise InputError(f"{where}, line {line}: the "
                             f"{'kind' if not cells['kind'] else 'item'} field is empty")
        out.append(Reviewed(**{c: cells.get(c, "") for c in COLUMNS}))
    return tuple(out)


def write_reviewed(path: Path, records: Iterable[Reviewed]) -> None:
    """Write ``records`` to ``path`` as a reviewed file, atomically."""
    user_data.make_room_for(Path(path))
    with atomic_open(Path(path), newline="") as stream:
        writer = csv_writer(stream)
        writer.writerow(COLUMNS)
        for r in records:
            writer.writerow([r.kind, r.query, r.item, r.label, r.author, r.time, r.note])
