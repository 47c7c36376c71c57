"""Instance sets named by file (CLICIDE, GaRoFou and the like): a gallery folder and a query
folder, the instance label taken from each file name by a rule.

Folders (case-insensitive): the gallery is ``gallery``, ``database``, ``db`` or ``train``;
the queries are ``query``, ``queries`` or ``test``. Rules (``--instance-rule``): ``dash``
(the text before the first ``-``, the default), ``underscore2`` (the first two ``_``
fields), or a regular expression whose first group — or whole match — is the label. The
conventions are the CSV manifest's (:mod:`irviewer.formats.manifest`): ignore list, orphan
queries removed and reported, protocol ``instance``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError, examples
from irviewer.formats.base import IMAGE_SUFFIXES, Reader, ReadOptions, list_images
from irviewer.formats.manifest import InstanceEntry, instance_dataset

NAME = "instances"
GALLERY_DIRS = ("gallery", "database", "db", "train")
QUERY_DIRS = ("query", "queries", "test")


def label_rule(rule: str | None) -> Callable[[str], str | None]:
    """Return a function file stem -> instance label (None when the rule does not apply)."""
    if rule in (None, "dash"):
        return lambda stem: stem.split("-", 1)[0] if "-" in stem else None
    if rule == "underscore2":
        return lambda stem: "_".join(stem.split("_")[:2]) if stem.count("_") >= 1 else None
    try:
        pattern = re.compile(rule)
    except re.error as e:
        raise InputError(f"instance rule {rule!r} is not a valid regular expression ({e})") \
            from None

    def by_regex(stem: str) -> str | None:
        m = pattern.search(stem)
        if m is None:
            return None
        return m.group(1) if pattern.groups else m.group(0)

    return by_regex


def _subfolder(root: Path, names: tuple[str, ...]) -> Path | None:
    try:
        for child in sorted(root.iterdir()):
            if child.is_dir() and child.name.lower() in names:
                return child
    except OSError:
        return None
    return None


def sniff_instance_names(path: Path) -> bool:
    """Return True for a folder with a gallery-like and a query-like subfolder."""
    p = Path(path)
    return p.is_dir() and _subfolder(p, GALLERY_DIRS) is not None \
        and _subfolder(p, QUERY_DIRS) is not None


def read_instance_names(path: Path, options: ReadOptions | None = None) -> Dataset:
    """Return the Dataset of an instance set named by file (protocol ``instance``)."""
    opts = options or ReadOptions()
    root = Path(path)
    gallery_dir, query_dir = _subfolder(root, GALLERY_DIRS), _subfolder(root, QUERY_DIRS)
    if gallery_dir is None or query_dir is None:
        raise InputError(f"{root}: expected a gallery folder ({'/'.join(GALLERY_DIRS)}) and a "
                         f"query folder ({'/'.join(QUERY_DIRS)})")
    rule = label_rule(opts.instance_rule)
    entries: list[InstanceEntry] = []
    unlabelled: list[str] = []
    stems: dict[str, str] = {}
    clashes: list[str] = []
    for folder, role in ((gallery_dir, "gallery"), (query_dir, "query")):
        for f in list_images(folder, IMAGE_SUFFIXES, recursive=True):
            name = f.relative_to(root).with_suffix("").as_posix()
            if f.stem in stems:
                clashes.append(f"{stems[f.stem]} and {name}")
            stems[f.stem] = name
            label = rule(f.stem)
            if not label:
                unlabelled.append(f.name)
                continue
            entries.append(InstanceEntry(name, label, role, f))
    if unlabelled:
        shown = opts.instance_rule or "dash"
        raise InputError(f"{root.name}: the instance rule {shown!r} gives no label for "
                         f"{len(unlabelled)} file names, e.g. {examples(unlabelled)}; choose "
                         "--instance-rule dash, underscore2 or a regular expression")
    if clashes:
        raise InputError(f"{root.name}: {len(clashes)} file names appear twice, e.g. "
                         f"{examples(clashes, 2)}; descriptor rows are matched by file name, so "
                         "give every image its own name (or list them in a CSV manifest)")
    return instance_dataset(root, NAME, entries, opts)


READER = Reader(NAME, "instance set named by file: gallery/ and query/ folders "
                "(CLICIDE, GaRoFou)", sniff_instance_names, read_instance_names, priority=5)
