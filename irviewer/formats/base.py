"""What every dataset reader shares: the options a user can pass and the Reader record."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from irviewer.core.dataset import Dataset


@dataclass(frozen=True)
class ReadOptions:
    """Reader options from the command line or the GUI's Open dialog; each reader uses the
    ones it understands and ignores the rest.

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
            whose ground truth does not list the whole gallery (Oxford5k without images).
    """

    images: Path | None = None
    ignore_labels: tuple[str, ...] = ()
    drop_orphans: bool = True
    instance_rule: str | None = None
    distractors: Path | None = None
    gallery_names: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Reader:
    """A dataset reader: its name, what it reads, and how to recognise and read it.

    ``sniff(path)`` returns True when the path looks like this format (cheaply: a name, a
    header, a few bytes; never raises). ``read(path, options)`` returns the Dataset or raises
    InputError with one sentence. Higher ``priority`` is tried first.
    """

    name: str
    description: str
    sniff: Callable[[Path], bool]
    read: Callable[[Path, ReadOptions], Dataset]
    priority: int = 0
