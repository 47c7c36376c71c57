"""One gallery image found for a photo (:class:`Match`): what ``irviewer search``, the
window's search with a photo and its answer (:mod:`irviewer.collection.answer`) list."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Match:
    """One gallery image found for a photo: its 1-based ``rank``, gallery index, image name
    (``item``), instance label ("" when the dataset has none), display title ("" when the
    dataset has none), cosine ``score``, the image's details (the manifest's other
    columns: (label, value) pairs; empty when it has none), and ``inliers``: the matched
    keypoints one homography explains between the photo and this image (None when it was
    not verified: :mod:`irviewer.collection.answer`)."""

    rank: int
    gallery_index: int
    item: str
    instance: str
    title: str
    score: float
    details: tuple[tuple[str, str], ...] = ()
    inliers: int | None = None
