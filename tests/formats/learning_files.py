"""Small files in the formats of metric learning's benchmarks, written by the tests (the real
files are not in the repository): Stanford Online Products' ``Ebay_test.txt``, CUB-200-2011's
``images.txt`` and ``image_class_labels.txt``, Cars196's ``cars_annos.mat`` and In-Shop's
``Eval/list_eval_partition.txt``, each laid out as published."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image


def write_images(folder: Path, paths: Sequence[str], size: int = 8) -> None:
    """Write a tiny JPEG at each relative path under ``folder``."""
    for i, rel in enumerate(paths):
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (size, size), (40 * (i % 6), 90, 200 - 30 * (i % 6))).save(target)


def write_sop(folder: Path, products: Sequence[int], name: str = "Ebay_test.txt",
              images: bool = False) -> tuple[Path, list[str]]:
    """Write a Stanford Online Products list of one image per entry of ``products`` (its
    class_id), numbered from 1, paths ``<category>_final/<product><k>_<k>.JPG``; return the
    file and the listed paths."""
    folder.mkdir(parents=True, exist_ok=True)
    categories = ("bicycle", "cabinet", "chair")
    lines = ["image_id class_id super_class_id path"]
    paths = []
    for i, product in enumerate(products, start=1):
        super_class = product % 3 + 1
        path = f"{categories[super_class - 1]}_final/{1000 + product}{i}_{i % 4}.JPG"
        paths.append(path)
        lines.append(f"{i} {product} {super_class} {path}")
    file = folder / name
    file.write_text("\n".join(lines) + "\n")
    if images:
        write_images(folder, paths)
    return file, paths


def write_cub(folder: Path, classes: Sequence[int], images: bool = False) -> list[str]:
    """Write CUB-200-2011's ``images.txt`` and ``image_class_labels.txt`` for one image per
    entry of ``classes`` (1-200), and ``classes.txt``; return the listed paths (under
    ``images/``)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = [f"{c:03d}.Bird_{c}/Bird_{c}_{i:04d}_{i}.jpg" for i, c in enumerate(classes, 1)]
    (folder / "images.txt").write_text(
        "".join(f"{i} {p}\n" for i, p in enumerate(paths, start=1)))
    (folder / "image_class_labels.txt").write_text(
        "".join(f"{i} {c}\n" for i, c in enumerate(classes, start=1)))
    (folder / "classes.txt").write_text(
        "".join(f"{c} {c:03d}.Bird_{c}\n" for c in sorted(set(classes))))
    if images:
        write_images(folder / "images", paths)
    return paths


def write_cars(file: Path, classes: Sequence[int], images: bool = False) -> list[str]:
    """Write a ``cars_annos.mat`` (MATLAB 5, as scipy.io.savemat writes it) whose
    ``annotations`` struct array has one element per entry of ``classes`` with the fields
    of the published file (``relative_im_path``, ``bbox_x1`` .. ``bbox_y2``, ``class``,
    ``test``) and ``class_names``; return the listed paths."""
    from scipy import io as sio

    file.parent.mkdir(parents=True, exist_ok=True)
    fields = ("relative_im_path", "bbox_x1", "bbox_y1", "bbox_x2", "bbox_y2", "class", "test")
    annotations = np.zeros((1, len(classes)), dtype=[(f, object) for f in fields])
    paths = []
    for i, c in enumerate(classes):
        path = f"car_ims/{i + 1:06d}.jpg"
        paths.append(path)
        annotations[0, i] = (path, 10, 20, 110, 90, np.uint8(c), np.uint8(i % 2))
    names = np.array([f"Model {c}" for c in range(1, 197)], dtype=object).reshape(1, -1)
    sio.savemat(file, {"annotations": annotations, "class_names": names})
    if images:
        write_images(file.parent, paths)
    return paths


def write_inshop(folder: Path, rows: Sequence[tuple[str, str]], images: bool = False,
                 count: int | None = None) -> tuple[Path, list[str]]:
    """Write In-Shop's ``Eval/list_eval_partition.txt`` under ``folder`` for rows (item id,
    status), each image ``img/WOMEN/Dresses/<item>/NN_1_front.jpg`` (the same file names in
    every item's folder, as published); images, when asked, under ``Img/``. Return the file
    and the listed paths."""
    seen: dict[str, int] = {}
    paths, lines = [], []
    for item, status in rows:
        seen[item] = seen.get(item, 0) + 1
        path = f"img/WOMEN/Dresses/{item}/{seen[item]:02d}_1_front.jpg"
        paths.append(path)
        lines.append(f"{path:<60} {item} {status}")
    file = folder / "Eval" / "list_eval_partition.txt"
    file.parent.mkdir(parents=True, exist_ok=True)
    header = f"{len(rows) if count is None else count}\nimage_name item_id evaluation_status\n"
    file.write_text(header + "\n".join(lines) + "\n")
    if images:
        write_images(folder / "Img", paths)
    return file, paths
