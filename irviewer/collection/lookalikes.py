"""Artworks of a collection that show one picture (Qt-free): what the answers, the window's
warning and its "These are one artwork" action know of them.

Calibration finds them (:func:`irviewer.collection.calibration.lookalike_pairs`: photos
of two artworks that verify against each other at or above the rule computed without
them) and ``collection.json`` keeps them as pairs of photos (``lookalikes``). Here they
become pairs and groups of **artworks**: a visitor's photo of any artwork of a group is
answered with every title of the group (:class:`irviewer.collection.answer.Verifier`), the
window says so when the collection opens (:func:`lookalike_warning`), and the curator puts
them together (:class:`irviewer.collection.curation.MergeArtworks`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from irviewer.core.dataset import Dataset

#: Pairs the window's warning names, at most (then how many more).
WARNING_PAIRS = 3


@dataclass(frozen=True)
class ArtworkPair:
    """Two artworks whose photos show one picture: their ids, titles (the id when untitled)
    and the most matched points their photos agree on."""

    first: str
    second: str
    first_title: str
    second_title: str
    inliers: int

    def words(self) -> str:
        """Return the pair in words: "«A» and «B» (62 points agree)"."""
        return (f"\u00ab{self.first_title}\u00bb and \u00ab{self.second_title}\u00bb "
                f"({self.inliers} points agree)")


def photo_artworks(dataset: Dataset) -> dict[str, str]:
    """Return gallery image name -> its artwork (instance label; the name itself when the
    gallery has no labels)."""
    labels = dataset.gallery_labels
    if labels is None:
        return {name: name for name in dataset.gallery}
    return {name: str(label) for name, label in zip(dataset.gallery, labels, strict=True)}


def artwork_title(dataset: Dataset, artwork: str) -> str:
    """Return the title of ``artwork`` (the title of its first titled photo; the id when
    none has one)."""
    of = photo_artworks(dataset)
    return next((dataset.titles[n] for n in dataset.gallery
                 if of[n] == artwork and dataset.titles.get(n)), artwork)


def artwork_pairs(lookalikes: Sequence[tuple[str, str, int]], dataset: Dataset
                  ) -> list[ArtworkPair]:
    """Return the lookalike pairs of ``dataset``'s artworks, each once, the most points
    first, from the record's pairs of photos (``lookalikes``: photo name, other photo name,
    inliers). A pair naming a photo the dataset no longer holds, or two photos now of one
    artwork, is left out."""
    of = photo_artworks(dataset)
    best: dict[tuple[str, str], int] = {}
    for a, b, n in lookalikes:
        if a not in of or b not in of or of[a] == of[b]:
            continue
        key = (min(of[a], of[b]), max(of[a], of[b]))
        best[key] = max(best.get(key, 0), int(n))
    return [ArtworkPair(a, b, artwork_title(dataset, a), artwork_title(dataset, b), n)
            for (a, b), n in sorted(best.items(), key=lambda item: (-item[1], item[0]))]


def artwork_groups(pairs: Sequence[ArtworkPair]) -> dict[str, tuple[str, ...]]:
    """Return artwork -> every artwork that shows its picture (itself included, in id
    order), for the artworks of ``pairs``: pairs that share an artwork make one group
    (A like B and B like C: A, B and C)."""
    parent: dict[str, str] = {}

    def root(a: str) -> str:
        while parent.setdefault(a, a) != a:
            a = parent[a]
        return a

    for p in pairs:
        ra, rb = root(p.first), root(p.second)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[str, list[str]] = {}
    for a in list(parent):
        groups.setdefault(root(a), []).append(a)
    return {a: tuple(sorted(members)) for members in groups.values() for a in members}


def lookalike_warning(pairs: Sequence[ArtworkPair]) -> str | None:
    """Return what the window says when a collection with lookalikes opens (None without
    any): which artworks show one picture, what a visitor's photo of them is answered, and
    what to do."""
    if not pairs:
        return None
    named = "; ".join(p.words() for p in pairs[:WARNING_PAIRS])
    more = len(pairs) - WARNING_PAIRS
    rest = f"; and {more} more pair{'s' * (more != 1)}" if more > 0 else ""
    one = len(pairs) == 1
    return (f"{'These artworks look' if one else 'These pairs of artworks look'} like one "
            f"picture filed twice: {named}{rest}. A visitor's photo of either is answered "
            "with both titles, and the rule that names the other artworks leaves them out. "
            "If they are one artwork, choose Collection \u25b8 These are one artwork\u2026; "
            "if one photo is extra, remove it (Collection \u25b8 Remove this photo\u2026).")


def merge_choices(pairs: Sequence[ArtworkPair]) -> dict[str, tuple[str, str]]:
    """Return what "These are one artwork…" offers: per pair, the two ways to put it
    together, in words ("Keep «A»: «B» becomes a view of it") -> (the artwork kept, the
    artwork whose photos join it)."""
    out: dict[str, tuple[str, str]] = {}
    for p in pairs:
        for keep, join, keep_title, join_title in (
                (p.first, p.second, p.first_title, p.second_title),
                (p.second, p.first, p.second_title, p.first_title)):
            words = (f"Keep \u00ab{keep_title}\u00bb: the photos of \u00ab{join_title}\u00bb "
                     "become views of it")
            if keep_title == join_title:
                words += f" ({keep} kept, {join} joins it)"
            out[words] = (keep, join)
    return out

