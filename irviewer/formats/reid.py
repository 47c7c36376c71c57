"""Person re-identification folders: Market-1501, DukeMTMC-reID, CUHK03 in the same layout.

A folder with ``query/`` and ``bounding_box_test/``. File names carry the person id and the
camera: ``0001_c1s1_001051_00.jpg`` (Market-1501), ``0001_c2_f0046182.jpg`` (DukeMTMC-reID),
read as torchreid reads them (``([-\\d]+)_c(\\d)``). Conventions of the Market-1501 protocol
as torchreid and fast-reid evaluate it (Zheng et al., ICCV 2015):

* gallery images of person id -1 ("junk") are removed for every query;
* id 0 ("distractors") stays in the gallery as a negative;
* for each query, gallery images of the same id and the same camera are removed
  (relevance group ``same_camera``); the same id on another camera is ``positive``.

A folder whose name contains ``cuhk03`` is scored with the ``cuhk03`` protocol
(single-gallery-shot CMC); ``--protocol`` overrides either way.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from irviewer.core.dataset import Dataset, SkippedQuery, build_query, index_array
from irviewer.core.errors import InputError, examples
from irviewer.formats.base import Reader, ReadOptions, list_images

NAME = "reid"
PATTERN = re.compile(r"([-\d]+)_c(\d)")
SUFFIXES = (".jpg", ".jpeg", ".png")


def sniff_reid(path: Path) -> bool:
    """Return True for a folder with ``query/`` and ``bounding_box_test/``."""
    p = Path(path)
    return p.is_dir() and (p / "query").is_dir() and (p / "bounding_box_test").is_dir()


def _parse(folder: Path) -> tuple[list[Path], np.ndarray, np.ndarray]:
    if not folder.is_dir():
        raise InputError(f"{folder.parent.name}: the folder {folder.name}/ is missing (a "
                         "re-identification set needs query/ and bounding_box_test/)")
    files = list_images(folder, SUFFIXES)
    pids, cams, bad = [], [], []
    for f in files:
        m = PATTERN.search(f.name)
        if m is None:
            bad.append(f.name)
            continue
        pids.append(int(m.group(1)))
        cams.append(int(m.group(2)))
    if bad:
        raise InputError(f"{folder.name}/: {len(bad)} file names do not carry a person id and "
                         f"camera (PPPP_cC...), e.g. {examples(bad)}")
    return files, np.array(pids, dtype=np.int64), np.array(cams, dtype=np.int64)


def read_reid(path: Path, options: ReadOptions | None = None) -> Dataset:
    """Return the re-identification Dataset (protocol market1501, or cuhk03 by folder name)."""
    root = Path(path)
    q_files, q_pid, q_cam = _parse(root / "query")
    g_files, g_pid, g_cam = _parse(root / "bounding_box_test")
    gallery = [f.stem for f in g_files]
    order = np.argsort(g_pid, kind="stable")
    sorted_pid = g_pid[order]
    queries, skipped = [], []
    for f, pid, cam in zip(q_files, q_pid, q_cam, strict=True):
        if pid == -1:
            skipped.append(SkippedQuery(f.stem, "person id -1 (junk) cannot be a query"))
            continue
        a, b = np.searchsorted(sorted_pid, [pid, pid + 1])
        same = order[a:b]
        same_cam = g_cam[same] == cam
        queries.append(build_query(f.stem, f.stem, {"positive": same[~same_cam],
                                                    "same_camera": same[same_cam]},
                                   meta={"label": int(pid), "camera": int(cam)}))
    if not queries:
        raise InputError(f"{root.name}: no query with a person id")
    protocol = "cuhk03" if "cuhk03" in root.name.lower() else "market1501"
    paths = {f.stem: f for f in (*q_files, *g_files)}
    return Dataset(name=root.name, format=NAME, path=root, gallery=tuple(gallery),
                   queries=tuple(queries), groups=("positive", "same_camera"),
                   protocols=(protocol,), global_ignored=index_array(np.flatnonzero(g_pid == -1)),
                   skipped_queries=tuple(skipped), image_paths=paths, gallery_labels=g_pid)


READER = Reader(NAME, "person re-identification folder (Market-1501, DukeMTMC-reID, CUHK03)",
                sniff_reid, read_reid, priority=10)
