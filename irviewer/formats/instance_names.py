"""Instance sets named by file (CLICIDE, GaRoFou and the like): a gallery folder and a query
folder, each image's instance label taken from its file name by a rule.

CLICIDE and GaRoFou are museum instance-recognition sets (photographs of exhibits taken by
visitors' cameras), used for instance retrieval e.g. by Portaz et al., "Fully convolutional
network and region proposal for instance identification with egocentric vision" (ICCV
Workshops 2017). A query is scored by the gallery images of its instance; labels of images
with no meaningful content take no part, and queries whose instance has no gallery image are
left out. No public copy of either distribution could be checked, so the folder names and
rules below are common layouts, each one a choice the user can change.

Folders (direct children, names compared case-insensitively): the gallery is one of
``gallery``, ``database``, ``db``, ``train``; the queries are one of ``query``, ``queries``,
``test``. Images are found recursively inside them. Rules (``ReadOptions.instance_rule``,
``--instance-rule``), applied to the file stem:

* ``dash`` (the default): the text before the first ``-`` (``monalisa-03.jpg`` -> ``monalisa``);
* ``underscore2``: the first two ``_`` fields (``room1_obj07_v2.jpg`` -> ``room1_obj07``);
* anything else is a regular expression searched in the stem: its first group, or the
  whole match when it has no group, is the label.

The conventions are the CSV manifest's (:func:`irviewer.formats.manifest.instance_dataset`):
positives are the gallery images with the query's label, labels on
``ReadOptions.ignore_labels`` take no part, queries with no gallery image of their label are
removed and reported (``ReadOptions.drop_orphans``), protocol ``instance``. Image names are
paths relative to the root without extension (``gallery/monalisa-03``); descriptor files
match them by file stem, so two images with one stem are refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError, counted, examples
from irviewer.core.image_names import IMAGE_SUFFIXES
from irviewer.formats.base import Reader, ReadOptions, list_images, option
from irviewer.formats.manifest import InstanceEntry, instance_dataset

NAME = "instances"
GALLERY_DIRS = ("gallery", "database", "db", "train")
QUERY_DIRS = ("query", "queries", "test")
RULES = ("dash", "underscore2")

LabelRule = Callable[[str], "str | None"]


def label_rule(rule: str | None) -> LabelRule:
    """Return the function file stem -> instance label (None when the rule gives none).

    ``rule`` is ``dash`` (or None), ``underscore2``, or a regular expression.
    InputError for a regular expression that does not compile.
    """
    if rule in (None, "", "dash"):
        return _before_dash
    if rule == "underscore2":
        return _two_underscore_fields
    try:
        pattern = re.compile(rule)
    except re.error as e:
        raise InputError(f"instance rule {rule!r} is not a valid regular expression ({e}); "
                         f"use {', '.join(RULES)} or a regular expression") from None

    def by_pattern(stem: str) -> str | None:
        found = pattern.search(stem)
        if found is None:
            return None
        label = found.group(1) if pattern.groups else found.group(0)
        return label or None  # an unmatched group or an empty match gives no label

    return by_pattern


def sniff_instance_names(path: Path) -> bool:
    """Return True for a folder with exactly one gallery-like and one query-like subfolder."""
    try:
        p = Path(path)
        if not p.is_dir():
            return False
        return (len(_subfolders(p, GALLERY_DIRS)) == 1
                and len(_subfolders(p, QUERY_DIRS)) == 1)
    except OSError:
        return False


def read_instance_names(path: Path, options: ReadOptions | None = None) -> Dataset:
    """Return the :class:`Dataset` of an instance set named by file (protocol ``instance``).

    Gallery: the gallery folder's images in path order; queries: the query folder's, each
    with ``positive`` = the gallery images of its label and ``meta["label"]``. InputError
    for a path that is not a folder, a missing or doubled gallery/query folder, an empty
    folder, an invalid rule, names the rule cannot label (count and examples), two images
    with one file stem, or no query left after the removals.
    """
    opts = options or ReadOptions()
    root = Path(path)
    where = root.absolute().name
    if not root.is_dir():
        raise InputError(f"{root}: not a folder; an instance set named by file is a folder "
                         f"with a gallery folder ({'/'.join(GALLERY_DIRS)}) and a query folder "
                         f"({'/'.join(QUERY_DIRS)})")
    gallery_dir = _one_subfolder(root, GALLERY_DIRS, "gallery")
    query_dir = _one_subfolder(root, QUERY_DIRS, "query")
    rule = label_rule(opts.instance_rule)
    entries: list[InstanceEntry] = []
    unlabelled: list[str] = []
    first_seen: dict[str, str] = {}
    clashes: list[str] = []
    for folder, role in ((gallery_dir, "gallery"), (query_dir, "query")):
        for f in list_images(folder, IMAGE_SUFFIXES, recursive=True,
                             noun=f"{role} folder"):
            name = f.relative_to(root).with_suffix("").as_posix()
            if f.stem in first_seen:
                clashes.append(f"{first_seen[f.stem]} and {name}")
            else:
                first_seen[f.stem] = name
            label = rule(f.stem)
            if not label:
                unlabelled.append(f.name)
                continue
            entries.append(InstanceEntry(name, label, role, f))
    if unlabelled:
        shown = opts.instance_rule or "dash"
        raise InputError(f"{where}: the instance rule {shown!r} gives no label for "
                         f"{counted(len(unlabelled), 'file name', 'file names')}, e.g. "
                         f"{examples(unlabelled)}; choose "
                         f"{option('instance_rule')} dash, underscore2 or a regular "
                         "expression")
    if clashes:
        what = counted(len(clashes), "file name appears", "file names appear")
        raise InputError(f"{where}: {what} twice, e.g. "
                         f"{examples(clashes, 2)}; descriptor rows are matched by file name, so "
                         "give every image its own name (or list them in a CSV manifest)")
    return instance_dataset(root, NAME, entries, opts)


def _before_dash(stem: str) -> str | None:
    label, dash, _ = stem.partition("-")
    return label if dash and label else None


def _two_underscore_fields(stem: str) -> str | None:
    fields = stem.split("_")
    if len(fields) < 2 or not fields[0] or not fields[1]:
        return None
    return f"{fields[0]}_{fields[1]}"


def _subfolders(root: Path, names: tuple[str, ...]) -> list[Path]:
    """Return the direct subfolders of ``root`` whose lower-cased name is in ``names``."""
    return sorted(child for child in root.iterdir()
                  if child.name.lower() in names and child.is_dir())


def _one_subfolder(root: Path, names: tuple[str, ...], role: str) -> Path:
    """Return the one subfolder of ``root`` for ``role``; InputError for none or several."""
    try:
        found = _subfolders(root, names)
    except OSError as e:
        raise InputError(f"{root}: cannot list the folder ({e.strerror})") from None
    where = root.absolute().name
    if not found:
        raise InputError(f"{where}: no {role} folder; expected one of "
                         f"{', '.join(n + '/' for n in names)} (any case)")
    if len(found) > 1:
        raise InputError(f"{where}: {len(found)} folders could be the {role} folder "
                         f"({', '.join(p.name + '/' for p in found)}); keep one, or list the "
                         "images in a CSV manifest")
    return found[0]


READER = Reader(NAME, "instance set named by file: a gallery and a query folder "
                "(CLICIDE, GaRoFou)", sniff_instance_names, read_instance_names, priority=5,
                takes=frozenset({"instance_rule", "ignore_labels", "drop_orphans"}))
