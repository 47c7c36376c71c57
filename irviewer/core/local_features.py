"""Local features of images: keypoint positions and their 128-value SIFT descriptors, the
evidence geometric verification works on (Lowe, IJCV 2004; Philbin et al., CVPR 2007).

:class:`LocalFeatures` are one image's; :class:`FeatureTable` holds many images' in three
flat arrays (a row range per image), the way a collection stores them
(:mod:`irviewer.formats.local_feature_file`). Computing and matching them is
:mod:`irviewer.extract.local_features`; this module is numpy only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

#: Values in one SIFT descriptor.
DESCRIPTOR_DIM = 128


@dataclass(frozen=True)
class LocalFeatures:
    """One image's local features: ``points`` (n x 2 float32: x, y in pixels of the image
    as it was described, reduced to ``side`` px on its long side) and ``descriptors``
    (n x 128 uint8 SIFT histograms, one row per point)."""

    points: np.ndarray
    descriptors: np.ndarray
    side: int

    def __post_init__(self) -> None:
        n = len(self.points)
        if self.points.shape != (n, 2) or self.descriptors.shape != (n, DESCRIPTOR_DIM):
            raise ValueError(f"{n} points need {n} x {DESCRIPTOR_DIM} descriptors, not "
                             f"{self.descriptors.shape}")

    def __len__(self) -> int:
        return len(self.points)

    @classmethod
    def empty(cls, side: int) -> LocalFeatures:
        """Return the features of an image with no keypoint (a blank or tiny picture)."""
        return cls(np.zeros((0, 2), np.float32), np.zeros((0, DESCRIPTOR_DIM), np.uint8), side)


@dataclass(frozen=True)
class FeatureTable:
    """Many images' local features: image ``names``, ``offsets`` (len(names) + 1: image
    i's rows are offsets[i]:offsets[i + 1]), all ``points`` and ``descriptors`` stacked,
    and the long ``side`` every image was reduced to."""

    names: tuple[str, ...]
    offsets: np.ndarray
    points: np.ndarray
    descriptors: np.ndarray
    side: int

    def __post_init__(self) -> None:
        n = len(self.names)
        offsets = self.offsets
        if offsets.shape != (n + 1,) or (n + 1 and offsets[0] != 0) or \
                np.any(np.diff(offsets) < 0) or offsets[-1] != len(self.points) or \
                len(self.points) != len(self.descriptors):
            raise ValueError("the offsets do not divide the rows between the images")
        object.__setattr__(self, "_rows", {name: i for i, name in enumerate(self.names)})

    def __contains__(self, name: object) -> bool:
        return name in self._rows  # type: ignore[attr-defined]

    def get(self, name: str) -> LocalFeatures | None:
        """Return the features of image ``name``, or None when the table has none."""
        i = self._rows.get(name)  # type: ignore[attr-defined]
        if i is None:
            return None
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        return LocalFeatures(self.points[a:b], self.descriptors[a:b], self.side)

    @classmethod
    def of(cls, features: Mapping[str, LocalFeatures] | Sequence[tuple[str, LocalFeatures]],
           side: int) -> FeatureTable:
        """Return the table of ``features`` (name -> features, in that order)."""
        items = list(features.items()) if isinstance(features, Mapping) else list(features)
        counts = [len(f) for _, f in items]
        offsets = np.zeros(len(items) + 1, np.int64)
        offsets[1:] = np.cumsum(counts)
        points = np.concatenate([f.points for _, f in items]) if items else \
            np.zeros((0, 2), np.float32)
        descriptors = np.concatenate([f.descriptors for _, f in items]) if items else \
            np.zeros((0, DESCRIPTOR_DIM), np.uint8)
        return cls(tuple(n for n, _ in items), offsets, points.astype(np.float32, copy=False),
                   descriptors.astype(np.uint8, copy=False), side)
