"""Cars196 (Krause, Stark, Deng & Fei-Fei, "3D Object Representations for Fine-Grained
Categorization", ICCV Workshops 2013; Stanford Cars): 16,185 photos of 196 car models, as
deep metric learning evaluates it (Song et al. CVPR 2016 and every paper since): the images
of classes 99-196, 8,131 of them, each a query against all the others (leave-one-out), the
images of its model positive. The file's own ``test`` flag (a split of every class into
train and test images, for classification) is not used. Protocol ``metric-learning``
(MAP@R, R-precision, P@1, Recall@1, 2, 4, 8).

File: ``cars_annos.mat`` (MATLAB 5), its ``annotations`` struct array with one element per
image whose ``relative_im_path`` (``car_ims/000001.jpg``) and ``class`` (1-196) are read
(``bbox_*`` and ``test`` are not). Input: that file, or the folder holding it. Images are
looked for beside it (``--images`` names another folder).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError
from irviewer.core.label_sets import leave_one_out_dataset
from irviewer.formats.base import Reader, ReadOptions
from irviewer.formats.label_lists import image_names, locate_images

NAME = "cars196"
FILE = "cars_annos.mat"
#: The classes metric learning tests on (1-based class ids, both ends included).
TEST_CLASSES = (99, 196)
PROTOCOL = "metric-learning"
FIELDS = ("relative_im_path", "class")
#: The most annotations a file may declare (Cars196 has 16,185): more is not this file.
MAX_IMAGES = 10_000_000


def _file(path: Path) -> Path:
    return path / FILE if path.is_dir() else path


def _variables(path: Path) -> dict[str, tuple[tuple[int, ...], str]]:
    """Return the variables a MATLAB 5 file declares (name -> (shape, class)), read from
    their headers; empty for a file that is not one. Never raises."""
    from scipy import io as sio  # imported on first use: the window opens without it

    try:
        return {name: (tuple(shape), kind) for name, shape, kind in sio.whosmat(path)}
    except Exception:  # scipy raises many types for files that are not MATLAB 5
        return {}


def sniff_cars(path: Path) -> bool:
    """Return True for a ``.mat`` file (or a folder holding ``cars_annos.mat``) that
    declares an ``annotations`` struct array; never raises."""
    try:
        found = _file(Path(path))
        if found.suffix.lower() != ".mat" or not found.is_file():
            return False
    except OSError:
        return False
    return _variables(found).get("annotations", ((), ""))[1] == "struct"


def read_cars(path: Path, options: ReadOptions | None = None) -> Dataset:
    """Return the leave-one-out :class:`Dataset` of Cars196's classes 99-196: their images
    in the file's order, labelled with their class, protocol ``metric-learning``.

    InputError, one sentence naming the file, for a folder without ``cars_annos.mat``, a
    file that is not MATLAB 5 (a v7.3 file is named as such), no ``annotations`` struct
    array or one without ``relative_im_path`` and ``class``, an element whose path is not
    text or whose class is not a whole number in 1-196, an image listed twice, or no image
    of classes 99-196."""
    opts = options or ReadOptions()
    path = Path(path)
    file = _file(path)
    where = file.name
    if not file.is_file():
        raise InputError(f"{path}: holds no {FILE}; give the Cars196 annotation file")
    annotations = _annotations(file)
    low, high = TEST_CLASSES
    labels, paths = [], []
    for i, element in enumerate(annotations):
        image = _text(element["relative_im_path"])
        label = _whole(element["class"])
        if image is None:
            raise InputError(f"{where}: annotation {i + 1}'s relative_im_path is not a path")
        if label is None or not 1 <= label <= high:
            raise InputError(f"{where}: annotation {i + 1} ({image}) has class "
                             f"{element['class']!r}, not a whole number in 1-{high}")
        if label >= low:
            labels.append(label)
            paths.append(image)
    if not labels:
        raise InputError(f"{where}: no image of classes {low}-{high}, the classes metric "
                         "learning tests on")
    names, notes = image_names(paths, where)
    files, found = locate_images(names, paths, [file.parent], opts.images, where)
    return leave_one_out_dataset(labels, names, name="Cars196 (classes 99-196)", format=NAME,
                                 path=path, protocols=(PROTOCOL,), image_paths=files,
                                 notes=[*notes, *found])


def _annotations(file: Path) -> np.ndarray:
    """Return the file's ``annotations`` as a 1-D structured array; InputError as
    :func:`read_cars`."""
    from scipy import io as sio

    where = file.name
    with file.open("rb") as f:
        head = f.read(128)
    if b"MATLAB 7.3" in head:
        raise InputError(f"{where}: a MATLAB 7.3 file; the Cars196 annotations are the "
                         f"original {FILE} (MATLAB 5), save it with -v7")
    declared = _variables(file)
    shape, kind = declared.get("annotations", ((), ""))
    if not declared:
        raise InputError(f"{where}: not a MATLAB 5 file; give Cars196's {FILE}")
    if kind != "struct":
        raise InputError(f"{where}: no annotations struct array (the file declares "
                         f"{', '.join(declared) or 'no variable'}); give Cars196's {FILE}")
    if int(np.prod(shape)) > MAX_IMAGES:
        raise InputError(f"{where}: declares {int(np.prod(shape)):,} annotations, more than "
                         f"any Cars196 file; give Cars196's {FILE}")
    try:
        content = sio.loadmat(file, variable_names=["annotations"], squeeze_me=True)
    except Exception as e:  # scipy raises many types for damaged files
        raise InputError(f"{where}: not a readable .mat file ({e})") from None
    annotations = np.atleast_1d(content["annotations"])
    missing = [f for f in FIELDS if annotations.dtype.names is None
               or f not in annotations.dtype.names]
    if missing:
        raise InputError(f"{where}: the annotations have no {' or '.join(missing)} field; "
                         f"Cars196's {FILE} has relative_im_path and class")
    return annotations


def _text(value: Any) -> str | None:
    """Return a path field as text (None when it is not a non-empty string)."""
    value = value.item() if isinstance(value, np.ndarray) and value.size == 1 else value
    return value if isinstance(value, str) and value else None


def _whole(value: Any) -> int | None:
    """Return a class field as an int (None when it is not a whole number)."""
    value = value.item() if isinstance(value, np.ndarray) and value.size == 1 else value
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        return None
    number = float(value)
    return int(number) if np.isfinite(number) and number == int(number) else None


READER = Reader(NAME, "Cars196 cars_annos.mat, classes 99-196 leave-one-out", sniff_cars,
                read_cars, priority=10, takes=frozenset({"images"}))
