"""What a label correction is (:class:`Correction`, one row of the corrections file) and which
ones a benchmark family allows: its pair choices, whether its images can be relabelled, and
why HPatches cannot be corrected (see :mod:`irviewer.core.corrections`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError
from irviewer.core.label_rules import (
    HOLIDAYS,
    INSTANCE,
    LABEL_FAMILIES,
    REID,
)
from irviewer.core.protocols import get_protocol

#: The label of a pair correction that makes the item a negative for the query.
NEGATIVE = "negative"

#: Per protocol family, the choices a user has for one (query, item) pair: (shown name,
#: the dataset's group, or ``negative``).
PAIR_CHOICES: dict[str, tuple[tuple[str, str], ...]] = {
    INSTANCE: (("relevant", "positive"), ("not relevant", NEGATIVE), ("ignored", "junk")),
    REID: (("relevant", "positive"), ("not relevant", NEGATIVE), ("ignored", "same_camera")),
    "oxford": (("good", "good"), ("ok", "ok"), ("junk", "junk"), ("negative", NEGATIVE)),
    "revisited": (("easy", "easy"), ("hard", "hard"), ("junk", "junk"),
                  ("negative", NEGATIVE)),
    HOLIDAYS: (("relevant", "positive"), ("not relevant", NEGATIVE)),
}

#: Why HPatches cannot be corrected (its labels are not annotations).
GEOMETRY_LABELS = ("HPatches labels come from geometry (patches cut at known homographies), "
                   "not from annotation, so they cannot be corrected")


def family(dataset: Dataset) -> str:
    """Return the protocol family of ``dataset`` (``instance``, ``reid``, ``oxford``,
    ``revisited``, ``holidays``, ``hpatches``), from its first default protocol."""
    return get_protocol(dataset.protocols[0]).family


def pair_choices(dataset: Dataset) -> tuple[tuple[str, str], ...]:
    """Return the (shown name, group or ``negative``) choices of a pair correction on
    ``dataset``; InputError for HPatches, whose labels come from geometry."""
    fam = family(dataset)
    if fam not in PAIR_CHOICES:
        raise InputError(f"{dataset.label()}: {GEOMETRY_LABELS}" if fam == "hpatches" else
                         f"{dataset.label()}: {fam} ground truth cannot be corrected")
    return PAIR_CHOICES[fam]


def pair_labels(dataset: Dataset) -> tuple[str, ...]:
    """Return the labels a pair correction on ``dataset`` may carry: its groups among the
    family's choices, and ``negative``."""
    return tuple(group for _, group in pair_choices(dataset)
                 if group == NEGATIVE or group in dataset.groups)


def can_relabel(dataset: Dataset) -> bool:
    """Return True when ``dataset``'s relevance follows from image labels, so an image can be
    relabelled (instance sets, re-identification, Holidays)."""
    return family(dataset) in LABEL_FAMILIES and dataset.gallery_labels is not None


def utc_now() -> str:
    """Return the current UTC time as ISO 8601 to the second (``2026-11-23T14:05:09Z``)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Correction:
    """One label fix, as a row of the corrections file.

    ``query`` is the query's name, empty for an image relabel; ``item`` is an image name;
    ``label`` is a group of the dataset or ``negative`` (pair), or the image's new label
    (relabel). ``author``, ``time`` (ISO 8601) and ``note`` document it; ``user`` (the login
    name), ``machine`` (the host name) and ``window`` (an id of the window that made it) name
    the writer, so that two windows, even of one person, are told apart ("" when unknown:
    a file written by hand or by an older irviewer).
    """

    query: str
    item: str
    label: str
    author: str = ""
    time: str = ""
    note: str = ""
    user: str = ""
    machine: str = ""
    window: str = ""

    @property
    def is_relabel(self) -> bool:
        """Return True for an image-level relabel (no query)."""
        return not self.query

    @property
    def key(self) -> tuple[str, str]:
        """Return what the correction sets: (query, item); a relabel has query ``""``."""
        return self.query, self.item

    def describe(self, before: str | None = None) -> str:
        """Return a short sentence for menus and lists: ``q / item: good → junk`` or
        ``relabel item: 12 → 40`` (without "from" when ``before`` is None)."""
        change = f"{before} → {self.label}" if before is not None else f"→ {self.label}"
        if self.is_relabel:
            return f"relabel {self.item}: {change}"
        return f"{self.query} / {self.item}: {change}"


class NothingToChangeError(InputError):
    """A correction that would set what the ground truth already has (the pair's relation
    is already its label, the image already has that label): it is not applied, not an
    undo step, not written. ``correction`` is the correction, ``current`` the value there
    (the item's group, or the image's label)."""

    def __init__(self, where: str, correction: Correction, current: str) -> None:
        what = (f"{correction.item} already has label {current}" if correction.is_relabel
                else f"{correction.item} is already {current} for {correction.query}")
        super().__init__(f"{where}: {what}; nothing to change")
        self.correction, self.current = correction, current
