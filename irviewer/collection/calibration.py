"""Calibrating a collection's acceptance rule on its own photos, at index time
(:class:`irviewer.core.acceptance.Calibration` says what the rule is).

Up to :data:`CALIBRATION_PHOTOS` photos spread over the collection each give
:data:`VIEWS_PER_PHOTO` **changed views** (:func:`visitor_view`: a part of the picture,
seen from the side, under other light, out of focus, noisy, compressed: what a visitor's
phone does to it, made here with the collection's seed, never with a test's photos). Each
view is verified (:func:`irviewer.extract.local_features.inliers`) against its own photo
(a positive) and against the :data:`~irviewer.core.acceptance.SHORTLIST` photos of other
artworks most like its photo by the collection's descriptors (the most inliers among them
is a negative: what a photo of an artwork the collection does not hold can reach by
chance). The views are made and described by the indexing workers; verifying them is a
few milliseconds each.

A negative that reaches the rule is not chance: the other artwork's photo shows the same
picture (one artwork filed as two, a gift-shop print, two versions of one composition).
Such a pair of artworks is a **lookalike** (:func:`lookalike_pairs`): its photos verify
against each other at or above the rule computed *without* them. Lookalikes are left out
of the negatives, so that one duplicate does not set the rule for every other artwork;
a visitor's photo of either is answered with both titles
(:mod:`irviewer.collection.lookalikes`) until the curator puts them together, and the
indexer and the window say so (:func:`irviewer.collection.indexing.lookalike_lines`). Only
the sampled photos are checked, so a lookalike outside the sample goes unnamed (and leaves
the rule alone: it is in no negative).
"""

from __future__ import annotations

import io
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageFilter

from irviewer.collection.describing import Pool
from irviewer.core.acceptance import DEFAULT_STRICTNESS, SHORTLIST, Calibration
from irviewer.core.errors import InputError
from irviewer.core.local_features import FeatureTable, LocalFeatures
from irviewer.extract.local_features import (
    PHOTO_KEYPOINTS,
    PHOTO_SIDE,
    inliers,
    local_features,
    rootsift,
)
from irviewer.formats.image_files import read_rgb

#: Photos of a collection its rule is calibrated on, at most (spread evenly over it).
CALIBRATION_PHOTOS = 24
#: Changed views made of each of them.
VIEWS_PER_PHOTO = 2
#: Seed of the changes (a collection is calibrated the same way every time).
CALIBRATION_SEED = 20261126
#: Wall colour around a picture seen from the side.
_WALL = (150, 145, 135)


def visitor_view(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Return ``image`` changed as a visitor's phone photo changes a picture, at
    :data:`~irviewer.extract.local_features.PHOTO_SIDE` px: a part of 55-100 % of each
    side; seen from 0-40° to the side (the far side shorter, the width foreshortened);
    exposure x0.5-1.3 with a colour cast of up to 20 %; a blur of up to 1.5 px; sensor
    noise; JPEG at quality 50-90."""
    rgb = image.convert("RGB")
    w, h = rgb.size
    fw, fh = rng.uniform(0.55, 1.0, 2)
    cw, ch = max(8, round(w * fw)), max(8, round(h * fh))
    x0, y0 = int(rng.integers(0, w - cw + 1)), int(rng.integers(0, h - ch + 1))
    part = rgb.crop((x0, y0, x0 + cw, y0 + ch))
    angle = np.radians(rng.uniform(0, 40))
    shrink = 0.5 * np.sin(angle) * ch / 2  # the far side: its source edge taller
    tilt = rng.uniform(-0.04, 0.04) * ch
    far_left = rng.random() < 0.5
    near, far = (0.0, 0.0), (-shrink + tilt, shrink + tilt)
    (ul, ll), (ur, lr) = (far, near) if far_left else (near, far)
    out_w = max(8, round(cw * np.cos(angle)))
    seen = part.transform((out_w, ch), Image.Transform.QUAD,
                          (0, ul, 0, ch + ll, cw, ch + lr, cw, ur),
                          Image.Resampling.BICUBIC, fillcolor=_WALL)
    seen.thumbnail((PHOTO_SIDE, PHOTO_SIDE), Image.Resampling.LANCZOS)
    cast = 1 + rng.uniform(-0.2, 0.2, 3)
    pixels = np.asarray(seen, np.float32) * rng.uniform(0.5, 1.3) * cast
    pixels += rng.normal(0, rng.uniform(0, 4), pixels.shape[:2])[..., None]
    changed = Image.fromarray(pixels.clip(0, 255).astype(np.uint8)).filter(
        ImageFilter.GaussianBlur(rng.uniform(0, 1.5)))
    buffer = io.BytesIO()
    changed.save(buffer, "JPEG", quality=int(rng.integers(50, 91)))
    buffer.seek(0)
    with Image.open(buffer) as im:
        return im.convert("RGB")


def view_features(path: str, seed: int) -> LocalFeatures | str:
    """Return the local features of a :func:`visitor_view` of the photo at ``path`` made
    with ``seed``, or the sentence saying why the photo cannot be used (run by a worker)."""
    try:
        image = read_rgb(Path(path), 3 * PHOTO_SIDE // 2)[0]
        view = visitor_view(image, np.random.default_rng([CALIBRATION_SEED, seed]))
        return local_features(view, PHOTO_SIDE, PHOTO_KEYPOINTS)
    except InputError as e:
        return str(e)


def calibration_sample(count: int) -> list[int]:
    """Return the positions (sorted, distinct) of at most :data:`CALIBRATION_PHOTOS`
    photos spread evenly over ``count``."""
    n = min(CALIBRATION_PHOTOS, count)
    return sorted({round(i * (count - 1) / max(1, n - 1)) for i in range(n)})


@dataclass(frozen=True)
class Lookalike:
    """A changed view of the photo at position ``photo`` agreed on ``inliers`` points with
    the photo at position ``other``, of another artwork (positions in the photos given to
    :func:`calibrate`)."""

    photo: int
    other: int
    inliers: int


@dataclass(frozen=True)
class Calibrated:
    """What calibrating found: the collection's :class:`Calibration` (lookalikes left out
    of its negatives), and its lookalikes (each pair of photos once, the most inliers
    first)."""

    calibration: Calibration
    lookalikes: tuple[Lookalike, ...] = ()


def lookalike_pairs(positives: Sequence[int],
                    views: Sequence[tuple[int, Mapping[int, int]]]
                    ) -> tuple[Calibration, frozenset[frozenset[int]]]:
    """Return the calibration with the lookalikes left out, and the lookalikes: the pairs
    of photos (positions) that reach the rule computed without them.

    ``views`` are the changed views, each (the position of its photo, the inliers it has
    with each photo of another artwork of its shortlist, by position); a view's negative is
    the most inliers among the pairs that are not lookalikes (0 when none is left). Pairs
    are tried from the most inliers down: one is a lookalike when its inliers reach the
    :data:`~irviewer.core.acceptance.DEFAULT_STRICTNESS` threshold of the calibration
    without it and the lookalikes already found; the passes repeat until none is added (a
    rule made lower by one duplicate left out may uncover a second). Leaving a pair out
    only lowers the rule, so every lookalike found still reaches the final one.
    """
    best: dict[frozenset[int], int] = {}
    for i, counts in views:
        for g, n in counts.items():
            pair = frozenset((i, g))
            best[pair] = max(best.get(pair, 0), n)
    ordered = sorted(best.items(), key=lambda item: (-item[1], sorted(item[0])))

    def without(left_out: set[frozenset[int]]) -> Calibration:
        return Calibration(tuple(positives), tuple(
            max((n for g, n in counts.items() if frozenset((i, g)) not in left_out),
                default=0) for i, counts in views))

    found: set[frozenset[int]] = set()
    added = True
    while added:
        added = False
        for pair, n in ordered:
            if pair not in found and n >= without(found | {pair}).threshold(
                    DEFAULT_STRICTNESS):
                found.add(pair)
                added = True
    return without(found), frozenset(found)


def calibrate(pool: Pool, names: Sequence[str], paths: Sequence[Path],
              artworks: Sequence[str], vectors: np.ndarray, table: FeatureTable
              ) -> Generator[tuple[int, int], None, Calibrated]:
    """Return the collection's :class:`Calibration` and lookalikes (see the module
    docstring), yielding (views done, views in all). ``names``, ``paths``, ``artworks`` and
    the rows of ``vectors`` are the collection's photos, in one order; ``table`` their
    local features."""
    rows = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    labels = np.asarray(list(artworks))
    jobs = [(i, v) for i in calibration_sample(len(names)) for v in range(VIEWS_PER_PHOTO)]
    positives: dict[int, int] = {}  # by job, so the record does not depend on which worker
    views: dict[int, tuple[int, dict[int, int]]] = {}  # finished first
    yield 0, len(jobs)
    arguments = [(str(paths[i]), i * VIEWS_PER_PHOTO + v) for i, v in jobs]
    for done, (j, view) in enumerate(pool.call(view_features, arguments), start=1):
        yield done, len(jobs)
        if isinstance(view, str) or not len(view):
            continue
        i = jobs[j][0]
        own = table.get(names[i])
        if own is None:
            continue
        query = rootsift(view.descriptors)
        positives[j] = inliers(view, own, query)
        scores = rows @ rows[i]
        others = np.flatnonzero(labels != labels[i])
        if not len(others):
            continue
        shortlist = others[np.argsort(-scores[others], kind="stable")[:SHORTLIST]]
        views[j] = (i, {int(g): inliers(view, f, query) for g in shortlist
                        if (f := table.get(names[g])) is not None})
    calibration, pairs = lookalike_pairs(tuple(positives[j] for j in sorted(positives)),
                                         [views[j] for j in sorted(views)])
    lookalikes: dict[frozenset[int], Lookalike] = {}
    for j in sorted(views):  # each pair once, as the view with the most inliers saw it
        i, counts = views[j]
        for g, n in counts.items():
            pair = frozenset((i, g))
            if pair in pairs and n > getattr(lookalikes.get(pair), "inliers", -1):
                lookalikes[pair] = Lookalike(i, g, n)
    return Calibrated(calibration, tuple(sorted(lookalikes.values(),
                                                key=lambda a: (-a.inliers, a.photo, a.other))))
