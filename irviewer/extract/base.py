"""The extractor protocol: a name, an output dimension, and image -> float32 vector."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


@runtime_checkable
class Learner(Protocol):
    """An extractor that can learn from the photos it is to describe (the demo's VLAD
    learns its vocabulary: :mod:`irviewer.extract.vlad`); ``irviewer index`` uses it when
    the extractor has it, other extractors describe photos as they are.

    Learning runs in two steps, so the first can run on many photos in parallel:
    ``learning_sample(image, count, seed)`` returns up to ``count`` rows of what the
    extractor learns from (local descriptors), chosen by ``seed``; ``learned(samples,
    seed)`` returns a new extractor (the same ``name``) that has learnt from them. What it
    learnt is ``state()``: named arrays, saved beside the descriptor file; ``with_state(
    arrays, where)`` returns the extractor with a saved state (InputError naming ``where``
    when the arrays do not fit).
    """

    name: str
    dim: int

    def __call__(self, image: Image.Image) -> np.ndarray: ...

    def learning_sample(self, image: Image.Image, count: int, seed: int) -> np.ndarray: ...

    def learned(self, samples: Sequence[np.ndarray], seed: int) -> Learner: ...

    def state(self) -> dict[str, np.ndarray]: ...

    def with_state(self, arrays: Mapping[str, np.ndarray], where: str) -> Learner: ...


def input_side(extractor: Extractor) -> int | None:
    """Return the longest side, in pixels, the extractor ever looks at (its
    ``input_side`` attribute: a photo may be decoded reduced to about that size first,
    much faster for large JPEGs), or None when it wants the photo whole."""
    side = getattr(extractor, "input_side", None)
    return side if isinstance(side, int) and side > 0 else None


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
