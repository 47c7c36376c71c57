"""When a visitor's photo is named as an artwork: the acceptance rule of geometric
verification, calibrated on the collection itself.

Verification counts the **inliers** between a photo and a candidate image: the matched
keypoints one homography explains (:mod:`irviewer.extract.local_features`). A photo of the
candidate's artwork has many; a photo of another artwork has a few chance alignments. How
many chance alignments a collection produces depends on its pictures (fine texture, text,
repeated patterns produce more), so the rule is learnt from the collection at index time
(:mod:`irviewer.collection.calibration`): a sample of its photos, each changed the way a
visitor's phone changes a picture, is verified against its own photo (the **positives**)
and against the photos of the other artworks most like it (per sample, the most inliers
any of them has: the **negatives**). The count an artwork needs is then

    threshold = max(floor, ceil(factor x the 95th percentile of the negatives))

with ``floor`` and ``factor`` set by the **strictness** (:data:`RULES`): ``normal`` asks
for 1.6 times the chance alignments of the collection's worst other artworks and at least
10 inliers; ``stricter`` for more (fewer wrong names, more photos answered "not in this
collection"), ``looser`` for fewer. The positives say what the rule costs: the share of the
collection's own changed photos that reach the threshold (:meth:`Calibration.kept`).

A gallery with no calibration (a dataset that was not indexed as a collection: the demo,
a benchmark) uses :data:`UNCALIBRATED_NEGATIVE` as its negatives' percentile: the highest
count measured on the demo's 22 paintings and 17 other photos.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from irviewer.core.errors import InputError

#: The strictness settings, from the most answers named to the fewest.
STRICTNESS = ("looser", "normal", "stricter")
DEFAULT_STRICTNESS = "normal"
#: Per strictness: (the fewest inliers ever accepted, the factor over the negatives).
RULES: dict[str, tuple[int, float]] = {"looser": (8, 1.25), "normal": (10, 1.6),
                                       "stricter": (15, 2.2)}
#: Photos of the gallery verified per visitor's photo: its best matches by the descriptor.
SHORTLIST = 10
#: The negatives' percentile the threshold is a multiple of.
PERCENTILE = 95
#: Inliers of the worst chance alignment measured on the demo's paintings and other photos
#: (132 phone photos, each verified against the 38 other artworks' photos): the rule of a
#: gallery that was never calibrated.
UNCALIBRATED_NEGATIVE = 7


def check_strictness(strictness: str) -> str:
    """Return ``strictness``; InputError naming the settings when it is not one."""
    if strictness not in RULES:
        raise InputError(f"strictness {strictness!r} is not one of {', '.join(STRICTNESS)}")
    return strictness


@dataclass(frozen=True)
class Calibration:
    """What a collection's acceptance rule is learnt from: per calibration photo, the
    inliers with its own artwork's photo (``positives``) and the most inliers with any
    other artwork's photo in its shortlist (``negatives``). Empty for a gallery that was
    never calibrated (then :data:`UNCALIBRATED_NEGATIVE` stands for the negatives).
    ``lookalikes_left_out`` says that the negatives leave out the photos of other artworks
    that show the same picture (:func:`irviewer.collection.calibration.lookalike_pairs`);
    a calibration recorded before that rule has it False, and is made again on the next
    ``irviewer index`` run."""

    positives: tuple[int, ...] = ()
    negatives: tuple[int, ...] = ()
    lookalikes_left_out: bool = True
    thresholds: dict[str, int] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        chance = self.chance()
        object.__setattr__(self, "thresholds", {
            s: max(floor, math.ceil(factor * chance)) for s, (floor, factor) in RULES.items()})

    @property
    def calibrated(self) -> bool:
        """Return True when the rule was learnt from the gallery itself."""
        return bool(self.negatives)

    def chance(self) -> float:
        """Return the negatives' :data:`PERCENTILE`-th percentile (the higher of two ranks),
        or :data:`UNCALIBRATED_NEGATIVE` without calibration."""
        if not self.negatives:
            return float(UNCALIBRATED_NEGATIVE)
        return float(np.percentile(np.asarray(self.negatives), PERCENTILE, method="higher"))

    def threshold(self, strictness: str = DEFAULT_STRICTNESS) -> int:
        """Return the inliers an artwork needs to be named at ``strictness`` (see the module
        docstring); InputError for an unknown strictness."""
        return self.thresholds[check_strictness(strictness)]

    def kept(self, strictness: str = DEFAULT_STRICTNESS) -> float | None:
        """Return the share of the positives that reach the threshold (None without
        positives): how many of the collection's own changed photos would be named."""
        if not self.positives:
            return None
        t = self.threshold(strictness)
        return sum(p >= t for p in self.positives) / len(self.positives)

    def to_dict(self) -> dict[str, Any]:
        """Return the calibration as collection.json records it (the thresholds too, for
        a reader's information; they are recomputed on reading)."""
        return {"positives": list(self.positives), "negatives": list(self.negatives),
                "lookalikes_left_out": self.lookalikes_left_out,
                "thresholds": dict(self.thresholds)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Calibration:
        """Return the calibration :meth:`to_dict` wrote; ValueError when malformed."""
        positives = tuple(int(v) for v in data["positives"])
        negatives = tuple(int(v) for v in data["negatives"])
        if any(v < 0 for v in (*positives, *negatives)):
            raise ValueError("inlier counts are never negative")
        return cls(positives, negatives, bool(data.get("lookalikes_left_out", False)))
