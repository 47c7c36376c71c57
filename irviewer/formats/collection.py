"""A curator's collection: a folder that ``irviewer index`` makes from a folder of photos,
and that every command opens without a descriptor file.

The folder holds:

* ``collection.csv`` — a CSV manifest (:mod:`irviewer.formats.manifest`): one row per photo,
  ``image`` (its path relative to the collection: photos are referenced, never copied),
  ``instance`` (the artwork id), ``role`` ``both``, ``name`` (unique, see
  :mod:`irviewer.formats.photo_folder`) and the titles file's columns (``title``,
  ``artist``, details);
* ``descriptors.npz`` — one vector per photo, naming the extractor that made it and the
  file of what that extractor learnt
  (:func:`~irviewer.formats.descriptor_files.write_descriptor_file`);
* that file, e.g. ``vocabulary.npz`` (the demo extractor's vocabulary learnt from the
  collection's photos);
* ``local_features.npz`` — every photo's keypoints and SIFT descriptors, what a visitor's
  photo is verified against (:mod:`irviewer.formats.local_feature_file`);
* ``collection.json`` — how it was made (:class:`CollectionRecord`): the photo folder
  (relative to the collection, and where it was), the extractor, dates, counts, irviewer's
  version, the photos skipped and why, and per photo the size and modification time by
  which a re-run knows what changed; and the calibration of its acceptance rule
  (:class:`irviewer.core.acceptance.Calibration`: when a visitor's photo is named as one
  of its artworks).

Read as a dataset (:func:`read_collection`, format ``collection``), every photo is a query
and a gallery image at once: a photo's positives are the other photos of its artwork, its
own image is removed (the ``instance`` protocol); a photo whose artwork has no other photo
is kept (the window shows it with its nearest artworks) and skipped when scoring.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from irviewer import __version__
from irviewer.core.acceptance import Calibration
from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError, either
from irviewer.formats.base import Reader, ReadOptions, read_text
from irviewer.formats.manifest import InstanceEntry, instance_dataset, read_rows
from irviewer.io.atomic import atomic_write_text
from irviewer.io.program import program_command

NAME = "collection"
RECORD = "collection.json"
MANIFEST = "collection.csv"
DESCRIPTORS = "descriptors.npz"
#: Version of the collection folder's layout, recorded in collection.json.
LAYOUT_VERSION = 1


@dataclass(frozen=True)
class IndexedPhoto:
    """One photo of a collection as collection.json records it: its path relative to the
    photo folder, artwork id, name, and the size (bytes) and modification time (ns) it had
    when it was described."""

    file: str
    artwork: str
    name: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class SkippedPhoto:
    """A photo that could not be indexed, and the sentence saying why."""

    file: str
    reason: str


@dataclass(frozen=True)
class CollectionRecord:
    """collection.json: how a collection was made (see the module docstring).

    ``photos_folder`` is relative to the collection (``../photos``); ``photos_folder_was``
    where it was when indexed (absolute). ``extractor_state`` is the file of what the
    extractor learnt (None when it learns nothing); ``learned_from`` how many photos it
    learnt from. ``titles`` is the titles file given (relative to the collection; None
    without one). Dates are ISO 8601 in UTC. ``local_features`` is the file of the
    photos' local features (None: a collection indexed before verification, whose photos
    are described again on the next run), ``calibration`` its acceptance rule's, and
    ``lookalikes`` the pairs of photos of different artworks that calibration found to show
    one picture: (photo name, other photo name, inliers), the most inliers first.
    """

    photos_folder: str
    photos_folder_was: str
    layout: str
    extractor: str
    extractor_state: str | None
    learned_from: int
    titles: str | None
    created: str
    updated: str
    irviewer_version: str
    artworks: int
    photos: tuple[IndexedPhoto, ...]
    skipped: tuple[SkippedPhoto, ...] = ()
    described: int = 0
    reused: int = 0
    elapsed_s: float = 0.0
    layout_version: int = LAYOUT_VERSION
    notes: tuple[str, ...] = field(default=())
    local_features: str | None = None
    calibration: Calibration | None = None
    lookalikes: tuple[tuple[str, str, int], ...] = ()

    def to_json(self) -> str:
        """Return the record as the text of collection.json (counts first, photos last)."""
        data = asdict(replace(self, calibration=None))
        data["calibration"] = None if self.calibration is None else self.calibration.to_dict()
        photos, skipped = data.pop("photos"), data.pop("skipped")
        data["counts"] = {"artworks": self.artworks, "photos": len(self.photos),
                          "skipped": len(self.skipped), "described": self.described,
                          "reused": self.reused}
        for key in ("artworks", "described", "reused"):
            data.pop(key)
        data["skipped"], data["photos"] = skipped, photos
        return json.dumps(data, indent=1, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str, where: str) -> CollectionRecord:
        """Return the record in ``text``; InputError naming ``where`` when it is not one, or
        when a newer irviewer wrote a layout this one does not know. Keys this irviewer does
        not know (a later irviewer's additions to the same layout) are passed over, so an
        older irviewer still opens the collection."""
        try:
            data: dict[str, Any] = json.loads(text)
            version = int(data.get("layout_version", LAYOUT_VERSION))
        except (ValueError, TypeError, AttributeError) as e:
            raise InputError(f"{where}: not a collection record irviewer wrote ({e}); index "
                             "the photos again to remake it") from None
        if version > LAYOUT_VERSION:
            raise InputError(f"{where}: made by a newer irviewer (collection layout {version}; "
                             f"this irviewer {__version__} reads layout {LAYOUT_VERSION}): "
                             "update irviewer, or index the photos again with this one")
        try:
            counts = data.pop("counts")
            photos = tuple(IndexedPhoto(**_known(IndexedPhoto, p)) for p in data.pop("photos"))
            skipped = tuple(SkippedPhoto(**_known(SkippedPhoto, s)) for s in data.pop("skipped"))
            data["notes"] = tuple(data.get("notes", ()))
            calibration = data.pop("calibration", None)
            data["calibration"] = None if calibration is None else \
                Calibration.from_dict(calibration)
            data["lookalikes"] = tuple((str(a), str(b), int(n))
                                       for a, b, n in data.get("lookalikes", ()))
            return cls(**_known(cls, data), artworks=int(counts["artworks"]), photos=photos,
                       skipped=skipped, described=int(counts["described"]),
                       reused=int(counts["reused"]))
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            raise InputError(f"{where}: not a collection record irviewer wrote ({e}); index "
                             "the photos again to remake it") from None

    def photo_folder(self, collection: Path) -> Path:
        """Return the photo folder as the record places it from ``collection``."""
        return Path(os.path.normpath(Path(collection) / self.photos_folder))


def _known(kind: type, data: dict[str, Any]) -> dict[str, Any]:
    """Return the entries of ``data`` that are fields of the dataclass ``kind`` (a later
    irviewer's additions left out)."""
    names = {f.name for f in fields(kind)}
    return {k: v for k, v in data.items() if k in names}


def is_collection(path: Path) -> bool:
    """Return True when ``path`` is a collection folder (it holds collection.json and
    collection.csv); never raises."""
    p = Path(path)
    try:
        return p.is_dir() and (p / RECORD).is_file() and (p / MANIFEST).is_file()
    except OSError:
        return False


def read_record(collection: Path) -> CollectionRecord:
    """Return the collection's collection.json; InputError when it is missing or damaged."""
    path = Path(collection) / RECORD
    return CollectionRecord.from_json(read_text(path, "a collection record"),
                                      f"{Path(collection).name}/{RECORD}")


def write_record(collection: Path, record: CollectionRecord) -> None:
    """Write collection.json atomically."""
    atomic_write_text(Path(collection) / RECORD, record.to_json())


def descriptors_path(collection: Path) -> Path:
    """Return the collection's descriptor file (the default method of every command)."""
    return Path(collection) / DESCRIPTORS


def reindex_words(collection: Path) -> str:
    """Return how to index the photos again, in each edge's words."""
    return either(f"{program_command()} index PHOTOS --out {shlex.quote(str(collection))}",
                  "File \u25b8 New collection from a folder\u2026")


def photos_base(collection: Path, record: CollectionRecord) -> tuple[Path, str | None]:
    """Return (the folder the collection's photos are in now, a note or None).

    The photos are where the record places them relative to the collection; when the
    collection was moved without them, they are used where they were when indexed, and the
    note says so. InputError with one sentence saying what to do when neither exists (the
    photo folder was moved, renamed or deleted).
    """
    collection = Path(collection)
    relative = record.photo_folder(collection)
    if relative.is_dir():
        return relative, None
    was = Path(record.photos_folder_was)
    if was.is_dir():
        return was, (f"{collection.name}: the collection was moved away from its photos; "
                     f"they are still read from {was} (move the collection and the photos "
                     "together to keep them side by side)")
    raise InputError(f"{collection.name}: its photo folder is missing: it was "
                     f"{record.photos_folder} beside the collection ({was}); move the "
                     "photos back there (move the collection and its photo folder together), "
                     f"or index them again where they are now: {reindex_words(collection)}")


def read_collection(collection: Path, options: ReadOptions | None = None) -> Dataset:
    """Return the collection as a Dataset (format ``collection``, protocol ``instance``):
    see the module docstring. Every photo is kept as a query, whatever
    ``options.drop_orphans`` says (a photo without another view of its artwork is skipped
    when scoring, and reported). InputError when the record or manifest is damaged or the
    photo folder is missing (:func:`photos_base`)."""
    collection = Path(collection)
    record = read_record(collection)
    base, note = photos_base(collection, record)
    stated = record.photo_folder(collection)
    rows = read_rows(collection / MANIFEST)
    entries = []
    for row in rows:
        on_disk = Path(os.path.normpath(collection / row.image))
        if base != stated:  # the collection moved: the same photo, under the old folder
            on_disk = base / os.path.relpath(on_disk, stated)
        entries.append(InstanceEntry(row.name, row.label, row.role, on_disk, row.title,
                                     row.details))
    opts = options or ReadOptions()
    dataset = instance_dataset(collection, NAME, entries, replace(opts, drop_orphans=False))
    if note is not None:
        dataset = replace(dataset, notes=(note, *dataset.notes))
    return dataset


def artworks_with_views(dataset: Dataset) -> int:
    """Return how many artworks of a collection have two or more photos (what can be
    scored: a photo is searched for the other photos of its artwork)."""
    labels = dataset.gallery_labels
    if labels is None:
        return 0
    counts: dict[str, int] = {}
    for label in labels.tolist():
        counts[str(label)] = counts.get(str(label), 0) + 1
    return sum(n > 1 for n in counts.values())


def nothing_to_score(dataset: Dataset) -> str:
    """Return the sentence saying why a collection whose artworks have one photo each
    cannot be scored, and what would make it scorable."""
    return (f"{dataset.label()}: every artwork has one photo, so no photo has another view of "
            "its artwork to be found and there is nothing to score; to score the collection, "
            "give some artworks two or more photos (one subfolder per artwork) and index it "
            "again")


READER = Reader(NAME, "a collection made by irviewer index (a folder with collection.json)",
                is_collection, read_collection, priority=20,
                takes=frozenset({"ignore_labels", "drop_orphans"}))
