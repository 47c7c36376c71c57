"""CUB-200-2011 (Wah, Branson, Welinder, Perona & Belongie, Caltech technical report
CNS-TR-2011-001): 11,788 photos of 200 bird species, as deep metric learning evaluates it
(Song et al. CVPR 2016 and every paper since): the images of classes 101-200, 5,924 of
them, each a query against all the others (leave-one-out), the images of its species
positive; the dataset's own train/test split (``train_test_split.txt``) is not used.
Protocol ``metric-learning`` (MAP@R, R-precision, P@1, Recall@1, 2, 4, 8).

Files (the ``CUB_200_2011`` folder): ``images.txt``, one ``image_id path`` per line
(``1 001.Black_footed_Albatross/Black_Footed_Albatross_0046_18.jpg``, the path under
``images/``), and ``image_class_labels.txt``, one ``image_id class_id`` per line (1-200).
Input: that folder, or either file with the other beside it. Images are looked for in the
folder's ``images/`` (``--images`` names another folder).
"""

from __future__ import annotations

from pathlib import Path

from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError, counted, examples
from irviewer.core.label_sets import leave_one_out_dataset
from irviewer.formats.base import Reader, ReadOptions
from irviewer.formats.label_lists import (
    Row,
    head_lines,
    image_names,
    locate_images,
    read_rows,
    whole_number,
)

NAME = "cub200"
IMAGES = "images.txt"
LABELS = "image_class_labels.txt"
#: The classes metric learning tests on (1-based class ids, both ends included).
TEST_CLASSES = (101, 200)
PROTOCOL = "metric-learning"


def _folder(path: Path) -> Path:
    return path if path.is_dir() else path.parent


def sniff_cub(path: Path) -> bool:
    """Return True for a folder holding ``images.txt`` and ``image_class_labels.txt`` (or
    either file with the other beside it) whose first lines have two fields, a whole number
    first; never raises."""
    try:
        p = Path(path)
        if p.is_file() and p.name not in (IMAGES, LABELS):
            return False
        folder = _folder(p)
        if not ((folder / IMAGES).is_file() and (folder / LABELS).is_file()):
            return False
    except OSError:
        return False
    for name in (IMAGES, LABELS):
        lines = head_lines(folder / name, 1)
        fields = lines[0].split() if lines else []
        if len(fields) != 2 or not fields[0].isdigit():
            return False
    return True


def _pairs(rows: list[Row], where: str, second: str) -> dict[int, Row]:
    """Return the rows of an ``image_id value`` list by image id; InputError for a line
    that is not two fields, an id that is not a whole number or an id listed twice."""
    out: dict[int, Row] = {}
    for row in rows:
        if len(row.fields) != 2:
            raise InputError(f"{where}: line {row.line}: {len(row.fields)} fields, not 2 "
                             f"(image_id {second})")
        image_id = whole_number(row, 0, where, "image_id")
        if image_id in out:
            raise InputError(f"{where}: line {row.line}: image_id {image_id} is listed again "
                             f"(first on line {out[image_id].line})")
        out[image_id] = row
    return out


def read_cub(path: Path, options: ReadOptions | None = None) -> Dataset:
    """Return the leave-one-out :class:`Dataset` of CUB-200-2011's classes 101-200: their
    images in ``images.txt``'s order, labelled with their class id, protocol
    ``metric-learning``.

    InputError, one sentence naming the file and line, for a missing file, a line that is
    not two fields, an id that is not a whole number or is listed twice, an image without a
    class (or a class without an image), a class outside 1-200, or no image of classes
    101-200."""
    opts = options or ReadOptions()
    path = Path(path)
    folder = _folder(path)
    for name in (IMAGES, LABELS):
        if not (folder / name).is_file():
            raise InputError(f"{folder}: holds no {name}; give the CUB_200_2011 folder (with "
                             f"{IMAGES} and {LABELS})")
    images = _pairs(read_rows(folder / IMAGES, "a CUB-200-2011 image list"), IMAGES, "path")
    classes = _pairs(read_rows(folder / LABELS, "a CUB-200-2011 class list"), LABELS,
                     "class_id")
    if not images:
        raise InputError(f"{IMAGES}: lists no image; each line is image_id path")
    unlabelled = sorted(set(images) - set(classes))
    if unlabelled:
        raise InputError(f"{folder.name}: {counted(len(unlabelled), 'image')} of {IMAGES} "
                         f"{'has' if len(unlabelled) == 1 else 'have'} no class in {LABELS}, "
                         f"e.g. image_id {examples(unlabelled)}")
    unknown = sorted(set(classes) - set(images))
    if unknown:
        raise InputError(f"{folder.name}: {LABELS} gives a class to "
                         f"{counted(len(unknown), 'image_id')} not in {IMAGES}, e.g. "
                         f"{examples(unknown)}")
    low, high = TEST_CLASSES
    labels, paths = [], []
    for image_id, row in images.items():
        label = whole_number(classes[image_id], 1, LABELS, "class_id")
        if not 1 <= label <= high:
            raise InputError(f"{LABELS}: line {classes[image_id].line}: class {label} is "
                             f"outside 1-{high}")
        if label >= low:
            labels.append(label)
            paths.append(row.fields[1])
    if not labels:
        raise InputError(f"{folder.name}: no image of classes {low}-{high}, the classes "
                         "metric learning tests on")
    names, notes = image_names(paths, folder.name)
    files, found = locate_images(names, paths, [folder / "images"], opts.images, folder.name)
    return leave_one_out_dataset(labels, names, name="CUB-200-2011 (classes 101-200)",
                                 format=NAME, path=path, protocols=(PROTOCOL,),
                                 image_paths=files, notes=[*notes, *found])


READER = Reader(NAME, "CUB-200-2011 folder (images.txt, image_class_labels.txt), classes "
                "101-200 leave-one-out", sniff_cub, read_cub, priority=10,
                takes=frozenset({"images"}))
