"""The extractor protocol: a name, an output dimension, and image -> float32 vector."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
from PIL import Image

from irviewer.core.errors import InputError


@runtime_checkable
class Extractor(Protocol):
    """Turns one image into one descriptor vector.

    ``name`` is what descriptor files record in their ``extractor`` member and what
    ``irviewer search --extractor`` takes; ``dim`` is the length of every vector it returns.
    Calling it with a PIL image (any mode; the extractor converts what it needs) returns a
    1-D float32 array of ``dim`` values. It must be safe to call from a worker thread.
    """

    name: str
    dim: int

    def __call__(self, image: Image.Image) -> np.ndarray: ...


def describe(extractor: Extractor, image: Image.Image, what: str) -> np.ndarray:
    """Return ``extractor(image)`` as a 1-D float32 vector, checked.

    Raises InputError naming ``what`` (the photo) and the extractor when the result does
    not have ``extractor.dim`` finite values, or is all zero (nothing to compare: a blank
    image gives no gradients).
    """
    vector = np.asarray(extractor(image), dtype=np.float32).reshape(-1)
    if vector.shape != (extractor.dim,):
        raise InputError(f"{what}: extractor {extractor.name!r} returned {vector.size} values "
                         f"but declares {extractor.dim} dimensions (a bug in the extractor)")
    if not np.isfinite(vector).all():
        raise InputError(f"{what}: extractor {extractor.name!r} returned NaN or infinite "
                         "values")
    if not vector.any():
        raise InputError(f"{what}: extractor {extractor.name!r} found nothing to describe "
                         "(a blank or single-colour image?)")
    return vector
