"""Each label family's rule from image labels to relevance groups, in one place.

Some benchmarks publish no per-query lists: relevance follows from a label on every image
(an instance label, a person id, a Holidays group). The readers build their queries with the
functions below, and an image relabel (:mod:`irviewer.core.corrections`) re-derives the
queries it touches with the same functions, so a corrected dataset is exactly what the reader
would build from the corrected labels.

* instance sets (CSV manifest, CLICIDE/GaRoFou named by file) and INRIA Holidays
  (Jegou et al. ECCV 2008, ``holidays_map.py``): ``positive`` = the gallery images with the
  query's label, the query's own image included (the protocol removes the self-match);
* person re-identification (Market-1501, Zheng et al. ICCV 2015, as torchreid
  ``eval_market1501`` applies it): ``positive`` = same id on another camera,
  ``same_camera`` = same id on the query's camera (the protocol removes it); id -1 is junk
  for every query (``Dataset.global_ignored``) and never a query; id 0 marks distractors,
  found only in the gallery, so they are negatives for every query.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable
from dataclasses import dataclass

import numpy as np

#: Families whose relevance comes from image labels, by the protocol family's name.
INSTANCE, REID, HOLIDAYS = "instance", "reid", "holidays"
LABEL_FAMILIES = (INSTANCE, REID, HOLIDAYS)

#: Market-1501's junk id (removed for every query) and distractor id (negative everywhere).
REID_JUNK_ID = -1
REID_DISTRACTOR_ID = 0

#: The relevance groups each label family's rule produces.
RULE_GROUPS = {INSTANCE: ("positive",), HOLIDAYS: ("positive",),
               REID: ("positive", "same_camera")}


@dataclass(frozen=True)
class LabelIndex:
    """The gallery images of each label, found by binary search (built once per label set)."""

    order: np.ndarray
    sorted_labels: np.ndarray

    @classmethod
    def of(cls, labels: np.ndarray, only: Collection[Hashable] | None = None) -> LabelIndex:
        """Return the index of ``labels`` (one per gallery image); with ``only``, of those
        labels alone (a relabel needs two labels, not a sort of the whole gallery)."""
        labels = np.asarray(labels)
        if only is None:
            order = np.argsort(labels, kind="stable")
        else:
            wanted = np.zeros(len(labels), dtype=bool)
            for label in only:
                wanted |= labels == label
            keep = np.flatnonzero(wanted)
            order = keep[np.argsort(labels[keep], kind="stable")]
        return cls(order.astype(np.int64), labels[order])

    def members(self, label: Hashable) -> np.ndarray:
        """Return the sorted gallery indices whose label is ``label`` (empty when none)."""
        if not len(self.sorted_labels):
            return np.zeros(0, dtype=np.int64)
        key = np.asarray(label)  # a str or int label, as searchsorted takes it
        start = int(np.searchsorted(self.sorted_labels, key, side="left"))
        stop = int(np.searchsorted(self.sorted_labels, key, side="right"))
        return np.sort(self.order[start:stop])


def same_label_groups(index: LabelIndex, label: Hashable) -> dict[str, np.ndarray]:
    """Return the relevance groups of an instance-set or Holidays query of ``label``:
    ``positive`` = every gallery image with that label (the query's own image included)."""
    return {"positive": index.members(label)}


def reid_groups(index: LabelIndex, gallery_cameras: np.ndarray, person_id: int,
                camera: int) -> dict[str, np.ndarray]:
    """Return the relevance groups of a re-identification query (Market-1501 conventions):
    ``positive`` = the gallery images of ``person_id`` on another camera, ``same_camera`` =
    those on ``camera``."""
    same_id = index.members(person_id)
    on_camera = gallery_cameras[same_id] == camera
    return {"positive": same_id[~on_camera], "same_camera": same_id[on_camera]}


def reid_junk(gallery_ids: np.ndarray) -> np.ndarray:
    """Return the gallery indices removed for every re-id query: person id -1 (junk)."""
    return np.flatnonzero(np.asarray(gallery_ids) == REID_JUNK_ID).astype(np.int64)
