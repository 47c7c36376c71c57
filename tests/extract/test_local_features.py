"""Geometric verification: a picture seen through a known homography has many inliers,
another picture almost none; a blank picture has no keypoint; points that all match one
reference point count once, not as a fit."""

from __future__ import annotations

import numpy as np
from PIL import Image

from irviewer.core.local_features import LocalFeatures
from irviewer.extract.local_features import (
    PHOTO_KEYPOINTS,
    PHOTO_SIDE,
    REFERENCE_KEYPOINTS,
    REFERENCE_SIDE,
    inliers,
    local_features,
    rootsift,
)
from tests.collection_photos import artwork_image


def seen_from_the_side(image: Image.Image) -> Image.Image:
    """The picture through a homography: the right side shorter, a little rotated."""
    w, h = image.size
    return image.transform((w, h), Image.Transform.QUAD,
                           (0, 0, 0, h, w, h * 1.1, w, -h * 0.1), Image.Resampling.BICUBIC,
                           fillcolor=(150, 145, 135))


def test_the_same_picture_from_the_side_verifies_and_another_does_not():
    painting = artwork_image(1, (800, 600))
    reference = local_features(painting)
    assert 50 < len(reference) <= REFERENCE_KEYPOINTS
    assert reference.side == REFERENCE_SIDE
    assert reference.points.max() < REFERENCE_SIDE  # points at the reduced size
    photo = local_features(seen_from_the_side(painting), PHOTO_SIDE, PHOTO_KEYPOINTS)
    other = local_features(artwork_image(2, (800, 600)), PHOTO_SIDE, PHOTO_KEYPOINTS)
    assert inliers(photo, reference) >= 40
    assert inliers(other, reference) < 8
    assert inliers(photo, reference, rootsift(photo.descriptors)) == inliers(photo, reference)


def test_a_blank_picture_has_no_keypoint_and_verifies_nothing():
    blank = local_features(Image.new("RGB", (300, 200), (120, 120, 120)))
    assert len(blank) == 0
    assert inliers(blank, local_features(artwork_image(1, (400, 300)))) == 0


def test_rootsift_is_the_square_root_of_the_l1_normalised_histogram():
    d = np.array([[1, 3, 0] + [0] * 125, [0] * 128], np.uint8)
    r = rootsift(d)
    assert np.allclose(r[0, :3], [0.5, np.sqrt(0.75), 0]) and not r[1].any()
    assert np.allclose((r[0] ** 2).sum(), 1)


def test_points_that_all_match_one_reference_point_count_once():
    # Fifty photo points with the same descriptor as one reference point (a blank patch
    # every point is nearest to): one tentative match, not fifty, and no homography.
    rng = np.random.default_rng(0)
    hub = rng.integers(0, 40, 128).astype(np.uint8)
    far = (255 - hub).astype(np.uint8)
    reference = LocalFeatures(np.array([[10, 10], [200, 200]], np.float32),
                              np.stack([hub, far]), 512)
    photo = LocalFeatures(rng.uniform(0, 500, (50, 2)).astype(np.float32),
                          np.repeat(hub[None], 50, axis=0), 640)
    assert inliers(photo, reference) == 0
