"""Stanford Online Products (Song, Xiang, Jegelka & Savarese, "Deep Metric Learning via Lifted
Structured Feature Embedding", CVPR 2016): 120,053 photos of 22,634 products sold on eBay,
the test split (``Ebay_test.txt``) 60,502 photos of 11,316 products.

``Ebay_test.txt`` (and ``Ebay_train.txt``, ``Ebay_info.txt``) starts with the header
``image_id class_id super_class_id path``, then one image per line:
``1 11319 1 bicycle_final/111085122871_0.JPG``; ``class_id`` is the product (the label),
``super_class_id`` one of 12 categories, ``path`` relative to the dataset's folder.
Every image is a query against all the others (leave-one-out), the images of its product
positive: protocol ``sop`` (MAP@R, R-precision, P@1, Recall@1, 10, 100, 1000), as the
metric-learning papers and pytorch-metric-learning evaluate it.

Input: the list file, or the ``Stanford_Online_Products`` folder (its ``Ebay_test.txt`` is
read). Images are looked for beside the list (``--images`` names another folder).
"""

from __future__ import annotations

from pathlib import Path

from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError
from irviewer.core.label_sets import leave_one_out_dataset
from irviewer.formats.base import Reader, ReadOptions
from irviewer.formats.label_lists import (
    head_lines,
    image_names,
    locate_images,
    read_rows,
    whole_number,
)

NAME = "sop"
HEADER = ("image_id", "class_id", "super_class_id", "path")
TEST_LIST = "Ebay_test.txt"
PROTOCOL = "sop"


def _list_file(path: Path) -> Path:
    """Return the list a path names: the file itself, or a folder's ``Ebay_test.txt``."""
    return path / TEST_LIST if path.is_dir() else path


def sniff_sop(path: Path) -> bool:
    """Return True for a file whose first line is the header ``image_id class_id
    super_class_id path``, or a folder holding ``Ebay_test.txt``; never raises."""
    try:
        found = _list_file(Path(path))
        if not found.is_file():
            return False
    except OSError:
        return False
    lines = head_lines(found, 1)
    return bool(lines) and tuple(lines[0].split()) == HEADER


def read_sop(path: Path, options: ReadOptions | None = None) -> Dataset:
    """Return the leave-one-out :class:`Dataset` of a Stanford Online Products list: every
    listed image in list order, labelled with its ``class_id``, protocol ``sop``.

    InputError, one sentence naming the file and line, for a folder without
    ``Ebay_test.txt``, a first line that is not the header, a line that is not four fields,
    an id that is not a whole number, an image listed twice, or no image."""
    opts = options or ReadOptions()
    path = Path(path)
    file = _list_file(path)
    where = file.name
    if path.is_dir() and not file.is_file():
        raise InputError(f"{path}: holds no {TEST_LIST}; give the Stanford Online Products "
                         "folder or its list file")
    rows = read_rows(file, "a Stanford Online Products list")
    if not rows or rows[0].fields != HEADER:
        raise InputError(f"{where}: not a Stanford Online Products list; its first line must "
                         f"be the header {' '.join(HEADER)}")
    if len(rows) == 1:
        raise InputError(f"{where}: lists no image after its header")
    labels, paths = [], []
    for row in rows[1:]:
        if len(row.fields) != len(HEADER):
            raise InputError(f"{where}: line {row.line}: {len(row.fields)} fields, not 4 "
                             f"({' '.join(HEADER)})")
        whole_number(row, 0, where, "image_id")
        labels.append(whole_number(row, 1, where, "class_id"))
        whole_number(row, 2, where, "super_class_id")
        paths.append(row.fields[3])
    names, notes = image_names(paths, where)
    files, found = locate_images(names, paths, [file.parent], opts.images, where)
    return leave_one_out_dataset(labels, names, name="Stanford Online Products", format=NAME,
                                 path=path, protocols=(PROTOCOL,), image_paths=files,
                                 notes=[*notes, *found])


READER = Reader(NAME, "Stanford Online Products list (Ebay_test.txt: image_id class_id "
                "super_class_id path), leave-one-out", sniff_sop, read_sop, priority=10,
                takes=frozenset({"images"}))
