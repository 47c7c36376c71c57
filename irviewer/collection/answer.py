"""The answer to a visitor's photo: the artwork it is, verified geometrically, or "not in
this collection" with the closest artworks — never a guess presented as an answer.

The photo's best matches by the descriptor (:meth:`irviewer.collection.photo_search.Searcher.rank`)
are a shortlist; the first :data:`~irviewer.core.acceptance.SHORTLIST` of them are
verified (:func:`irviewer.extract.local_features.inliers`: keypoints matched and one
homography fitted). The artwork named is the one whose photo has the most inliers, when
that count reaches the gallery's threshold at the chosen strictness
(:class:`irviewer.core.acceptance.Calibration`); otherwise nothing is named.

A collection made by ``irviewer index`` has its photos' local features stored and its rule
calibrated (:mod:`irviewer.collection.calibration`); any other gallery (the demo, a benchmark)
has the features of its shortlisted images computed when first needed (kept for the
searcher's life) and the uncalibrated rule.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from irviewer.collection.matches import Match
from irviewer.core.acceptance import DEFAULT_STRICTNESS, SHORTLIST, Calibration
from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError
from irviewer.core.local_features import FeatureTable, LocalFeatures
from irviewer.extract.local_features import REFERENCE_SIDE, inliers, local_features, rootsift
from irviewer.formats.collection import is_collection, read_record
from irviewer.formats.image_files import read_rgb
from irviewer.formats.local_feature_file import LOCAL_FEATURES, read_local_features

#: Artworks named after "Closest:" when nothing is named.
CLOSEST = 3


@dataclass(frozen=True)
class Answer:
    """What irviewer says of one photo.

    ``artwork`` is the instance label (the gallery image's name when the gallery has no
    labels) of the artwork the photo shows, or None: not in this collection. ``named`` is
    the match that proves it (the artwork's photo with the most inliers; None with no
    artwork). ``matches`` are the closest gallery images by the descriptor, best first,
    the verified ones with their ``inliers``. ``threshold`` is the inliers an artwork
    needed at ``strictness``; ``calibrated`` whether that rule was learnt from the gallery.
    """

    photo: str
    artwork: str | None
    named: Match | None
    matches: tuple[Match, ...]
    threshold: int
    strictness: str
    calibrated: bool

    def closest(self, n: int = CLOSEST) -> list[str]:
        """Return the titles (else labels, else image names) of the ``n`` closest distinct
        artworks, best first."""
        seen: dict[str, str] = {}
        for m in self.matches:
            key = artwork_of(m)
            if key not in seen:
                seen[key] = m.title or key
        return list(seen.values())[:n]

    def sentence(self) -> str:
        """Return the answer in words: "This is TITLE — ARTIST" or "Not in this collection.
        Closest: A, B, C"."""
        if self.named is not None:
            return f"This is {self.named.title or artwork_of(self.named)}"
        closest = self.closest()
        return "Not in this collection." + (f" Closest: {'; '.join(closest)}"
                                            if closest else "")

    def evidence(self) -> str:
        """Return what the answer rests on, in one line: the inliers found and needed."""
        rule = "calibrated on the collection" if self.calibrated else \
            "not calibrated on this gallery: the default rule"
        if self.named is not None:
            return (f"{self.named.inliers} matched points agree on one view of it; "
                    f"{self.threshold} needed ({self.strictness}, {rule})")
        best = max((m.inliers or 0 for m in self.matches), default=0)
        return (f"no artwork has {self.threshold} matched points that agree on one view, "
                f"the most is {best} ({self.strictness}, {rule})")


def artwork_of(match: Match) -> str:
    """Return the artwork a match is a photo of: its instance label, else its image name."""
    return match.instance or match.item


@dataclass
class Verifier:
    """Verifies a photo against a gallery's shortlist: the gallery's stored local features
    (``table``; None: computed from the gallery's images when first needed), and the
    ``calibration`` of its acceptance rule. Safe to use from several threads."""

    dataset: Dataset
    table: FeatureTable | None
    calibration: Calibration
    _computed: dict[str, LocalFeatures | None] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def of(cls, dataset: Dataset) -> Verifier:
        """Return the verifier of ``dataset``: a collection's stored features and
        calibration when it has them, else features computed on demand and the
        uncalibrated rule."""
        path = dataset.path
        if dataset.format == "collection" and path is not None and is_collection(path):
            try:
                record = read_record(path)
                table = read_local_features(Path(path) / (record.local_features or
                                                          LOCAL_FEATURES))
            except InputError:
                return cls(dataset, None, Calibration())
            return cls(dataset, table, record.calibration or Calibration())
        return cls(dataset, None, Calibration())

    def reference(self, item: str) -> LocalFeatures | None:
        """Return the local features of gallery image ``item`` (None when it has no image
        that can be read)."""
        if self.table is not None and item in self.table:
            return self.table.get(item)
        with self._lock:
            if item in self._computed:
                return self._computed[item]
        path = self.dataset.image_paths.get(item)
        found = None
        if path is not None:
            try:
                found = local_features(read_rgb(path, REFERENCE_SIDE)[0])
            except InputError:
                found = None
        with self._lock:
            self._computed[item] = found
        return found

    def answer(self, photo: str, features: LocalFeatures, matches: Sequence[Match],
               shown: int, strictness: str = DEFAULT_STRICTNESS) -> Answer:
        """Return the :class:`Answer` for a photo with local ``features`` whose best
        matches by the descriptor are ``matches`` (best first): the first
        :data:`~irviewer.core.acceptance.SHORTLIST` are verified; the answer lists the
        first ``shown``."""
        threshold = self.calibration.threshold(strictness)
        query = rootsift(features.descriptors)
        verified = []
        for i, m in enumerate(matches):
            if i < SHORTLIST:
                ref = self.reference(m.item)
                m = replace(m, inliers=0 if ref is None else inliers(features, ref, query))
            verified.append(m)
        best: Match | None = None
        for m in verified:
            if m.inliers is not None and m.inliers >= threshold and (
                    best is None or m.inliers > (best.inliers or 0)):
                best = m
        return Answer(photo, None if best is None else artwork_of(best), best,
                      tuple(verified[:shown]), threshold, strictness,
                      self.calibration.calibrated)


def answer_json(answer: Answer) -> dict[str, object]:
    """Return one photo's entry of ``irviewer search --json``: ``answer`` (the artwork or
    None), the sentence, the rule, and the matches with their inliers."""
    return {"photo": answer.photo, "answer": answer.artwork, "sentence": answer.sentence(),
            "evidence": answer.evidence(),
            "rule": {"strictness": answer.strictness, "min_inliers": answer.threshold,
                     "calibrated": answer.calibrated},
            "matches": [match_json(m) for m in answer.matches]}


def match_json(m: Match) -> Mapping[str, object]:
    """Return one match as ``irviewer search --json`` writes it."""
    return {"rank": m.rank, "item": m.item, "instance": m.instance, "title": m.title,
            "score": m.score, "inliers": m.inliers,
            **({"details": dict(m.details)} if m.details else {})}
