"""Where the window finds the pictures of data given from Python: the ``images`` argument
of :func:`irviewer.view` as image name -> file or made picture
(:mod:`irviewer.core.made_images`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from irviewer.api.errors import ArgumentError
from irviewer.api.given import ImagesLike
from irviewer.core.dataset import Dataset
from irviewer.core.errors import counted
from irviewer.core.made_images import ImageLocation, MadeImage, MadeImages


def image_locations(images: ImagesLike, dataset: Dataset, order: Sequence[str]
                    ) -> Mapping[str, ImageLocation]:
    """Return image name -> picture for ``dataset`` from the ``images`` argument: a folder
    (each image found by its name, extension and sub-folders aside), one path or picture
    per image in ``order`` (the rows of the arrays: embeddings', or the queries' then the
    gallery's), a mapping from name to path or picture, or a function of the name.
    ArgumentError naming ``images`` for anything else."""
    names = list(dict.fromkeys((*order, *dataset.gallery, *(q.image for q in dataset.queries))))
    if callable(images) and not isinstance(images, str | os.PathLike):
        return MadeImages(names, images)
    if isinstance(images, str | os.PathLike):
        return _folder(Path(images).expanduser(), names)
    if isinstance(images, Mapping):
        return {str(k): _location(v, str(k)) for k, v in images.items()}
    if isinstance(images, Sequence) and not isinstance(images, bytes):
        if len(images) != len(order):
            raise ArgumentError("images", f"images: {counted(len(images), 'image')} for "
                                f"{counted(len(order), 'row')}; give one per row of the "
                                "arrays (the queries' rows, then the gallery's), or a "
                                "mapping from image name to path")
        return {name: _location(v, name) for name, v in zip(order, images, strict=True)
                if v is not None}
    raise ArgumentError("images", f"images: a {type(images).__name__} cannot give pictures; "
                        "give a folder, a list of paths, a mapping from image name to path, "
                        "or a function of the image name")


def _location(value: object, name: str) -> ImageLocation:
    if isinstance(value, str | os.PathLike):
        return Path(value).expanduser()
    return MadeImage(name, _held_picture(value))  # a picture held in memory


def _held_picture(value: object) -> Callable[[str], object]:
    """Return the function that gives ``value`` for any name (a picture held in memory)."""
    return lambda _name: value


def _folder(folder: Path, names: Sequence[str]) -> dict[str, ImageLocation]:
    from irviewer.core.descriptors import name_key
    from irviewer.core.image_names import IMAGE_SUFFIXES

    if not folder.is_dir():
        raise ArgumentError("images", f"images: {folder}: no such folder")
    files: dict[str, Path] = {}
    for f in sorted(folder.rglob("*")):
        if f.suffix.lower() in IMAGE_SUFFIXES and f.is_file():
            files.setdefault(f.relative_to(folder).with_suffix("").as_posix(), f)
            files.setdefault(name_key(f.name), f)
    found: dict[str, ImageLocation] = {}
    for name in names:
        key = Path(name).with_suffix("").as_posix() if Path(name).suffix.lower() \
            in IMAGE_SUFFIXES else name
        file = files.get(key) or files.get(name_key(name))
        if file is not None:
            found[name] = file
    if not found:
        raise ArgumentError("images", f"images: {folder} holds no image named after the "
                            f"dataset's, e.g. {', '.join(names[:3])}; name the files after "
                            "the images (names=), or give a list of paths")
    return found


__all__ = ["image_locations"]
