"""The corrections file: a CSV beside the dataset holding its label corrections.

UTF-8, header ``query,item,label,author,time,note,user,machine,window`` (every column after
``label`` may be left out when read: files written before the last three existed still
read). ``time`` is ISO 8601 (``2026-11-23T14:05:09Z``; two writers' corrections of one pair
are ordered by it) or empty; ``user``, ``machine`` and ``window`` name who wrote the row
(the login name, the host, an id of the window). One row per correction, in the order they
apply:

* ``query`` set: a pair correction; ``label`` is one of the dataset's groups or ``negative``
  (:func:`irviewer.core.corrections.pair_labels`);
* ``query`` empty: an image relabel; ``label`` is the image's new instance label, person id
  or Holidays group.

Names are the dataset's own query and image names, as ``irviewer eval --json`` prints them.
A file may carry an extra ``accept`` column (``irviewer audit --csv`` writes one, empty, for a
reviewer to fill): then only the rows whose ``accept`` says yes (``yes``, ``y``, ``true``,
``1`` or ``x``, any case) are corrections; the others are suggestions not taken.
The default file is ``<dataset>.corrections.csv`` beside the dataset: ``demo.csv`` ->
``demo.corrections.csv``, the folder ``market1501/`` -> ``market1501.corrections.csv`` beside
the folder. When the dataset's folder cannot be written (a shared benchmark on a read-only
mount, another user's folder), the file is kept in the user's data folder instead
(:func:`corrections_place`). It is written atomically (a reader sees the old or the new
file, never a part), every cell a spreadsheet would run as a formula neutralised
(:mod:`irviewer.io.csv_table`), and read strictly: a quoted field whose closing quote is
missing is refused with the line where it opens, never read on into the rows after it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from irviewer.core.corrections import (
    Correction,
    CorrectionLog,
    NothingToChangeError,
    can_relabel,
    pair_labels,
)
from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError
from irviewer.formats.base import read_bytes
from irviewer.io import user_data
from irviewer.io.atomic import atomic_open
from irviewer.io.csv_table import csv_writer, iter_records

COLUMNS = ("query", "item", "label", "author", "time", "note", "user", "machine", "window")
REQUIRED = COLUMNS[:3]
#: The optional column of a reviewed suggestions file, and the values that take a row.
ACCEPT = "accept"
ACCEPTED = ("yes", "y", "true", "1", "x")
SUFFIX = ".corrections.csv"
#: The folder of the user's data folder that keeps corrections of read-only datasets.
KEPT_FOLDER = "corrections"


def default_corrections_path(dataset_path: Path) -> Path:
    """Return ``<dataset>.corrections.csv`` beside the dataset: the file's name without its
    extension (``demo.csv`` -> ``demo.corrections.csv``), a folder's whole name."""
    p = Path(dataset_path)
    return p.parent / f"{_dataset_name(p)}{SUFFIX}"


def kept_corrections_path(dataset_path: Path) -> Path:
    """Return where the user's data folder keeps the dataset's corrections when its own
    folder cannot be written: ``corrections/<name>-<key>.corrections.csv`` there, the key
    naming the dataset's absolute path (:func:`irviewer.io.user_data.kept_name`)."""
    p = Path(dataset_path)
    return (user_data.user_data_folder() / KEPT_FOLDER
            / user_data.kept_name(p, _dataset_name(p), SUFFIX))


@dataclass(frozen=True)
class CorrectionsPlace:
    """Where a dataset's corrections live: ``path`` is the file they are saved to,
    ``existing`` the file to read when the dataset opens (None: none made yet; it differs
    from ``path`` when corrections found beside a dataset whose folder became read-only
    are saved on in the user's data folder), ``kept`` True when ``path`` is in the user's
    data folder because the dataset's folder cannot be written, ``beside`` the file beside
    the dataset (``<dataset>.corrections.csv``)."""

    path: Path
    existing: Path | None
    kept: bool
    beside: Path

    def sentence(self) -> str:
        """Return where the corrections are kept and why when that is the user's data
        folder ("" when beside the dataset)."""
        if not self.kept:
            return ""
        if user_data.can_write_in(self.beside.parent):
            return (f"the label corrections of this dataset are kept in {self.path} (made "
                    f"while its folder {self.beside.parent} could not be written)")
        return (f"the label corrections of this dataset are kept in {self.path}, as its "
                f"folder {self.beside.parent} cannot be written")


def corrections_place(dataset_path: Path) -> CorrectionsPlace:
    """Return where the corrections of the dataset at ``dataset_path`` are read and saved.

    The rule, the same on every opening: a file the user's data folder keeps for this
    dataset comes first (it holds every correction made since the dataset's folder could
    not be written); else the file beside the dataset, when its folder can be written
    (:func:`irviewer.io.user_data.can_write_in`); else the user's data folder's file
    (its folder created here), which receives the corrections read beside the dataset, if
    any, as soon as one is made (:func:`write_corrections` creates its folder).
    """
    beside = default_corrections_path(dataset_path)
    kept = kept_corrections_path(dataset_path)
    if kept.is_file():
        return CorrectionsPlace(kept, kept, True, beside)
    if user_data.can_write_in(beside.parent):
        return CorrectionsPlace(beside, beside if beside.is_file() else None, False, beside)
    return CorrectionsPlace(kept, beside if beside.is_file() else None, True, beside)


def _dataset_name(p: Path) -> str:
    """Return the name a dataset's sidecar files start with: a file's name without its
    extension, a folder's whole name."""
    return p.name if p.is_dir() else p.stem


@dataclass(frozen=True)
class LoadedCorrections:
    """A corrections file applied to a dataset: the file, its corrections, the log, and
    (line, correction) of the rows left out because they set what the ground truth already
    had at their turn (the log's rule: such a correction is never applied)."""

    path: Path
    corrections: tuple[Correction, ...]
    log: CorrectionLog
    left_out: tuple[tuple[int, Correction], ...] = ()

    def notes(self) -> tuple[str, ...]:
        """Return the sentence saying which rows changed nothing (none: empty), e.g.
        "fix.csv: line 3 sets what the ground truth already has: not applied"."""
        n = len(self.left_out)
        if not n:
            return ()
        lines = ", ".join(str(line) for line, _ in self.left_out[:5])
        more = f" and {n - 5} more" if n > 5 else ""
        which = f"line {lines}" if n == 1 else f"lines {lines}{more}"
        verb = "sets" if n == 1 else "set"
        return (f"{self.path.name}: {which} {verb} what the ground truth already has: "
                "not applied",)


def read_corrections(path: Path, dataset: Dataset) -> tuple[Correction, ...]:
    """Return the corrections of the file at ``path``, checked against ``dataset``.

    InputError with one sentence naming the file and line for a file that is binary, not
    UTF-8 or not CSV, a missing column, an unknown query or image, a label that is not a
    group of this dataset (or not a label of its family), a relabel on a dataset without
    image labels, and two rows that set the same pair (or image) differently.
    """
    return tuple(c for _, c in _checked_rows(Path(path), dataset))


def _checked_rows(path: Path, dataset: Dataset) -> list[tuple[int, Correction]]:
    """Return (line, correction) of each row of ``path``, checked against ``dataset``; a
    row repeating an earlier one exactly is left out."""
    where = path.name
    rows = read_rows(read_csv_text(path, "a corrections file", COLUMNS), where)
    if not rows:
        return []
    gallery = set(dataset.gallery)
    queries = {q.name for q in dataset.queries}
    images = gallery | {q.image for q in dataset.queries}
    labels = pair_labels(dataset)
    first: dict[tuple[str, str], tuple[int, str]] = {}
    out: list[tuple[int, Correction]] = []
    for line, c in rows:
        if c.is_relabel:
            if not can_relabel(dataset):
                raise InputError(f"{where}, line {line}: the query is empty (an image relabel), "
                                 f"but {dataset.label()} has no image labels; name the query "
                                 "whose ground truth the row corrects")
            if c.item not in images:
                raise InputError(f"{where}, line {line}: no image of {dataset.label()} is "
                                 f"called {c.item!r}")
        else:
            if c.query not in queries:
                raise InputError(f"{where}, line {line}: {dataset.label()} has no query called "
                                 f"{c.query!r}")
            if c.item not in gallery:
                raise InputError(f"{where}, line {line}: {dataset.label()} has no gallery "
                                 f"image called {c.item!r}")
            if c.label not in labels:
                raise InputError(f"{where}, line {line}: {c.label!r} is not a group of "
                                 f"{dataset.label()}; use one of {', '.join(labels)}")
        seen = first.get(c.key)
        if seen is not None and seen[1] != c.label:
            what = "image" if c.is_relabel else "query and item"
            raise InputError(f"{where}, line {line}: contradicts line {seen[0]} (same {what}: "
                             f"{seen[1]!r} there, {c.label!r} here); keep one of the two rows")
        if seen is None:
            first[c.key] = (line, c.label)
            out.append((line, c))
    return out


def read_csv_text(path: Path, what: str, columns: Iterable[str]) -> str:
    """Return the text of the CSV file ``path`` (UTF-8, a BOM dropped); InputError naming
    the file and line for a file that cannot be read, binary data (a NUL byte) or bytes
    that are not UTF-8. ``what`` names the kind of file, ``columns`` its header."""
    where = Path(path).name
    data = read_bytes(path, what)
    if b"\0" in data:
        line = data[:data.index(b"\0")].count(b"\n") + 1
        raise InputError(f"{where}, line {line}: binary data (a NUL byte); {what} is UTF-8 "
                         f"text with the header {','.join(columns)}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise InputError(f"{where}, line {line}: not UTF-8 text (byte {e.start}); save the "
                         "file as UTF-8") from None


def load_corrections(path: Path, dataset: Dataset) -> LoadedCorrections:
    """Return the corrections of ``path`` applied in order to ``dataset`` (the published
    ground truth); InputError as :func:`read_corrections`, and with the line of a row the
    dataset's rules refuse (a relabel to a junk id on a query, an ignored label). A row
    that sets what the ground truth already has at its turn is left out
    (:attr:`LoadedCorrections.left_out`, said by :meth:`LoadedCorrections.notes`)."""
    path = Path(path)
    rows = _checked_rows(path, dataset)
    log = CorrectionLog(dataset)
    left_out = []
    for line, c in rows:
        try:
            log.push(c)
        except NothingToChangeError:
            left_out.append((line, c))
        except InputError as e:
            reason = str(e).removeprefix(f"{dataset.label()}: ")
            raise InputError(f"{path.name}, line {line}: {reason}") from None
    return LoadedCorrections(path, tuple(c for _, c in rows), log, tuple(left_out))


def write_corrections(path: Path, corrections: Iterable[Correction],
                      accept: Iterable[str] | None = None) -> None:
    """Write ``corrections`` to ``path`` as a corrections file, atomically; with ``accept``
    (one value per correction), also the ``accept`` column of a file to review."""
    values = None if accept is None else list(accept)
    user_data.make_room_for(Path(path))
    with atomic_open(Path(path), newline="") as stream:
        writer = csv_writer(stream)
        writer.writerow(COLUMNS if values is None else (*COLUMNS, ACCEPT))
        for i, c in enumerate(corrections):
            row = [c.query, c.item, c.label, c.author, c.time, _one_line(c.note), c.user,
                   c.machine, c.window]
            writer.writerow(row if values is None else [*row, values[i]])


def _one_line(text: str) -> str:
    """Return ``text`` on one line (each row of the file is one line)."""
    return " ".join(text.split()) if "\n" in text or "\r" in text else text


def parse_time(text: str) -> datetime | None:
    """Return the ISO 8601 time ``text`` as a UTC datetime (a time without an offset is
    UTC, as irviewer writes them), None for "" or text that is not ISO 8601."""
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z"))
                                      else text)
    except ValueError:
        return None
    return (when.replace(tzinfo=timezone.utc) if when.tzinfo is None
            else when.astimezone(timezone.utc))


def read_rows(text: str, where: str) -> list[tuple[int, Correction]]:
    """Return (line number, correction) of each data row, unchecked against a dataset.

    InputError naming the line for a header without the required columns, a quoted field
    whose closing quote is missing (the line where it opens) or that runs over several
    lines, a row with fewer fields than the header, an empty item or label, and a ``time``
    that is not ISO 8601."""
    records = iter_records(text, where, one_line=True)
    header = [h.strip().lower() for h in next(records, (1, []))[1]]
    if not header:
        raise InputError(f"{where} is empty: a corrections file starts with the header "
                         f"{','.join(COLUMNS[:6])}")
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise InputError(f"{where}, line 1: the header lacks column(s) {', '.join(missing)}; "
                         f"it must have {','.join(REQUIRED)} (and may have "
                         f"{','.join(COLUMNS[3:])})")
    col = {c: header.index(c) for c in (*COLUMNS, ACCEPT) if c in header}
    rows: list[tuple[int, Correction]] = []
    for line, raw in records:
        if not raw or all(not cell.strip() for cell in raw):
            continue
        if len(raw) < len(header):
            raise InputError(f"{where}, line {line}: {len(raw)} fields where the header has "
                             f"{len(header)}")
        cells = {c: raw[i].strip() for c, i in col.items()}
        if ACCEPT in cells and cells[ACCEPT].lower() not in ACCEPTED:
            continue  # a suggestion the reviewer did not take
        if not cells["item"] or not cells["label"]:
            empty = "item" if not cells["item"] else "label"
            raise InputError(f"{where}, line {line}: the {empty} field is empty")
        time = cells.get("time", "")
        if time and parse_time(time) is None:
            raise InputError(f"{where}, line {line}: the time {time!r} is not an ISO 8601 time "
                             "(e.g. 2026-11-23T14:05:09Z); two writers' corrections of one "
                             "pair are ordered by it: correct it, or leave it empty")
        rows.append((line, Correction(*(cells.get(c, "") for c in COLUMNS))))
    return rows
