"""The generic CSV manifest: ``image,instance,role`` — any instance-search set in one file.

Each line names an image (a path relative to the CSV), its instance label and its role:
``query``, ``gallery`` or ``both`` (a query that is also a gallery image). Optional columns:
``title`` (a display title), ``artist`` (shown after the title: "Title — Artist"),
``name`` (the image's name in descriptor files and outputs; by default the image path
without its extension: give one where two images in different folders share a file name,
since descriptor rows are matched by the name without its folder), and any other column
(year, room, ...): *details*, shown with the title wherever the image is shown
(:attr:`~irviewer.core.dataset.Dataset.details`).

Positives of a query are the gallery images with the same instance label; a query that is
also a gallery image is not its own match (the ``instance`` protocol removes it). As in
the CLICIDE and GaRoFou evaluations, queries whose instance has no other gallery image are
removed and reported, and instance labels on an ignore list take no part at all. A
``camera`` column makes it a person re-identification set (``irviewer apply-corrections``
writes a Market-1501 folder's corrected identities this way, the image files unrenamed):
``instance`` is then the person id, and the Market-1501 rules of
:func:`irviewer.formats.reid.reid_dataset` apply (same id on another camera positive, same
id and camera removed, id -1 junk), protocol ``market1501`` (``cuhk03`` when the file name
contains cuhk03). Roles are ``query`` or ``gallery``.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from irviewer.core.dataset import Dataset, SkippedQuery, build_query, index_array
from irviewer.core.errors import InputError, examples
from irviewer.core.label_rules import INSTANCE, RULE_GROUPS, LabelIndex, same_label_groups
from irviewer.formats.base import Reader, ReadOptions, read_bytes, read_text
from irviewer.formats.line_edits import Edit, TextLines, ending
from irviewer.io.csv_table import csv_writer, read_records, spreadsheet_safe

NAME = "manifest"
ROLES = ("query", "gallery", "both")
REQUIRED = ("image", "instance", "role")
#: Columns with a meaning of their own; any other column is a detail shown with the title.
KNOWN = (*REQUIRED, "title", "artist", "name", "camera")
#: The rule's group, and ``junk`` where a pair correction puts an item it marks ignored.
INSTANCE_GROUPS = (*RULE_GROUPS[INSTANCE], "junk")


def sniff_manifest(path: Path) -> bool:
    """Return True when ``path`` is a CSV file whose header has image, instance and role."""
    if path.suffix.lower() != ".csv" or not path.is_file():
        return False
    try:
        with path.open(encoding="utf-8-sig", newline="") as f:
            header = next(csv.reader(f), [])
    except (OSError, UnicodeDecodeError):
        return False
    return all(col in [h.strip().lower() for h in header] for col in REQUIRED)


def image_name(image: str) -> str:
    """Return the dataset name of an image path: the path as written, without extension."""
    p = Path(image.replace("\\", "/"))
    return p.with_suffix("").as_posix() if p.suffix else p.as_posix()


def read_manifest(path: Path, options: ReadOptions | None = None) -> Dataset:
    """Return the :class:`Dataset` described by a CSV manifest (protocol ``instance``).

    InputError, naming the file and line, for a missing column, a quoted field whose
    closing quote is missing (the line where it opens), an unknown role, an empty field, a
    repeated image, or a file with no query or no gallery image.
    """
    path = Path(path)
    rows = read_rows(path)
    if any(row.camera is not None for row in rows):
        return _reid_manifest(path, rows)
    entries = [InstanceEntry(row.name, row.label, row.role, (path.parent / row.image).resolve(),
                             row.title, row.details) for row in rows]
    return instance_dataset(path, NAME, entries, options or ReadOptions())


def display_title(title: str, artist: str, label: str) -> str:
    """Return the display title of an image: "Title — Artist" (the separator the demo's
    titles and the presentation's captions use), the title alone without an artist, the
    instance ``label`` as the work when only the artist is known, "" when neither is."""
    if not artist:
        return title
    return f"{title or label} — {artist}"


@dataclass(frozen=True)
class ManifestRow:
    """One data line of a manifest: its line number and cells (camera None without one)."""

    line: int
    image: str
    label: str
    role: str
    title: str = ""
    camera: str | None = None
    name: str = ""
    details: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", image_name(self.image))


def _reid_manifest(path: Path, rows: list[ManifestRow]) -> Dataset:
    """Return the re-identification Dataset of a manifest with a ``camera`` column."""
    from irviewer.formats.reid import default_protocol, reid_dataset

    parsed: dict[str, tuple[list[str], list[int], list[int]]] = {
        "query": ([], [], []), "gallery": ([], [], [])}
    paths: dict[str, Path] = {}
    for row in rows:
        if row.role not in parsed:
            raise InputError(f"{path.name}, line {row.line}: role {row.role!r} in a manifest "
                             "with cameras (re-identification) must be query or gallery")
        values = []
        for what, cell in (("person id", row.label), ("camera", row.camera or "")):
            try:
                values.append(int(cell))
            except ValueError:
                raise InputError(f"{path.name}, line {row.line}: the {what} {cell!r} is not a "
                                 "whole number (a manifest with cameras lists person ids)"
                                 ) from None
        names, ids, cams = parsed[row.role]
        names.append(row.name)
        ids.append(values[0])
        cams.append(values[1])
        paths[row.name] = (path.parent / row.image).resolve()
    (q_names, q_ids, q_cams), (g_names, g_ids, g_cams) = parsed["query"], parsed["gallery"]
    for role, names in (("gallery", g_names), ("query", q_names)):
        if not names:
            raise InputError(f"{path.name}: no image has role {role}, so there is nothing to "
                             f"{'search' if role == 'gallery' else 'evaluate'}")
    return reid_dataset(path, NAME, q_names, np.asarray(q_ids), np.asarray(q_cams), g_names,
                        np.asarray(g_ids), np.asarray(g_cams), paths, default_protocol(path))


@dataclass(frozen=True)
class InstanceEntry:
    """One image of an instance-search set: its name, instance label, role and file."""

    name: str
    label: str
    role: str  # query, gallery or both
    path: Path | None
    title: str = ""
    details: tuple[tuple[str, str], ...] = ()


def instance_dataset(path: Path, format_name: str, entries: list[InstanceEntry],
                     opts: ReadOptions) -> Dataset:
    """Return the Dataset of an instance-search set (CLICIDE / GaRoFou conventions).

    Positives of a query are the gallery images with its label (itself included: the
    ``instance`` protocol removes the self-match). Labels on ``opts.ignore_labels`` take no
    part: their queries are removed, their gallery images ignored for every query. With
    ``opts.drop_orphans`` a query whose label has no other gallery image is removed. Every
    removal is reported.
    """
    where = path.name
    ignore = set(opts.ignore_labels)
    gallery: list[str] = []
    gallery_labels: list[str] = []
    queries_raw: list[tuple[str, str, int]] = []  # (name, label, self index)
    image_paths: dict[str, Path] = {}
    titles: dict[str, str] = {}
    details: dict[str, tuple[tuple[str, str], ...]] = {}
    for e in entries:
        if e.path is not None:
            image_paths[e.name] = e.path
        if e.title:
            titles[e.name] = e.title
        if e.details:
            details[e.name] = e.details
        self_index = -1
        if e.role in ("gallery", "both"):
            self_index = len(gallery)
            gallery.append(e.name)
            gallery_labels.append(e.label)
        if e.role in ("query", "both"):
            queries_raw.append((e.name, e.label, self_index))
    if not gallery:
        raise InputError(f"{where}: no image has role gallery or both, so there is nothing "
                         "to search")
    if not queries_raw:
        raise InputError(f"{where}: no image has role query or both, so there is nothing "
                         "to evaluate")
    index = LabelIndex.of(np.asarray(gallery_labels))
    unknown_ignored = sorted(ignore - set(gallery_labels) - {q[1] for q in queries_raw})
    notes: list[str] = []
    if unknown_ignored:
        notes.append(f"ignore list: {len(unknown_ignored)} label(s) appear nowhere in "
                     f"{where}, e.g. {examples(unknown_ignored)}")
    queries = []
    skipped: list[SkippedQuery] = []
    for name, label, self_index in queries_raw:
        if label in ignore:
            skipped.append(SkippedQuery(name, f"instance {label!r} is on the ignore list"))
            continue
        groups = same_label_groups(index, label)
        if opts.drop_orphans and not np.any(groups["positive"] != self_index):
            skipped.append(SkippedQuery(name, f"instance {label!r} has no other gallery image"))
            continue
        queries.append(build_query(name, name, groups, self_index=self_index,
                                   meta={"label": label, "title": titles.get(name, "")}))
    ignored = index_array(i for i, lab in enumerate(gallery_labels) if lab in ignore)
    missing = [n for n, p in image_paths.items() if not p.is_file()]
    if missing:
        notes.append(f"{len(missing)} of {len(image_paths)} image files are missing, "
                     f"e.g. {examples(missing)}; tiles will show names only")
    if not queries:
        raise InputError(f"{where}: all {len(queries_raw)} queries were removed "
                         f"({skipped[0].reason}, ...); nothing is left to evaluate")
    return Dataset(name=path.stem, format=format_name, path=path, gallery=tuple(gallery),
                   queries=tuple(queries), groups=INSTANCE_GROUPS, protocols=("instance",),
                   global_ignored=ignored, skipped_queries=tuple(skipped),
                   image_paths=image_paths, gallery_labels=np.asarray(gallery_labels),
                   notes=tuple(notes), titles=titles, details=details)


def read_rows(path: Path) -> list[ManifestRow]:
    """Return each data line's cells (``camera`` None when the header has no such column)."""
    text = read_text(path, "a CSV manifest")
    records = read_records(text, path.name)
    raw_header = records[0][1] if records else []
    header = [h.strip().lower() for h in raw_header]
    if not header:
        raise InputError(f"{path.name} is empty: a manifest needs the header "
                         "image,instance,role")
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise InputError(f"{path.name}: the header lacks column(s) {', '.join(missing)}; "
                         f"it must have image,instance,role (found {','.join(header)})")
    col = {c: header.index(c) for c in KNOWN if c in header}
    extra = [(i, raw_header[i].strip()) for i, h in enumerate(header)
             if h and h not in KNOWN and header.index(h) == i]
    rows: list[ManifestRow] = []
    seen: dict[str, int] = {}
    for line, raw in records[1:]:
        if not raw or all(not cell.strip() for cell in raw):
            continue
        if len(raw) < len(header):
            raise InputError(f"{path.name}, line {line}: {len(raw)} fields where the header "
                             f"has {len(header)}")
        image, label, role = (raw[col[c]].strip() for c in REQUIRED)
        title, artist, explicit = (raw[col[c]].strip() if c in col else ""
                                   for c in ("title", "artist", "name"))
        camera = raw[col["camera"]].strip() if "camera" in col else None
        details = tuple((column, raw[i].strip()) for i, column in extra
                        if i < len(raw) and raw[i].strip())
        role = role.lower()
        if not image or not label:
            field = "image" if not image else "instance"
            raise InputError(f"{path.name}, line {line}: the {field} field is empty")
        if role not in ROLES:
            raise InputError(f"{path.name}, line {line}: role {role!r} is not one of "
                             f"{', '.join(ROLES)}")
        name = explicit or image_name(image)
        if name in seen:
            what = f"the name {name}" if explicit else f"image {image}"
            raise InputError(f"{path.name}, line {line}: {what} is already listed on "
                             f"line {seen[name]}; list each image once (role both for an "
                             "image that is query and gallery)")
        seen[name] = line
        rows.append(ManifestRow(line, image, label, role, display_title(title, artist, label),
                                camera, name, details))
    if not rows:
        raise InputError(f"{path.name} has a header but no images")
    return rows


READER = Reader(NAME, "CSV manifest image,instance,role (instance search)",
                sniff_manifest, read_manifest, priority=0,
                takes=frozenset({"ignore_labels", "drop_orphans"}))


def corrected_label_of(dataset: Dataset) -> dict[str, str]:
    """Return image name -> label (as text) of every gallery image and query of a label
    dataset, as its (possibly corrected) ground truth has them."""
    labels = {q.image: str(q.meta.get("label")) for q in dataset.queries}
    if dataset.gallery_labels is not None:
        labels.update(zip(dataset.gallery, (str(v) for v in dataset.gallery_labels.tolist()),
                          strict=True))
    return labels


def manifest_edit(source: Path, labels: dict[str, str]) -> Edit:
    """Return the manifest ``source`` with the instance cell of every image whose label in
    ``labels`` differs from it replaced: only those rows are written anew (as CSV, with the
    row's own line ending); every other byte stays as published (other rows, quoting, line
    endings, a BOM, rows of queries the reader removed)."""
    data = read_bytes(source, "a CSV manifest")
    text = TextLines.of(data)
    header = [h.strip().lower() for h in next(csv.reader([text.lines[0].decode(
        "utf-8", "replace")]), [])] if text.lines else []
    image, instance = header.index("image"), header.index("instance")
    named = header.index("name") if "name" in header else None
    out = [text.lines[0]]
    changed = 0
    record: list[bytes] = []
    for line in text.lines[1:]:
        record.append(line)
        joined = b"".join(record)
        if joined.count(b'"') % 2:  # a quoted cell goes on over the line break
            continue
        record = []
        raw = next(csv.reader(io.StringIO(joined.decode("utf-8", "replace"), newline="")),
                   [])
        if len(raw) > max(image, instance) and raw[image].strip():
            explicit = raw[named].strip() if named is not None and named < len(raw) else ""
            name = explicit or image_name(raw[image].strip())
            if name in labels and labels[name] != raw[instance].strip():
                raw = [*raw[:instance], spreadsheet_safe(labels[name]), *raw[instance + 1:]]
                stream = io.StringIO()
                csv.writer(stream, lineterminator="").writerow(raw)  # the publisher's cells
                out.append(stream.getvalue().encode("utf-8") + ending(joined))
                changed += 1
                continue
        out.append(joined)
    out += record
    return Edit(text.bom + b"".join(out), changed)


def new_manifest(out: Path, dataset: Dataset) -> bytes:
    """Return ``dataset``'s images as a CSV manifest to be written at ``out``: gallery images
    in gallery order (role ``both`` when also a query), then query-only images; ``image`` is
    each file's path relative to ``out``'s folder, ``instance`` its label, and a ``camera``
    column for a re-identification set. InputError when an image has no known file."""
    out = Path(out)
    labels = corrected_label_of(dataset)
    queries = {q.image: q for q in dataset.queries}
    cameras = dataset.gallery_cameras
    reid = cameras is not None
    missing = [n for n in (*dataset.gallery, *queries) if n not in dataset.image_paths]
    if missing:
        raise InputError(f"{dataset.label()}: {len(missing)} images have no known file, e.g. "
                         f"{examples(missing)}; a manifest lists image files")
    base = out.absolute().parent

    def where(name: str) -> str:
        return Path(os.path.relpath(Path(dataset.image_paths[name]).absolute(), base)).as_posix()

    named = any(image_name(where(n)) != n for n in (*dataset.gallery, *queries))

    def own_name(name: str) -> list[str]:  # a name other than the path's, kept by a column
        return [name] if named else []

    stream = io.StringIO(newline="")
    writer = csv_writer(stream)
    writer.writerow(["image", "instance", "role", *(["camera"] if reid else []),
                     *(["name"] if named else [])])
    for i, name in enumerate(dataset.gallery):
        role = "both" if name in queries and not reid else "gallery"
        writer.writerow([where(name), labels[name], role,
                         *([int(cameras[i])] if cameras is not None else []),
                         *own_name(name)])
    gallery = set(dataset.gallery)
    for name, q in queries.items():
        if reid or name not in gallery:
            writer.writerow([where(name), labels[name], "query",
                             *([q.meta_int("camera")] if reid else []), *own_name(name)])
    return stream.getvalue().encode("utf-8")
