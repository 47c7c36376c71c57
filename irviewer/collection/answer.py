"""The answer to a visitor's photo: the artwork it is, verified geometrically, or "not in
this collection" with the closest artworks — never a guess presented as an answer.

The photo's best matches by the descriptor (:meth:`irviewer.collection.photo_search.Searcher.rank`)
are a shortlist; the first :data:`~irviewer.core.acceptance.SHORTLIST` of them are
verified (:func:`irviewer.extract.local_features.inliers`: keypoints matched and one
homography fitted). The artwork named is the one whose photo has the most inliers, when
that count reaches the gallery's threshold at the chosen strictness
(:class:`irviewer.core.acceptance.Calibration`); otherwise nothing is named. The matches
that reach the threshold lead the list, the most inliers first (the named artwork's photo
is the first match shown), then the others in the descriptor's order.

A collection may hold one picture under two artwork ids (a duplicate photo, a gift-shop
print: :mod:`irviewer.collection.lookalikes`); until the curator puts them together, a
photo named as one of them is answered with the titles of all of them ("This is A or B").

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

from irviewer.collection.lookalikes import artwork_groups, artwork_pairs, artwork_title
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
    ``also`` are the other artworks of the collection that show the same picture as the
    one named, (id, title) each (:mod:`irviewer.collection.lookalikes`; empty for most).
    """

    photo: str
    artwork: str | None
    named: Match | None
    matches: tuple[Match, ...]
    threshold: int
    strictness: str
    calibrated: bool
    also: tuple[tuple[str, str], ...] = ()

    @property
    def artworks(self) -> tuple[str, ...]:
        """Return every artwork the answer names: the one named, then ``also`` (empty:
        not in this collection)."""
        return () if self.artwork is None else (self.artwork, *(a for a, _ in self.also))

    def titles(self) -> list[str]:
        """Return the titles the answer names (else the ids), the one named first."""
        if self.named is None:
            return []
        return list(dict.fromkeys([self.named.title or artwork_of(self.named),
                                   *(title or a for a, title in self.also)]))

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
            return f"This is {one_of(self.titles())}"
        closest = self.closest()
        return "Not in this collection." + (f" Closest: {'; '.join(closest)}"
                                            if closest else "")

    def evidence(self) -> str:
        """Return what the answer rests on, in one line: the inliers found and needed."""
        rule = "calibrated on the collection" if self.calibrated else \
            "not calibrated on this gallery: the default rule"
        if self.named is not None:
            held = (f"; the collection holds this picture as {len(self.artworks)} artworks "
                    "until they are put together") if self.also else ""
            return (f"{self.named.inliers} matched points agree on one view of it; "
                    f"{self.threshold} needed ({self.strictness}, {rule}){held}")
        best = max((m.inliers or 0 for m in self.matches), default=0)
        return (f"no artwork has {self.threshold} matched points that agree on one view, "
                f"the most is {best} ({self.strictness}, {rule})")


def one_of(titles: Sequence[str]) -> str:
    """Return titles as a choice in words: "A", "A or B", "A, B or C"."""
    if len(titles) < 2:
        return "".join(titles)
    return f"{', '.join(titles[:-1])} or {titles[-1]}"


def leading(matches: Sequence[Match], threshold: int) -> tuple[Match, ...]:
    """Return ``matches`` (best first by the descriptor) with those that reach
    ``threshold`` inliers first, the most inliers first (ties in the descriptor's order),
    then the others in the descriptor's order; ranks numbered again from 1 in that order."""
    accepted = sorted((i for i, m in enumerate(matches)
                       if m.inliers is not None and m.inliers >= threshold),
                      key=lambda i: -(matches[i].inliers or 0))
    order = [*accepted, *(i for i in range(len(matches)) if i not in set(accepted))]
    return tuple(replace(matches[i], rank=r) for r, i in enumerate(order, start=1))


def artwork_of(match: Match) -> str:
    """Return the artwork a match is a photo of: its instance label, else its image name."""
    return match.instance or match.item


@dataclass
class Verifier:
    """Verifies a photo against a gallery's shortlist: the gallery's stored local features
    (``table``; None: computed from the gallery's images when first needed), the
    ``calibration`` of its acceptance rule, and its artworks that show one picture
    (``groups``: artwork -> every artwork of its group,
    :func:`irviewer.collection.lookalikes.artwork_groups`). Safe to use from several
    threads."""

    dataset: Dataset
    table: FeatureTable | None
    calibration: Calibration
    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
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
            groups = artwork_groups(artwork_pairs(record.lookalikes, dataset))
            return cls(dataset, table, record.calibration or Calibration(), groups)
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
        artwork = None if best is None else artwork_of(best)
        ordered = leading(verified, threshold)
        return Answer(photo, artwork, best, ordered[:shown], threshold, strictness,
                      self.calibration.calibrated, self._also(artwork, ordered))

    def _also(self, artwork: str | None, matches: Sequence[Match]
              ) -> tuple[tuple[str, str], ...]:
        """Return (id, title) of the other artworks that show ``artwork``'s picture, those
        among ``matches`` first, in their order."""
        group = self.groups.get(artwork or "", ())
        if len(group) < 2:
            return ()
        seen = [artwork_of(m) for m in matches]
        others = sorted((a for a in group if a != artwork),
                        key=lambda a: (seen.index(a) if a in seen else len(seen), a))
        return tuple((a, artwork_title(self.dataset, a)) for a in others)


def answer_json(answer: Answer) -> dict[str, object]:
    """Return one photo's entry of ``irviewer search --json``: ``answer`` (the artwork or
    None), ``also`` (the other artworks that show its picture), the sentence, the rule,
    and the matches with their inliers."""
    return {"photo": answer.photo, "answer": answer.artwork,
            "also": [a for a, _ in answer.also], "sentence": answer.sentence(),
            "evidence": answer.evidence(),
            "rule": {"strictness": answer.strictness, "min_inliers": answer.threshold,
                     "calibrated": answer.calibrated},
            "matches": [match_json(m) for m in answer.matches]}


def match_json(m: Match) -> Mapping[str, object]:
    """Return one match as ``irviewer search --json`` writes it."""
    return {"rank": m.rank, "item": m.item, "instance": m.instance, "title": m.title,
            "score": m.score, "inliers": m.inliers,
            **({"details": dict(m.details)} if m.details else {})}
