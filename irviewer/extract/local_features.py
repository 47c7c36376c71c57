"""Local features and geometric verification with OpenCV: is this photo a view of that
image?

A photo and a reference image are each reduced to a few hundred SIFT keypoints (Lowe, IJCV
2004); their descriptors are compared as RootSIFT (Arandjelović & Zisserman, CVPR 2012:
the square root of the L1-normalised histogram, so Euclidean distance is the Hellinger
kernel). A tentative match is a photo point whose nearest reference descriptor is clearly
nearer than the second nearest (Lowe's ratio test), each reference point kept once (its
nearest photo point: a blank patch that is every point's nearest neighbour counts once,
not a hundred times). A homography (a plane seen from anywhere: a painting, a print, a
label) is fitted to them with MAGSAC++ (Baráth et al., CVPR 2020; OpenCV's
``USAC_MAGSAC``), and the matches it explains within :data:`REPROJECTION_PX` are the
**inliers**: a photo of the same artwork has tens to hundreds, one of another artwork a
handful (the chance alignments of a few points). A homography that collapses the photo to
a point or a line explains nothing and counts zero. This is the spatial verification of
instance-search engines (Philbin et al., CVPR 2007; VISE).

The budget per image: a collection's photo is described at :data:`REFERENCE_SIDE` px on
its long side with at most :data:`REFERENCE_KEYPOINTS` keypoints (stored at index time,
64 KB of descriptors at most); a visitor's photo at :data:`PHOTO_SIDE` px with at most
:data:`PHOTO_KEYPOINTS` (more, since it may show only a part).
"""

from __future__ import annotations

import cv2
import numpy as np
from PIL import Image

from irviewer.core.local_features import LocalFeatures

#: Long side (px) a collection's photo is reduced to before its keypoints are found.
REFERENCE_SIDE = 512
#: Keypoints kept per collection photo, at most (the strongest).
REFERENCE_KEYPOINTS = 500
#: Long side (px) a visitor's photo is reduced to.
PHOTO_SIDE = 640
#: Keypoints kept per visitor's photo, at most.
PHOTO_KEYPOINTS = 1000
#: Lowe's ratio test: the nearest descriptor must be nearer than this times the second.
RATIO = 0.8
#: A match agrees with the homography when it maps within this many pixels of its partner
#: (in the reference image, at :data:`REFERENCE_SIDE`).
REPROJECTION_PX = 4.0
#: A homography that changes areas by more than this factor (or less than its inverse) is
#: degenerate: it maps the photo to a point or a line.
MAX_AREA_CHANGE = 50.0


def single_threaded() -> None:
    """Make OpenCV use one thread in this process (worker processes that already run one
    per core)."""
    cv2.setNumThreads(1)


def local_features(image: Image.Image, side: int = REFERENCE_SIDE,
                   max_keypoints: int = REFERENCE_KEYPOINTS) -> LocalFeatures:
    """Return the image's SIFT keypoints and descriptors (OpenCV's ``SIFT_create``), the
    image reduced to ``side`` px on its long side (never enlarged), the ``max_keypoints``
    strongest kept. An image with nothing to find (blank) has none."""
    grey = image.convert("L")
    if max(grey.size) > side:
        grey = grey.copy()
        grey.thumbnail((side, side), Image.Resampling.LANCZOS)
    pixels = np.asarray(grey, dtype=np.uint8)
    keypoints, descriptors = cv2.SIFT.create(nfeatures=max_keypoints).detectAndCompute(
        pixels, None)
    if descriptors is None or not keypoints:
        return LocalFeatures.empty(side)
    keypoints, descriptors = keypoints[:max_keypoints], descriptors[:max_keypoints]
    points = np.array([k.pt for k in keypoints], dtype=np.float32).reshape(-1, 2)
    return LocalFeatures(points, np.clip(np.rint(descriptors), 0, 255).astype(np.uint8), side)


def rootsift(descriptors: np.ndarray) -> np.ndarray:
    """Return RootSIFT descriptors (float32): each SIFT row divided by its sum, square
    rooted (Arandjelović & Zisserman, CVPR 2012)."""
    d = descriptors.astype(np.float32)
    return np.sqrt(d / np.maximum(d.sum(axis=1, keepdims=True), 1e-7))


def inliers(photo: LocalFeatures, reference: LocalFeatures,
            photo_rootsift: np.ndarray | None = None) -> int:
    """Return how many tentative matches between ``photo`` and ``reference`` one homography
    explains (0 when fewer than 4 match, or the homography is degenerate); see the module
    docstring. ``photo_rootsift`` (:func:`rootsift` of the photo's descriptors) saves
    recomputing it for every reference."""
    if len(photo) < 2 or len(reference) < 2:
        return 0
    query = rootsift(photo.descriptors) if photo_rootsift is None else photo_rootsift
    pairs = cv2.BFMatcher(cv2.NORM_L2).knnMatch(query, rootsift(reference.descriptors), k=2)
    best: dict[int, tuple[float, int]] = {}
    for pair in pairs:
        if len(pair) == 2 and pair[0].distance < RATIO * pair[1].distance:
            m = pair[0]
            if m.trainIdx not in best or m.distance < best[m.trainIdx][0]:
                best[m.trainIdx] = (m.distance, m.queryIdx)
    if len(best) < 4:
        return 0
    train = np.fromiter(best.keys(), dtype=np.int64, count=len(best))
    query_rows = np.array([best[int(t)][1] for t in train], dtype=np.int64)
    homography, mask = cv2.findHomography(photo.points[query_rows], reference.points[train],
                                          cv2.USAC_MAGSAC, REPROJECTION_PX)
    if homography is None or mask is None:
        return 0
    area = abs(float(np.linalg.det(homography[:2, :2])))
    if not 1 / MAX_AREA_CHANGE < area < MAX_AREA_CHANGE:
        return 0
    return int(mask.sum())
