"""In-Shop Clothes Retrieval (Liu, Luo, Qiu, Wang & Tang, "DeepFashion: Powering Robust
Clothes Recognition and Retrieval with Rich Annotations", CVPR 2016): 52,712 shop photos of
7,982 clothing items; its test split scores 14,218 query photos against a gallery of 12,612,
the gallery photos of the query's item positive. Protocol ``inshop`` (Recall@1, 10, 20, 30,
40, 50 as the metric-learning papers report it, with the bounds that the order of tied
scores puts on it).

File: ``Eval/list_eval_partition.txt``: a line with the number of images, the header
``image_name item_id evaluation_status``, then one image per line,
``img/WOMEN/Dresses/id_00000002/02_1_front.jpg id_00000002 train``; status ``query`` and
``gallery`` rows are read, ``train`` rows left out. Input: that file, or the dataset's
folder holding it (in ``Eval/`` or at its top). The file names repeat in every item's
folder, so images are named by their paths with the folders joined by ``-``
(:mod:`irviewer.formats.label_lists`). Images are looked for in the dataset folder's
``Img/`` (where the published ``img.zip`` unpacks), then in the folder itself
(``--images`` names another folder).
"""

from __future__ import annotations

from pathlib import Path

from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError, counted
from irviewer.core.label_sets import query_gallery_dataset
from irviewer.formats.base import Reader, ReadOptions
from irviewer.formats.label_lists import head_lines, image_names, locate_images, read_rows

NAME = "inshop"
FILE = "list_eval_partition.txt"
HEADER = ("image_name", "item_id", "evaluation_status")
STATUSES = ("train", "query", "gallery")
PROTOCOL = "inshop"


def _list_file(path: Path) -> Path:
    """Return the list a path names: the file itself, or a folder's ``Eval/`` list (or the
    one at its top)."""
    if not path.is_dir():
        return path
    nested = path / "Eval" / FILE
    return nested if nested.is_file() else path / FILE


def sniff_inshop(path: Path) -> bool:
    """Return True for a file whose first line is a whole number and second the header
    ``image_name item_id evaluation_status``, or a folder holding one as
    ``Eval/list_eval_partition.txt``; never raises."""
    try:
        found = _list_file(Path(path))
        if not found.is_file():
            return False
    except OSError:
        return False
    lines = head_lines(found, 2)
    return (len(lines) == 2 and lines[0].strip().isdigit()
            and tuple(lines[1].split()) == HEADER)


def read_inshop(path: Path, options: ReadOptions | None = None) -> Dataset:
    """Return In-Shop's query -> gallery :class:`Dataset`: the ``gallery`` rows in list order
    are the gallery, the ``query`` rows the queries, labelled with their ``item_id``,
    protocol ``inshop``. A count line that disagrees with the rows is noted.

    InputError, one sentence naming the file and line, for a folder without the list, a
    first line that is not a count or a second that is not the header, a line that is not
    three fields, a status other than train, query or gallery, an image listed twice, or
    no query or no gallery row."""
    opts = options or ReadOptions()
    path = Path(path)
    file = _list_file(path)
    where = file.name
    if path.is_dir() and not file.is_file():
        raise InputError(f"{path}: holds no Eval/{FILE}; give the In-Shop folder or its list "
                         "file")
    rows = read_rows(file, "an In-Shop partition list")
    if (len(rows) < 2 or len(rows[0].fields) != 1 or not rows[0].fields[0].isdigit()
            or rows[1].fields != HEADER):
        raise InputError(f"{where}: not an In-Shop partition list; it starts with the number "
                         f"of images, then the header {' '.join(HEADER)}")
    listed: dict[str, list[tuple[str, str]]] = {status: [] for status in STATUSES}
    for row in rows[2:]:
        if len(row.fields) != len(HEADER):
            raise InputError(f"{where}: line {row.line}: {len(row.fields)} fields, not 3 "
                             f"({' '.join(HEADER)})")
        image, item, status = row.fields
        if status not in listed:
            raise InputError(f"{where}: line {row.line}: evaluation_status {status!r} is not "
                             "train, query or gallery")
        listed[status].append((image, item))
    for status in ("query", "gallery"):
        if not listed[status]:
            raise InputError(f"{where}: lists no {status} image (evaluation_status {status})")
    notes = []
    declared, found = int(rows[0].fields[0]), len(rows) - 2
    if declared != found:
        notes.append(f"{where}: its first line says {declared:,} images but "
                     f"{counted(found, 'image is', 'images are')} listed; the listed ones "
                     "are read")
    queries, gallery = listed["query"], listed["gallery"]
    paths = [image for image, _ in (*gallery, *queries)]
    names, said = image_names(paths, where)
    root = file.parent.parent if file.parent.name == "Eval" else file.parent
    files, located = locate_images(names, paths, [root / "Img", root], opts.images, where)
    n_g = len(gallery)
    return query_gallery_dataset([item for _, item in queries], [item for _, item in gallery],
                                 names[n_g:], names[:n_g], name="In-Shop Clothes Retrieval",
                                 format=NAME, path=path, protocols=(PROTOCOL,),
                                 image_paths=files, notes=[*notes, *said, *located])


READER = Reader(NAME, "In-Shop Clothes Retrieval list_eval_partition.txt (query -> gallery by "
                "item id)", sniff_inshop, read_inshop, priority=10,
                takes=frozenset({"images"}))
