"""Indexing a curator's folder of photos into a collection (Qt-free): ``irviewer index``
and the window's File ▸ New collection from a folder….

:func:`iter_index` is a generator like :func:`irviewer.opening.opener.iter_open`: it
yields :class:`IndexStep` progress (one per photo described, so a caller can show a count
and the time left) and returns the :class:`Indexed` result; closing it cancels, and
nothing is written until every photo is done, so a cancelled or failed run leaves the
collection as it was. What a collection holds is :mod:`irviewer.formats.collection`.

* Photos are listed by layout (:mod:`irviewer.formats.photo_folder`): one photo per
  artwork, or one subfolder per artwork.
* The extractor is ``demo-vlad`` unless another is named (any installed one,
  :mod:`irviewer.extract.registry`). One that learns (:class:`~irviewer.extract.base.Learner`)
  learns from the collection itself: a sample of up to :data:`LEARN_PHOTOS` photos spread
  over the collection, :data:`LEARN_ROWS` rows in all. Learning from the collection, not
  the demo's paintings, is what generalises (``tests/benchmarks/bench_index.py`` compares
  both).
* A re-run describes only new or changed photos (path, size and modification time), drops
  removed ones and keeps what was learnt — unless the extractor changes, or the photos
  learnt from are fewer than both :data:`LEARN_PHOTOS` and half the collection (a
  collection that grew from a handful of photos), when it learns again and describes
  every photo again.
* Every photo's local features (keypoints and descriptors,
  :mod:`irviewer.extract.local_features`) are stored beside its vector, from the same
  decoding, within the budget stated there; then the acceptance rule is calibrated on the
  collection's own photos (:mod:`irviewer.collection.calibration`) — again only when photos
  were described or removed — and photos of different artworks that show one picture are
  named (:func:`lookalike_lines`), on every run until they are put together or removed
  (the record keeps them).
* A photo that cannot be described (broken, empty, a decompression bomb, not an image, a
  blank picture) is skipped with one sentence and counted; only a run that indexes no photo
  at all is an error.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from irviewer.collection.calibration import Calibrated, calibrate
from irviewer.collection.describing import PROCESSES, ExtractorSpec, Pool
from irviewer.core.acceptance import DEFAULT_STRICTNESS, Calibration
from irviewer.core.errors import InputError, counted, either
from irviewer.core.local_features import FeatureTable, LocalFeatures
from irviewer.extract.base import Extractor, Learner
from irviewer.extract.local_features import REFERENCE_SIDE
from irviewer.extract.registry import get_extractor, load_extractor
from irviewer.formats.artwork_titles import ArtworkTitles, read_titles, titles_summary
from irviewer.formats.collection import (
    DESCRIPTORS,
    MANIFEST,
    CollectionRecord,
    IndexedPhoto,
    SkippedPhoto,
    is_collection,
    read_record,
    write_record,
)
from irviewer.formats.descriptor_files import write_descriptor_file, write_npz
from irviewer.formats.local_feature_file import (
    LOCAL_FEATURES,
    read_local_features,
    write_local_features,
)
from irviewer.formats.photo_folder import Photo, PhotoFolder, list_photo_folder
from irviewer.io.atomic import atomic_open
from irviewer.io.csv_table import csv_writer
from irviewer.version import __version__

#: The extractor a new collection is described with unless another is named.
DEFAULT_EXTRACTOR = "demo-vlad"
#: Lookalike pairs named after indexing, at most (then how many more).
LOOKALIKES_TOLD = 5
#: Photos a learning extractor learns from, at most (spread evenly over the collection).
LEARN_PHOTOS = 64
#: Rows (local descriptors) it learns from in all, shared between those photos.
LEARN_ROWS = 20_000
#: Seed of the learning sample (a collection's vocabulary is the same every time).
LEARN_SEED = 20261123


@dataclass(frozen=True)
class IndexRequest:
    """What to index: the ``photos`` folder, the collection folder to write (``out``),
    an optional titles file, the extractor (None: the collection's own on a re-run, else
    :data:`DEFAULT_EXTRACTOR`), and how to describe in parallel (``mode`` of
    :class:`~irviewer.collection.describing.Pool`, ``workers`` None: its default)."""

    photos: Path
    out: Path
    titles: Path | None = None
    extractor: str | None = None
    mode: str = PROCESSES
    workers: int | None = None


@dataclass(frozen=True)
class IndexStep:
    """Progress of :func:`iter_index`: the ``stage``, ``done`` of ``total`` (0 of 0: no
    count), and for a photo that could not be used, the ``problem`` sentence."""

    stage: str
    done: int = 0
    total: int = 0
    problem: str | None = None


@dataclass(frozen=True)
class Indexed:
    """The result of indexing: the collection folder, its record, and the lines to tell
    (the photo folder's notes, titles without a photo or photos without a title)."""

    collection: Path
    record: CollectionRecord
    lines: tuple[str, ...] = field(default=())

    def summary(self) -> str:
        """Return the one-line summary: artworks, photos, described and reused, skipped,
        seconds."""
        r = self.record
        skipped = f", {counted(len(r.skipped), 'photo')} skipped" if r.skipped else ""
        reused = f" ({r.described:,} described, {r.reused:,} unchanged)" if r.reused else ""
        return (f"indexed {counted(r.artworks, 'artwork')}, {counted(len(r.photos), 'photo')}"
                f"{reused}{skipped} in {r.elapsed_s:.1f} s with {r.extractor} -> "
                f"{self.collection}")


#: What :func:`iter_index` is: progress steps, then the result.
Indexing = Generator[IndexStep, None, Indexed]


@dataclass
class _Previous:
    """What a re-run keeps from the collection it updates."""

    record: CollectionRecord | None = None
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    note: str | None = None
    features: FeatureTable | None = None


def iter_index(request: IndexRequest) -> Indexing:
    """Index ``request.photos`` into ``request.out``, yielding :class:`IndexStep` progress;
    return the :class:`Indexed` result (see the module docstring).

    InputError with one sentence for a missing or empty photo folder, an output that is
    not a collection or an empty folder, a malformed titles file, an unknown extractor, and
    when no photo at all could be indexed.
    """
    start = time.perf_counter()
    photos_dir, out = Path(request.photos), Path(request.out)
    _check_out(out, photos_dir)
    folder = list_photo_folder(photos_dir, skip=out)
    previous = _previous(out)
    titles_path = request.titles or _recorded_titles(out, previous.record)
    titles = read_titles(titles_path) if titles_path is not None else None
    name = request.extractor or (previous.record.extractor if previous.record else None) \
        or DEFAULT_EXTRACTOR
    installed = get_extractor(name)
    yield IndexStep(f"found {counted(len(folder.photos), 'photo')} of "
                    f"{counted(len(folder.artworks), 'artwork')}")
    extractor, keep, learn = _extractor_to_use(installed, out, previous, folder)
    lines = [*folder.notes, *([previous.note] if previous.note else [])]
    skipped: dict[str, str] = {}
    learned_from = previous.record.learned_from if previous.record and not learn else 0
    with Pool(request.mode, request.workers) as pool:
        if learn:
            extractor, learned_from = yield from _learn(pool, installed, folder, skipped)
        todo = [p for p in folder.photos if p.name not in keep and p.relative not in skipped]
        spec = ExtractorSpec.of(extractor)
        vectors: dict[str, np.ndarray] = {}
        features: dict[str, LocalFeatures] = {}
        paths = [photos_dir / p.relative for p in todo]
        yield IndexStep("describing the photos", 0, len(todo))
        for done, (i, result) in enumerate(pool.describe_with_features(spec, paths), start=1):
            photo = todo[i]
            if isinstance(result, str):
                skipped[photo.relative] = result
            else:
                vectors[photo.name], features[photo.name] = result.vector, result.features
            yield IndexStep("describing the photos", done, len(todo),
                            result if isinstance(result, str) else None)
        indexed = [p for p in folder.photos if p.name in keep or p.name in vectors]
        if not indexed:
            example = next(iter(skipped.values()), "")
            raise InputError(f"{photos_dir}: none of its "
                             f"{counted(len(folder.photos), 'photo')} could be indexed "
                             f"(e.g. {example}); nothing was written")
        vectors = {**keep, **vectors}
        table = _feature_table(indexed, features, previous.features)
        calibration = previous.record.calibration if previous.record is not None and \
            not features and len(indexed) == len(previous.record.photos) else None
        if calibration is not None and not calibration.lookalikes_left_out:
            calibration = None  # recorded before lookalikes were left out: made again
        if calibration is not None and previous.record is not None:
            lookalikes = previous.record.lookalikes
        else:
            calibrated = yield from _calibrate(pool, photos_dir, indexed, vectors, table)
            calibration = calibrated.calibration
            lookalikes = tuple((indexed[a.photo].name, indexed[a.other].name, a.inliers)
                               for a in calibrated.lookalikes)
        lines += lookalike_lines(lookalikes, indexed)
    yield IndexStep("writing the collection")
    if titles is not None:
        lines += _titles_lines(titles, folder, indexed)
    record = _write(out, folder, indexed, vectors, extractor, previous.record,
                    titles_path, skipped, len(features), len(indexed) - len(features),
                    learned_from=learned_from if isinstance(extractor, Learner) else 0,
                    elapsed=time.perf_counter() - start, titles=titles, table=table,
                    calibration=calibration, lookalikes=lookalikes)
    return Indexed(out, record, tuple(lines))


def answers_line(calibration: Calibration) -> str:
    """Return the line that says when a visitor's photo is named as one of the collection's
    artworks (the calibrated rule at the default strictness, and what it keeps of the
    collection's own changed photos)."""
    t = calibration.threshold()
    kept = calibration.kept()
    share = "" if kept is None else (f"; {kept:.0%} of the collection's own photos, changed "
                                     "as a visitor's phone changes them, reach it")
    rule = "calibrated on its photos" if calibration.calibrated else \
        "the default rule: too few artworks to calibrate"
    return (f"answers: an artwork is named when at least {t} matched points of a visitor's "
            f"photo agree with its photo ({DEFAULT_STRICTNESS}, {rule}{share})")


def _feature_table(indexed: list[Photo], features: dict[str, LocalFeatures],
                   previous: FeatureTable | None) -> FeatureTable:
    """Return the local features of the ``indexed`` photos, in their order: the new ones,
    else the previous run's."""
    rows = []
    for p in indexed:
        # None, not falsiness: a blank photo's features are empty (len 0) yet present
        found = features.get(p.name)
        if found is None and previous is not None:
            found = previous.get(p.name)
        assert found is not None  # a kept vector is kept only with its features
        rows.append((p.name, found))
    return FeatureTable.of(rows, REFERENCE_SIDE)


def lookalike_lines(lookalikes: Sequence[tuple[str, str, int]], photos: Sequence[Photo]
                    ) -> list[str]:
    """Return the lines that tell a curator which photos of different artworks show the
    same picture (``lookalikes``: (photo name, other photo name, inliers), as the record
    keeps them; :func:`~irviewer.collection.calibration.lookalike_pairs`), at most
    :data:`LOOKALIKES_TOLD` and how many more, then what that means and what to do (in
    each edge's words: :func:`~irviewer.core.errors.either`). Pairs naming a photo no
    longer in ``photos`` are left out."""
    where = {p.name: p.relative for p in photos}
    found = [(where[a], where[b], n) for a, b, n in lookalikes if a in where and b in where]
    if not found:
        return []
    lines = [f"{a} and {b} are filed as different artworks but look like one picture: "
             f"{n} points agree" for a, b, n in found[:LOOKALIKES_TOLD]]
    if len(found) > LOOKALIKES_TOLD:
        lines.append(f"... and {counted(len(found) - LOOKALIKES_TOLD, 'more pair')} like them")
    merge = either("put them in one artwork's folder",
                   "choose Collection \u25b8 These are one artwork\u2026")
    lines.append("a visitor's photo of either is answered with both titles (the answers' "
                 f"rule leaves such pairs out): if they show one artwork, {merge}, or "
                 "remove the extra photo")
    return lines


def _calibrate(pool: Pool, photos_dir: Path, indexed: list[Photo],
               vectors: dict[str, np.ndarray], table: FeatureTable
               ) -> Generator[IndexStep, None, Calibrated]:
    """Return the collection's calibration and lookalikes
    (:func:`irviewer.collection.calibration.calibrate`), yielding progress."""
    steps = calibrate(pool, [p.name for p in indexed],
                      [photos_dir / p.relative for p in indexed],
                      [p.artwork for p in indexed],
                      np.stack([vectors[p.name] for p in indexed]), table)
    while True:
        try:
            done, total = next(steps)
        except StopIteration as stop:
            result: Calibrated = stop.value
            return result
        yield IndexStep("calibrating the answers on the collection's photos", done, total)


def _check_out(out: Path, photos: Path) -> None:
    """InputError when ``out`` cannot be the collection: a file, the photo folder itself,
    or a folder that holds other things than a collection."""
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: is a file; give a folder for the collection")
    if out.exists() and os.path.realpath(out) == os.path.realpath(photos):
        raise InputError(f"{out}: is the photo folder itself; give another folder for the "
                         "collection (it may be inside the photo folder)")
    if out.is_dir() and not is_collection(out) and _holds_files(out):
        raise InputError(f"{out}: is a folder that holds other files, not a collection; "
                         "give a new or empty folder for the collection")


def _holds_files(folder: Path) -> bool:
    """Return whether ``folder`` holds anything but hidden entries (the listing closed as
    soon as one is found)."""
    with os.scandir(folder) as entries:
        return any(not e.name.startswith(".") for e in entries)


def _previous(out: Path) -> _Previous:
    """Return what the collection at ``out`` has (nothing for a new one; a damaged one is
    indexed afresh, with a note)."""
    if not is_collection(out):
        return _Previous()
    try:
        record = read_record(out)
        with np.load(out / DESCRIPTORS, allow_pickle=False) as archive:
            names = [str(n) for n in archive["names"].tolist()]
            features = np.asarray(archive["features"], dtype=np.float32)
    except (InputError, OSError, ValueError, KeyError, EOFError) as e:
        return _Previous(note=f"{out.name}: the collection could not be read ({e}); every "
                              "photo is described again")
    if len(names) != len(features):
        return _Previous(note=f"{out.name}: its descriptor file is damaged; every photo is "
                              "described again")
    try:
        table = read_local_features(out / (record.local_features or LOCAL_FEATURES))
    except InputError:  # made before verification, or damaged: photos described again
        table = None
    vectors = dict(zip(names, features, strict=True))
    if table is None or table.side != REFERENCE_SIDE:
        vectors = {}
    return _Previous(record, vectors, features=table)


def _recorded_titles(out: Path, record: CollectionRecord | None) -> Path | None:
    """Return the titles file the last run was given, when it is still there."""
    if record is None or record.titles is None:
        return None
    path = Path(os.path.normpath(out / record.titles))
    return path if path.is_file() else None


def _extractor_to_use(installed: Extractor, out: Path, previous: _Previous, folder: PhotoFolder
                      ) -> tuple[Extractor, dict[str, np.ndarray], bool]:
    """Return (the extractor, the previous vectors to keep by photo name, whether to learn
    first). A previous vector is kept when its photo is unchanged (the same file, size and
    modification time); none is when the extractor changed or must learn again."""
    record = previous.record
    learns = isinstance(installed, Learner)
    if record is None or record.extractor != installed.name:
        return installed, {}, learns
    extractor = installed
    if learns:
        if record.extractor_state is None or \
                record.learned_from < min(LEARN_PHOTOS, len(folder.photos) / 2):
            return installed, {}, True
        try:
            extractor = load_extractor(installed.name, out / record.extractor_state)
        except InputError:
            return installed, {}, True
    recorded = {p.name: (p.file, p.size, p.mtime_ns) for p in record.photos}
    keep = {p.name: previous.vectors[p.name] for p in folder.photos
            if recorded.get(p.name) == (p.relative, p.size, p.mtime_ns)
            and p.name in previous.vectors
            and previous.features is not None and p.name in previous.features}
    if any(len(v) != extractor.dim for v in keep.values()):
        return extractor, {}, False
    return extractor, keep, False


def _learn(pool: Pool, installed: Extractor, folder: PhotoFolder,
           skipped: dict[str, str]) -> Generator[IndexStep, None, tuple[Extractor, int]]:
    """Return (the extractor after learning from a sample of the collection's photos, how
    many photos it learnt from): :data:`LEARN_PHOTOS` at most, evenly spread,
    :data:`LEARN_ROWS` rows in all; yields progress. Photos that cannot be used are added to
    ``skipped``."""
    assert isinstance(installed, Learner)
    photos = folder.photos
    n = min(LEARN_PHOTOS, len(photos))
    picks = sorted({round(i * (len(photos) - 1) / max(1, n - 1)) for i in range(n)})
    count = math.ceil(LEARN_ROWS / len(picks))
    paths = [folder.folder / photos[i].relative for i in picks]
    samples: list[np.ndarray | None] = [None] * len(picks)
    spec = ExtractorSpec.of(installed)
    yield IndexStep("learning from the photos", 0, len(picks))
    for done, (i, result) in enumerate(
            pool.sample(spec, paths, count, [LEARN_SEED + j for j in range(len(picks))]),
            start=1):
        if isinstance(result, str):
            skipped[photos[picks[i]].relative] = result
        else:
            samples[i] = result
        yield IndexStep("learning from the photos", done, len(picks),
                        result if isinstance(result, str) else None)
    usable = [s for s in samples if s is not None and len(s)]
    if not usable:
        example = next(iter(skipped.values()), "")
        some = "its" if len(picks) == len(photos) else "the sample of its"
        raise InputError(f"{folder.folder}: none of {some} {counted(len(picks), 'photo')} "
                         f"could be indexed (e.g. {example}); nothing was written")
    return installed.learned(usable, LEARN_SEED), len(usable)


def _titles_lines(titles: ArtworkTitles, folder: PhotoFolder, indexed: list[Photo]) -> list[str]:
    artworks = list(dict.fromkeys(p.artwork for p in indexed))
    _, missing, unused = titles.match(artworks)
    return titles_summary(missing, unused, titles.path)


def _columns(titles: ArtworkTitles | None) -> tuple[list[str], list[int]]:
    """Return the manifest's columns after image,instance,role,name and, for each, the
    titles file's column it comes from (-1: none; the title is the artwork id then)."""
    if titles is None:
        return ["title"], [-1]
    lowered = [c.lower() for c in titles.columns]
    columns, sources = ["title"], [lowered.index("title") if "title" in lowered else -1]
    if "artist" in lowered:
        columns.append("artist")
        sources.append(lowered.index("artist"))
    for i, c in enumerate(titles.columns):
        if c.lower() not in ("title", "artist"):
            columns.append(c)
            sources.append(i)
    return columns, sources


def _write(out: Path, folder: PhotoFolder, indexed: list[Photo], vectors: dict[str, np.ndarray],
           extractor: Extractor, previous: CollectionRecord | None, titles_path: Path | None,
           skipped: dict[str, str], described: int, reused: int, learned_from: int,
           elapsed: float, titles: ArtworkTitles | None, table: FeatureTable,
           calibration: Calibration, lookalikes: tuple[tuple[str, str, int], ...]
           ) -> CollectionRecord:
    """Write the collection (descriptors, what was learnt, local features, manifest, then
    the record last, each atomically) and return its record."""
    out.mkdir(parents=True, exist_ok=True)
    state_name = None
    if isinstance(extractor, Learner):
        state_name = f"{getattr(extractor, 'state_name', 'learned')}.npz"
        write_npz(out / state_name, extractor.state())
    write_descriptor_file(out / DESCRIPTORS, np.stack([vectors[p.name] for p in indexed]),
                          [p.name for p in indexed], extractor.name, state_name)
    write_local_features(out / LOCAL_FEATURES, table)
    columns, sources = _columns(titles)
    rows = titles.match([p.artwork for p in indexed])[0] if titles is not None else {}
    with atomic_open(out / MANIFEST, newline="") as stream:
        writer = csv_writer(stream)
        writer.writerow(["image", "instance", "role", "name", *columns])
        for p in indexed:
            image = Path(os.path.relpath(folder.folder / p.relative, out)).as_posix()
            values = rows.get(p.artwork)
            cells = [(values[s] if values is not None and s >= 0 else "") for s in sources]
            if not cells[0]:
                cells[0] = p.artwork
            writer.writerow([image, p.artwork, "both", p.name, *cells])
    now = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
    record = CollectionRecord(
        photos_folder=Path(os.path.relpath(folder.folder, out)).as_posix(),
        photos_folder_was=str(folder.folder.resolve()), layout=folder.layout,
        extractor=extractor.name, extractor_state=state_name, learned_from=learned_from,
        titles=None if titles_path is None else Path(os.path.relpath(titles_path, out)).as_posix(),
        created=previous.created if previous else now, updated=now,
        irviewer_version=__version__, artworks=len({p.artwork for p in indexed}),
        photos=tuple(IndexedPhoto(p.relative, p.artwork, p.name, p.size, p.mtime_ns)
                     for p in indexed),
        skipped=tuple(SkippedPhoto(f, r) for f, r in sorted(skipped.items())),
        described=described, reused=reused, elapsed_s=round(elapsed, 2),
        local_features=LOCAL_FEATURES, calibration=calibration, lookalikes=lookalikes)
    write_record(out, record)
    for old in out.glob("*.npz"):  # what an extractor used before learnt: no longer named
        if old.name not in (DESCRIPTORS, LOCAL_FEATURES, state_name):
            old.unlink()
    return record

