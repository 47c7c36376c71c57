"""What every dataset reader shares: the options a user can pass (each declared once, with
how every edge shows it) and the Reader record."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path

from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError, counted, either, examples
from irviewer.core.image_names import IMAGE_SUFFIXES

#: The kinds of value an option holds (:attr:`OptionSpec.kind`).
OPTION_KINDS = ("folder", "file", "text", "words", "switch")


@dataclass(frozen=True)
class OptionSpec:
    """How a user gives one reader option: the one description from which the command line
    (:mod:`irviewer.opening.options`), the session file
    (:mod:`irviewer.opening.session_file`), the Open dialog and the messages that name the
    option (:func:`option`) take their form. A :class:`ReadOptions` field carries it as its
    ``metadata["option"]``; adding a reader option is adding such a field.

    Attributes:
        flag: the command-line flag (``--row-names``).
        help: the command-line help, also the dialog field's tooltip.
        label: the Open dialog's field label, which the window's messages name it by.
        kind: what the value is: ``folder`` or ``file`` (a Path; stored in a session
            relative to the session file when it lies below it), ``text`` (a string),
            ``words`` (a tuple of strings: a repeatable option that extends, a JSON list,
            comma-separated in the dialog) or ``switch`` (a bool: a flag without value, a
            JSON boolean, a check box).
        metavar: the word for the value in help and messages (``FILE``); None for a switch.
        negate: a switch that sets the field to False (``--keep-orphans`` sets
            ``drop_orphans``); the session stores the switch's value under :attr:`json`.
        json: the key in a session's ``"options"`` object; None when the session keeps the
            value elsewhere (``images``: a field of its own).
        legacy_json: a key older sessions used for the field's own value (read, not written).
        list_file: for ``words``, a second flag naming a text file of further values, one
            per line (``--ignore-labels FILE``).
        hint: the dialog field's placeholder text; ``check`` the check box's text (switch).
    """

    flag: str
    help: str
    label: str
    kind: str = "text"
    metavar: str | None = None
    negate: bool = False
    json: str | None = None
    legacy_json: str | None = None
    list_file: str | None = None
    hint: str = ""
    check: str = ""

    def __post_init__(self) -> None:
        assert self.kind in OPTION_KINDS, self.kind
        assert self.flag.startswith("--"), self.flag

    @property
    def flag_text(self) -> str:
        """Return the flag as messages write it: with its value's word for a path or a list
        (``--row-names FILE``, ``--ignore-label LABEL``), without for a text the sentence
        goes on to describe (``--instance-rule``)."""
        if self.metavar and self.kind in ("folder", "file", "words"):
            return f"{self.flag} {self.metavar}"
        return self.flag


def _spec(**kwargs: object) -> dict[str, OptionSpec]:
    return {"option": OptionSpec(**kwargs)}  # type: ignore[arg-type]


@dataclass(frozen=True)
class ReadOptions:
    """Reader options from the command line, a session or the GUI's Open dialog; each reader
    uses the ones it understands and ignores the rest. Every field but ``gallery_names``
    carries its :class:`OptionSpec` (``metadata["option"]``), which says how a user gives it.

    Attributes:
        images: folder holding the image files (for display, and for readers whose gallery
            is "every image in a folder", such as Oxford5k's gt_files).
        ignore_labels: instance labels whose images take no part (CLICIDE's images with no
            meaningful content): such queries are removed and such gallery images ignored.
        drop_orphans: remove (and report) queries whose instance has no gallery image,
            as the CLICIDE/GaRoFou evaluations do.
        instance_rule: how instance sets named by file derive the instance from a name:
            ``dash`` (text before the first ``-``), ``underscore2`` (the first two ``_``
            fields) or a regular expression whose first group (or whole match) is the label.
        distractors: a text file of extra gallery names (e.g. the revisited 1M distractors).
        gallery_names: gallery names known from elsewhere (a descriptor file), for readers
            whose ground truth does not list the whole gallery (Oxford5k without images);
            not a user's option (the opening fills it in).
        row_names: a text file naming the rows of descriptor files that carry no names, one
            image per line (``--row-names``); without ``gallery_names`` its names are also
            the gallery of ground truth that does not list one.
        copy_pairs: DISC21's pair settings (:func:`irviewer.core.copy_pairs.
            parse_pair_settings`): how descriptors become predicted pairs, and how many
            pairs a predictions file may hold.
    """

    images: Path | None = field(default=None, metadata=_spec(
        flag="--images", metavar="DIR", kind="folder", label="Images",
        help="folder with the image files",
        hint="optional: the folder with the image files"))
    row_names: Path | None = field(default=None, metadata=_spec(
        flag="--row-names", metavar="FILE", kind="file", label="Row names",
        json="row_names",
        help="text file naming the descriptor rows, one image per line, for .fvecs/.npy "
        "files that carry no names; ground truth that does not list its gallery (Oxford5k "
        "gt_files) takes these names as the gallery",
        hint="optional: a text file naming the descriptor rows, one image per line"))
    instance_rule: str | None = field(default=None, metadata=_spec(
        flag="--instance-rule", metavar="RULE", kind="text", label="Instance rule",
        json="instance_rule",
        help="instance sets named by file: dash (text before the first -), underscore2 "
        "(first two _ fields) or a regular expression whose first group is the instance "
        "label",
        hint="instance sets named by file: dash, underscore2 or a regular expression"))
    ignore_labels: tuple[str, ...] = field(default=(), metadata=_spec(
        flag="--ignore-label", metavar="LABEL", kind="words", label="Ignore labels",
        json="ignore_labels", list_file="--ignore-labels",
        help="instance label whose images take no part: such queries are removed, such "
        "gallery images ignored",
        hint="optional: instance labels that take no part, separated by commas"))
    distractors: Path | None = field(default=None, metadata=_spec(
        flag="--distractors", metavar="FILE", kind="file", label="Distractors",
        json="distractors",
        help="text file of extra gallery names (the revisited 1M distractors)",
        hint="optional: a text file of extra gallery names"))
    drop_orphans: bool = field(default=True, metadata=_spec(
        flag="--keep-orphans", kind="switch", negate=True, label="Keep orphans",
        json="keep_orphans", legacy_json="drop_orphans",
        help="keep queries whose instance has no gallery image (reported as skipped) "
        "instead of removing them",
        check="Keep queries whose instance has no gallery image"))
    copy_pairs: str | None = field(default=None, metadata=_spec(
        flag="--copy-pairs", metavar="SPEC", kind="text", label="Copy-detection pairs",
        json="copy_pairs",
        help="DISC21 copy detection: how pairs are made from descriptors and how many a "
        "predictions file may hold, as isc2021's descriptor track: cap=N (the N best pairs "
        "over all queries, default 500000) or knn=K (each query's K nearest), metric=l2 "
        "(negated squared L2, default) or ip, max_dim=D (default 256); comma-separated",
        hint="DISC21: cap=500000 or knn=K, metric=l2 or ip, max_dim=256"))
    gallery_names: tuple[str, ...] | None = None


def reader_options() -> dict[str, OptionSpec]:
    """Return every user-facing :class:`ReadOptions` field's :class:`OptionSpec`, by field
    name, in the class's order."""
    return {f.name: f.metadata["option"] for f in fields(ReadOptions)
            if "option" in f.metadata}


#: The reader to use instead of detecting it: not a ReadOptions field (the registry picks
#: the reader with it), declared here beside them because the readers' messages name it.
FORMAT_OPTION = OptionSpec(flag="--format", metavar="NAME", label="Format",
                           help="dataset reader to use instead of detecting it")


def option(key: str) -> str:
    """Return the placeholder naming reader option ``key`` (a :class:`ReadOptions` field, or
    ``format``) in a message: its flag on the command line (``--row-names FILE``),
    "“Label” in the Open dialog" in the window (see :mod:`irviewer.core.errors`). KeyError
    for an unknown key (a bug)."""
    spec = FORMAT_OPTION if key == "format" else reader_options()[key]
    return either(spec.flag_text, f"\u201c{spec.label}\u201d in the Open dialog", key)


@dataclass(frozen=True)
class Reader:
    """A dataset reader: its name, what it reads, and how to recognise and read it.

    ``sniff(path)`` returns True when the path looks like this format (cheaply: a name, a
    header, a few bytes; never raises). ``read(path, options)`` returns the Dataset or raises
    InputError with one sentence. Higher ``priority`` is tried first. ``takes``: the
    :class:`ReadOptions` fields the reader reads (``row_names`` aside: every descriptor file
    may take it); another one given to it is refused, never ignored
    (:func:`refuse_options_not_taken`).
    """

    name: str
    description: str
    sniff: Callable[[Path], bool]
    read: Callable[[Path, ReadOptions], Dataset]
    priority: int = 0
    takes: frozenset[str] = frozenset()


def refuse_options_not_taken(reader: Reader, path: Path, options: ReadOptions) -> None:
    """Raise InputError, one sentence, when ``options`` sets a reader option (away from its
    default) that ``reader`` does not read: a ``--distractors`` list given with Oxford5k's
    gt_files would otherwise be ignored in silence and the user would read a number measured
    without it."""
    default = ReadOptions()
    for key in reader_options():
        if key == "row_names" or key in reader.takes:
            continue
        if getattr(options, key) != getattr(default, key):
            raise InputError(f"{Path(path).name}: {option(key)} does not apply to this "
                             f"dataset, read as {reader.description}; leave it out")


def list_images(folder: Path, suffixes: tuple[str, ...] = IMAGE_SUFFIXES,
                recursive: bool = False, noun: str = "folder") -> list[Path]:
    """Return the image files in ``folder`` (sorted by path), by suffix, case-insensitive.

    ``recursive`` also lists subfolders. InputError as :func:`list_image_names`.
    """
    folder = Path(folder)
    return [folder / name for name in list_image_names(folder, suffixes, recursive, noun)]


def list_image_names(folder: Path, suffixes: tuple[str, ...] = IMAGE_SUFFIXES,
                     recursive: bool = False, noun: str = "folder") -> list[str]:
    """Return the image files in ``folder`` as paths relative to it (``a/b.jpg``), sorted as
    :func:`list_images` sorts them (part by part), by suffix, case-insensitive.

    ``recursive`` also lists subfolders (not those reached through a symbolic link, as
    ``Path.rglob`` does; a subfolder that cannot be read is passed over). One ``os.scandir``
    per folder: entry types come with the listing, so no file is stat'ed and no Path is
    built (the Market-1501 gallery lists in milliseconds rather than a second).
    InputError when the folder is missing, cannot be listed, or holds no image; ``noun``
    names the folder in those sentences ("image folder").
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"{folder}: the {noun} does not exist")
    wanted = {s.lower() for s in suffixes}
    found: list[tuple[str, ...]] = []
    pending: list[tuple[tuple[str, ...], str]] = [((), str(folder))]
    try:
        while pending:
            parts, directory = pending.pop()
            try:
                entries = list(os.scandir(directory))
            except PermissionError:
                if not parts:
                    raise
                continue
            for entry in entries:
                if entry.is_file():
                    if _suffix(entry.name).lower() in wanted:
                        found.append((*parts, entry.name))
                elif recursive and entry.is_dir() and not entry.is_symlink():
                    pending.append(((*parts, entry.name), entry.path))
    except OSError as e:
        raise InputError(f"{folder}: cannot list the {noun} ({e.strerror})") from None
    if not found:
        raise InputError(f"{folder}: holds no image ({', '.join(suffixes)})")
    found.sort()
    return ["/".join(parts) for parts in found]


class ImageFiles(Mapping[str, Path]):
    """Image name -> file, for ``Dataset.image_paths``, building each Path only when asked.

    ``files`` maps a name to the file's path relative to ``folder`` (``query/x.jpg``); a
    Market-1501 folder has 23,100 of them, and building every Path up front costs a tenth
    of a second that the window, which shows a few dozen, never needs.
    """

    def __init__(self, folder: Path, files: Mapping[str, str]) -> None:
        self.folder = Path(folder)
        self._files = dict(files)
        self._folder_text = os.fspath(self.folder)

    def __getitem__(self, name: str) -> Path:
        return self.folder / self._files[name]

    def fspath(self, name: str) -> str:
        """Return the file of ``name`` as text, without building a Path (the label audit
        stats every gallery file: 16,934 Paths cost it a tenth of a second)."""
        return os.path.join(self._folder_text, self._files[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)

    def __contains__(self, name: object) -> bool:
        return name in self._files

    def __repr__(self) -> str:
        return f"ImageFiles({str(self.folder)!r}, {len(self)} files)"


def _suffix(name: str) -> str:
    """Return a file name's extension as ``Path.suffix`` does (``.jpg``; none for ``.jpg``
    alone or a trailing dot)."""
    i = name.rfind(".")
    return name[i:] if 0 < i < len(name) - 1 else ""


def read_bytes(path: Path, what: str) -> bytes:
    """Return the bytes of ``path``; InputError naming the file for a missing file, a folder,
    or a file that cannot be read. ``what`` names the expected kind ("a pickle file")."""
    path = Path(path)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder, not {what}") from None
    except PermissionError:
        raise InputError(f"{path}: permission denied") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None


def read_text(path: Path, what: str) -> str:
    """Return ``path`` decoded as UTF-8 (a BOM is dropped); InputError as :func:`read_bytes`,
    and for text that is not UTF-8."""
    data = read_bytes(path, what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(f"{Path(path).name}: not UTF-8 text (byte {e.start}); save it as "
                         "UTF-8") from None


def read_name_list(path: Path) -> list[str]:
    """Return the non-empty lines of a text list (labels or image names), stripped, without
    ``#`` comment lines; InputError naming the file when it cannot be read."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"{path}: cannot read the list ({e.strerror})") from None
    return [line.strip() for line in text.splitlines() if line.strip()
            and not line.startswith("#")]


def by_stem(files: list[Path] | tuple[Path, ...], where: str) -> dict[str, Path]:
    """Return the files keyed by their name without extension, in the given order;
    InputError naming ``where`` when two files share a name (``a.jpg`` and ``a.png``), since
    ground truth and descriptor rows are matched by that name."""
    stems = stems_of([f.name for f in files], where)
    return dict(zip(stems, files, strict=True))


def stems_of(names: list[str], where: str) -> list[str]:
    """Return each file name without its extension (as ``Path.stem``), in order; InputError
    naming ``where`` when two files share a stem (``a.jpg`` and ``a.png``), since ground
    truth and descriptor rows are matched by that name."""
    stems = [stem(name) for name in names]
    if len(set(stems)) == len(stems):
        return stems
    first: dict[str, str] = {}
    clashes: list[str] = []
    for name, s in zip(names, stems, strict=True):
        if s in first:
            clashes.append(f"{first[s].rsplit('/', 1)[-1]} and {name.rsplit('/', 1)[-1]}")
        first[s] = name
    what = counted(len(clashes), "image name appears", "image names appear")
    raise InputError(f"{where}: {what} twice, e.g. {examples(clashes, 2)}; keep one file "
                     "per name")


def stem(file_name: str) -> str:
    """Return the last part of a ``/``-separated name without its extension (as
    ``Path.stem``: ``a/b.tar.gz`` -> ``b.tar``, ``.jpg`` -> ``.jpg``)."""
    name = file_name.rsplit("/", 1)[-1]
    return name[:len(name) - len(_suffix(name))]
