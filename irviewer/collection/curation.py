"""A curator's own edits of a collection (Qt-free): an artwork's title, artist, year and
other fields, removing a photo or an artwork, and putting two artworks that are one
together. Each edit is a command with ``do`` and ``undo`` (the window puts them on an undo
stack).

* Fields are written to the titles file (the one the collection was indexed with, or a
  new ``titles.csv`` in the collection, then recorded in ``collection.json``) *and* to the
  collection's manifest, each atomically: the window shows the edit at once, and an
  ``irviewer index`` re-run, which reads the titles file again, keeps it.
* A removed photo is never deleted: it moves into the photo folder's hidden folder
  :data:`REMOVED` (which indexing passes over), keeping its place under it; undo moves it
  back. The collection is then indexed again (nothing is described for a removal), so its
  manifest, descriptors and record stay one consistent whole.
* Two artworks that are one (a duplicate photo, a print of the same picture:
  :mod:`irviewer.collection.lookalikes`) are put together by moving the photos into one
  artwork's subfolder, the layout that says "views of one artwork"
  (:mod:`irviewer.formats.photo_folder`); undo moves them back. The collection is then
  indexed again (the moved photos are described again, and the rule calibrated again).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path

from irviewer.core.descriptors import name_key
from irviewer.core.errors import InputError
from irviewer.formats.base import read_text
from irviewer.formats.collection import MANIFEST, photos_base, read_record, write_record
from irviewer.io.atomic import atomic_write_text
from irviewer.io.csv_table import csv_text, read_records

#: The photo folder's hidden folder that removed photos move into.
REMOVED = ".irviewer-removed"
#: The titles file a collection indexed without one gets on its first edit.
NEW_TITLES = "titles.csv"
#: The manifest's own columns, before the titles' columns.
_OWN = ("image", "instance", "role", "name", "camera")
#: Fields offered for an artwork whose collection has no titles yet.
DEFAULT_FIELDS = ("title", "artist", "year")


def _read_csv(path: Path, what: str) -> list[list[str]]:
    return [row for _, row in read_records(read_text(path, what), Path(path).name)]


def _csv_text(rows: list[list[str]]) -> str:
    return csv_text(rows)


def artwork_fields(collection: Path, artwork: str) -> dict[str, str]:
    """Return the fields the collection shows for ``artwork`` (title, artist, then the
    details, as its manifest's columns name them; :data:`DEFAULT_FIELDS` added when
    missing), from its first photo; InputError when no photo is of that artwork."""
    rows = _read_csv(Path(collection) / MANIFEST, "a collection manifest")
    header = rows[0]
    at = header.index("instance")
    row = next((r for r in rows[1:] if len(r) > at and r[at] == artwork), None)
    if row is None:
        raise InputError(f"{Path(collection).name}: no photo is of the artwork {artwork}")
    fields = {c: (row[i] if i < len(row) else "") for i, c in enumerate(header)
              if c not in _OWN}
    for name in DEFAULT_FIELDS:
        fields.setdefault(name, "")
    return fields


def titles_path(collection: Path) -> Path | None:
    """Return the titles file the collection uses (None when it has none)."""
    record = read_record(collection)
    if record.titles is None:
        return None
    return Path(os.path.abspath(Path(collection) / record.titles))


def _check(fields: dict[str, str]) -> None:
    for name in fields:
        if not name.strip() or name.lower() in _OWN:
            raise InputError(f"'{name}' cannot be a field of an artwork (a field needs a "
                             f"name, and {', '.join(_OWN)} are the collection's own)")


def write_artwork_fields(collection: Path, artwork: str, fields: dict[str, str]) -> Path:
    """Write ``fields`` (column -> value) of ``artwork`` to the collection's titles file
    (made in the collection, and recorded, when there is none) and to its manifest, each
    atomically; return the titles file. A column the files lack is added to them."""
    collection = Path(collection)
    _check(fields)
    path = titles_path(collection)
    if path is None or not path.is_file():
        path = collection / NEW_TITLES
        _write_titles_row([["id"]], path, artwork, fields)
        record = read_record(collection)
        write_record(collection, replace(record, titles=NEW_TITLES))
    else:
        _write_titles_row(_read_csv(path, "a titles file (CSV)"), path, artwork, fields)
    rows = _read_csv(collection / MANIFEST, "a collection manifest")
    header = rows[0]
    header += [c for c in fields if c not in header]
    at = header.index("instance")
    for row in rows[1:]:
        row += [""] * (len(header) - len(row))
        if row[at] == artwork:
            for column, value in fields.items():
                row[header.index(column)] = value
    atomic_write_text(collection / MANIFEST, _csv_text(rows))
    return path


def _write_titles_row(rows: list[list[str]], path: Path, artwork: str,
                      fields: dict[str, str]) -> None:
    """Set ``artwork``'s row of a titles file read as ``rows`` (matched as indexing matches
    it: exactly, else without an image extension; appended when missing); write it."""
    rows = [r for r in rows if any(cell.strip() for cell in r)] or [["id"]]
    header = rows[0]
    lowered = [c.strip().lower() for c in header]
    for column in fields:
        if column.lower() not in lowered:
            header.append(column)
            lowered.append(column.lower())
    row = next((r for r in rows[1:] if r and r[0].strip() == artwork), None) or next(
        (r for r in rows[1:] if r and name_key(r[0].strip()) == artwork), None)
    if row is None:
        row = [artwork]
        rows.append(row)
    for each in rows[1:]:
        each += [""] * (len(header) - len(each))
    for column, value in fields.items():
        row[lowered.index(column.lower())] = value
    atomic_write_text(path, _csv_text(rows))


@dataclass
class EditArtwork:
    """Set fields of an artwork: ``do`` writes ``new``, ``undo`` writes back what they
    were (read when the command is made)."""

    collection: Path
    artwork: str
    new: dict[str, str]
    old: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check(self.new)
        if not self.old:
            now = artwork_fields(self.collection, self.artwork)
            self.old = {c: now.get(c, "") for c in self.new}

    @property
    def label(self) -> str:
        """Return what the edit is, in words (the undo menu says it)."""
        return f"edit the details of {self.new.get('title') or self.artwork}"

    def do(self) -> None:
        """Write the new fields."""
        write_artwork_fields(self.collection, self.artwork, self.new)

    def undo(self) -> None:
        """Write the old fields back."""
        write_artwork_fields(self.collection, self.artwork, self.old)


@dataclass
class RemovePhotos:
    """Remove photos (their paths relative to the photo folder) from the collection:
    ``do`` moves them into :data:`REMOVED`, ``undo`` moves them back; the collection is
    indexed again after either. ``what`` names them for the undo menu."""

    collection: Path
    photos: tuple[str, ...]
    what: str

    @property
    def label(self) -> str:
        """Return what the edit is, in words."""
        return f"remove {self.what}"

    def _folder(self) -> Path:
        return photos_base(self.collection, read_record(self.collection))[0]

    def do(self) -> None:
        """Move the photos into :data:`REMOVED` (folders they leave empty go too);
        InputError when they are every photo of the collection or one is missing."""
        folder = self._folder()
        if len(set(self.photos)) >= len(read_record(self.collection).photos):
            raise InputError(f"{Path(self.collection).name}: these are all of its photos; a "
                             "collection keeps at least one (make a new one instead)")
        for relative in self.photos:
            source = folder / relative
            if not source.is_file():
                raise InputError(f"{source}: the photo is no longer there; update the "
                                 "collection (File \u25b8 Update this collection)")
        for relative in self.photos:
            _move(folder / relative, folder / REMOVED / relative)
            _drop_empty(folder / relative, folder)

    def undo(self) -> None:
        """Move the photos back where they were."""
        folder = self._folder()
        for relative in self.photos:
            _move(folder / REMOVED / relative, folder / relative)
            _drop_empty(folder / REMOVED / relative, folder)


def _move(source: Path, target: Path) -> None:
    if target.exists():
        raise InputError(f"{target}: a file of that name is already there; move it away "
                         "first")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(source), str(target))


def _drop_empty(moved: Path, top: Path) -> None:
    """Remove the folders between ``moved``'s folder and ``top`` that it left empty."""
    folder = moved.parent
    while folder != top and top in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


@dataclass
class MergeArtworks:
    """Put artwork ``join`` into artwork ``keep``: ``do`` moves ``join``'s photos into
    ``keep``'s subfolder (made, with ``keep``'s own photo moved into it, when ``keep`` is
    one photo at the top of the photo folder), keeping their place under ``join``'s
    folder; ``undo`` moves every photo back. The collection is indexed again after either.
    ``what`` names the two for the undo menu."""

    collection: Path
    keep: str
    join: str
    what: str
    moves: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        """Return what the edit is, in words."""
        return f"make {self.what} one artwork"

    def _folder(self) -> Path:
        return photos_base(self.collection, read_record(self.collection))[0]

    def planned(self) -> tuple[tuple[str, str], ...]:
        """Return the moves (from, to; relative to the photo folder) that put the two
        together; InputError when either artwork has no photo, they are one already, or a
        photo's place in the kept folder is taken."""
        if self.keep == self.join:
            raise InputError(f"{self.keep}: an artwork is one with itself already")
        photos = read_record(self.collection).photos
        kept = [p.file for p in photos if p.artwork == self.keep]
        joined = [p.file for p in photos if p.artwork == self.join]
        for artwork, files in ((self.keep, kept), (self.join, joined)):
            if not files:
                raise InputError(f"{Path(self.collection).name}: no photo is of the artwork "
                                 f"{artwork}; update the collection (File \u25b8 Update this "
                                 "collection)")
        moves = [(f, f"{self.keep}/{f}") for f in kept if "/" not in f]
        moves += [(f, f"{self.keep}/{f.split('/', 1)[1] if '/' in f else f}") for f in joined]
        folder = self._folder()
        targets = [to for _, to in moves]
        for source, target in moves:
            if not (folder / source).is_file():
                raise InputError(f"{folder / source}: the photo is no longer there; update "
                                 "the collection (File \u25b8 Update this collection)")
            if (folder / target).exists() or targets.count(target) > 1:
                raise InputError(f"{folder / target}: two photos would have that name; "
                                 "rename one of them first")
        return tuple(moves)

    def do(self) -> None:
        """Move ``join``'s photos (and ``keep``'s, when it is one photo at the top) into
        ``keep``'s subfolder; InputError as :meth:`planned`, with nothing moved."""
        self.moves = self.planned()
        folder = self._folder()
        for source, target in self.moves:
            _move(folder / source, folder / target)
            _drop_empty(folder / source, folder)

    def undo(self) -> None:
        """Move the photos back where they were."""
        folder = self._folder()
        for source, target in reversed(self.moves):
            _move(folder / target, folder / source)
            _drop_empty(folder / target, folder)
