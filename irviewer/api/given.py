"""The data arguments of :func:`irviewer.evaluate` and :func:`irviewer.view` as the caller
gave them (:class:`Given`), and what they become, ready to open (:class:`Prepared`)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from irviewer.api.errors import ArgumentError
from irviewer.core.dataset import Dataset
from irviewer.io.user_data import user_data_folder
from irviewer.methods.held import Held

#: The format of a dataset built from label arrays (the report's ``dataset.format``).
LABELS = "labels"
#: The folder of the user's data folder under which the window keeps what belongs to data
#: given in memory (the corrections made on it), by a fingerprint of its ground truth.
IN_MEMORY_FOLDER = "in-memory"

#: What a dataset argument may be.
DatasetLike = str | os.PathLike[str] | Dataset
#: What an images argument may be: a folder, one path (or picture) per image, a mapping
#: from image name to path (or picture), or a function of the image name.
ImagesLike = (str | os.PathLike[str] | Sequence[Any] | Mapping[str, Any]
              | Callable[[str], object])


@dataclass
class Given:
    """The data arguments, each as the caller gave it (None: not given)."""

    dataset: DatasetLike | None = None
    embeddings: object = None
    names: object = None
    labels: object = None
    queries: object = None
    gallery: object = None
    query_names: object = None
    gallery_names: object = None
    query_labels: object = None
    gallery_labels: object = None
    query_cams: object = None
    gallery_cams: object = None
    scores: object = None
    distances: object = None
    descriptors: object = None
    ranking: object = None
    name: str | None = None
    format: str | None = None
    read_options: Mapping[str, object] | None = None

    @classmethod
    def of(cls, data: object, more: object, **keywords: Any) -> Given:
        """Return the arguments with the positional ones placed: a path or a Dataset first
        is the dataset; an array first is the embeddings, or, with a second array, the
        queries then the gallery."""
        given = cls(**keywords)
        if data is None:
            if more is not None:
                raise ArgumentError("gallery", "gallery: a second positional array is the "
                                    "gallery, after the queries; give the queries first")
            return given
        if isinstance(data, str | os.PathLike | Dataset):
            if more is not None:
                raise ArgumentError("dataset", "dataset: after a dataset, give the vectors by "
                                    "name (embeddings=, or queries= and gallery=)")
            _once(given, "dataset", data)
        elif more is None:
            _once(given, "embeddings", data)
        else:
            _once(given, "queries", data)
            _once(given, "gallery", more)
        return given


def _once(given: Given, key: str, value: object) -> None:
    if getattr(given, key) is not None:
        raise ArgumentError(key, f"{key}: given twice, by position and by name; give it once")
    setattr(given, key, value)


@dataclass(frozen=True)
class Prepared:
    """The data ready to open: the ``dataset`` held in memory (None: read from
    ``dataset_path`` by the opening; a dataset built in memory has its name there, and the
    window gives it its place in the user's data folder: :func:`in_memory_place`), the
    method data held in memory by its path
    (``held``: at most one), the descriptor files and rankings given (the data held among
    them, by its path), the name of the argument that holds the vectors
    (``vectors_argument``, for the sentences), and the names of the arrays' rows in order
    (``rows``: the embeddings', or the queries' then the gallery's; empty when they carry
    none), which a list of pictures follows."""

    dataset_path: Path
    dataset: Dataset | None
    held: tuple[tuple[Path, Held], ...]
    descriptors: tuple[Path, ...]
    rankings: tuple[Path, ...]
    vectors_argument: str
    rows: tuple[str, ...] = ()


def in_memory_place(dataset: Dataset) -> Path:
    """Return the path that names a dataset given in memory where the window keeps what
    belongs to it (the corrections made on it: :func:`~irviewer.formats.corrections_file.
    corrections_place`): in the user's data folder, by a fingerprint of its images and
    ground truth, so that the same labels given again find their corrections."""
    h = hashlib.sha256()
    for names in (dataset.gallery, dataset.query_names):
        h.update("\n".join(names).encode("utf-8", "surrogateescape") + b"\0")
    for q in dataset.queries:
        for group in sorted(q.relevance):
            h.update(group.encode() + q.relevance[group].tobytes())
        h.update(b"\0")
    for extra in (dataset.gallery_labels, dataset.gallery_cameras):
        if extra is not None:
            h.update(np.asarray(extra).astype(str).tobytes())
    return user_data_folder() / IN_MEMORY_FOLDER / f"{dataset.name}-{h.hexdigest()[:16]}"


__all__ = ["IN_MEMORY_FOLDER", "LABELS", "DatasetLike", "Given", "ImagesLike", "Prepared",
           "in_memory_place"]
