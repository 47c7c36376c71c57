"""A curator's titles file: one CSV row per artwork, what to show with it.

The first line names the columns; the first column is the artwork id (the photo's file name
without its extension, or its subfolder's name), the others are shown wherever the artwork
is shown: ``title`` and ``artist`` (any case) as "Title — Artist", every other column
(year, room, anything) as a detail ("year 1565 · room 3"). They become the collection
manifest's ``title``, ``artist`` and detail columns (:mod:`irviewer.formats.manifest`).

An id may be written with the photo's extension (``mona-lisa.jpg``); it is matched without.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from irviewer.core.descriptors import name_key
from irviewer.core.errors import InputError, examples
from irviewer.formats.base import read_text
from irviewer.io.csv_table import read_records

#: Manifest columns a titles file may not use for its own (they mean something else there).
RESERVED = ("image", "instance", "role", "name", "camera")


@dataclass(frozen=True)
class ArtworkTitles:
    """A titles file read: its other ``columns`` (as written in its first line) and, per
    artwork id (as written), the values of those columns ("" where a row is short)."""

    path: Path
    columns: tuple[str, ...]
    rows: dict[str, tuple[str, ...]]

    def match(self, artworks: tuple[str, ...] | list[str]) -> tuple[dict[str, tuple[str, ...]],
                                                                    list[str], list[str]]:
        """Return (artwork id -> its values, the ids of ``artworks`` that have no row, the
        file's ids that name no artwork of ``artworks``). An id matches exactly, else by its
        name without an image extension (``mona-lisa.jpg`` names ``mona-lisa``)."""
        by_key: dict[str, str] = {}
        for row_id in self.rows:
            by_key.setdefault(name_key(row_id) if "/" not in row_id else row_id, row_id)
        used: set[str] = set()
        found: dict[str, tuple[str, ...]] = {}
        for artwork in artworks:
            written = artwork if artwork in self.rows else by_key.get(artwork)
            if written is not None and written not in used:
                found[artwork] = self.rows[written]
                used.add(written)
        missing = [a for a in artworks if a not in found]
        unused = [w for w in self.rows if w not in used]
        return found, missing, unused


def read_titles(path: Path) -> ArtworkTitles:
    """Return the titles file at ``path``.

    InputError with one sentence naming the file (and the line) for a missing or unreadable
    file, text that is not UTF-8 or not CSV (a quoted field whose closing quote is missing:
    the line where it opens), no column besides the id, an empty or repeated
    column name, a column named like a manifest column (:data:`RESERVED`), a row with more
    fields than the first line, an empty id or an id listed twice.
    """
    path = Path(path)
    text = read_text(path, "a titles file (CSV)")
    lines = [(line, row) for line, row in read_records(text, path.name)
             if any(cell.strip() for cell in row)]
    if not lines:
        raise InputError(f"{path.name} is empty: its first line must name the columns, e.g. "
                         "id,title,artist,year")
    header = [cell.strip() for cell in lines[0][1]]
    if len(header) < 2:
        raise InputError(f"{path.name}: the first line names one column; it must name the "
                         "artwork id and at least one column to show, e.g. id,title,artist "
                         "(are the values separated by commas?)")
    columns = header[1:]
    if "" in columns:
        raise InputError(f"{path.name}: column {columns.index('') + 2} of the first line has "
                         "no name; name every column (e.g. id,title,artist,year)")
    lowered = [c.lower() for c in columns]
    repeated = sorted({c for c in lowered if lowered.count(c) > 1})
    if repeated:
        raise InputError(f"{path.name}: the column {repeated[0]!r} is named twice in the "
                         "first line")
    reserved = [c for c in columns if c.lower() in RESERVED]
    if reserved:
        raise InputError(f"{path.name}: the column {reserved[0]!r} means something else in a "
                         f"collection ({', '.join(RESERVED)} are taken); rename it")
    rows: dict[str, tuple[str, ...]] = {}
    seen: dict[str, int] = {}
    for line, raw in lines[1:]:
        if len(raw) > len(header) and any(cell.strip() for cell in raw[len(header):]):
            raise InputError(f"{path.name}, line {line}: {len(raw)} fields where the first "
                             f"line names {len(header)}; quote values that hold a comma")
        cells = [cell.strip() for cell in raw[:len(header)]]
        artwork = cells[0]
        if not artwork:
            raise InputError(f"{path.name}, line {line}: the artwork id (first column) is "
                             "empty")
        if artwork in seen:
            raise InputError(f"{path.name}, line {line}: the artwork {artwork} is already "
                             f"listed on line {seen[artwork]}; list each artwork once")
        seen[artwork] = line
        rows[artwork] = tuple(cells[1:]) + ("",) * (len(header) - len(cells))
    if not rows:
        raise InputError(f"{path.name} names its columns but lists no artwork")
    return ArtworkTitles(path, tuple(columns), rows)


def titles_summary(missing: list[str], unused: list[str], path: Path) -> list[str]:
    """Return the lines that say which artworks have no row in the titles file ``path`` and
    which of its rows name no photo: one line per artwork (the first 20 of each kind, then
    how many more)."""
    lines = []
    for ids, words in ((missing, f"has no row in {path.name}: it is shown by its id"),
                       (unused, f"is listed in {path.name} but has no photo")):
        for artwork in ids[:20]:
            lines.append(f"artwork {artwork} {words}")
        if len(ids) > 20:
            lines.append(f"... and {len(ids) - 20} more like it (e.g. "
                         f"{examples(ids[20:])})")
    return lines
